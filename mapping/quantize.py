"""Quantisation: float sim graphs -> Loihi fixed point, with the error it introduces.

* `quantize_weights(w)`: one shared exponent per projection, 8-bit mantissas exactly as Lava's
  Sparse/Dense keep them (mixed signs: even numbers in [-256, 254]; one sign: [0, 255]).
* `quantize_lif(params, scale)`: float LIF -> LIFFixedParams (decays in 1/4096, threshold and
  bias in units of 2**6 / scale, as Lava's bit-accurate LIF scales them).
* `quantize_lif_graph(graph)`: a float LIF graph -> the engine's fixed-point graph.
* `quantize_vn_graph(graph, frac_bits)`: a float VN graph -> the engine's integer VN graph
  (sim/units/vn_fixed.py), which `Engine` runs and `lava/export.verify_lava` checks on Lava.
* `vn_quantization_report(graph, fixed_graph, steps)`: float vs integer engine runs: codes,
  active sets, events, wraps and clips.
* `quantize_rsgn_graph(graph)`: a float RSGN graph -> the engine's integer RSGN graph
  (sim/units/rsgn_fixed.py); `fixed_rsgn_runner(runner)` runs samples through it;
  `rsgn_quantization_report(params, config, tokens)`: float vs integer engine runs of a model on
  token sequences: class decisions, scores, states, events, wraps and clips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from atomspark.sim import fixed_point as fx
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.lif import LIFFixedParams, LIFParams
from atomspark.sim.units.vn import VNParams
from atomspark.sim.units.vn_fixed import ETA_MANT_BITS, STATE_BITS, VNFixedParams

if TYPE_CHECKING:
    from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams
    from atomspark.networks.sample_runner import SampleRunner
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int, require_positive

MAX_FRAC_BITS = STATE_BITS - 2
# the least share of samples on which a fixed-point model (or a bundle's readout on chip) must
# decide as the float model, unless told otherwise (export --min-agreement, run_bundle.py)
DEFAULT_MIN_AGREEMENT = 0.95


@dataclass(frozen=True)
class QuantizedWeights:
    """weights ~= mantissa * 2**weight_exp; max_abs_error is that approximation's worst entry."""

    mantissa: np.ndarray
    weight_exp: int
    max_abs_error: float


MIN_WEIGHT_EXP = fx.WEIGHT_EXP_RANGE[0]  # Loihi's weight exponent range is [-8, 7]


def require_some_weight(label: str, weights: np.ndarray, q: QuantizedWeights) -> None:
    """Refuse a projection whose nonzero float weights all round to mantissa 0: on the chip it
    would deliver nothing (one line, naming the projection and the largest weight lost)."""
    if np.any(weights) and not np.any(q.mantissa):
        raise AtomsparkError(
            f"{label}: every weight quantises to 0 (largest |w| {np.abs(weights).max():.3g} is "
            f"below half a mantissa step 2**{q.weight_exp}); the projection would deliver "
            "nothing on the chip: rescale the model or drop the projection"
        )


def quantize_weights(weights, min_exp: int | None = None) -> QuantizedWeights:
    """Smallest shared exponent whose 8-bit Lava mantissas hold every weight without clipping;
    min_exp bounds it from below. A negative exponent is Lava's right shift (floor) of each
    step's summed input, which the engine models exactly (sim/graph.py Projection)."""
    w = as_finite_array("weights", weights)
    if w.size == 0 or not np.any(w):
        return QuantizedWeights(np.zeros(w.shape, np.int64), 0, 0.0)
    mixed = w.min() < 0 < w.max()
    limit = 254.0 if mixed else 255.0
    exp = int(np.ceil(np.log2(np.abs(w).max() / limit)))
    if min_exp is not None:
        exp = max(exp, int(min_exp))
    while True:
        step = 2.0 ** (exp + 1) if mixed else 2.0**exp
        mant = np.round(w / step) * (2 if mixed else 1)
        if np.abs(mant).max() <= limit:
            break
        exp += 1  # rounding pushed one value past the limit
    mant = mant.astype(np.int64)
    if not np.array_equal(fx.lava_dense_weights(mant), mant):
        raise AtomsparkError("weights: internal error, mantissas are not Lava-representable")
    err = float(np.abs(mant * 2.0**exp - w).max())
    return QuantizedWeights(mant, exp, err)


