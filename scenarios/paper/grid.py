"""The RSGN paper-reproduction grids: which `atomspark sweep` runs make up
docs/paper_reproduction.md, and how each finished cell becomes one small JSON under
docs/results/rsgn/<grid>/<cell>.json.

The grids are sweep files in scenarios/configs/grids/ (the sweep verb runs and resumes them):
- main: both tasks x {logistic floor trained by the protocol, MLP, Transformer, Sparse
  Transformer, LSTM, RSGN with and without Hebbian updates} x seeds 42, 43, 44 at the released
  protocol (two files: seed 42 first, then 43 and 44);
- ablation: the paper's ablation on the hierarchical task (seed 42);
- activity: sparse RSGN at homeostatic targets 0.1 .. 0.01 with and without propagation;
- notebook: seed 42 of the main comparison on the released notebook's own sequences
  (`data.stream = "notebook"`), beside the paper's seed-42 runs;
- released: the published RSGN cells of the main comparison (seed 42) under the released code's
  constraints (the default since; the other grids pin the rule they ran under), and seeds 43-44
  of a cell whose seed 42 left the main grid's seed range;
- sparse-threshold: sparse RSGN at the 2 % target, 50 epochs, seeds 42-44, K = 5 with the
  resting-subtracted soft threshold against its K = 0 control;
- notebook-hebbian: the two Hebbian cells of `released` (seed 42) with the released notebook's
  own Hebbian learner (reward -loss, learning rate applied twice), measured against them, and
  seeds 43-44 of both cells (the long-range cell's seed-42 difference was wider than the seed
  range; the hierarchical cell's, because the published configuration now uses that learner).
Besides the cells: the scikit-learn floor on both data streams, and its spread over 20 draws of
the data set and split (`data-draws`), which says how far the data draw alone moves a figure.

    atomspark sweep scenarios/configs/grids/rsgn-paper-main-seed42.toml
    python -m atomspark.scenarios.paper.grid collect      # finished cells -> docs/results/rsgn
    python -m atomspark.scenarios.paper.grid list         # done / committed / todo per cell
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from atomspark.scenarios.paper.layout import (
    RESULTS,
    SHARED_CELLS,
    TASKS,
    machine_description,
)
from atomspark.scenarios.sweep.cell import settings_file
from atomspark.sim.core import AtomsparkError, atomic_write_text

GRID_DIR = Path(__file__).resolve().parents[1] / "configs" / "grids"
GRIDS = {
    "main": ("rsgn-paper-main-seed42", "rsgn-paper-main-seeds43-44"),
    "ablation": ("rsgn-paper-ablation",),
    "activity": ("rsgn-paper-activity", "rsgn-paper-activity-50-epochs"),
    "notebook": ("rsgn-paper-notebook-data",),
    "released": ("rsgn-paper-released-constraints", "rsgn-paper-released-constraints-seeds43-44"),
    "sparse-threshold": ("rsgn-paper-sparse-threshold",),
    "notebook-hebbian": (
        "rsgn-paper-notebook-hebbian",
        "rsgn-paper-notebook-hebbian-seeds43-44",
        "rsgn-paper-notebook-hebbian-hierarchical-seeds43-44",
    ),
}
SEEDED = ("main", "notebook", "released", "sparse-threshold", "notebook-hebbian")  # seed in name
MODEL_GRIDS = ("released", "sparse-threshold")  # their trained models are committed too
STREAMS = {"generator": "main", "notebook": "notebook"}  # data stream -> grid of its floor
DRAWS = tuple(range(42, 62))  # data and split seeds of the floor's spread (42: the tables' own)
SWEEPS = Path("results") / "sweeps"  # the sweep verb's default: results/sweeps/<grid file stem>


def cells(grid: str) -> list[tuple[str, str, object]]:
    """(name, sweep file stem, sweep cell) for each cell of the grid, in run order. Names:
    main "<task>-<model>-seed<N>", ablation and activity the variant's name (seed 42)."""
    from atomspark.scenarios.sweep.run import plan_grid

    if grid not in GRIDS:
        raise AtomsparkError(f"grid {grid!r}: unknown ({', '.join(GRIDS)})")
    out = []
    for stem in GRIDS[grid]:
        for cell in plan_grid(GRID_DIR / f"{stem}.toml").cells:
            name = cell.labels["variant"]
            out.append(
                (f"{name}-seed{cell.labels['seed']}" if grid in SEEDED else name, stem, cell)
            )
    return out


def cell_folder(sweeps: Path, stem: str, cell) -> Path:
    """Where the sweep verb leaves a finished cell."""
    return sweeps / stem / "cells" / cell.id


