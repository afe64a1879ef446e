"""A VN settle on standard Lava processes only: each VN layer becomes two populations of Lava
SigmaDelta neurons (the positive and the negative part of its signed codes) wired by Sparse
connections, with no atomspark neuron code.

Jacobi ISTA, g(t+1) = T(g(t) + eta (b - G g(t))) with T the soft threshold at eta lam, is for
the two parts g = p - n

    p(t+1) = ReLU(M (p - n)(t) + eta (b - lam))      M = I - eta G (every Gram and coupling
    n(t+1) = ReLU(-M (p - n)(t) - eta (b + lam))     block of the compiled graph, I on the
                                                     diagonal blocks)

which is what a SigmaDelta neuron computes: sigma accumulates the weighted changes it receives
(so sigma = M (p - n) sent so far), act = ReLU(sigma + bias) and the change of act is sent as a
graded spike. The drive enters as the bias eta (+-b - lam) (the top-down term of a layered VN is
already in b and G). Float: the same iterates as the VN engine up to rounding. Fixed point
(frac_bits): codes and biases in 2**-frac_bits units, the identity as its own Sparse (weight 1,
exact) beside -eta G in 8-bit mantissas with one exponent per block (Loihi's [-8, 7]).

With vth > 0 (the VN's event_threshold) the two forms differ: a VN atom adds its own exact code
and only the Gram term uses sent codes, while a SigmaDelta neuron sees its own code through M as
sent; and SigmaDelta sends at |change| >= vth where the VN atom sends at > event_threshold.
"""

from __future__ import annotations

import numpy as np
from atomspark.mapping.quantize import quantize_weights, require_frac_bits
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.sigma_delta import WORD_LIMIT, SigmaDeltaFixedParams, SigmaDeltaParams
from atomspark.sim.units.vn import VNParams

PARTS = ("pos", "neg")  # p and n: g = p - n


def part_name(layer: str, part: str) -> str:
    """Population name of one part of a VN layer in the standard form."""
    return f"{layer}.{part}"


def _check_vn(pop: Population) -> VNParams:
    par = pop.params
    if not isinstance(par, VNParams):
        raise AtomsparkError(
            f"{pop.name}: {type(par).__name__} has no standard-process form (only a float VN "
            "graph has; RSGN's node update needs atomspark's neuron code); export without "
            "--standard"
        )
    if par.topk is not None:
        raise AtomsparkError(
            f"{pop.name}.topk: top-k needs a population-wide sort, which no standard Lava "
            "process does; export without --standard (custom VNAtom) or drop topk"
        )
    if np.any(np.asarray(par.g_init) != 0):
        raise AtomsparkError(f"{pop.name}.g_init: SigmaDelta neurons start at 0; no initial code")
    return par


def vn_standard_graph(graph: Graph, frac_bits: int | None = None) -> Graph:
    """The standard-process form of a compiled float VN graph (module doc): float when
    frac_bits is None, else Loihi fixed point with codes in 2**-frac_bits units."""
    pars = {p.name: _check_vn(p) for p in graph.populations}
    etas = {float(p.eta) for p in pars.values()}
    if len(etas) != 1:
        raise AtomsparkError(f"graph: VN layers with different step sizes {sorted(etas)}")
    eta = etas.pop()
    fixed = frac_bits is not None
    scale = 2.0 ** require_frac_bits("frac_bits", frac_bits) if fixed else 1.0
    blocks = [(proj.source, proj.target, -eta * _dense(proj)) for proj in graph.projections]
    blocks += [(pop.name, pop.name, np.eye(pop.size)) for pop in graph.populations]
    state_exp = _state_exp([w for _, _, w in blocks]) if fixed else 0
    pops = []
    for pop in graph.populations:
        st = pars[pop.name].init_state(pop.size)
        thr = float(pars[pop.name].event_threshold)
        for part, sign in zip(PARTS, (1.0, -1.0)):
            bias = part_bias(pop.name, st["drive"], st["thresh"], eta, sign, frac_bits)
            if fixed:
                vth = int(_fixed_word(pop.name, "vth", thr * scale))
                params = SigmaDeltaFixedParams(vth=vth, bias=bias, state_exp=state_exp)
            else:
                params = SigmaDeltaParams(vth=thr, bias=bias)
            pops.append(Population(part_name(pop.name, part), pop.size, params))
    projs = []
    for src, tgt, weights in blocks:
        projs += _signed(src, tgt, weights * 2.0**state_exp, fixed, identity=src == tgt)
    return Graph(pops, projs)


def part_bias(layer: str, drive, thresh, eta: float, sign: float, frac_bits: int | None):
    """The bias eta (+-b) - eta lam of one part of a VN layer (sign +1: pos, -1: neg); fixed
    point: rounded to an integer in 2**-frac_bits units (a 24-bit word)."""
    bias = sign * eta * np.asarray(drive, np.float64) - np.asarray(thresh, np.float64)
    if frac_bits is None:
        return bias
    return _fixed_word(layer, "bias", bias * 2.0**frac_bits)