def _decay_to_int(name: str, value: float, offset: int) -> int:
    d = int(round(float(value) * fx.DECAY_UNITY)) - offset
    lo, hi = fx.BIT_RANGES["du"]
    if not lo <= d <= hi:
        raise AtomsparkError(
            f"{name}: decay {value} becomes {d} in 1/4096 units (with Lava's +{offset} offset), "
            f"outside the 12-bit range [{lo}, {hi}]"
        )
    return d


def quantize_lif(params: LIFParams, scale: float) -> LIFFixedParams:
    """Float LIF -> Loihi LIF where one unit of float input equals `scale` integer weight units.

    Lava shifts synaptic input and the threshold by 6 bits, so v_int = 2**6 * scale * v_float:
    vth = round(scale * vth); bias = round(2**6 * scale * bias) as a 13-bit mantissa and 3-bit
    exponent. du keeps Lava's +1 offset (du_int = round(4096 du) - 1)."""
    if not isinstance(params, LIFParams):
        raise AtomsparkError(f"params: expected LIFParams, got {type(params).__name__}")
    scale = require_positive("scale", scale)
    if params.refractory or params.v_reset or params.du2 is not None:
        raise AtomsparkError("params: Loihi's LIF has no refractory period, v_reset 0, one current")
    du = _decay_to_int("du", params.du, fx.CURRENT_DECAY_OFFSET)
    dv = _decay_to_int("dv", params.dv, fx.VOLTAGE_DECAY_OFFSET)
    vth = fx.check_bit_range("quantize_lif", "vth", round(params.vth * scale))
    bias = np.round(np.asarray(params.bias, np.float64) * scale * 2**fx.VTH_SHIFT).astype(np.int64)
    exp = np.zeros_like(bias)
    big = np.abs(bias) > fx.BIT_RANGES["bias_mant"][1]
    while np.any(big):
        exp[big] += 1
        big = np.abs(bias >> exp) > fx.BIT_RANGES["bias_mant"][1]
    fx.check_bit_range("quantize_lif", "bias_exp", exp)
    mant = np.where(exp > 0, np.round(bias / 2.0**exp), bias).astype(np.int64)
    return LIFFixedParams(du=du, dv=dv, vth=int(vth), bias_mant=mant, bias_exp=exp)


def quantize_lif_graph(graph: Graph, scale: float | None = None) -> Graph:
    """A float LIF graph -> the engine's fixed-point LIF graph (bit-exact on Lava); `scale`
    defaults to the largest one that keeps every projection's weights in 8 bits with exponent 0.
    Projections with smaller weights get a negative exponent (down to MIN_WEIGHT_EXP), so they
    keep 8 significant bits instead of rounding to a few integer levels."""
    if any(not isinstance(p.params, LIFParams) for p in graph.populations):
        raise AtomsparkError("graph: quantize_lif_graph needs float LIF populations only")
    if scale is None:
        wmax = max((np.abs(p.data).max(initial=0) for p in graph.projections), default=0)
        scale = 254.0 / wmax if wmax > 0 else 1.0
    pops = [Population(p.name, p.size, quantize_lif(p.params, scale)) for p in graph.populations]
    projs = []
    for proj in graph.projections:
        n_tgt, n_src = proj.shape
        w = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt)).T
        q = quantize_weights(w.toarray() * scale, min_exp=MIN_WEIGHT_EXP)
        require_some_weight(f"projection {proj.source}->{proj.target}", w.toarray(), q)
        projs.append(Projection(proj.source, proj.target, q.mantissa, weight_exp=q.weight_exp))
    return Graph(pops, projs)