# ----- results -----------------------------------------------------------------------------------
def summarise(grid: str, name: str, out: Path) -> dict:
    """The small JSON committed per cell: config, seed, per-epoch validation accuracy and
    activity, best and last epoch, the first training step's loss (the scale the model starts
    from), parameter count, wall time, date and machine."""
    import torch
    from atomspark.networks.torch_path.baselines import n_parameters
    from atomspark.networks.torch_path.config import validate_config
    from atomspark.networks.torch_path.training import build_model

    cfg = validate_config(json.loads(settings_file(out).read_text())["params"])
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line]
    evals = [r for r in rows if r["type"] == "eval"]
    first_step = next((r for r in rows if r["type"] == "step"), None)
    keep = ("epoch", "accuracy", "loss", "activity", "activity_steps", "activity_by_step")
    epochs = [{k: r[k] for k in (*keep, "epoch_s", "load") if k in r} for r in evals]
    best = max(epochs, key=lambda r: (r["accuracy"], -r["epoch"]))
    d = cfg["data"]
    module = build_model(cfg, d["dim"], {"n_classes": d["n_classes"]}, "cpu", torch.float32)
    done = (out / "result.json").is_file()
    engine = engine_costs(out, cfg) if grid == "activity" and done else None
    return {
        "grid": grid,
        "cell": name,
        "engine": engine,
        "seed": cfg["seed"],
        "config": cfg,
        "n_parameters": n_parameters(module),
        "first_step_loss": first_step["loss"] if first_step else None,
        "epochs": epochs,
        "best": best,
        "last": epochs[-1],
        "wall_s": sum(r.get("epoch_s", 0.0) for r in epochs),
        "finished": datetime.fromtimestamp(
            (out / "metrics.jsonl").stat().st_mtime, timezone.utc
        ).isoformat(timespec="seconds"),
        "complete": done,
        "machine": machine_description(),
    }


ENGINE_SEQUENCES = 64  # validation sequences run through the event engine per activity cell


def engine_costs(out: Path, cfg: dict, n: int = ENGINE_SEQUENCES) -> dict:
    """The trained model on the event engine (its own semantics), first `n` validation
    sequences: accuracy, mean active fraction over the engine's steps, synaptic events and the
    Loihi 2 energy per sequence priced from the engine's counters (mapping/ energy model).
    The engine runs once per cell: its report, out/engine/comparison.json, is read on later
    collects (the engine is slow; collect runs often)."""
    report_path = out / "engine" / "comparison.json"
    if report_path.is_file():
        report = json.loads(report_path.read_text())
    else:
        from atomspark.networks.torch_path.training import build_data
        from atomspark.scenarios.compare.chip_vs_gpu import compare

        _, _, x_va, y_va, _ = build_data(cfg)
        report = compare(
            out / "model.npz",
            (x_va[:n], y_va[:n]),
            out / "engine",
            device="cpu",
            hardware="loihi2",
            fixed_point=False,
            cutoffs=None,
        )
    eng = report["backends"]["engine_float"]
    chip = eng["costs"]["neuromorphic"]
    return {
        "sequences": chip["n_samples"],
        "hardware": "loihi2",
        "accuracy": eng["accuracy"],
        "mean_active_fraction": eng["active_fraction"],
        "energy_per_sample_j": eng["energy_per_sample_j"],
        "energy_breakdown_j": chip["breakdown"],  # per sequence: synaptic ops, updates, static...
        "energy_source": eng["energy_source"],
    }


def _floor_accuracy(cfg: dict, standardise: bool = True) -> float:
    """scikit-learn's logistic regression (defaults: L2, C = 1, lbfgs) on the standardised mean
    token of each sequence (raw with standardise=False), fitted on the config's training split,
    scored on its validation."""
    from atomspark.networks.torch_path.training import build_data
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x_tr, y_tr, x_va, y_va, _ = build_data(cfg)
    steps = [StandardScaler()] if standardise else []
    fit = make_pipeline(*steps, LogisticRegression(max_iter=5000))
    fit.fit(x_tr.mean(1), y_tr)
    return float(fit.score(x_va.mean(1), y_va))


def _task_config(task: str, stream: str) -> dict:
    from atomspark.networks.torch_path.config import load_config
    from atomspark.scenarios.configs import builtin_config

    cfg = load_config(builtin_config(TASKS[task]))
    return {**cfg, "data": {**cfg["data"], "stream": stream}}


def logistic_floor(task: str, stream: str = "generator") -> dict:
    """The floor: the mean-token logistic regression on the task's fixed data set and 80/20
    split, drawn by `stream`. Deterministic: the data and the split do not depend on the run
    seed."""
    import time

    cfg = _task_config(task, stream)
    t0 = time.perf_counter()
    acc = _floor_accuracy(cfg)
    raw = _floor_accuracy(cfg, standardise=False)  # the same fit without standardising
    d = cfg["data"]
    return {
        "grid": STREAMS[stream],
        "cell": f"{task}-floor-sklearn",
        "seed": None,
        "config": {"data": d, "val_fraction": cfg["val_fraction"], "model": "sklearn"},
        "n_parameters": (d["dim"] + 1) * d["n_classes"],
        "epochs": [],
        "best": {"accuracy": acc},
        "last": {"accuracy": acc},
        "unstandardised_accuracy": raw,
        "wall_s": time.perf_counter() - t0,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_description(),
    }


