"""The paper-reproduction grid: every cell is a valid config with the paper's parameter count,
and a finished cell becomes one small JSON with per-epoch validation accuracy and activity."""

import copy
import json

import matplotlib.image
import pytest

torch = pytest.importorskip("torch")  # the Lava environment has no torch

from atomspark.networks.torch_path.baselines import n_parameters  # noqa: E402
from atomspark.networks.torch_path.training import build_model  # noqa: E402
from atomspark.scenarios.paper import grid as paper_grid  # noqa: E402
from atomspark.scenarios.paper import layout as paper_layout  # noqa: E402
from atomspark.scenarios.paper import tables as paper_tables  # noqa: E402
from atomspark.scenarios.sweep.cell import execute_cell  # noqa: E402
from atomspark.scenarios.sweep.grid import Cell  # noqa: E402

PAPER_PARAMETERS = {  # the paper's tables and ablation (RSGN), the released notebook (baselines)
    "hierarchical-transformer-seed42": 403_348,
    "hierarchical-sparse-transformer-seed42": 403_348,
    "hierarchical-lstm-seed42": 566_292,
    "hierarchical-mlp-seed42": 281_364,
    "hierarchical-rsgn-hebbian-seed42": 41_672,
    "long-range-transformer-seed42": 600_330,
    "long-range-lstm-seed42": 563_722,
    "long-range-rsgn-hebbian-seed42": 40_382,
    "nodes128": 32_840,
    "nodes512": 59_336,
}


def _n_params(params: dict) -> int:
    d = params["data"]
    return n_parameters(build_model(params, d["dim"], {"n_classes": d["n_classes"]}, "cpu", None))


def test_grid_cells_have_the_papers_parameter_counts():
    by_name = {name: c for g in ("main", "ablation") for name, _, c in paper_grid.cells(g)}
    counts = {name: _n_params(by_name[name].params) for name in PAPER_PARAMETERS}
    assert counts == PAPER_PARAMETERS


def test_main_grid_is_both_tasks_all_models_three_seeds_at_the_released_protocol():
    main = paper_grid.cells("main")
    expected = {
        f"{task}-{model}-seed{seed}"
        for task in paper_layout.TASKS
        for model in paper_tables.MODELS
        for seed in paper_layout.SEEDS
    }
    assert {name for name, _, _ in main} == expected and len(main) == len(expected)
    for _, _, cell in main:
        cfg = cell.params
        assert cfg["epochs"] == 50
        assert (cfg["data"]["seed"], cfg["data"]["split_seed"]) == (42, 42)
        assert cfg["optimizer"] == {
            "lr": 1e-3,
            "weight_decay": 1e-4,
            "grad_clip": 1.0,
            "schedule": "cosine-epoch",
        }
        assert cfg["batch_size"] == (64 if cfg["data"]["kind"] == "hierarchical" else 32)


def test_ablation_reads_full_and_no_hebbian_from_the_notebook_grid():
    """The ablation runs on the paper's own sequences; its full and no-Hebbian rows are the
    notebook-data grid's cells, which differ from each ablation cell only in the ablated key."""
    notebook = {name: c.params for name, _, c in paper_grid.cells("notebook")}
    full, plain = notebook["hierarchical-rsgn-hebbian-seed42"], notebook["hierarchical-rsgn-seed42"]
    assert plain["plasticity"]["enabled"] is False and full["plasticity"].get("enabled", True)
    plain_rest = {**plain, "plasticity": {**plain["plasticity"], "enabled": True}}
    assert plain_rest == {**full, "plasticity": {**full["plasticity"], "enabled": True}}
    ablation = {name: c.params for name, _, c in paper_grid.cells("ablation")}
    assert "no-hebbian" not in ablation and "full" not in ablation
    for name, key in (
        ("k1", "n_steps"),
        ("k3", "n_steps"),
        ("nodes128", "n_nodes"),
        ("nodes512", "n_nodes"),
    ):
        cfg = ablation[name]
        assert cfg["data"] == full["data"] and cfg["data"]["stream"] == "notebook"
        assert {**cfg, "model": {**cfg["model"], key: full["model"][key]}} == full