def quantize_eta(eta: float) -> tuple[int, int]:
    """eta ~= eta_mant * 2**-eta_shift with a 12-bit mantissa in [2**11, 2**12)."""
    eta = require_positive("eta", eta)
    shift = ETA_MANT_BITS - 1 - int(np.floor(np.log2(eta)))
    if shift < 0:
        raise AtomsparkError(f"eta: {eta} is too large for a 12-bit mantissa with shift >= 0")
    mant = int(round(eta * 2**shift))
    if mant >= 2**ETA_MANT_BITS:
        mant, shift = mant >> 1, shift - 1
    return mant, shift


def _dense_weights(proj: Projection) -> np.ndarray:
    n_tgt, n_src = proj.shape
    fan_out = sp.csr_matrix((proj.data, proj.indices, proj.indptr), shape=(n_src, n_tgt))
    return fan_out.T.toarray()


def _delays(proj: Projection):
    """The projection's delays as Projection takes them: an int, or a sparse (n_tgt, n_src)."""
    if proj.delay.size == 0 or np.all(proj.delay == proj.delay[0]):
        return int(proj.delay[0]) if proj.delay.size else 1
    n_tgt, n_src = proj.shape
    fan_out = sp.csr_matrix((proj.delay, proj.indices, proj.indptr), shape=(n_src, n_tgt))
    return fan_out.T.tocsr()


def fixed_drive(drive: np.ndarray, frac_bits: int, c_shift: int) -> np.ndarray:
    """A float VN drive in the integer atom's unit 2**-(frac_bits + c_shift) (rounded)."""
    return np.round(drive * 2.0**frac_bits * 2.0**c_shift).astype(np.int64)


def fixed_vn_runner(runner, frac_bits: int = 12):
    """The integer version of a float VN SampleRunner (networks.sample_runner.vn_runner): the
    quantised graph built once, each sample's drives rounded as quantize_vn_graph rounds them;
    outputs are the final codes in float units."""
    from atomspark.networks.sample_runner import SampleRunner

    graph = quantize_vn_graph(runner.graph, frac_bits)
    shifts = {p.name: p.params.c_shift for p in graph.populations}

    def to_state(x):
        return {
            name: {"drive": fixed_drive(st["drive"], frac_bits, shifts[name])}
            for name, st in runner.to_state(x).items()
        }

    def read(eng):
        return [eng.state[p.name]["g"] * 2.0**-frac_bits for p in graph.populations]

    return SampleRunner(graph, to_state, read)


def require_frac_bits(name: str, frac_bits) -> int:
    """Fraction bits of VN codes: a code of 1.0 is 2**frac_bits, which Loihi's 24-bit signed
    state holds only up to frac_bits = STATE_BITS - 2 (2**22 <= 2**23 - 1)."""
    frac_bits = require_int(name, frac_bits, minimum=0)
    if frac_bits > MAX_FRAC_BITS:
        raise AtomsparkError(
            f"{name} {frac_bits}: at most {MAX_FRAC_BITS} (Loihi's {STATE_BITS}-bit state holds "
            f"a code of 1.0 as 2**{frac_bits} only up to 2**{MAX_FRAC_BITS}); the default is 12"
        )
    return frac_bits