def vn_standard_runner(runner, frac_bits: int | None = None):
    """The standard-process form of a float VN SampleRunner (networks.sample_runner.vn_runner):
    the standard graph built once, each sample's drives entering as the parts' biases (as
    vn_standard_graph sets them); outputs are the final signed codes per layer in float units."""
    from atomspark.networks.sample_runner import SampleRunner

    vn_graph = runner.graph
    graph = vn_standard_graph(vn_graph, frac_bits)
    layers = [p.name for p in vn_graph.populations]
    eta = float(vn_graph.populations[0].params.eta)
    thresh = {p.name: p.params.init_state(p.size)["thresh"] for p in vn_graph.populations}
    unit = 1.0 if frac_bits is None else 2.0**-frac_bits

    def to_state(x):
        state = {}
        for layer, st in runner.to_state(x).items():
            for part, sign in zip(PARTS, (1.0, -1.0)):
                name = part_name(layer, part)
                bias = part_bias(layer, st["drive"], thresh[layer], eta, sign, frac_bits)
                state[name] = {"bias": bias * graph.population(name).params.scale}
        return state

    def read(eng):
        acts = {(p.name, "act"): eng.state[p.name]["act"] for p in graph.populations}
        return [codes(acts, graph, layer) * unit for layer in layers]

    return SampleRunner(graph, to_state, read)


def _state_exp(blocks: list[np.ndarray]) -> int:
    """Extra fraction bits of sigma (Lava's state_exp): enough for the smallest block's 8-bit
    mantissas under Loihi's lowest weight exponent (-8), at most 7. The neurons send their
    changes shifted back by state_exp (the low bits are dropped, as Lava does)."""
    lo = fx.WEIGHT_EXP_RANGE[0]
    need = [quantize_weights(w).weight_exp for w in blocks if np.any(w)]
    return int(min(max([lo - e for e in need] + [0]), 7))


def _fixed_word(layer: str, key: str, value) -> np.ndarray:
    arr = np.round(np.asarray(value, np.float64)).astype(np.int64)
    if arr.size and int(np.abs(arr).max()) > WORD_LIMIT:
        raise AtomsparkError(
            f"{layer}: the {key} needs {int(np.abs(arr).max())} in 2**-frac_bits units, above "
            f"the 24-bit word ({WORD_LIMIT}); lower --frac-bits"
        )
    return arr


def _dense(proj: Projection) -> np.ndarray:
    out = np.zeros(proj.shape)
    rows = np.repeat(np.arange(proj.shape[1]), np.diff(proj.indptr))  # fan-out: per source
    np.add.at(out, (proj.indices, rows), proj.data)
    return out


def _signed(src: str, tgt: str, weights: np.ndarray, fixed: bool, identity: bool = False):
    """The four connections of one block: p->p and n->n with +W, n->p and p->n with -W."""
    if fixed:
        q = quantize_weights(weights, min_exp=fx.WEIGHT_EXP_RANGE[0])
        if q.weight_exp > fx.WEIGHT_EXP_RANGE[1]:
            raise AtomsparkError(f"projection {src}->{tgt}: weights too large for 8-bit Sparse")
        w, exp = q.mantissa.astype(np.float64), int(q.weight_exp)
        if not identity and not np.any(w):
            return []
    else:
        w, exp = weights, 0
    out = []
    for s_part, t_part, sign in (("pos", "pos", 1), ("neg", "neg", 1), ("neg", "pos", -1),
                                 ("pos", "neg", -1)):  # fmt: skip
        out.append(Projection(part_name(src, s_part), part_name(tgt, t_part), sign * w,
                              weight_exp=exp))  # fmt: skip
    return out


def codes(traces: dict, graph: Graph, layer: str) -> np.ndarray:
    """The signed codes g = p - n per step of `layer` of the standard-form `graph`, from the
    engine's (or Lava's) act traces; fixed point: in 2**-frac_bits units (act holds state_exp
    more fraction bits)."""
    g = traces[(part_name(layer, "pos"), "act")] - traces[(part_name(layer, "neg"), "act")]
    par = graph.population(part_name(layer, "pos")).params
    return g / 2.0 ** int(par.state_exp) if par.is_fixed_point else g


def standard_code_error(
    graph: Graph, standard: Graph, steps: int, frac_bits: int | None = None
) -> float:
    """max |g_standard - g_vn| over the layers' codes after `steps` steps of the engine (the VN
    graph `graph`, its standard form `standard`; fixed point read in 2**-frac_bits units and
    scaled back by frac_bits)."""
    from atomspark.sim.engine import Engine

    vn, sd = Engine(graph), Engine(standard)
    vn.run(steps, record=tuple((p.name, "g") for p in graph.populations))
    sd.run(steps, record=tuple((p.name, "act") for p in standard.populations))
    unit = 1.0 if frac_bits is None else 2.0**-frac_bits
    return max(
        float(
            np.abs(
                codes(sd.traces, standard, p.name)[-1] * unit - vn.traces[(p.name, "g")][-1]
            ).max()
        )
        for p in graph.populations
    )
