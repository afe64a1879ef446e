"""Chip-vs-GPU ratios: the same static scope on both sides, the GPU at its best (precision,
launch model, sparse kernel), headline inside its range, the tornado plot readable, no ratio for
a chip row that does not fit, and assumptions changed from the command line."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.mapping.chip_gpu_ratios import (
    SCALED,
    Assumptions,
    ChipRow,
    GPUVariant,
    compare_workload,
)
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase, price_algorithm
from atomspark.mapping.hardware import load_hardware
from atomspark.sim.core import AtomsparkError

H100 = load_hardware("h100")


def _alg(precision="fp32", kernel="dense", flops=4e6, weight_bytes=4e6, ops=40.0) -> DenseAlgorithm:
    phase = Phase("p", np.array([20.0, 40.0]), flops, weight_bytes, 1e4, ops, gemm_fraction=0.9)
    return DenseAlgorithm("toy", (phase,), "given", precision=precision, kernel=kernel)


def _variants(passing=("fp32", "tf32", "bf16"), failing=("int8",)) -> list[GPUVariant]:
    out = [GPUVariant(p, "dense", _alg(p), True, "ok") for p in passing]
    out += [GPUVariant(p, "dense", _alg(p), False, "not reached") for p in failing]
    out.append(GPUVariant("fp32", "sparse", _alg("fp32", "sparse", flops=1e6), True, "ok"))
    return out


def _chip(fits=True) -> ChipRow:
    if not fits:
        return ChipRow("loihi2", False, "does not fit: too many axons", problems=("axons",))
    return ChipRow(
        "loihi2", True, "split", cores=10, chips=1, dynamic_j=2e-6,
        static_j={"device": 3e-6, "shared": 3e-6 * 10 / 128}, latency_s=1e-4, steps=100,
        copies_per_chip=12,
    )  # fmt: skip


@pytest.mark.parametrize("scope", ["device", "shared"])
def test_static_scope_is_the_same_on_both_sides(scope):
    r = compare_workload("w", _chip(), _variants(), H100, Assumptions(static_scope=scope))
    assert r["chip"]["static_scope"] == scope
    assert {g["static_scope"] for g in r["gpu"]} == {scope}
    assert r["chip"]["energy_uJ"] == pytest.approx((2e-6 + _chip().static_j[scope]) * 1e6)


def test_gpu_static_scope_device_charges_idle_for_the_whole_time():
    alg = _alg()
    dev = price_algorithm(alg, H100, 1, "per-op", static_scope="device")
    shared = price_algorithm(alg, H100, 1, "per-op", static_scope="shared")
    t, k = dev.latency_s, dev.kernel_time_s
    assert dev.energy_j == pytest.approx(
        H100.idle_power_w * t + (H100.busy_power_w - H100.idle_power_w) * k
    )
    assert shared.energy_j == pytest.approx(H100.busy_power_w * k)
    assert shared.energy_j < dev.energy_j


def test_launch_models_and_precisions_order_as_expected():
    alg = _alg()
    t = {m: price_algorithm(alg, H100, 1, m).time_s for m in ("graph", "per-iteration", "per-op")}
    assert t["graph"] < t["per-iteration"] < t["per-op"]
    big = 4096  # compute-bound: tensor-core precisions are faster than fp32 CUDA cores
    e = {p: price_algorithm(alg, H100, big, "graph", p).time_s for p in ("fp32", "tf32", "bf16")}
    assert e["bf16"] < e["tf32"] < e["fp32"]
    with pytest.raises(AtomsparkError, match="precision 'fp8'"):
        price_algorithm(alg, H100, 1, "graph", "fp8")


def test_headline_is_the_cheapest_passing_variant_and_inside_its_range():
    r = compare_workload("w", _chip(), _variants(), H100, Assumptions())
    assert r["headline"]["precision"] != "int8"  # int8 does not reach the accuracy
    head = r["gpu"][0]
    assert head["launch_model"] == "graph" and head["batch"] == 1
    for key in ("batch_1", "throughput"):
        q = r[key]
        assert q["ratio_min"] <= q["ratio"] <= q["ratio_max"]
        for bar in q["tornado"]:
            assert q["ratio_min"] <= bar["low"] <= bar["headline"] <= bar["high"] <= q["ratio_max"]
        labels = {b["assumption"] for b in q["tornado"]}
        assert labels == {"static_scope", "launch_model", "placement", *SCALED}
    assert r["ratio"] == r["throughput"]["ratio"] and r["ratio_min"] <= r["ratio_max"]


def test_every_row_carries_the_machine_readable_fields():
    r = compare_workload("w", _chip(), _variants(), H100, Assumptions())
    for key in ("fits", "cores", "static_scope", "energy_uJ", "latency_us", "batch"):
        assert key in r["chip"]
    for g in r["gpu"]:
        for key in (
            "fits",
            "static_scope",
            "energy_uJ",
            "latency_us",
            "precision",
            "launch_model",
            "batch",
        ):
            assert key in g


def test_a_chip_row_that_does_not_fit_has_no_energy_and_no_ratio():
    r = compare_workload("w", _chip(fits=False), _variants(), H100, Assumptions())
    assert r["fits"] is False and r["ratio"] is None and r["chip"]["energy_uJ"] is None
    assert r["gpu"]  # the GPU side is still shown


def test_a_scaled_constant_moves_the_ratio_and_the_range_follows():
    base = compare_workload("w", _chip(), _variants(), H100, Assumptions())
    idle = Assumptions(scales={"gpu_idle_power": 0.5})
    low = compare_workload("w", _chip(), _variants(), H100, idle)
    assert low["batch_1"]["ratio"] < base["batch_1"]["ratio"]
    assert low["batch_1"]["ratio_max"] < base["batch_1"]["ratio_max"]  # device scope: idle counts


def test_sparse_rsgn_kernel_prices_the_stored_synapses():
    pytest.importorskip("torch")
    from atomspark.networks import rsgn
    from atomspark.networks.rsgn_compile import compile_rsgn_tokens
    from atomspark.scenarios.compare.gpu_side import rsgn_algorithm

    cfg = rsgn.RSGNConfig(
        mode="sparse", n_nodes=64, d_hidden=16, n_classes=3, n_steps=2, k_nearest=4
    )
    params = rsgn.init_params(cfg, seed=0)
    graph = compile_rsgn_tokens(
        params, cfg, np.random.default_rng(0).standard_normal((6, cfg.d_in))
    )
    dense = rsgn_algorithm(params, cfg, graph, 2, "dense").phases[0]
    sparse = rsgn_algorithm(params, cfg, graph, 2, "sparse").phases[0]
    nnz = sum(p.n_synapses for p in graph.projections)
    n, d = 64, 16
    assert dense.flops == pytest.approx(2 * n * n * d + 2 * n * d * d + 4 * n * d)
    assert sparse.flops == pytest.approx(2 * nnz * d + 2 * n * d * d + 4 * n * d)
    assert sparse.index_bytes == 4 * (nnz + n + 1) and sparse.gemm_fraction < dense.gemm_fraction


@pytest.mark.parametrize("k", [0, 3])
def test_rsgn_gpu_algorithm_computes_the_class_scores_as_the_chip_does(k):
    """Both sides end with the class scores: the GPU's algorithm has a readout phase once per
    sample (F = sum_j alpha_j h_j and F cls_w + cls_b, cls_w read per batch, the readout's own
    launches); its propagation steps carry only the ops of the K steps (the encoder is priced on
    neither side)."""
    torch = pytest.importorskip("torch")
    from atomspark.networks import rsgn
    from atomspark.networks.rsgn_compile import compile_rsgn_tokens
    from atomspark.networks.torch_path.convert import rsgn_to_torch
    from atomspark.scenarios.compare.gpu_side import count_ops, rsgn_algorithm

    cfg = rsgn.RSGNConfig(mode="published", n_nodes=24, d_hidden=8, n_classes=5, n_steps=k)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((6, cfg.d_in))
    graph = compile_rsgn_tokens(params, cfg, tokens)
    step, readout = rsgn_algorithm(params, cfg, graph, 3, "dense").phases
    n, d, c = 24, 8, 5
    assert readout.name == "readout" and readout.iterations.tolist() == [1.0, 1.0, 1.0]
    assert readout.flops == pytest.approx(2 * n * d + 2 * d * c + c)
    assert readout.weight_bytes == 4 * (d * c + c) and readout.ops >= 3
    assert step.iterations.tolist() == [k] * 3  # K = 0: no propagation step
    module = rsgn_to_torch(params, cfg).eval()
    t = torch.zeros(1, 4, cfg.d_in, dtype=module.positions.dtype)
    whole, outside = count_ops(lambda: module(t)), count_ops(lambda: module(t, n_steps=0))
    one = count_ops(lambda: module(t, n_steps=1)) - outside  # a step's ops, no encoder's
    assert step.ops * k == pytest.approx(whole - outside) if k else step.ops == one
    assert outside > readout.ops  # the encoder's ops are left out of the priced phases
    # where the chip's bundle reads out on the host (node layout), neither side prices it
    (alone,) = rsgn_algorithm(params, cfg, graph, 3, "dense", readout=False).phases
    assert alone.name == step.name and alone.flops == step.flops and alone.ops == step.ops


@pytest.mark.parametrize(
    ("mode", "k", "readout"), [("published", 3, True), ("sparse", 2, False), ("published", 0, True)]
)
def test_the_measured_rsgn_path_times_exactly_the_priced_ops(mode, k, readout):
    """The CUDA meter times rsgn_timed_work: the K steps from the ignition and the readout only
    where the row prices one; the encoder and the weights' set-up run before, untimed."""
    torch = pytest.importorskip("torch")
    from atomspark.networks import rsgn
    from atomspark.networks.rsgn_compile import compile_rsgn_tokens
    from atomspark.networks.torch_path.convert import rsgn_to_torch
    from atomspark.scenarios.compare.gpu_side import count_ops, rsgn_algorithm, rsgn_timed_work

    extra = {"k_nearest": 6, "cutoff": 0.2} if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=24, d_hidden=8, n_classes=5, n_steps=k, **extra)
    params = rsgn.init_params(cfg, seed=0)
    tokens = np.random.default_rng(0).standard_normal((6, cfg.d_in))
    graph = compile_rsgn_tokens(params, cfg, tokens)
    alg = rsgn_algorithm(params, cfg, graph, 1, "dense", readout=readout)
    priced = sum(ph.ops * ph.iterations[0] for ph in alg.phases)
    module = rsgn_to_torch(params, cfg).eval()
    one = torch.from_numpy(tokens[None]).to(module.positions.dtype)
    assert count_ops(rsgn_timed_work(module, one, readout)) == pytest.approx(priced)
    # at any batch: the forward's steps (and readout) and nothing else
    t = torch.from_numpy(np.stack([tokens, tokens[::-1]]).copy()).to(module.positions.dtype)
    work = rsgn_timed_work(module, t, readout)
    with torch.no_grad():
        a, h = module.initial_state(t)
    steps = count_ops(lambda: module(t)) - count_ops(lambda: module(t, n_steps=0))
    assert count_ops(work) == steps + (count_ops(lambda: module.readout(a, h)) if readout else 0)
    with torch.no_grad():
        scores, alpha = module(t)
        out = work()
    if readout:
        assert torch.equal(out, scores)
    else:
        assert torch.equal(out[0], alpha)