def test_unknown_grid_is_one_error():
    with pytest.raises(paper_grid.AtomsparkError, match="unknown"):
        paper_grid.cells("nope")


def test_finished_cell_is_summarised_tabulated_and_plotted(tmp_path, monkeypatch):
    """A tiny activity cell end to end through the sweep's cell runner: summarise (with the
    engine's Loihi 2 energy), then the doc section and the accuracy-against-activity plot."""
    name, stem, grid_cell = paper_grid.cells("activity")[1]
    assert grid_cell.params["model"]["n_steps"] == 5
    params = copy.deepcopy(grid_cell.params)
    params.update(epochs=2)
    params["data"].update(n=60, length=16)
    params["model"].update(n_nodes=16, k_nearest=4, d_hidden=8, n_steps=2)
    cell = Cell(grid_cell.id, grid_cell.labels, params)
    sweep = tmp_path / "sweeps"
    assert execute_cell("train", cell, str(sweep / stem))["status"] == "done"
    summary = paper_grid.summarise("activity", name, paper_grid.cell_folder(sweep, stem, cell))
    assert [e["epoch"] for e in summary["epochs"]] == [1, 2]
    first = summary["epochs"][0]
    assert len(first["activity_by_step"]) == 3  # ignition and K = 2 steps
    assert first["activity_steps"] == pytest.approx(sum(first["activity_by_step"]) / 3)
    assert summary["n_parameters"] > 0 and summary["wall_s"] > 0
    assert summary["best"]["accuracy"] == max(e["accuracy"] for e in summary["epochs"])
    assert summary["engine"]["energy_per_sample_j"] > 0
    assert 0.0 <= summary["engine"]["accuracy"] <= 1.0
    parts = summary["engine"]["energy_breakdown_j"]
    assert parts["total"] == pytest.approx(summary["engine"]["energy_per_sample_j"])
    assert {"synaptic_ops", "static"} <= set(parts) and min(parts.values()) >= 0
    assert sum(v for k, v in parts.items() if k != "total") == pytest.approx(parts["total"])
    assert summary["first_step_loss"] > 0
    # the trained model is kept beside the JSON (for the grids whose weights are committed)
    from atomspark.networks.model_io import read_task
    from atomspark.networks.rsgn.model import load_model

    kept = paper_grid.keep_model(
        "released", name, paper_grid.cell_folder(sweep, stem, cell), tmp_path
    )
    assert kept == [tmp_path / "models" / "released" / f"{name}.npz"]
    assert load_model(kept[0])[1].n_nodes == 16 and read_task(kept[0]) == summary["config"]
    assert paper_grid.keep_model("activity", name, paper_grid.cell_folder(sweep, stem, cell)) == []
    # ... and diagnosed (paper/diagnosis.py): the tiny model's thresholds and activity
    from atomspark.scenarios.paper import diagnosis

    out = diagnosis.write(kept[0].parent, tmp_path / "diagnosis.json")
    row = json.loads(out.read_text())["runs"][name]
    assert row["positions"]["n_nodes"] == 16 and row["validation_sequences"] == 12
    assert len(row["activity_by_step"]) == 3 and 0.0 <= row["accuracy"] <= 1.0
    assert row["thresholds"]["outside_bounds"] == 0  # the homeostat clamps them
    assert f"| {name} | 2 |" in diagnosis.table(json.loads(out.read_text()))
    assert diagnosis.reading(json.loads(out.read_text())).startswith(f"{name}: every threshold")

    # the tiny cell is not its grid's config (checks.py would leave it out): the format is tested
    monkeypatch.setattr(paper_tables, "split_results", lambda r: (r, [], []))
    results = tmp_path / "results"
    (results / "activity").mkdir(parents=True)
    (results / "activity" / f"{name}.json").write_text(json.dumps(summary))
    loaded = paper_tables.load_results(results)
    text = paper_tables.render(loaded, tmp_path / "curve.png", tmp_path)
    target = grid_cell.params["model"]["target_activity"]
    assert f"| {target:g} | " in text and "µJ" in text and "(curve.png)" in text
    assert "main/hierarchical-transformer-seed42" in text  # listed as missing, not filled in
    # a cell still running is listed with its progress, apart from the results
    running = {("main", "hierarchical-lstm-seed42"): {**summary, "config": {"epochs": 50}}}
    text = paper_tables.render({}, tmp_path / "curve.png", tmp_path, running)
    assert "| main/hierarchical-lstm-seed42 | 2 of 50 |" in text
    png = paper_tables.plot_activity(loaded, tmp_path / "curve.png")
    image = matplotlib.image.imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 300 and image[..., :3].std() > 0.01