def quantize_vn_graph(graph: Graph, frac_bits: int = 12) -> Graph:
    """A float VN graph (e.g. networks.vn_compile) -> the engine's integer VN graph: codes in
    units of 2**-frac_bits, Gram blocks as 8-bit mantissas with one exponent per projection,
    each population's c kept in the finest unit of its incoming projections so that no per-step
    rounding accumulates (the only errors are the weight, drive, threshold and eta roundings
    and the floor of the eta product), and one input channel per incoming projection (each
    wraps to 32 bits on its own, as one Lava Sparse does). Raises if a value does not fit."""
    frac_bits = require_frac_bits("frac_bits", frac_bits)
    if not isinstance(graph, Graph):
        raise AtomsparkError(f"graph: expected a Graph, got {type(graph).__name__}")
    for pop in graph.populations:
        par = pop.params
        if not isinstance(par, VNParams):
            raise AtomsparkError(
                f"{pop.name}: quantize_vn_graph needs float VN populations only, "
                f"got {type(par).__name__}"
            )
        if par.topk is not None:
            raise AtomsparkError(f"{pop.name}.topk: hard top-k has no integer atom")
        if par.event_threshold != 0:
            raise AtomsparkError(f"{pop.name}.event_threshold: the integer atom sends every change")
    unit = 2.0**frac_bits
    weights = [quantize_weights(_dense_weights(proj)) for proj in graph.projections]
    c_shift = {p.name: 0 for p in graph.populations}
    n_inputs = {p.name: 0 for p in graph.populations}
    for proj, q in zip(graph.projections, weights):  # c holds exact sums: finest incoming unit
        c_shift[proj.target] = max(c_shift[proj.target], -q.weight_exp)
        n_inputs[proj.target] += 1
    pops = []
    for pop in graph.populations:
        st, s = pop.params.init_state(pop.size), c_shift[pop.name]
        mant, shift = quantize_eta(pop.params.eta)
        params = VNFixedParams(
            frac_bits=frac_bits,
            eta_mant=mant,
            eta_shift=shift + s,
            drive=fixed_drive(st["drive"], frac_bits, s),
            thresh=np.round(st["thresh"] * unit).astype(np.int64),
            c_shift=s,
            g_init=np.round(st["g"] * unit).astype(np.int64),
            n_inputs=max(n_inputs[pop.name], 1),
        )
        pops.append(Population(pop.name, pop.size, params))
    projs, channel = [], {p.name: 0 for p in graph.populations}
    for proj, q in zip(graph.projections, weights):
        exp = q.weight_exp + c_shift[proj.target]  # >= 0: a left shift, exact
        projs.append(
            Projection(
                proj.source,
                proj.target,
                sp.csr_matrix(q.mantissa),
                delays=_delays(proj),
                channel=channel[proj.target],
                weight_exp=exp,
            )
        )
        channel[proj.target] += 1
    return Graph(pops, projs, ring_length=graph.ring_length)


@dataclass(frozen=True)
class VNQuantizationReport:
    """Float vs integer engine runs of the same VN graph, codes compared in float units.

    code_max_abs_error / code_mean_abs_error: final codes; trajectory_max_abs_error: over all
    steps; active_set_agreement: fraction of atoms whose (g != 0) agrees at the end;
    events_float / events_fixed: change events sent in total; synops_float / synops_fixed:
    synaptic operations; weight_max_abs_error: worst weight rounding over all projections;
    wraps / clips: overflows the integer run counted (0 in a well-scaled model)."""

    frac_bits: int
    code_max_abs_error: float
    code_mean_abs_error: float
    trajectory_max_abs_error: float
    active_set_agreement: float
    events_float: int
    events_fixed: int
    synops_float: int
    synops_fixed: int
    weight_max_abs_error: float
    wraps: int
    clips: int


def vn_quantization_report(graph: Graph, fixed_graph: Graph, steps: int) -> VNQuantizationReport:
    """Run the float graph and its integer version (quantize_vn_graph) on the engine and compare
    the codes step by step."""
    steps = require_int("steps", steps, minimum=1)
    names = [p.name for p in graph.populations]
    if [p.name for p in fixed_graph.populations] != names or any(
        not isinstance(p.params, VNFixedParams) for p in fixed_graph.populations
    ):
        raise AtomsparkError("fixed_graph: expected quantize_vn_graph(graph) (same populations)")
    if len(fixed_graph.projections) != len(graph.projections):
        raise AtomsparkError("fixed_graph: projections differ from the float graph's")
    record = tuple((name, "g") for name in names)
    eng_f, eng_q = Engine(graph), Engine(fixed_graph)
    prof_f, prof_q = eng_f.run(steps, record=record), eng_q.run(steps, record=record)
    traj_err, final_f, final_q = 0.0, [], []
    for pop in fixed_graph.populations:
        g_f = eng_f.traces[(pop.name, "g")].astype(np.float64)
        g_q = eng_q.traces[(pop.name, "g")] / 2.0**pop.params.frac_bits
        traj_err = max(traj_err, float(np.abs(g_f - g_q).max()))
        final_f.append(g_f[-1])
        final_q.append(g_q[-1])
    gf, gq = np.concatenate(final_f), np.concatenate(final_q)
    w_err = 0.0
    for pf, pq in zip(graph.projections, fixed_graph.projections):
        c_shift = fixed_graph.population(pq.target).params.c_shift
        approx = _dense_weights(pq) * 2.0 ** (pq.weight_exp - c_shift)
        w_err = max(w_err, float(np.abs(approx - _dense_weights(pf)).max()))
    return VNQuantizationReport(
        frac_bits=int(fixed_graph.populations[0].params.frac_bits),
        code_max_abs_error=float(np.abs(gf - gq).max()),
        code_mean_abs_error=float(np.abs(gf - gq).mean()),
        trajectory_max_abs_error=traj_err,
        active_set_agreement=float(np.mean((gf != 0) == (gq != 0))),
        events_float=int(prof_f.events.sum()),
        events_fixed=int(prof_q.events.sum()),
        synops_float=int(prof_f.synops.sum()),
        synops_fixed=int(prof_q.synops.sum()),
        weight_max_abs_error=w_err,
        wraps=int(prof_q.wraps.sum()),
        clips=int(prof_q.clips.sum()),
    )


