"""The split RSGN's readout as chip processes (mapping/split_readout.py): the transform programs'
products r = alpha h summed by feature partials and integer accumulators through cls_w's two 8-bit
mantissas. The split schedule's reference run read out this way equals the engine-side integer
counterpart (the same sums from the integer engine's final state) bit for bit, and the float
readout equals rsgn_scores to tolerance; the bundle records the readout (weights, processes on
their cores, costs that fit, the product's microcode), reads it back, refuses a tampered one,
and a stream through it reports the chip's decisions against the float engine."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from atomspark.mapping.lava.bundle import from_graph
from atomspark.mapping.lava.rsgn_split import (
    reference_run,
    reference_stream,
    split_model,
    stream_load_step,
    stream_period,
    stream_phase,
    stream_steps,
    with_readout,
)
from atomspark.mapping.lava.split_bundle import (
    export_split,
    load_split_bundle,
    report_lines,
    split_bundle_costs,
)
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.mapping.split_cores import SplitBlocks, assign_cores, node_order
from atomspark.mapping.split_microcode import READOUT_PRODUCT
from atomspark.mapping.split_readout import (
    PARTIAL_BITS,
    SCORE_BITS,
    engine_scores,
    quantize_readout,
    readout_groups,
    readout_reference,
)
from atomspark.networks import rsgn
from atomspark.networks.datasets import hierarchical_sequences
from atomspark.networks.rsgn_compile import compile_rsgn_tokens
from atomspark.networks.sample_runner import rsgn_scores
from atomspark.sim.core import AtomsparkError
from test_rsgn_split_layout import FLOAT_TOL, MODES, engine_states

TWO_PART = {"split_w_h": True, "per_target_w": True}
SCORE_TOL = 1e-7  # float scores: n d products, each from states within FLOAT_TOL of the engine's


def close_scores(a, b) -> None:
    """Float class scores equal to SCORE_TOL relative to the largest."""
    np.testing.assert_allclose(a, b, rtol=0, atol=SCORE_TOL * max(1.0, float(np.abs(b).max())))


def small_model(mode: str = "published", n: int = 20, d: int = 8, samples: int = 6):
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=n, d_hidden=d, n_classes=3, n_steps=4, **MODES[mode])
    params = rsgn.init_params(cfg, seed=1)
    tokens = hierarchical_sequences(n=samples, length=12, dim=cfg.d_in, n_classes=3, seed=1)
    return params, cfg, tokens.tokens


def _graph(params, cfg, tokens, fixed: bool):
    graph = compile_rsgn_tokens(params, cfg, tokens[0])
    return quantize_rsgn_graph(graph, **TWO_PART) if fixed else graph


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("fixed", [True, False])
def test_reference_readout_equals_the_engine_side_counterpart(mode, fixed):
    params, cfg, tokens = small_model(mode)
    g = _graph(params, cfg, tokens, fixed)
    steps = cfg.n_steps + 1
    model = split_model(from_graph(g))
    cores = assign_cores(model.n, model.d, SplitBlocks(5, 4, 10), node_order(model.w_t, model.pool))
    readout = quantize_readout(params, fixed, model.n, 10)
    groups = readout_groups(cores, model.d, 2)
    assert len(groups) == 2 and sorted(np.concatenate(groups)) == list(range(model.n * model.d))
    run = reference_run(with_readout(model, readout.shift, steps), steps)
    chip, over = readout_reference(readout, run.r, groups)
    alpha, h, _ = engine_states(g, steps)
    engine, _ = engine_scores(readout, alpha[-1], h[-1], groups)
    assert over == 0 and chip.shape == (cfg.n_classes,)
    if fixed:
        assert chip.dtype == np.int64 and np.array_equal(chip, engine)
        # in float units within the rounding of cls_w (half a mantissa step), of every product
        # (half a unit) and of the bias from the host readout of the same integer state
        a, hh = alpha[-1] * 2.0**-12, h[-1] * 2.0**-10
        host = rsgn_scores(params, [(a, hh)])[0]
        features = np.abs((a[:, None] * hh).sum(axis=0)).sum()
        bound = features * 2.0 ** (readout.weight_exp - 7) + 2.0 ** (readout.score_exp + 7)
        w_max = np.abs(params.cls_w).max() + 2.0**readout.weight_exp
        bound += model.n * model.d * 2.0 ** (readout.shift - 11) * w_max
        assert np.abs(readout.float_scores(chip) - host).max() <= 1.01 * bound
    else:
        close_scores(chip, engine)
        host = rsgn_scores(params, [(alpha[-1], h[-1])])[0]
        close_scores(chip, host)
        np.testing.assert_allclose(engine, host, rtol=0, atol=FLOAT_TOL)


def test_the_readout_shift_keeps_every_sum_inside_its_format():
    params, _, _ = small_model()
    params.ln_gain = np.full_like(params.ln_gain, 3.0)  # a large LayerNorm gain: a larger shift
    small = quantize_readout(params, True, 20, 10)
    big = quantize_readout(params, True, 2000, 1000)
    assert big.shift > small.shift >= 0 and small.weights_lo is not None
    d = params.cls_w.shape[0]
    for r, n, group in ((small, 20, 10), (big, 2000, 1000)):
        per_node = 1.01 * (3.0 * d + np.abs(params.ln_bias).sum()) * 2**10 + d
        w = max(np.abs(part).max() for part in r.parts())
        assert n * per_node * w / 2**r.shift + np.abs(r.bias).max() < 2 ** (SCORE_BITS - 1)
        assert group * per_node / 2**r.shift < 2 ** (PARTIAL_BITS - 1)
        assert r.score_exp == r.weight_exp - 7 + r.shift - 10
        # W in two parts: hi 2**7 + lo within half a low step of cls_w
        joined = (r.weights * 2**7 + r.weights_lo) * 2.0 ** (r.weight_exp - 7)
        assert np.abs(joined - params.cls_w).max() <= 2.0 ** (r.weight_exp - 7)


def _bundle(tmp_path, fixed=True):
    params, cfg, tokens = small_model()
    out = export_split(from_graph(_graph(params, cfg, tokens, fixed)), tmp_path / "b",
                       classifier=params)  # fmt: skip
    return out, params, cfg, tokens


def test_the_bundle_holds_the_readout_on_its_cores(tmp_path):
    out, params, cfg, _ = _bundle(tmp_path)
    split = json.loads((out / "metadata.json").read_text())["split"]
    section = split["readout"]
    assert section["classes"] == cfg.n_classes and len(section["weights"]) == cfg.d_hidden
    network_cores = {p["core"] for p in split["processes"]}
    readout_cores = [p["core"] for p in section["processes"] if p["core"] is not None]
    costs = split_bundle_costs(load_split_bundle(out))
    # on the network's cores where their limits allow, else on cores added after them
    assert readout_cores and max(readout_cores) < costs["cores_total"]
    assert section["added_cores"] == costs["cores_total"] - len(network_cores)
    assert section["placement"] == costs["readout_placement"]
    assert {p["lava_process"] for p in section["processes"]} >= {"GradedVec"}
    assert section["microcode"]["transform"]["name"] == READOUT_PRODUCT.name
    n, d = cfg.n_nodes, cfg.d_hidden
    assert section["microcode"]["instructions_per_sample"] == n * d * READOUT_PRODUCT.instructions
    assert "host" in split["encoding"]
    sb = load_split_bundle(out)
    assert np.array_equal(sb.readout.weights, quantize_readout(params, True, n, n).weights)
    costs = split_bundle_costs(sb)
    assert [c.to_dict() for c in costs["readout_costs"]] == section["cores"]
    partials = [c for c in costs["readout_costs"] if c.kind == "readout"]
    assert not costs["problems"] and sum(c.synapses for c in partials) == n * d
    lines = report_lines(costs)
    assert any("readout on chip" in ln for ln in lines)
    run = json.loads((out / "metadata.json").read_text())["hardware_run"]
    assert any(p["lava_process"] == "GradedVec" and p["standard_lava_process"]
               for p in run["processes"])  # fmt: skip


def test_a_tampered_readout_is_refused(tmp_path):
    out, *_ = _bundle(tmp_path)
    meta = json.loads((out / "metadata.json").read_text())
    meta["split"]["readout"]["bias"] = meta["split"]["readout"]["bias"][:-1]
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match="readout section incomplete"):
        load_split_bundle(out)
    meta["split"]["readout"] = [1, 2]
    (out / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(AtomsparkError, match="readout section must be an object"):
        load_split_bundle(out)


@pytest.mark.parametrize("fixed", [True, False])
def test_a_stream_is_read_out_by_the_bundles_readout(fixed, tmp_path):
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.mapping.quantize import fixed_rsgn_runner
    from atomspark.networks.sample_runner import rsgn_runner

    out, params, cfg, tokens = _bundle(tmp_path, fixed)
    sb = load_split_bundle(out)
    result = run_stream(sb, params, cfg, tokens)
    runner = rsgn_runner(params, cfg)
    if fixed:
        runner = fixed_rsgn_runner(runner, **TWO_PART)
    finals = runner.run(tokens, cfg.n_steps + 1).outputs
    groups = sb.readout_groups()
    for acc, (alpha, h) in zip(result.accumulator, finals):
        if fixed:  # the integer engine's final state, back in its integer formats
            alpha = np.round(alpha * 2.0**12).astype(np.int64)
            h = np.round(h * 2.0**10).astype(np.int64)
        ref, _ = engine_scores(sb.readout, alpha, h, groups)
        if fixed:
            assert np.array_equal(acc, ref)
        else:
            close_scores(acc, ref)
    assert result.overflows == 0
    agree = np.mean(result.scores.argmax(1) == result.float_scores.argmax(1))
    assert result.decision_agreement == agree and (not fixed or agree >= 0.5)
    if not fixed:
        assert agree == 1.0


def test_a_streams_schedule_has_an_idle_step_then_a_load_per_sample():
    assert stream_period(2) == 7 and stream_steps(2, 2, 2) == 17 and stream_load_step(1, 2) == 9
    phases = [stream_phase(t, 7) for t in range(1, 10)]
    assert phases == ["idle", "load", "emit", "sum", "transform", "norm", "pool", "emit", "load"]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("fixed", [True, False])
def test_one_stream_through_the_schedule_equals_a_run_per_sample(mode, fixed):
    """The reset phase drops every state of the sample before: a stream's products equal those
    of a fresh run per sample, exactly (the same arithmetic in the same order)."""
    from atomspark.mapping.lava.split_stream import encoded_states

    params, cfg, tokens = small_model(mode, samples=4)
    model = split_model(from_graph(_graph(params, cfg, tokens, fixed)))
    states, _, steps = encoded_states(model, params, cfg, tokens)
    shift = quantize_readout(params, fixed, model.n, model.n).shift
    stream = reference_stream(with_readout(model, shift, steps), states, steps)
    assert stream.shape == (len(tokens), model.n * model.d) and np.any(stream != 0)
    for r, state in zip(stream, states):
        one = replace(model, node={**model.node, "alpha0": state["alpha"], "h0": state["h"]})
        np.testing.assert_array_equal(r, reference_run(with_readout(one, shift, steps), steps).r)
