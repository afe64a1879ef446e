"""The VN benchmark harness: both families end to end in --quick (tables, finite values, plots,
parameter counts, validation and curves), resume/overwrite rules, one-line errors, OOD splits
disjoint from ID and (where stated) outside the ID span, the bench VN on the event engine, every
family's parameter budget, and docs/benchmarks_vn.md equal to what the report renders."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mambapy")

from atomspark.scenarios.bench import bumps2d, fn1d  # noqa: E402
from atomspark.scenarios.bench.runner import run_benchmark  # noqa: E402
from atomspark.scenarios.bench.tables import finite_values  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.sim.core import AtomsparkError  # noqa: E402

pytestmark = pytest.mark.torch

PEERS = ["GappyPCA", "DictLasso", "Smoothing", "Trivial"]
EXPECTED = {
    "fn1d": (["VN", "VN-1", "Transformer", "Mamba", "MLP", *PEERS], []),
    "bumps2d": (["VN", "VN-1", "ConvAE", "VAE", "SlotDecoder", *PEERS], ["position_heatmap.png"]),
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def quick_run(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    assert main(["bench", request.param, "--quick", "--out", str(out), "--device", "cpu"]) == 0
    return request.param, out


def _readable_png(path) -> None:
    img = mpimg.imread(path)
    assert img.shape[0] >= 300 and img.shape[1] >= 300, path
    assert float(np.std(img[..., :3])) > 0.02, f"{path} looks blank"


def test_quick_run_tables_values_and_plots(quick_run):
    name, out = quick_run
    models, extra_plots = EXPECTED[name]
    results = json.loads((out / "results.json").read_text())
    family_splits = list(fn1d.SPLITS if name == "fn1d" else bumps2d.SPLITS)
    assert results["splits"] == family_splits and results["splits"][0] == "id"
    assert list(results["models"]) == models
    assert results["missing_cells"] == []
    for m in results["models"].values():
        assert set(m["metrics"]) == {"recon", "masked"}
        for task in m["metrics"].values():
            assert list(task) == family_splits
        assert m["infer_s_per_sample"]["mean"] > 0 and 0 < m["val_score"]["mean"] < 10
    vals = finite_values(results)
    assert vals.size == len(models) * 2 * len(family_splits) * 2 and np.all(np.isfinite(vals))
    entries = results["models"]
    d = int(np.prod(json.loads((out / "examples.json").read_text())["shape"]))
    vn1, vn = entries["VN-1"]["config"], entries["VN"]["config"]
    assert entries["VN-1"]["params"] == d * vn1["atoms"] and vn1["layers"] == 1
    assert vn["layers"] == 2
    assert entries["VN"]["params"] == d * vn["atoms"] + vn["interface"] * (
        vn["atoms"] + vn["atoms2"]
    )
    for name, entry in entries.items():  # networks: counted from their modules, never zero
        if entry["kind"] == "torch":
            assert entry["params"] > 1000, name
            curves = entry["curves"]
            assert curves["epochs_run"][0] >= curves["best_epoch"][0] >= 1, name
    facts = results["data_facts"]
    assert (
        facts["n_val"][0] > 0
        and facts["n_train"][0] + facts["n_val"][0] == (results["sizes"]["n_train"])
    )
    table = (out / "results.md").read_text()
    header = "| model | " + " | ".join(family_splits) + " |"
    assert table.count(header) == 4  # one table per task and metric
    for m in models:
        assert f"| {m} | " in table
    for png in ["errors.png", "examples.png", "VN_atoms.png", *extra_plots]:
        _readable_png(out / png)


def test_bench_vn_engine_codes_equal_reference():
    """The benchmark's one-layer VN, trained, gives the NumPy reference ISTA's codes on the event
    engine (masked and full inputs)."""
    from atomspark.scenarios.bench.vn_bench import VNBench, VNBenchConfig

    data = fn1d.make_data(fn1d.Fn1dSizes(n_train=200, n_test=4), 0)
    model = VNBench(VNBenchConfig(atoms=16, lam=0.3, epochs=1), fn1d.LENGTH)
    model.fit(data.train, 0)
    for task in ("recon", "masked"):
        x, observed = data.splits["id"].head(2).task_input(task)
        run = model.engine_run(x, observed, 200)
        assert run["max_rel_error"] < 1e-9 and np.abs(run["codes"]).sum() > 0


def test_vn1_cell_records_the_engine_check(quick_run):
    """The quick run's VN-1 cell: engine codes equal the reference ISTA's; NeuroBench metrics of
    the same run; and no cost section anywhere (costs live in docs/chip_vs_gpu.md)."""
    _, out = quick_run
    engine = json.loads((out / "cells" / "VN-1-seed0.json").read_text())["engine"]
    assert engine["engine_vs_reference_ista_max_rel_error"] < 1e-9
    assert engine["events_per_sample"] > 0
    nb = engine["neurobench"]
    assert 0 <= nb["activation_sparsity"] < 1
    ops = nb["synaptic_operations"]
    assert 0 < ops["effective_acs"] + ops["effective_macs"] <= engine["synops_per_sample"]
    cells = [json.loads(p.read_text()) for p in (out / "cells").glob("*.json")]
    assert not any("cost" in c for c in cells)


def test_run_folder_refuses_then_resumes(quick_run, capsys):
    name, out = quick_run
    assert main(["bench", name, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--resume" in err and "--overwrite" in err
    logs = []
    run_benchmark(name, quick=True, out=out, resume=True, log=logs.append)
    assert sum("skipped" in line for line in logs) == len(EXPECTED[name][0])
    with pytest.raises(AtomsparkError, match="another sizes"):
        run_benchmark(name, quick=True, out=out, resume=True, sizes={"n_test": "3"})


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["bench", "nosuch"], "valid: fn1d, bumps2d"),
        (["bench", "fn1d", "--quick", "--set", "nosuch=3"], "valid:"),
        (["bench", "fn1d", "--quick", "--set", "n_train=x"], "expected a int"),
        (["bench", "fn1d", "--quick", "--models", "VN,GPT"], "valid: VN, VN-1, Transformer"),
        (["bench", "fn1d", "--quick", "--set", "n_train=4000000000"], "GiB"),
    ],
)
def test_bad_input_is_one_line(argv, needle, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert not list(tmp_path.rglob("*-seed*.json"))  # refused before any work


def test_resume_and_overwrite_exclude_each_other(tmp_path):
    with pytest.raises(AtomsparkError, match="exclude each other"):
        run_benchmark("fn1d", quick=True, out=tmp_path, resume=True, overwrite=True)


def test_list_names_every_family(capsys):
    assert main(["bench", "--list"]) == 0
    text = capsys.readouterr().out
    assert "fn1d" in text and "bumps2d" in text and "heldout" in text


@pytest.mark.parametrize("seed", [0, 1])
def test_fn1d_ood_disjoint_from_id(seed):
    train_pairs, held = fn1d.pair_partition(seed)
    assert not set(train_pairs) & set(held) and len(train_pairs) + len(held) == 171
    s = fn1d.sizes(True)
    data = fn1d.make_data(s, seed)
    _, train_meta = fn1d.generate("id", s.n_train, seed, stream=0)
    allowed = set(train_pairs)
    for meta in (train_meta, data.splits["id"].meta, data.splits["amplitude"].meta):
        comps = meta["components"]
        pairs = comps[comps[:, 1] >= 0, :2]
        assert all(tuple(p) in allowed for p in pairs) and (comps[:, 2] < 0).all()
    ood_pairs = data.splits["pairs"].meta["components"][:, :2]
    assert not any(tuple(p) in allowed for p in ood_pairs)
    assert (data.splits["triples"].meta["components"] >= 0).all()
    amp_id = np.abs(train_meta["amplitudes"][train_meta["components"] >= 0])
    amp_ood = np.abs(data.splits["amplitude"].meta["amplitudes"])
    amp_ood = amp_ood[data.splits["amplitude"].meta["components"] >= 0]
    assert amp_id.max() <= fn1d.ID_AMPLITUDE[1] < fn1d.OOD_AMPLITUDE[0] <= amp_ood.min()
    hidden = data.splits["id"].hidden
    assert (hidden.sum(axis=1) == fn1d.BLOCK).all()
    assert (np.diff(hidden.astype(int), axis=1) == 1).sum(axis=1).max() <= 1  # one block


def test_bumps2d_ood_disjoint_from_id():
    s = bumps2d.sizes(True)
    data = bumps2d.make_data(s, 3)
    _, train_meta = bumps2d.generate("id", s.n_train, 3, stream=0)

    def id_flags(meta):
        c = meta["centres"]
        present = ~np.isnan(c[..., 0])
        row, col = bumps2d.cell_of(np.nan_to_num(c))
        return present, bumps2d.is_id_cell(row, col)

    for meta in (train_meta, data.splits["id"].meta, data.splits["more"].meta):
        present, in_id = id_flags(meta)
        assert in_id[present].all()
    present, in_id = id_flags(data.splits["heldout"].meta)
    assert not in_id[present].any()
    present, in_id = id_flags(data.splits["mixed"].meta)
    assert ((present & in_id).any(axis=1) & (present & ~in_id).any(axis=1)).all()
    assert train_meta["counts"].max() <= 3 < data.splits["more"].meta["counts"].min()
    assert (data.splits["id"].hidden.sum(axis=1) == 256).all()
    widths = data.splits["widths"].meta["widths"]
    assert np.nanmax(widths) <= bumps2d.OOD_WIDTH[1] < bumps2d.WIDTH[0]
    present, in_id = id_flags(data.splits["widths"].meta)
    assert in_id[present].all()


def test_fn1d_span_residual_separates_recombination_from_extrapolation():
    """Pairs, triples and amplitude lie in the span of the ID training signals; warp leaves it
    in every sample; nested in most (f(g(t)) with f or g = P1, i.e. t itself, is a primitive
    again, and a few more reduce to sums of primitives, e.g. P3(cos(pi t)))."""
    from atomspark.scenarios.bench.validation import span_basis, span_residual

    s = fn1d.sizes(True)
    data = fn1d.make_data(s, 0)
    basis = span_basis(data.train)
    assert basis.shape[1] == len(fn1d.PRIMITIVES)
    for name in ("id", "pairs", "triples", "amplitude"):
        assert span_residual(basis, data.splits[name].clean) < 1e-20, name
    for name in ("nested", "warp"):
        split = data.splits[name]
        inside = np.array([span_residual(basis, row[None]) < 1e-20 for row in split.clean])
        identity = (split.meta["components"][:, :2] == fn1d.P1_INDEX).any(axis=1)
        if name == "warp":
            assert not inside.any()
        else:
            assert inside[identity].all() and inside.mean() < 0.25
        assert span_residual(basis, split.clean) > 1e-2, name


@pytest.mark.parametrize("name", ["fn1d", "bumps2d", "nbody", "mnist-comp"])
def test_parameter_budget_within_2x_of_vn(name):
    """At every family's default (full) sizes, each network has 0.5x-2x the layered VN's
    parameters; wider configurations a grid tries are reported with their ratio in the tables."""
    from atomspark.scenarios.bench.registry import get_family
    from atomspark.scenarios.bench.validation import prepare_data

    family = get_family(name)
    size = family.sizes(False)
    data = prepare_data(family, family.sizes(True), 0)  # data shapes only; the sizes are full
    factories = family.models(size, data)
    vn = factories["VN"]("cpu").n_params()
    for model_name, factory in factories.items():
        model = factory("cpu")
        if model.kind == "torch":
            assert vn / 2 <= model.n_params() <= 2 * vn, (model_name, model.n_params(), vn)


def test_doc_tables_equal_report_render():
    """docs/benchmarks_vn.md's measured sections are exactly what the report renders from the
    committed cells (a family without committed cells says so)."""
    from pathlib import Path

    from atomspark.scenarios.bench import report
    from atomspark.scenarios.bench.registry import family_names

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "benchmarks_vn.md").read_text()
    for name in family_names():
        block = doc.split(f"<!-- bench:{name}:begin -->\n", 1)[1].split(
            f"<!-- bench:{name}:end -->", 1
        )[0]
        folder = root / "docs" / "results" / "bench" / name
        cells = report.load_cells(folder) if folder.is_dir() else []
        if not cells:
            assert report.NOT_RUN in block, name
            continue
        manifest = report.manifest_of(folder)
        seeds = sorted({c["seed"] for c in cells})
        principal = report.principal_facts(folder, seeds, compute=False)
        assert sorted(principal) == seeds, name  # committed beside the cells
        results = report.aggregate(cells, manifest, manifest["models"], principal)
        assert block == report.section(results), name
    verdict = doc.split("<!-- bench:verdict:begin -->\n", 1)[1].split("<!-- bench:verdict:end", 1)
    every = report.family_results(root / "docs" / "results" / "bench")
    assert verdict[0] == report.verdict_section(every)
    readme = (root / "README.md").read_text()
    quoted = readme.split("<!-- bench:verdict:begin -->\n", 1)[1].split("<!-- bench:verdict:end")
    assert quoted[0] == report.verdict_headline(every)  # the README's sentence, regenerated


def test_mamba_baseline_sees_both_directions():
    """A causal scan cannot fill a block from the context after it; the baseline must."""
    from atomspark.scenarios.bench.baselines import BidirectionalMamba

    torch.manual_seed(0)
    net = BidirectionalMamba(d_model=8, layers=1, d_state=4, patch=8).eval()
    x, obs = torch.zeros(1, 64), torch.ones(1, 64)
    base = net(x, obs)
    x2 = x.clone()
    x2[0, -8:] = 1.0
    assert (net(x2, obs)[0, :8] - base[0, :8]).abs().max() > 1e-6


def test_committed_grids_plan_and_cover_every_model():
    """Every committed protocol grid is a valid sweep, and each tune grid tries every model of
    its family (fn1d's Mamba in its own grid)."""
    from pathlib import Path

    from atomspark.scenarios.bench import report
    from atomspark.scenarios.bench.registry import get_family
    from atomspark.scenarios.sweep.run import plan_grid

    grids = Path(__file__).resolve().parents[1] / "docs" / "results" / "bench" / "grids"
    for path in sorted(grids.rglob("*.toml")):
        assert plan_grid(path).cells, path
    for name in ("fn1d", "bumps2d", "nbody", "mnist-comp"):
        cells = plan_grid(grids / f"{name}-tune.toml").cells
        if name == "fn1d":
            cells = cells + plan_grid(grids / "fn1d-mamba.toml").cells
        tried = {c.params["model"] for c in cells}
        assert tried == set(report.model_names(get_family(name))), name
