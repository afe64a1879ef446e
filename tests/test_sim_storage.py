"""Compact projection storage and the uniform-delay fan-out kernel.

Storage: int32 indices, weights in the target's arithmetic, 0 bytes of delay per synapse when the
projection has one delay. Fan-out: the uniform path (full rows as contiguous multiply-adds, all
targets marked once) must deliver the same sums in the same touched order as the per-synapse
kernel, and the engine must equal a dense reference.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.kernels import fanout as kf
from atomspark.sim.kernels.fanout import fan_out_uniform
from atomspark.sim.units.lif import LIFFixedParams, LIFParams
from atomspark.sim.units.vn import VNParams


def _lif(dtype="float64"):
    return LIFParams(du=0.2, dv=0.1, vth=1.0, dtype=dtype)


def test_uniform_delay_float64_storage_is_12_bytes_per_synapse_plus_indptr():
    w = sp.random(50, 40, density=0.3, random_state=1, format="csr")
    proj = Graph(
        [Population("a", 40, _lif()), Population("b", 50, _lif())],
        [Projection("a", "b", w, delays=3)],
    ).projections[0]
    assert proj.indices.dtype == np.int32 and proj.data.dtype == np.float64
    assert proj.uniform_delay == 3 and proj.delay.strides == (0,)
    assert np.all(proj.delay == 3) and proj.delay.size == w.nnz
    stored = proj.stored_bytes
    assert stored == {"indptr": 41 * 8, "indices": 4 * w.nnz, "data": 8 * w.nnz, "delay": 0}
    assert proj.bytes_per_synapse == pytest.approx(12 + 41 * 8 / w.nnz)
    # the weights view holds the stored synapses, without a copy
    assert np.array_equal(proj.weights.toarray(), w.toarray())
    assert np.shares_memory(proj.weights.data, proj.data)


def test_float32_target_stores_float32_weights_and_the_given_projection_is_untouched():
    w = np.array([[0.1, 0.0, 0.3], [1e-3, 2.0, 0.0]])
    given = Projection("a", "b", w)
    graph = Graph([Population("a", 3, _lif()), Population("b", 2, _lif("float32"))], [given])
    bound = graph.projections[0]
    assert given.data.dtype == np.float64 and bound.data.dtype == np.float32
    assert np.array_equal(bound.data, given.data.astype(np.float32))
    assert bound.indices is given.indices and bound.indptr is given.indptr
    assert bound.bytes_per_synapse == pytest.approx(8 + 4 * 8 / 4)


def test_fixed_point_target_stores_the_narrowest_integer():
    small = np.array([[100, -128], [0, 127]])
    wide = np.array([[300, 0], [0, -2]])
    fixed = LIFFixedParams(du=100, dv=200, vth=50)
    pops = [Population("a", 2, fixed), Population("b", 2, fixed)]
    g = Graph(pops, [Projection("a", "b", small), Projection("b", "a", wide, weight_exp=2)])
    assert g.projections[0].data.dtype == np.int8
    assert g.projections[1].data.dtype == np.int16
    assert np.array_equal(g.projections[1].weights.toarray(), wide)


def test_heterogeneous_delays_take_the_narrowest_unsigned_width():
    w = np.ones((3, 2))
    d8 = np.array([[1, 2], [3, 4], [5, 255]])
    p8 = Projection("a", "b", w, delays=d8)
    assert p8.uniform_delay is None and p8.delay.dtype == np.uint8
    assert p8.stored_bytes["delay"] == 6
    assert np.array_equal(p8.delays.toarray(), d8)  # the delays view, in (target, source) layout
    p16 = Projection("a", "b", w, delays=d8 + 300)
    assert p16.delay.dtype == np.uint16 and int(p16.delay.max()) == 555
    same = Projection("a", "b", w, delays=np.full((3, 2), 7))
    assert same.uniform_delay == 7 and same.stored_bytes["delay"] == 0
    with pytest.raises(AtomsparkError, match="dtype"):
        Projection("a", "b", w, dtype="float16")
    with pytest.raises(AtomsparkError, match="range"):
        Projection("a", "b", np.array([[1e300]]), dtype="float32")


def _kernel_inputs(rng, n_src, n_tgt):
    """A fan-out CSR with full rows (every target) mixed with sparse rows and empty rows."""
    dense = rng.standard_normal((n_src, n_tgt))
    keep = rng.random((n_src, n_tgt)) < 0.2
    full = rng.random(n_src) < 0.4
    keep[full] = True
    keep[0] = False  # an empty row
    fan = sp.csr_matrix(np.where(keep, dense, 0.0))
    fan.sort_indices()
    return fan, full


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uniform_fan_out_equals_per_synapse_fan_out_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n_src, n_tgt, ring_len, delay = 30, 17, 3, 2
    fan, _ = _kernel_inputs(rng, n_src, n_tgt)
    indptr, indices = fan.indptr.astype(np.int64), fan.indices.astype(np.int32)
    data = fan.data.copy()
    emit_idx = rng.permutation(n_src).astype(np.int64)
    emit_val = rng.standard_normal(n_src)
    step = 5
    slot = (step + delay) % ring_len
    outs = []
    for uniform in (True, False):
        ring = np.zeros((ring_len, n_tgt))
        tflag = np.zeros((ring_len, n_tgt), np.uint8)
        tidx = np.zeros((ring_len, n_tgt), np.int64)
        tcount = np.zeros(ring_len, np.int64)
        # a target touched earlier in the step (e.g. by external input) stays first in the list
        ring[slot, 4], tflag[slot, 4], tidx[slot, 0], tcount[slot] = 0.5, 1, 4, 1
        if uniform:
            syn = kf.fan_out_uniform(
                emit_idx, emit_val, n_src, indptr, indices, data, True,
                ring[slot], tflag[slot], tidx[slot], tcount, slot,
            )  # fmt: skip
        else:
            delays = np.full(data.size, delay, np.uint8)
            syn = kf.fan_out(
                emit_idx, emit_val, n_src, indptr, indices, data, delays, step, ring, tflag, tidx,
                tcount,
            )  # fmt: skip
        outs.append((syn, ring, tflag, tidx[slot, : tcount[slot]].copy()))
    (s1, r1, f1, l1), (s2, r2, f2, l2) = outs
    assert s1 == s2 == fan.nnz
    assert np.array_equal(r1, r2) and np.array_equal(f1, f2) and np.array_equal(l1, l2)
    by_source = np.zeros(n_src)
    by_source[emit_idx] = emit_val
    expected = fan.T.toarray() @ by_source
    expected[4] += 0.5
    np.testing.assert_allclose(r1[slot], expected, rtol=1e-12, atol=1e-12)
    assert np.count_nonzero(r1[[i for i in range(ring_len) if i != slot]]) == 0


def test_a_row_with_a_repeated_target_is_not_taken_for_a_full_row():
    # source 0 lists target 1 twice and never target 2: as many synapses as targets, not full
    fan = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1]), np.array([0, 3])), shape=(1, 3)
    )
    proj = Projection("a", "b", fan.T)
    assert proj.repeats_targets and proj.n_synapses == 3
    assert not Projection("a", "b", np.ones((3, 1))).repeats_targets
    graph = Graph(
        [Population("a", 1, _lif()), Population("b", 3, VNParams(eta=0.1, lam=0.0))], [proj]
    )
    eng = Engine(graph)
    out, tb = eng._outgoing[0], eng.buffers[1]
    assert not out.full_rows
    slot = 1 % graph.ring_length
    synops = fan_out_uniform(np.array([0]), np.array([2.0]), 1, out.indptr, out.indices, out.data,
                             out.full_rows, tb.ring[0, slot], tb.tflag[slot], tb.tidx[slot],
                             tb.tcount, slot)  # fmt: skip
    assert synops == 3
    assert np.array_equal(tb.ring[0, slot], [2.0, 10.0, 0.0])
    assert list(tb.tidx[slot, : tb.tcount[slot]]) == [0, 1]  # target 2 received nothing


def test_dense_recurrent_vn_engine_equals_dense_jacobi_ista():
    """A full Gram (every row full) through the uniform path: the engine's codes equal plain
    dense ISTA with c = G g_sent to rounding after every step."""
    rng = np.random.default_rng(3)
    d, k = 12, 40
    S = rng.standard_normal((d, k))
    S /= np.linalg.norm(S, axis=0)
    x = S[:, :3] @ np.array([1.0, -0.7, 0.5])
    G, b = S.T @ S, S.T @ x
    eta, lam = 1.0 / np.linalg.eigvalsh(G).max(), 0.05
    params = VNParams(eta=eta, lam=lam, drive=b)
    eng = Engine(Graph([Population("v", k, params)], [Projection("v", "v", G)]))
    g = np.zeros(k)
    for step in range(60):
        eng.run(1)
        z = g + eta * (b - G @ g)
        g = np.sign(z) * np.maximum(np.abs(z) - eta * lam, 0.0)
        np.testing.assert_allclose(eng.state["v"]["g"], g, rtol=0, atol=1e-12, err_msg=str(step))
    assert 0 < np.count_nonzero(g) < k


def test_the_readme_storage_figures():
    # README: "8.1 bytes per synapse" (float32), "12.1 for float64" at 100 synapses per source
    # with per-synapse weights, and "4.1 bytes per synapse" when every weight is the same
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    said = {
        "float32": float(re.search(r"\*\*([0-9.]+) bytes per synapse\*\* for float32", readme)[1]),
        "float64": float(re.search(r"\(([0-9.]+) for float64\)", readme)[1]),
    }
    equal = float(re.search(r"as in CUBA: \*\*([0-9.]+) bytes per synapse", readme)[1])
    n = 1000
    rng = np.random.default_rng(0)
    rows = np.concatenate([rng.choice(n, 100, replace=False) for _ in range(n)])
    cols = np.repeat(np.arange(n), 100)
    random_w = sp.csc_matrix((rng.uniform(0.1, 1.0, 100 * n), (rows, cols)), shape=(n, n))
    equal_w = sp.csc_matrix((np.full(100 * n, 0.5), (rows, cols)), shape=(n, n))
    for dtype, figure in said.items():
        for w, want in ((random_w, figure), (equal_w, equal)):
            graph = Graph([Population("a", n, _lif(dtype))], [Projection("a", "a", w)])
            assert round(graph.projections[0].bytes_per_synapse, 1) == want, dtype


def test_equal_weights_are_held_once_and_read_as_before():
    # one weight stored for a projection whose weights are all equal; the engine's spikes are
    # those of the same graph with the weights spelled out per synapse (a -0.0 breaks equality)
    n = 400
    rng = np.random.default_rng(3)
    w = sp.random(n, n, density=0.05, random_state=rng, format="csc")
    w.data[:] = 0.7
    proj = Projection("a", "a", w)
    assert proj.uniform_weight == 0.7 and proj.stored_bytes["data"] == 8
    assert proj.data.shape == (w.nnz,) and not proj.data.flags.writeable
    assert proj.with_weight_dtype(np.float32).stored_bytes["data"] == 4
    mixed = w.copy()
    mixed.data[0] = -0.0
    mixed.data[1] = 0.0
    assert Projection("a", "a", mixed).uniform_weight is None
    params = _lif("float64")
    drive = rng.uniform(0.0, 2.0, (50, n))
    runs = []
    for lean in (True, False):  # the lean kernels read the scalar, the general ones per synapse
        eng = Engine(Graph([Population("a", n, params)], [Projection("a", "a", w)]), lean=lean)
        runs.append(eng.run(50, inputs={"a": drive}).events)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert runs[0].sum() > 0