def test_precision_emulation_rounds_matrix_operands():
    torch = pytest.importorskip("torch")
    from atomspark.scenarios.compare.gpu_precision import PrecisionMode, round_mantissa

    x = torch.tensor([1.0 + 2**-9, 3.14159265])
    assert round_mantissa(x, 7).tolist() == x.bfloat16().float().tolist()
    a, b = torch.randn(4, 8, dtype=torch.float64), torch.randn(8, 3, dtype=torch.float64)
    errors = {}
    for p in ("fp32", "tf32", "bf16", "int8"):
        with PrecisionMode(p):
            c = a @ b
        assert c.dtype == torch.float64
        errors[p] = float((c - a @ b).abs().max())
    assert errors["fp32"] < 1e-5 < errors["tf32"] < errors["bf16"]


def test_bad_assumption_flags_are_one_line_and_leave_nothing(tmp_path, capsys):
    pytest.importorskip("torch")
    from atomspark.scenarios.cli.main import main
    from atomspark.scenarios.compare.chip_rows import parse_assumptions

    with pytest.raises(AtomsparkError, match="--assume 'gpu_idle=2'"):
        parse_assumptions(assume=["gpu_idle=2"])
    with pytest.raises(AtomsparkError, match="SCALE > 0"):
        parse_assumptions(assume=["gpu_idle_power=-1"])
    assert parse_assumptions(assume=["chip_op_energy=2"]).scale("chip_op_energy") == 2.0
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--assume", "nope=2"]) != 0
    assert not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--assume" in err[0]