def floor_draws(task: str, draws: tuple[int, ...] = DRAWS) -> dict:
    """The floor on `draws` data sets and splits (data.seed = split_seed = each draw), for both
    streams: how far the draw of the data alone moves an accuracy, with the model fixed."""
    from tqdm.auto import tqdm

    by_stream = {}
    for stream in STREAMS:
        cfg = _task_config(task, stream)
        accs = {}
        for seed in tqdm(draws, desc=f"floor {task} {stream}", leave=False):
            data = {**cfg["data"], "seed": seed, "split_seed": seed}
            accs[str(seed)] = _floor_accuracy({**cfg, "data": data})
        by_stream[stream] = accs
    return {
        "grid": "data-draws",
        "cell": task,
        "draws": list(draws),
        "floor_accuracy": by_stream,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_description(),
    }


def collect(sweeps: Path = SWEEPS, results: Path = RESULTS) -> list[Path]:
    """Write results/<grid>/<cell>.json for every finished cell of every grid, the floor, and
    results/partial/<grid>/<cell>.json (marked "complete": false) for cells still running; a
    newly kept model of the released grid re-runs its diagnosis (paper/diagnosis.py)."""
    written = []
    deterministic = {  # computed once
        **{
            results / grid / f"{task}-floor-sklearn.json": partial(logistic_floor, task, stream)
            for stream, grid in STREAMS.items()
            for task in TASKS
        },
        **{results / "data-draws" / f"{task}.json": partial(floor_draws, task) for task in TASKS},
    }
    for path, compute in deterministic.items():
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(compute(), indent=1) + "\n")
            written.append(path)
    for grid in GRIDS:
        for name, stem, cell in cells(grid):
            out = cell_folder(sweeps, stem, cell)
            path = results / grid / f"{name}.json"
            if not (out / "result.json").is_file():
                # an unfinished cell with some epochs: its progress, kept apart and marked
                out = out.with_name(out.name + ".partial")
                path = results / "partial" / grid / f"{name}.json"
                if not settings_file(out).is_file() or '"eval"' not in _read(out / "metrics.jsonl"):
                    continue
            else:
                (results / "partial" / grid / f"{name}.json").unlink(missing_ok=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(summarise(grid, name, out), indent=1) + "\n")
            written.append(path)
            if (out / "result.json").is_file():
                written += keep_model(grid, name, out, results)
    if any(p.parent == results / "models" / "released" for p in written):
        from atomspark.scenarios.paper.diagnosis import OUT, write

        written.append(write(results / "models" / "released", results / OUT.name))
    return written


def keep_model(grid: str, name: str, out: Path, results: Path = RESULTS) -> list[Path]:
    """A finished cell of MODEL_GRIDS: its trained model.npz (parameters, model config and the
    training config that made it) copied to results/models/<grid>/<cell>.npz, so fixed-point,
    cost and ablation studies run without retraining."""
    import shutil

    from atomspark.sim.core import atomic_write_with

    src = out / "model.npz"
    dst = results / "models" / grid / f"{name}.npz"
    if grid not in MODEL_GRIDS or not src.is_file():
        return []
    if dst.is_file() and dst.read_bytes() == src.read_bytes():
        return []
    dst.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_with(dst, lambda tmp: shutil.copyfile(src, tmp), src.stat().st_size)
    return [dst]


def _read(path: Path) -> str:
    return path.read_text() if path.is_file() else ""


def cell_state(sweeps: Path, grid: str, name: str, stem: str, cell, results: Path = RESULTS) -> str:
    """ "done": the cell finished in this machine's sweep folder; "committed": not run here, but
    its result is under docs/results/rsgn/ (a fresh clone holds every finished cell this way; a
    cell shared with another grid is committed there); "todo": neither."""
    if (cell_folder(sweeps, stem, cell) / "result.json").is_file():
        return "done"
    committed_grid, committed_name = SHARED_CELLS.get((grid, name), (grid, name))
    return (
        "committed" if (results / committed_grid / f"{committed_name}.json").is_file() else "todo"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m atomspark.scenarios.paper.grid")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="finished cells -> docs/results/rsgn/<grid>/<cell>.json")
    c.add_argument("--sweeps", type=Path, default=SWEEPS, help="folder of the sweep folders")
    ls = sub.add_parser(
        "list", help="each grid's cells: done (here), committed (its JSON only) or todo"
    )
    ls.add_argument("--sweeps", type=Path, default=SWEEPS)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "collect":
            for path in collect(args.sweeps):
                print(path)
        else:
            for grid in GRIDS:
                for name, stem, cell in cells(grid):
                    print(
                        f"{cell_state(args.sweeps, grid, name, stem, cell)}  {grid}/{name}  ({stem})"
                    )
    except AtomsparkError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
