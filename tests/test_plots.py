"""Every plot atomspark writes is rendered here and checked for readability: each axis says what
it shows (a label, or tick labels that name categories), numeric axes carry tick labels, no two
tick labels overlap (measured with the renderer's text bounding boxes) and no panel is empty.

The checks run inside Figure.savefig, so they see exactly the figures the commands write."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402


def _texts(labels) -> list[Text]:
    return [t for t in labels if t.get_visible() and t.get_text().strip()]


def _axis_problems(ax, axis, name: str, renderer, twins) -> list[str]:
    labels = _texts(axis.get_ticklabels())
    label_text = axis.get_label().get_text().strip()
    for twin in twins:  # a twinx/twiny axes shares one axis and its label
        label_text = label_text or getattr(twin, f"{name}axis").get_label().get_text().strip()
    problems = []
    boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: (b.x0, b.y0))
    for a, b in zip(boxes, boxes[1:]):
        if a.overlaps(b):
            problems.append(f"{name} tick labels overlap")
            break
    categorical = any(not _numeric(t.get_text()) for t in labels)
    if labels and not label_text and not categorical:
        problems.append(f"{name} axis has numbers but no label")
    if label_text and len(labels) < 2 and not categorical:
        problems.append(f"{name} axis '{label_text}' has fewer than 2 tick labels")
    return problems


def _numeric(text: str) -> bool:
    cleaned = text.replace("\u2212", "-").replace("$", "").replace("\\mathdefault", "")
    cleaned = cleaned.replace("{", "").replace("}", "").replace("^", "e").replace("\\times", "")
    try:
        float(cleaned.replace("10e", "1e"))
        return True
    except ValueError:
        return any(ch.isdigit() for ch in cleaned) and not any(ch.isalpha() for ch in cleaned)


def _has_data(ax) -> bool:
    for line in ax.get_lines():
        x, y = (np.asarray(v, float) for v in line.get_data())
        if np.isfinite(x).any() and np.isfinite(y).any():
            return True
    if any(
        p.get_width() != 0 or p.get_height() != 0 for p in ax.patches if hasattr(p, "get_width")
    ):
        return True
    if any(np.size(im.get_array()) for im in ax.images):
        return True
    if any(len(p.get_path().vertices) > 2 for p in ax.patches):  # e.g. step histograms
        return True
    return any(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets"))


MIN_HEIGHT_IN = 2.5  # a figure lower than this is a thin strip, whatever its width
MAX_ASPECT = 4.0  # wider than this (e.g. one row of bars across a page) reads as a strip


def _legend_problems(fig: Figure, renderer) -> list[str]:
    """Legends that sit on a title (any axes' or the figure's) or on plotted data."""
    problems = []
    titles = [t for ax in fig.axes for t in (ax.title, ax._left_title, ax._right_title)]
    titles += [t for t in (getattr(fig, "_suptitle", None),) if t is not None]
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes] + [(lg, fig.axes) for lg in fig.legends]
    for legend, axes in legends:
        if legend is None or not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for title in _texts(titles):
            if box.overlaps(title.get_window_extent(renderer)):
                problems.append(f"legend covers the title '{title.get_text()}'")
        for ax in axes:
            if ax.axison and _legend_covers_data(ax, box):
                problems.append(f"legend covers data in '{ax.get_title()}'")
    return problems


def _legend_covers_data(ax, box) -> bool:
    """Any drawn point of a line or scatter, or any bar, inside the legend's box."""
    inside = lambda xy: (  # noqa: E731
        (xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1)
    )
    for line in ax.get_lines():
        xy = np.column_stack([np.asarray(v, float) for v in line.get_data()])
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) and inside(line.get_transform().transform(xy)).any():
            return True
    for coll in ax.collections:
        offsets = np.asarray(coll.get_offsets(), float)
        if len(offsets) and inside(coll.get_offset_transform().transform(offsets)).any():
            return True
    from matplotlib.transforms import Bbox

    for patch in ax.patches:
        if hasattr(patch, "get_width") and patch.get_width() and patch.get_height():
            shown = Bbox.intersection(patch.get_window_extent(), ax.bbox)  # clipped to the axes
            if shown is not None and box.overlaps(shown):
                return True
    return False