def test_no_propagation_control_is_ignition_then_readout():
    cells = paper_grid.cells("activity")
    k0 = [c for _, _, c in cells if c.params["model"]["n_steps"] == 0]
    assert len(k0) == len(cells) // 2  # every K = 5 point has its control
    k5 = {(c.params["model"]["target_activity"], c.params["epochs"]) for _, _, c in cells
          if c.params["model"]["n_steps"] == 5}  # fmt: skip
    assert k5 == {(c.params["model"]["target_activity"], c.params["epochs"]) for c in k0}
    cfg = k0[0].params
    torch.manual_seed(0)
    module = build_model(cfg, 32, {"n_classes": 20}, "cpu", torch.float64)
    x = torch.randn(3, 64, 32, dtype=torch.float64)
    scores, alpha, per_step = module(x, trace=True)
    torch.testing.assert_close(alpha, module.ignition(x))
    assert per_step.shape == (1, 3)


def test_notebook_grid_is_the_main_grids_seed_42_on_the_notebooks_stream():
    main = {name: c.params for name, _, c in paper_grid.cells("main")}
    notebook = paper_grid.cells("notebook")
    assert notebook and all(name in main for name, _, _ in notebook)
    for name, _, cell in notebook:
        assert cell.params["data"]["stream"] == "notebook"
        assert cell.params == {**main[name], "data": {**main[name]["data"], "stream": "notebook"}}


def test_floor_draws_and_notebook_rows_are_tabulated(tmp_path, monkeypatch):
    """The floor's spread over draws of the data (both streams) and the notebook-data table
    beside the paper's seed-42 runs; a notebook cell without results is 'missing'."""

    def fake_floor(cfg: dict, standardise: bool = True) -> float:
        return cfg["data"]["seed"] / 100 - (0.0 if standardise else 0.01)

    monkeypatch.setattr(paper_grid, "_floor_accuracy", fake_floor)
    draws = paper_grid.floor_draws("hierarchical", draws=(42, 43, 44))
    assert draws["floor_accuracy"]["notebook"] == {"42": 0.42, "43": 0.43, "44": 0.44}
    floor = paper_grid.logistic_floor("hierarchical", "notebook")
    assert floor["grid"] == "notebook" and floor["config"]["data"]["stream"] == "notebook"
    assert floor["n_parameters"] == 33 * 20
    assert (floor["best"]["accuracy"], floor["unstandardised_accuracy"]) == (0.42, 0.41)
    rsgn = {"best": {"accuracy": 0.2}, "last": {"accuracy": 0.19}, "n_parameters": 41_672}
    results = {
        ("data-draws", "hierarchical"): draws,
        ("notebook", "hierarchical-floor-sklearn"): floor,
        ("notebook", "hierarchical-rsgn-hebbian-seed42"): rsgn,
    }
    text = paper_tables.render(
        {k: {"finished": "2026", "machine": "m", **v} for k, v in results.items()},
        tmp_path / "c.png",
    )
    assert "| hierarchical | notebook | 42.0 | 43.0 ± 0.8 | 42.0 - 44.0 | 3 (seeds 42-44) |" in text
    assert "| hierarchical | RSGN + Hebbian | 24.1 | 20.0 | 19.0 | 41,672 |" in text
    assert "| hierarchical | Transformer | 29.9 | missing | - | - |" in text
    assert "`notebook/hierarchical-transformer-seed42`" in text