def _mantissa_shift(value: float, bits: int = 12) -> tuple[int, int]:
    """value ~= mant * 2**-shift with a `bits`-bit mantissa (value > 0)."""
    shift = bits - 1 - int(np.floor(np.log2(value)))
    mant = int(round(value * 2.0**shift))
    if mant >= 2**bits:
        mant, shift = mant >> 1, shift - 1
    if shift < 0:
        raise AtomsparkError(f"value {value}: too large for a {bits}-bit mantissa and a shift")
    return mant, shift


def split_mantissas(weights, lo_shift: int) -> tuple[QuantizedWeights, np.ndarray]:
    """weights ~= (hi 2**lo_shift + lo) 2**(hi.weight_exp - lo_shift): hi = quantize_weights'
    8-bit mantissas, lo = even 8-bit mantissas of hi's rounding residual (mixed signs)."""
    hi = quantize_weights(weights)
    residual = np.asarray(weights, np.float64) - hi.mantissa * 2.0**hi.weight_exp
    lo = 2 * np.round(residual / 2.0 ** (hi.weight_exp - lo_shift + 1)).astype(np.int64)
    if np.abs(lo).max(initial=0) > 254:
        raise AtomsparkError(f"weights: the low part needs more than 8 bits at lo_shift {lo_shift}")
    return hi, lo