def test_tornado_and_ratio_plots_are_readable_and_labels_do_not_overlap(tmp_path, checked_plots):
    from atomspark.scenarios.compare.ratio_plots import plot_ratios, plot_tornado

    results = {
        name: compare_workload(name, _chip(), _variants(), H100, Assumptions())
        for name in ("VN settle", "RSGN sparse")
    }
    results["RSGN published"] = compare_workload(
        "RSGN published", _chip(fits=False), _variants(), H100, Assumptions()
    )
    plot_tornado(results, tmp_path / "tornado.png")
    plot_ratios(results, tmp_path / "chip_vs_gpu.png")
    assert set(checked_plots) >= {"tornado", "chip_vs_gpu"}
    assert checked_plots == {k: [] for k in checked_plots}


@pytest.fixture
def checked_plots(monkeypatch):
    """Every saved figure's readability problems (tests/test_plots.py) plus overlapping texts."""
    from matplotlib.figure import Figure
    from test_plots import figure_problems

    seen: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        problems = figure_problems(self)
        renderer = self.canvas.get_renderer()
        texts = [t for ax in self.axes for t in (*ax.texts, ax.title) if t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        for i, a in enumerate(boxes):
            if any(a.overlaps(b) for b in boxes[i + 1 :]):
                problems.append(f"text '{texts[i].get_text()}' overlaps another")
        name = str(getattr(fname, "name", fname))  # a path, or atomic_write_figure's buffer
        seen[name.split("/")[-1].lstrip(".").split(".png")[0].split(".tmp")[0]] = problems
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return seen


def test_dataclass_assumptions_default_is_the_gpu_at_its_best():
    a = Assumptions()
    assert (a.static_scope, a.launch_model, a.precision, a.kernel) == (
        "device",
        "graph",
        None,
        None,
    )
    assert dataclasses.replace(a, scales={"chip_op_energy": 2}).scale("chip_op_energy") == 2


def _spread_chip() -> ChipRow:
    """Two placements of one run: packed (1 core, slow) and spread (8 cores, fast)."""
    packed = dataclasses.replace(_chip(), cores=1, latency_s=3.3e-4, copies_per_chip=128,
                                 static_j={"device": 1e-5, "shared": 1e-5 / 128})  # fmt: skip
    spread = dataclasses.replace(_chip(), cores=8, latency_s=1e-4, copies_per_chip=16,
                                 static_j={"device": 3e-6, "shared": 3e-6 * 8 / 128})  # fmt: skip
    return dataclasses.replace(packed, placements=(packed, spread))


def test_the_headline_uses_the_placement_optimal_for_its_objective():
    r = compare_workload("w", _spread_chip(), _variants(), H100, Assumptions())
    assert r["chip"]["cores"] == 8  # energy per sample at batch 1: the spread one
    assert r["batch_1"]["chip_cores"] == 8
    choice = r["chip"]["placement_choice"]
    assert choice["latency-optimal, batch_1"]["cores"] == 8
    # at throughput the packed placement holds 128 copies: its static power is shared by more
    assert r["throughput"]["chip_cores"] == 1
    assert {p["cores"] for p in r["chip"]["placements"]} == {1, 8}
    latency = compare_workload(
        "w", _spread_chip(), _variants(), H100,
        Assumptions(placement="latency", fixed=("placement",)),
    )  # fmt: skip
    assert latency["throughput"]["chip_cores"] == 8
    assert latency["throughput"]["ratio"] < r["throughput"]["ratio"]


def test_strawmen_stay_out_of_the_range_and_go_to_their_own_table():
    r = compare_workload("w", _chip(), _variants(), H100, Assumptions())
    rows = {row["what"]: row for row in r["how_not_to_run_it"]}
    eager = rows["eager launches, one per tensor op"]
    assert eager["batch_1"] > r["batch_1"]["ratio_max"]  # a strawman would stretch the range
    assert any("slower than the cheapest passing" in w for w in rows)
    assert any("does not reach the chip's accuracy" in w for w in rows)
    for key in ("batch_1", "throughput"):
        q = r[key]
        assert q["time_ratio_min"] <= q["time_ratio"] <= q["time_ratio_max"]
        assert q["gpu_time_per_sample_us"] / q["chip_time_per_sample_us"] == pytest.approx(
            q["time_ratio"]
        )


def test_flags_the_user_fixes_are_fixed_in_the_range():
    from atomspark.scenarios.compare.chip_rows import parse_assumptions

    free = compare_workload("w", _chip(), _variants(), H100, parse_assumptions())
    fixed_a = parse_assumptions(static_scope="device", launch_model="graph", precision="fp32")
    assert set(fixed_a.fixed) == {"static_scope", "launch_model", "precision"}
    fixed = compare_workload("w", _chip(), _variants(), H100, fixed_a)
    for key in ("batch_1", "throughput"):
        labels = {b["assumption"] for b in fixed[key]["tornado"]}
        assert not labels & {"static_scope", "launch_model"}
        assert fixed[key]["ratio_max"] / fixed[key]["ratio_min"] <= (
            free[key]["ratio_max"] / free[key]["ratio_min"]
        )
    assert fixed["headline"]["precision"] == "fp32"
    eager = parse_assumptions(launch_model="per-op")
    r = compare_workload("w", _chip(), _variants(), H100, eager)
    assert r["batch_1"]["ratio_min"] == r["batch_1"]["ratio_max"] or all(
        b["assumption"] != "launch_model" for b in r["batch_1"]["tornado"]
    )