def test_the_committed_doc_is_generated_from_the_committed_results(tmp_path):
    """docs/paper_reproduction.md's tables are exactly what paper_tables renders from the JSON
    under docs/results/rsgn/: no figure in them is typed by hand or left stale."""
    doc = paper_tables.DOC.read_text(encoding="utf-8")
    committed = doc.split(paper_tables.BEGIN, 1)[1].split(paper_tables.END, 1)[0]
    plot = tmp_path / paper_tables.PLOT.relative_to(paper_tables.DOC.parent)
    results = paper_tables.RESULTS
    rendered = paper_tables.render(
        paper_tables.load_results(results),
        plot,
        tmp_path,
        paper_tables.load_partial(results),
        paper_tables.load_diagnosis(results),
    )
    assert committed.strip() == rendered.strip(), "run python -m atomspark.scenarios.paper.tables"
    assert plot.is_file()


def _committed_copy(tmp_path):
    import shutil

    copy_dir = tmp_path / "rsgn"
    shutil.copytree(paper_tables.RESULTS, copy_dir, ignore=shutil.ignore_patterns("*.png"))
    return copy_dir


def test_a_truncated_cell_is_listed_and_left_out_of_the_tables(tmp_path):
    """A committed cell cut to 10 epochs and marked incomplete: the doc names it and its seed
    leaves the table (the figures are never computed from a short run)."""
    results_dir = _committed_copy(tmp_path)
    before = paper_tables.render(paper_tables.load_results(results_dir), tmp_path / "a.png")
    path = results_dir / "main" / "hierarchical-mlp-seed42.json"
    cell = json.loads(path.read_text())
    cell.update(epochs=cell["epochs"][:10], last=cell["epochs"][9], complete=False)
    path.write_text(json.dumps(cell))
    after = paper_tables.render(paper_tables.load_results(results_dir), tmp_path / "b.png")
    assert after != before
    row = next(line for line in after.splitlines() if line.startswith("| MLP |"))
    assert "| 43, 44 |" in row
    assert (
        "marked incomplete or short of their configured epochs:** `main/hierarchical-mlp" in after
    )
    assert "`main/hierarchical-mlp-seed42`" in after.split("**Missing cells")[1]
    assert "Missing cells: none" not in after


def test_committed_cells_were_run_under_their_grids_configs():
    """Every committed JSON is complete and its config is its grid cell's config (as the sweep
    compares them); a changed setting makes a cell stale."""
    from atomspark.scenarios.paper import checks

    results = paper_tables.load_results()
    usable, incomplete, stale = checks.split_results(results)
    assert (incomplete, stale) == ([], [])
    cell_keys = [k for k in results if k in checks.grid_configs()]
    assert len(cell_keys) >= 60  # the main, notebook, ablation and activity grids
    key = ("main", "hierarchical-rsgn-seed42")
    changed = copy.deepcopy(results[key])
    changed["config"]["optimizer"]["lr"] = 2e-3
    assert checks.is_stale(key, changed) and not checks.is_stale(key, results[key])
    for cell, summary in paper_tables.load_partial().items():  # progress rows: the same rule
        assert cell in checks.grid_configs() and not checks.is_stale(cell, summary), cell
    unpinned = copy.deepcopy(results[key])  # the released constraints (the default) differ too
    unpinned["config"]["model"]["position_projection"] = "forward"
    assert checks.is_stale(key, unpinned)


