"""The integer RSGN unit with W_h in two 8-bit parts (sim/units/rsgn_fixed_split.py): its weight
format, and the engine's kernel against the plain NumPy reference of the integer update
(sim/units/rsgn_fixed_reference.py), bit for bit, for both integer variants and both modes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.quantize import quantize_rsgn_graph, quantize_weights, split_mantissas
from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.unit_model import model_of
from atomspark.sim.units.rsgn_fixed import emitted_payloads
from atomspark.sim.units.rsgn_fixed_reference import reference_step
from atomspark.sim.units.rsgn_fixed_split import LO_SHIFT, RSGNFixedSplitParams

MODES = {"published": {}, "sparse": {"k_nearest": 6, "cutoff": 0.2, "temperature": 0.3}}


def test_two_parts_are_lava_weights_and_15_bits_accurate(rng):
    w = rng.standard_normal((32, 32)) * 0.1
    hi, lo = split_mantissas(w, LO_SHIFT)
    for part in (hi.mantissa, lo):
        assert np.array_equal(fx.lava_dense_weights(part), part)  # each an 8-bit Lava mantissa
    step = 2.0 ** (hi.weight_exp - LO_SHIFT)
    err = np.abs((hi.mantissa * 2**LO_SHIFT + lo) * step - w).max()
    assert err <= step + 1e-15  # lo is even: half its step of 2 units
    assert err < quantize_weights(w).max_abs_error / 30


def _fixed(mode: str, split: bool, seed: int = 1, n: int = 20, d: int = 8, per_target=False):
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=4, **MODES[mode])
    params = rsgn.init_params(cfg, seed=seed)
    params.thresholds = np.random.default_rng(seed).uniform(0.0, 1.5, n)
    params.thresholds[::4] = 50.0  # suppressed: the activation's exp tail, silent nodes
    tokens = hierarchical_sequences(n=1, length=12, dim=cfg.d_in, n_classes=3, seed=seed)
    graph = compile_rsgn_tokens(params, cfg, tokens.tokens[0])
    return cfg, quantize_rsgn_graph(graph, split, per_target_w=per_target)


def test_the_split_unit_is_its_own_registered_model():
    _, fixed = _fixed("published", True)
    par = fixed.populations[0].params
    assert isinstance(par, RSGNFixedSplitParams) and model_of(par).name == "rsgn_fixed_split"
    assert np.abs(par.kernel_arrays["wh"]).max() > 256  # the combined word is wider than 8 bits
    wider = dataclasses.replace(par, w_h_lo_mant=par.w_h_lo_mant * 4)
    with pytest.raises(AtomsparkError, match="w_h_lo_mant: 8-bit mantissas expected"):
        wider.check_size("n", fixed.populations[0].size)


@pytest.mark.parametrize(
    ("split", "per_target"),
    [(False, False), (True, False), (True, True)],
    ids=["rsgn_fixed", "rsgn_fixed_split", "split-per-target-w"],
)
@pytest.mark.parametrize("mode", list(MODES))
def test_kernel_equals_the_numpy_reference_bit_for_bit(mode, split, per_target):
    """Each engine step (after the ignition) is the reference applied to the engine's previous
    state and the messages that state sent: alpha and h equal, every step (W with one exponent,
    or one per target node: each node its own shift)."""
    cfg, fixed = _fixed(mode, split, per_target=per_target)
    pop, proj = fixed.populations[0], fixed.projections[0]
    par, k = pop.params, pop.params.kernel_arrays
    assert (len(set(k["m_shift"])) > 1) == per_target
    eng = Engine(fixed)
    steps = cfg.n_steps + 1
    eng.run(steps, record=((NODE_POPULATION, "alpha"), (NODE_POPULATION, "h")))
    alpha, h = eng.traces[(NODE_POPULATION, "alpha")], eng.traces[(NODE_POPULATION, "h")]
    w = sp.csr_matrix(proj.weights).astype(np.int64)  # (target, source) mantissas
    pattern = sp.csr_matrix((np.ones(w.nnz, np.int64), w.indices, w.indptr), shape=w.shape)
    changed = 0
    for t in range(1, steps):
        x = emitted_payloads(alpha[t - 1], h[t - 1], par.cutoff)
        received = (pattern @ (alpha[t - 1] > par.cutoff).astype(np.int64)) > 0
        a_ref, h_ref, *_ = reference_step(
            alpha[t - 1], h[t - 1], w @ x, received, k, par.event_rule
        )
        assert np.array_equal(a_ref, alpha[t]) and np.array_equal(h_ref, h[t]), f"step {t}"
        changed += int(np.any(alpha[t] != alpha[t - 1]))
    assert changed >= 1 and np.any(alpha[1:] == 0) and np.any(alpha[1:] > par.cutoff)


def test_per_target_w_keeps_8_bits_for_every_node():
    """W with one exponent per target node: each node's incoming mantissas reach the 8-bit
    range and its shift recovers W to within half a step of its own row (one shared exponent
    leaves the weakest node far fewer bits)."""
    cfg = rsgn.RSGNConfig(mode="published", n_nodes=20, d_hidden=8, n_classes=3, n_steps=2)
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=1, length=12, dim=cfg.d_in, n_classes=3, seed=1).tokens[0]
    graph = compile_rsgn_tokens(params, cfg, tokens)
    w = sp.csr_matrix(graph.projections[0].weights).toarray()  # (target, source)
    for per_target in (False, True):
        fixed = quantize_rsgn_graph(graph, per_target_w=per_target)
        mant = sp.csr_matrix(fixed.projections[0].weights).toarray()
        shift = fixed.populations[0].params.kernel_arrays["m_shift"]
        err = np.abs(mant * 2.0 ** -shift[:, None] - w).max(axis=1) / w.max(axis=1)
        if per_target:
            assert np.all(mant.max(axis=1) >= 128) and np.all(err <= 1 / 255 + 1e-12)
        else:
            assert len(set(shift)) == 1 and mant.max(axis=1).min() < 128
    bad = dataclasses.replace(fixed.populations[0].params, m_shift=np.full(20, 40))
    with pytest.raises(AtomsparkError, match="m_shift: shifts must lie in"):
        bad.check_size("n", 20)