def figure_problems(fig: Figure) -> list[str]:
    """What makes the figure hard to read (empty list: readable)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.get_size_inches()
    problems = _legend_problems(fig, renderer)
    if height < MIN_HEIGHT_IN or width / height > MAX_ASPECT:
        problems.append(f"a thin strip ({width:.1f} x {height:.1f} in)")
    for i, ax in enumerate(fig.axes):
        where = f"axes {i} ('{ax.get_title()}')"
        if not ax.axison:  # a text-only panel
            if not _texts(ax.texts):
                problems.append(f"{where}: hidden and without text")
            continue
        twins = [o for o in fig.axes if o is not ax and o.bbox.bounds == ax.bbox.bounds]
        if not _has_data(ax) and not any(_has_data(t) for t in twins):
            problems.append(f"{where}: empty")
        for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            problems += [f"{where}: {p}" for p in _axis_problems(ax, axis, name, renderer, twins)]
    return problems


@pytest.fixture
def checked(monkeypatch):
    """Record every figure saved during the test with its readability problems."""
    seen: dict[str, list[str]] = {}
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        name = Path(str(getattr(fname, "name", fname))).name  # in memory: the target's name
        seen[name] = figure_problems(self)
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return seen


def _assert_readable(seen: dict, expected: set[str]) -> None:
    names = {n.split(".tmp")[0].lstrip(".").split(".png")[0] for n in seen}
    missing = {e for e in expected if not any(e in n for n in names)}
    assert not missing, f"not rendered: {missing} (saw {sorted(seen)})"
    bad = {name: p for name, p in seen.items() if p}
    assert not bad, bad


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from atomspark.networks import rsgn
    from atomspark.networks.vn import VNModel

    d = tmp_path_factory.mktemp("models")
    VNModel.random(12, [(16, 4)], lam=0.2, seed=0).save(d / "vn.npz")
    cfg = rsgn.RSGNConfig(
        mode="sparse", n_nodes=24, dim=2, d_hidden=8, d_in=6, n_classes=3, n_steps=3,
        k_nearest=4, cutoff=0.2, affinity_rank=4,
    )  # fmt: skip
    rsgn.save_model(d / "rsgn.npz", rsgn.init_params(cfg, seed=0), cfg)
    return d


@pytest.mark.parametrize("kind", ["vn", "rsgn"])
def test_profile_plots_are_readable(models, tmp_path, checked, kind):
    from atomspark.scenarios.runs.profile import profile_model

    profile_model(models / f"{kind}.npz", "builtin:3", tmp_path, log=lambda s: None)
    _assert_readable(checked, {"activity", "raster", "costs"})


def test_costs_plot_of_several_runs_spanning_decades(models, tmp_path, checked):
    from atomspark.mapping.costs import compare_costs
    from atomspark.mapping.plots import plot_activity, plot_costs
    from atomspark.scenarios.runs.engine import load_model, run_loaded
    from atomspark.scenarios.runs.profile import read_inputs

    comparisons, runs = {}, {}
    for kind in ("vn", "rsgn"):
        loaded = load_model(models / f"{kind}.npz")
        run = run_loaded(loaded, read_inputs("builtin:2", loaded), 300 if kind == "vn" else None)
        runs[kind] = run
        for label in (f"{kind.upper()} settle, long name", f"{kind.upper()} other variant"):
            comparisons[label] = compare_costs(
                run.graph, run.profile, "loihi2", "h100", n_samples=2, positions=run.positions
            )
    plot_costs(comparisons, tmp_path / "costs.png")
    plot_activity(
        runs["vn"].profile, tmp_path / "vn_activity.png", "VN", ("lazy", runs["vn"].profile)
    )
    _assert_readable(checked, {"costs", "vn_activity"})


def test_training_metrics_plot(tmp_path, checked):
    pytest.importorskip("torch")
    from atomspark.networks.torch_path.training import plot_metrics

    for task, extra in (("rsgn-sequence", {"activity": 0.5}), ("vn-dictionary", {"activity": 0.2})):
        rows = [
            {"type": "step", "step": s, "epoch": s // 4, "loss": 2.0 / s, "accuracy": s / 12, **extra}
            for s in range(1, 13)
        ] + [{"type": "eval", "step": 4 * e, "epoch": e, "loss": 1.0 / e, "accuracy": 0.3 * e, **extra}
             for e in (1, 2, 3)]  # fmt: skip
        path = tmp_path / f"{task}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        plot_metrics(path, tmp_path / f"{task}_metrics.png", task)
    _assert_readable(checked, {"rsgn-sequence_metrics", "vn-dictionary_metrics"})


def _report(kind: str, energies: list[float]) -> dict:
    engine = {
        "energy_per_sample_j": float(np.mean(energies)),
        "per_sample_energy_j": energies,
        "energy_source": "model: loihi2 engine counters + placement",
        "accuracy": 0.5,
        "reconstruction_error": 0.01,
    }
    torch_row = {**engine, "device": "cpu", "energy_source": "model (not measured): h100"}
    del torch_row["per_sample_energy_j"]
    torch_row["energy_per_sample_j"] = 2e-3
    report = {
        "model": {"kind": kind},
        "samples": len(energies),
        "hardware": {"neuromorphic": "loihi2", "gpu_model": "h100"},
        "backends": {"torch": torch_row, "engine_float": engine, "engine_fixed": dict(engine)},
        "cutoff_sweep": [
            {
                "cutoff": c,
                "accuracy": a,
                "decision_agreement_vs_soft": 0.9,
                "mean_active_fraction": f,
                "energy_per_sample_j": e,
            }
            for c, a, f, e in [
                (0.0, 0.5, 0.9, 2e-6),
                (0.05, 0.5, 0.9, 2e-6),
                (0.1, 0.52, 0.5, 1.9e-6),
                (0.2, 0.4, 0.2, 1e-6),
                (0.3, 0.3, 0.1, 0.8e-6),
            ]
        ],  # fmt: skip
    }
    return report


@pytest.mark.parametrize("energies", [[3e-6] * 16, list(np.linspace(1e-6, 9e-6, 16))])
def test_compare_plots_are_readable(tmp_path, checked, energies):
    from atomspark.scenarios.compare.plots import (
        plot_accuracy_energy,
        plot_cutoff,
        plot_energy_hist,
    )

    report = _report("rsgn", energies)
    plot_accuracy_energy(report, "accuracy", tmp_path / "accuracy_vs_energy.png")
    plot_energy_hist(report, tmp_path / "energy_per_sample.png")
    plot_cutoff(report, tmp_path / "cutoff_sweep.png")
    _assert_readable(checked, {"accuracy_vs_energy", "energy_per_sample", "cutoff_sweep"})


def test_compare_legend_names_the_gpu_the_torch_run_is_priced_as():
    """The torch run executes on the CPU here but is priced as an H100: the legend says both."""
    from atomspark.scenarios.compare.plots import _label

    report = _report("rsgn", [3e-6] * 4)
    label = _label("torch", report["backends"]["torch"], report)
    assert label == "torch, dense, ran on cpu (h100, modelled energy)"
    assert _label("engine_float", report["backends"]["engine_float"], report) == (
        "engine float (loihi2, modelled energy)"
    )


def test_a_narrow_metric_axis_says_so(tmp_path, checked):
    """VN runs whose reconstruction errors differ in the fourth digit (0.1335-0.1344) would fill
    the axis with differences that do not matter; the y label says how narrow it is."""
    from atomspark.scenarios.compare.plots import narrow_range_note, plot_accuracy_energy

    report = _report("vn", [3e-6] * 4)
    report["cutoff_sweep"] = []
    for name, error in zip(report["backends"], (0.1335, 0.1344, 0.1340)):
        report["backends"][name] = {**report["backends"][name], "reconstruction_error": error}
    plot_accuracy_energy(report, "reconstruction_error", tmp_path / "vn_error_vs_energy.png")
    _assert_readable(checked, {"vn_error_vs_energy"})
    assert narrow_range_note([0.1335, 0.1344]) == "\n(narrow axis: all within 0.0009 of each other)"
    assert narrow_range_note([0.1, 0.5]) == "" and narrow_range_note([0.2]) == ""


def test_sweep_report_plot(tmp_path, checked):
    from atomspark.scenarios.sweep.report import plot

    groups = [
        {"group": f"model.n_nodes={n}", "metrics": {"accuracy": {"mean": a, "std": 0.02,
                                                               "values": [a - 0.01, a + 0.01]}}}
        for n, a in ((16, 0.4), (32, 0.5), (64, 0.55))
    ]  # fmt: skip
    plot(groups, ["accuracy"], tmp_path / "report.png", "train sweep")
    _assert_readable(checked, {"report"})


def _benchmark(name: str):
    """A benchmarks/ script as a module (they are scripts, not a package)."""
    import importlib.util

    pytest.importorskip("torch")
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("rule", ["sigmoid", "resting-subtracted"])
def test_rsgn_sparse_propagation_plot(tmp_path, checked, rule):
    rows = [
        {"theta": t, "activity_by_step": [0.02] + [0.9 if t < 1.5 else 0.01] * 5}
        for t in (1.0, 1.25, 1.5, 1.75, 2.0)
    ]
    result = {"rows": rows, "resting_fires_below_theta": 1.47, "threshold_rule": rule}
    _benchmark("rsgn_sparse_propagation").plot(result, tmp_path / "sparse_propagation.png")
    _assert_readable(checked, {"sparse_propagation"})


def test_rsgn_fixed_accuracy_plot(tmp_path, checked):
    bench = _benchmark("rsgn_fixed_accuracy")
    runs = {
        f"target{t}-k{k}-seed42": {"task": "hierarchical", "accuracy_float": a,
                                   "accuracy_fixed": a - 0.002, "chance": 0.05}
        for t, k, a in ((0.01, 0, 0.204), (0.01, 5, 0.23), (0.1, 5, 0.24))
    }  # fmt: skip
    runs["long-range-rsgn-seed42"] = {"task": "long-range", "accuracy_float": 0.96,
                                      "accuracy_fixed": 0.95, "chance": 0.1}  # fmt: skip
    bench.plot({"runs": runs}, tmp_path / "accuracy.png")
    _assert_readable(checked, {"accuracy"})


def test_rsgn_fixed_accuracy_table_has_a_row_per_run():
    bench = _benchmark("rsgn_fixed_accuracy")
    row = {"task": "hierarchical", "mode": "published", "n_nodes": 256, "n_steps": 5,
           "epochs": 15, "accuracy_float": 0.191, "accuracy_fixed": 0.161,
           "decision_agreement": 0.578, "max_abs_score_error": 1.62, "max_abs_score": 107.0,
           "final_activity_float": 1.0, "final_activity_fixed": 1.0, "wraps": 0, "clips": 0,
           "chance": 0.05, "samples": 1000, "date": "2026-12-03T15:21", "machine": "vm"}  # fmt: skip
    older = {**row, "task": "long-range", "samples": 600}
    row["rounded_weights_only"] = {"w_h": [0.15, 0.592], "w": [0.2, 0.875]}
    text = bench.table({"runs": {"a": row, "b": older}, "date": "x", "machine": "vm"})
    lines = [
        line for line in text.splitlines() if line.startswith("| a ") or line.startswith("| b ")
    ]
    assert len(lines) == 2 and "| 19.1 | 16.1 | 57.8 | 59.2 / 87.5 / - / - / - |" in lines[0]
    assert "| - |" in lines[1] and "(600, 1000)" in text


def test_rsgn_fixed_accuracy_names_runs_of_grids_with_repeated_cell_names_apart(tmp_path):
    bench = _benchmark("rsgn_fixed_accuracy")
    cell = "variant=hierarchical-rsgn-hebbian-seed=42_0123456789"
    main = tmp_path / "rsgn-paper-main-seed42" / "cells" / cell
    notebook = tmp_path / "rsgn-paper-notebook-data" / "cells" / cell
    assert bench.run_name(main) == "hierarchical-rsgn-hebbian-seed42"
    assert bench.run_name(notebook) == "notebook-data-hierarchical-rsgn-hebbian-seed42"


def test_checker_catches_unreadable_figures():
    """The checks can fail: overlapping tick labels, an unlabelled numeric axis, an empty panel."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.bar([f"a rather long category {i}" for i in range(6)], range(6))
    problems = figure_problems(fig)
    assert any("tick labels overlap" in p for p in problems)
    assert any("y axis has numbers but no label" in p for p in problems)
    fig2, ax2 = plt.subplots()
    ax2.set_xlabel("x")
    ax2.set_ylabel("y")
    assert any("empty" in p for p in figure_problems(fig2))
    plt.close("all")