@pytest.mark.parametrize("task", ["hierarchical", "long-range"])
def test_the_committed_floor_is_the_floor_on_the_real_data(task):
    """The floor recomputed on the task's real data set and split (scikit-learn's fit, no stub)
    equals the committed JSON, standardised and raw."""
    floor = paper_grid.logistic_floor(task)
    committed = json.loads(
        (paper_tables.RESULTS / "main" / f"{task}-floor-sklearn.json").read_text()
    )
    assert floor["best"]["accuracy"] == committed["best"]["accuracy"]
    assert floor["unstandardised_accuracy"] == committed["unstandardised_accuracy"]
    assert floor["config"] == committed["config"]


def test_the_readme_figures_are_generated_from_the_committed_results():
    """README.md's RSGN figures (best and last epoch side by side, with the selection caveat)
    are exactly what paper.readme renders from the committed JSON."""
    from atomspark.scenarios.paper import readme

    text = readme.README.read_text(encoding="utf-8")
    committed = text.split(readme.BEGIN, 1)[1].split(readme.END, 1)[0]
    assert committed.strip() == readme.render_readme(paper_tables.load_results()).strip()
    assert "optimistic" in committed and "last epoch" in committed
    row = next(
        line for line in committed.splitlines() if "| hierarchical | Sparse Transformer" in line
    )
    assert row.endswith("| 5.3 |")  # best - last, the largest selection gain of the table