def quantize_rsgn_graph(graph: Graph, split_w_h: bool = False, per_target_w: bool = False) -> Graph:
    """A float RSGN graph (networks.rsgn_compile) -> the engine's integer RSGN graph
    (sim/units/rsgn_fixed.py): the projection W as 8-bit mantissas (weight_exp 0, the node shifts
    its summed message by m_shift), W_h as 8-bit mantissas, thresholds / alpha / gains in Q.12,
    states and biases in Q.10, 1/T as a 12-bit mantissa and shift. split_w_h: W_h as two 8-bit
    mantissas, high and low part (sim/units/rsgn_fixed_split.py). per_target_w: W's mantissas
    with one exponent per target node (each node shifts by its own m_shift) instead of one for
    the whole matrix, so a node whose incoming weights are all small keeps 8 bits of them."""
    from atomspark.sim.units import rsgn_fixed as rf
    from atomspark.sim.units import rsgn_fixed_split as rs
    from atomspark.sim.units.rsgn import RSGNNodeParams

    if not isinstance(graph, Graph) or len(graph.populations) != 1:
        raise AtomsparkError("graph: expected one population of RSGN nodes (compile_rsgn)")
    pop, (proj,) = graph.populations[0], graph.projections
    par = pop.params
    if not isinstance(par, RSGNNodeParams):
        raise AtomsparkError(f"{pop.name}: expected RSGN nodes, got {type(par).__name__}")
    if np.any(par.kernel_arrays.resting != 0):
        raise AtomsparkError(
            "threshold_rule 'resting-subtracted': the integer RSGN unit has the released sigmoid "
            'only; quantize a model trained with model.threshold_rule = "sigmoid"'
        )
    qa, qh = 2.0**rf.ALPHA_FRAC, 2.0**rf.H_FRAC
    w_mant, m_shift = _node_weights(_dense_weights(proj), per_target_w)
    wh, wh_lo = split_mantissas(np.asarray(par.w_h, np.float64), rs.LO_SHIFT)
    if wh.weight_exp > 0:
        raise AtomsparkError("w_h: entries above 255 need a left shift (not modelled)")
    split = {"w_h_lo_mant": wh_lo, "w_h_lo_shift": rs.LO_SHIFT} if split_w_h else {}
    ignition = par.init_state(pop.size)
    st = fixed_rsgn_state(ignition["alpha"], ignition["h"])
    inv_t_mant, inv_t_shift = _mantissa_shift(1.0 / float(par.temperature))
    nodes = (rs.RSGNFixedSplitParams if split_w_h else rf.RSGNFixedParams)(
        thresholds=np.round(np.broadcast_to(par.kernel_arrays.thresholds, (pop.size,)) * qa).astype(
            np.int64
        ),
        w_h_mant=wh.mantissa,
        w_h_shift=-wh.weight_exp,
        b_h=np.round(np.asarray(par.b_h) * qh).astype(np.int64),
        ln_gain=np.round(np.asarray(par.ln_gain) * qa).astype(np.int64),
        ln_bias=np.round(np.asarray(par.ln_bias) * qh).astype(np.int64),
        pool=par.pool,
        m_shift=m_shift,
        signal_gain=int(round(float(par.signal_gain) * qa)),
        inv_t_mant=inv_t_mant,
        inv_t_shift=inv_t_shift,
        cutoff=int(np.floor(float(par.cutoff) * qa)),
        layer_norm_eps=max(1, int(round(float(par.layer_norm_eps) * 2.0 ** (2 * rf.H_FRAC)))),
        event_rule=bool(par.event_rule),
        alpha_init=st["alpha"],
        h_init=st["h"],
        **split,
    )
    n_tgt, n_src = proj.shape  # keep every stored synapse (zero mantissas included)
    sources = np.repeat(np.arange(n_src), np.diff(proj.indptr))
    targets = proj.indices.astype(np.int64)
    mant = sp.csr_matrix((w_mant[targets, sources], (targets, sources)), shape=proj.shape)
    fixed_pop = Population(pop.name, pop.size, nodes)
    return Graph([fixed_pop], [Projection(proj.source, proj.target, mant)])


def _node_weights(dense: np.ndarray, per_target: bool) -> tuple[np.ndarray, object]:
    """W (targets, sources) as 8-bit mantissas and the right shift each node applies to its
    summed message: one shift for all nodes, or (per_target) one per target node (its row)."""
    from atomspark.sim.units.rsgn_fixed import MAX_M_SHIFT

    rows = (
        [quantize_weights(row, min_exp=-MAX_M_SHIFT) for row in dense]
        if per_target
        else [quantize_weights(dense)]
    )
    if max(q.weight_exp for q in rows) > 0:
        raise AtomsparkError("projection: weights above 255 need a left shift (not modelled)")
    if not per_target:
        return rows[0].mantissa, -rows[0].weight_exp
    return np.stack([q.mantissa for q in rows]), np.array([-q.weight_exp for q in rows], np.int64)


def fixed_rsgn_state(alpha: np.ndarray, h: np.ndarray) -> dict[str, np.ndarray]:
    """A float RSGN state (an ignition) in the integer unit's formats: alpha Q.12, h Q.10."""
    from atomspark.sim.units import rsgn_fixed as rf

    return {
        "alpha": np.round(np.asarray(alpha, np.float64) * 2.0**rf.ALPHA_FRAC).astype(np.int64),
        "h": np.round(np.asarray(h, np.float64) * 2.0**rf.H_FRAC).astype(np.int64),
    }