@pytest.mark.torch
def test_bench_plots_are_readable(tmp_path, checked):
    """errors.png, examples.png, the networks' curves and the VN atoms of a quick fn1d run (one
    seed: the title says so), with the legends off the data and the titles."""
    pytest.importorskip("torch")
    from atomspark.scenarios.bench.runner import run_benchmark

    run_benchmark("fn1d", quick=True, out=tmp_path / "b", device="cpu", log=lambda _: None)
    _assert_readable(checked, {"errors", "examples", "curves"})
    import matplotlib.pyplot as plt

    assert not plt.get_fignums()


def test_checker_catches_legends_on_titles_and_data_and_thin_strips():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 2.2))
    ax.barh([0], [80], label="a")
    ax.set_xlabel("share (%)")
    ax.set_title("where the energy goes", y=1.08)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.02))  # costs.png before the fix
    problems = figure_problems(fig)
    assert any("legend covers the title" in p for p in problems), problems
    assert any("thin strip" in p for p in problems), problems
    fig2, ax2 = plt.subplots(figsize=(6, 4))
    ax2.plot(np.arange(10), np.full(10, 1.0), label="flat")
    ax2.set(xlabel="x", ylabel="y", ylim=(0, 2))
    ax2.legend(loc="center")
    assert any("legend covers data" in p for p in figure_problems(fig2))
    plt.close(fig)
    plt.close(fig2)