def _fractions(obj):
    """Every number in [0, 1] of a result JSON, as the percentage the docs print (run settings,
    dates and machines left out)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key not in ("config", "machine", "finished"):
                yield from _fractions(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _fractions(value)
    elif isinstance(obj, float) and 0.0 <= obj <= 1.0:
        yield f"{100 * obj:.1f}"


# Figures of the withdrawn data versions (v1, v2), kept in the doc's history of the data set.
HISTORICAL = ("10.4",)


def test_every_percentage_in_the_prose_is_a_committed_result():
    """Each "NN.N %" in docs/paper_reproduction.md's prose (outside the generated tables) is a
    run's best, last or engine figure in the committed results, a figure of the tables rendered
    from them, or the paper's: a figure typed from a run that is no longer committed, or
    mistyped, fails here. (Per-epoch values and differences in points are not covered.)"""
    import re

    doc = paper_tables.DOC.read_text(encoding="utf-8")
    head, rest = doc.split(paper_tables.BEGIN, 1)
    generated, tail = rest.split(paper_tables.END, 1)
    known = set(re.findall(r"\d+\.\d+", generated))
    for summary in paper_tables.load_results().values():
        known.update(_fractions({k: v for k, v in summary.items() if k != "epochs"}))
    for scan in paper_tables.RESULTS.glob("sparse_propagation*.json"):  # the threshold scans
        known.update(_fractions(json.loads(scan.read_text())))
    for table in (paper_tables.PAPER, paper_tables.PAPER_SEED42):
        for task in table.values():
            for value in task.values():
                known.update(re.findall(r"\d+\.\d+", str(value)))
    prose = head + tail
    figures = re.findall(r"(\d+\.\d+)\s*%", prose)
    # most of the 1001 one-decimal values 0.0-100.0 are not results, so a typo rarely passes
    assert len(figures) > 100 and len(known) < 500
    assert sorted({f for f in figures if f not in known} - set(HISTORICAL)) == []
    for old in HISTORICAL:
        assert all("v2" in p or "v1" in p for p in prose.split("\n- ") if f"{old} %" in p)


def test_the_released_diagnosis_is_its_committed_models():
    """docs/results/rsgn/released_diagnosis.json covers exactly the committed models of the
    released grid, and recomputing one of them from its model file gives the committed row."""
    from atomspark.scenarios.paper import diagnosis

    models = sorted(diagnosis.MODELS.glob("*.npz"))
    committed = paper_tables.load_diagnosis()
    assert sorted(committed["runs"] if committed else []) == [p.stem for p in models]
    if models:  # floats to 1e-5 (torch's sums may differ in the last bits across machines)
        fresh, kept = diagnosis.diagnose(models[0]), committed["runs"][models[0].stem]
        assert json.dumps(_rounded(fresh)) == json.dumps(_rounded(kept))


def _rounded(obj):
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return float(f"{obj:.5g}") if isinstance(obj, float) else obj


def test_the_departures_block_of_models_md_is_generated():
    """docs/models.md's measured effect of the constraint departures is what paper.departures
    renders from the committed JSON; the verdict says when a cell left the seed range."""
    from atomspark.scenarios.paper import departures, diagnosis

    text = departures.DOC.read_text(encoding="utf-8")
    committed = text.split(departures.BEGIN, 1)[1].split(departures.END, 1)[0]
    results = paper_tables.RESULTS
    rendered = departures.render_departures(
        paper_tables.load_results(results),
        paper_tables.load_partial(results),
        diagnosis.load_diagnosis(results),
    )
    assert committed.strip() == rendered.strip(), "run python -m atomspark.scenarios.paper.tables"
    assert departures.verdict(0.212, [0.211, 0.213, 0.214]).startswith("inside")
    assert departures.verdict(0.205, [0.211, 0.213, 0.214]) == (
        "below the seed range by 0.6 points: rerun seeds 43-44"
    )
    assert departures.verdict(0.99, [0.963, 0.972, 0.982]).startswith("above the seed range by 0.8")
    assert departures.verdict(0.205, [0.211, 0.213, 0.214], 43).endswith("by 0.6 points")


def test_the_released_rows_end_with_means_over_the_three_seeds():
    """Once a released cell has seeds 42-44, a row of means: the mean best / last under each rule
    (recomputed here from the JSON), the difference judged against the main grid's seed range;
    absent while a seed is missing."""
    from atomspark.scenarios.paper import departures

    results = paper_tables.load_results(paper_tables.RESULTS)
    name = "long-range-rsgn-seed{}"
    label = "| long-range-rsgn-seeds42-44, mean |"
    block = departures.render_departures(results, {}, None)
    row = next(line for line in block.splitlines() if line.startswith(label))
    cols = row.strip("| ").split(" | ")
    means = {}
    for grid in ("released", "main"):
        runs = [results[(grid, name.format(s))] for s in paper_layout.SEEDS]
        means[grid] = [sum(r[k]["accuracy"] for r in runs) / 3 for k in ("best", "last")]
        assert cols[1 if grid == "released" else 2] == " / ".join(
            f"{100 * m:.1f}" for m in means[grid]
        )
    gap = means["released"][0] - means["main"][0]
    assert cols[-1].startswith(f"{100 * gap:+.1f} points: ")
    missing = {k: v for k, v in results.items() if k != ("released", name.format(43))}
    assert label not in departures.render_departures(missing, {}, None)


def test_every_grid_cell_without_a_usable_result_is_named_missing(tmp_path):
    """The doc's missing list is every cell of every grid (paper.grid.GRIDS, not the tables'
    own lists) without a usable result, so "Missing cells: none" appears only when it is true:
    checked on the committed results, and after deleting one committed cell of each grid."""
    import re

    from atomspark.networks.torch_path.config import identity_settings
    from atomspark.scenarios.paper import checks

    def named_missing(results_dir):
        text = paper_tables.render(
            paper_tables.load_results(results_dir),
            tmp_path / "p.png",
            tmp_path,
            paper_tables.load_partial(results_dir),
        )
        if "**Missing cells: none.**" in text:
            return set()
        line = text.split("**Missing cells (", 1)[1].splitlines()[0]
        return set(re.findall(r"`([\w./-]+)`", line.split("`paper_tables`: ", 1)[1]))

    def expected(results_dir):
        usable, _, _ = checks.split_results(paper_tables.load_results(results_dir))
        runs = [r["config"] for r in usable.values() if "epochs" in r.get("config", {})]
        done = [identity_settings(cfg) for cfg in runs]
        return {
            f"{grid}/{name}"
            for (grid, name), cfg in checks.grid_configs().items()
            if (grid, name) not in usable and identity_settings(cfg) not in done
        }

    assert named_missing(paper_tables.RESULTS) == expected(paper_tables.RESULTS)
    results_dir = _committed_copy(tmp_path)
    for cell in (
        "main/hierarchical-mlp-seed43",
        "notebook/hierarchical-mlp-seed42",
        "ablation/k1",
        "activity/target0.05-sigma0.1-k5",
    ):
        (results_dir / f"{cell}.json").unlink()
    assert named_missing(results_dir) == expected(results_dir)
    assert len(expected(results_dir)) == len(expected(paper_tables.RESULTS)) + 4


def test_the_sparse_threshold_verdict_is_computed_from_all_six_cells():
    """The sparse-threshold paragraph: absent while a cell of either K is missing; then the
    per-seed differences, means and the goal's verdict, which flips when K = 5 gains enough."""
    from atomspark.scenarios.paper.figures import load_results
    from atomspark.scenarios.paper.followups import _sparse_run, sparse_threshold_verdict

    results = load_results()
    names = [name for name, _, _ in paper_grid.cells("sparse-threshold")]
    runs = {name: _sparse_run(results, {}, name)[0] for name in names}
    assert all(runs.values())
    filled = {("sparse-threshold", n): copy.deepcopy(r) for n, r in runs.items()}
    for name in names:  # K = 0 at 20 %, K = 5 at 20.5 % on every seed, 1 % activity
        run = filled[("sparse-threshold", name)]
        run["best"]["accuracy"] = 0.205 if "-k5-" in name else 0.20
        run["best"]["activity_steps"] = 0.01 if "-k5-" in name else 0.03
    text = sparse_threshold_verdict(filled, {})
    assert "mean +0.5 points" in text and "above its control in 3 of 3 seeds" in text
    assert "K = 5 at 1.0 % and K = 0 at 3.0 % activity" in text and text.endswith("not met.\n")
    for name in names[:3]:  # the K = 5 cells: +1.0 point
        filled[("sparse-threshold", name)]["best"]["accuracy"] = 0.21
    assert sparse_threshold_verdict(filled, {}).endswith("is met.\n")
    missing = {k: v for k, v in filled.items() if k[1] != names[0]}
    assert sparse_threshold_verdict(missing, {}) == ""


def test_list_says_which_cells_are_committed_and_which_are_still_to_run(tmp_path, capsys):
    """`grid list` on a fresh clone (no sweep folders): every cell of every grid is committed
    (the shared K = 0 control under the activity grid), none todo; a cell whose JSON is missing
    is todo; a cell finished in a sweep folder here is done."""
    assert paper_grid.main(["list", "--sweeps", str(tmp_path / "none")]) == 0
    states = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert len(states) == sum(len(paper_grid.cells(g)) for g in paper_grid.GRIDS)
    assert set(states) == {"committed"}
    name, stem, cell = paper_grid.cells("released")[0]
    assert paper_grid.cell_state(tmp_path, "released", name, stem, cell, tmp_path) == "todo"
    folder = paper_grid.cell_folder(tmp_path, stem, cell)
    folder.mkdir(parents=True)
    (folder / "result.json").write_text("{}")
    assert paper_grid.cell_state(tmp_path, "released", name, stem, cell, tmp_path) == "done"
    shared = ("sparse-threshold", "target0.02-sigma0.05-k0-e50-seed42")
    assert paper_layout.SHARED_CELLS[shared] in {
        (g, n) for g in paper_grid.GRIDS for n, _, _ in paper_grid.cells(g)
    }