def fixed_rsgn_runner(
    runner: SampleRunner, split_w_h: bool = False, per_target_w: bool = False
) -> SampleRunner:
    """The integer version of a float RSGN SampleRunner (networks.sample_runner.rsgn_runner): the
    quantised graph built once, each sample's ignition rounded as quantize_rsgn_graph rounds it;
    outputs are the final (alpha, h) in float units, as the float runner's."""
    from atomspark.networks.sample_runner import SampleRunner
    from atomspark.sim.units import rsgn_fixed as rf

    graph = quantize_rsgn_graph(runner.graph, split_w_h, per_target_w)
    name = graph.populations[0].name

    def to_state(tokens):
        st = runner.to_state(tokens)[name]
        return {name: fixed_rsgn_state(st["alpha"], st["h"])}

    def read(eng):
        st = eng.state[name]
        return st["alpha"] * 2.0**-rf.ALPHA_FRAC, st["h"] * 2.0**-rf.H_FRAC

    return SampleRunner(graph, to_state, read)


@dataclass(frozen=True)
class RSGNQuantizationReport:
    """Float vs integer engine runs of one RSGN model on the same token sequences, each for the
    model's K + 1 steps, final states and class scores compared in float units.

    decision_agreement: fraction of samples with the same predicted class; score_max_abs_error
    (score_max_abs: the float run's largest |score|, for scale); alpha_max_abs_error,
    h_max_abs_error (h_max_abs: the float run's largest |h|): final states; active_set_agreement:
    fraction of nodes whose (alpha > cutoff) agrees at the end; events_float / events_fixed:
    vector events sent in total; wraps / clips: overflows the integer run counted."""

    samples: int
    steps: int
    decision_agreement: float
    score_max_abs_error: float
    score_max_abs: float
    alpha_max_abs_error: float
    h_max_abs_error: float
    h_max_abs: float
    active_set_agreement: float
    events_float: int
    events_fixed: int
    wraps: int
    clips: int


def rsgn_quantization_report(
    params: RSGNParams,
    config: RSGNConfig,
    tokens: np.ndarray,
    split_w_h: bool = False,
    per_target_w: bool = False,
) -> RSGNQuantizationReport:
    """Run `tokens` (B, L, d_in) through the model's float and integer engine graphs
    (rsgn_runner, fixed_rsgn_runner; split_w_h: W_h in two 8-bit parts; per_target_w: W's
    exponent per target node) and compare the readouts
    and final states."""
    from atomspark.networks.sample_runner import rsgn_runner, rsgn_scores

    tokens = as_finite_array("tokens", tokens, ndim=3)
    float_runner = rsgn_runner(params, config)
    steps = config.n_steps + 1
    runs_f = float_runner.run(tokens, steps)
    runs_q = fixed_rsgn_runner(float_runner, split_w_h, per_target_w).run(tokens, steps)
    scores_f, scores_q = rsgn_scores(params, runs_f.outputs), rsgn_scores(params, runs_q.outputs)
    alpha_f, h_f = (np.stack(x) for x in zip(*runs_f.outputs))
    alpha_q, h_q = (np.stack(x) for x in zip(*runs_q.outputs))
    cut = float(config.cutoff)
    return RSGNQuantizationReport(
        samples=len(tokens),
        steps=steps,
        decision_agreement=float(np.mean(scores_f.argmax(1) == scores_q.argmax(1))),
        score_max_abs_error=float(np.abs(scores_f - scores_q).max()),
        score_max_abs=float(np.abs(scores_f).max()),
        alpha_max_abs_error=float(np.abs(alpha_f - alpha_q).max()),
        h_max_abs_error=float(np.abs(h_f - h_q).max()),
        h_max_abs=float(np.abs(h_f).max()),
        active_set_agreement=float(np.mean((alpha_f > cut) == (alpha_q > cut))),
        events_float=int(sum(p.events.sum() for p in runs_f.profiles)),
        events_fixed=int(sum(p.events.sum() for p in runs_q.profiles)),
        wraps=int(sum(p.wraps.sum() for p in runs_q.profiles)),
        clips=int(sum(p.clips.sum() for p in runs_q.profiles)),
    )