def _map_result() -> dict:
    """A chip-vs-GPU map with three families, several series each, crossing 1 and spanning
    decades (the shape `atomspark map` writes)."""
    families, points = {}, []
    for f, (sizes, series) in enumerate(
        (((64, 80, 128, 160, 320, 640, 1280, 2048), ("1 layer(s)", "2 layer(s)")),
         ((48, 64, 128, 256), ("d 32", "d 128")), ((64, 128, 256), ("d 32, activity 0.1",)))
    ):  # fmt: skip
        name = f"family {f}"
        families[name] = {"size_axis": "atoms" if f == 0 else "nodes N",
                          "sentence_series": series[-1]}  # fmt: skip
        for i, s in enumerate(series):
            for size in sizes[i % 2 :: 1]:
                r = 300.0 / (size / 64) ** (1 + i) / (f + 1)
                q = {"ratio": r, "ratio_min": r / 30, "ratio_max": r * 40,
                     "time_ratio": r / 200, "time_ratio_min": r / 3000, "time_ratio_max": r / 20}  # fmt: skip
                points.append({"family": name, "series": s, "size": size, "fits": True,
                               "batch_1": q, "throughput": {k: v / 50 for k, v in q.items()}})  # fmt: skip
    return {"families": families, "points": points}


def test_chip_gpu_map_plot(tmp_path, checked):
    from atomspark.scenarios.compare.map_doc import load_map
    from atomspark.scenarios.compare.map_plots import plot_map

    plot_map(_map_result(), tmp_path / "map.png")
    expected = {"map"}
    committed = load_map()
    if committed is not None:  # the committed map's figure, as `atomspark map` drew it
        plot_map(committed, tmp_path / "committed_map.png")
        expected.add("committed_map")
    _assert_readable(checked, expected)
