"""The RSGN paper-reproduction grid: which training runs make up docs/paper_reproduction.md, how
to run them resumably, and how each finished run becomes one small JSON under docs/results/rsgn/.

A cell is a built-in config plus overrides. Grids:
- "main": both tasks x {logistic floor, MLP, Transformer, Sparse Transformer, LSTM, RSGN with and
  without Hebbian updates} x seeds 42, 43, 44, at the released protocol (50 epochs).
- "ablation": the paper's ablation on the hierarchical task (seed 42): no Hebbian, K 3, K 1,
  128 and 512 nodes (the full model is the main grid's cell).
- "activity": the sparse configuration at homeostatic targets 0.1 .. 0.01 (with a matching
  ignition width), each with and without propagation (K = 0: ignition, then readout),
  hierarchical task, seed 42, a 10-epoch budget.

    python -m atomspark.scenarios.paper_grid run main --runs results/rsgn-paper [--only 'hier*']
    python -m atomspark.scenarios.paper_grid collect --runs results/rsgn-paper

`run` skips finished cells and resumes interrupted ones from their checkpoints; `collect` writes
docs/results/rsgn/<grid>/<cell>.json for every finished cell.
"""

from __future__ import annotations

import argparse
import copy
import fnmatch
import json
import os
import platform
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from atomspark.networks.model_io import atomic_write_text
from atomspark.sim.validation import AtomsparkError

SEEDS = (42, 43, 44)
TASKS = {"hierarchical": "rsgn-paper-hierarchical", "long-range": "rsgn-paper-long-range"}
RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results" / "rsgn"


@dataclass(frozen=True)
class Cell:
    """One training run: `grid`/`name`, a built-in config and overrides of its keys."""

    grid: str
    name: str
    base: str
    overrides: dict = field(default_factory=dict)

    def config(self) -> dict:
        """The validated config of this cell."""
        from atomspark.networks.torch_path.config import load_config, validate_config
        from atomspark.scenarios.cli import builtin_config

        cfg = load_config(builtin_config(self.base))
        return validate_config(_merge(cfg, self.overrides))


def _merge(cfg: dict, overrides: dict) -> dict:
    out = copy.deepcopy(cfg)
    for key, value in overrides.items():
        if isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = value
    return out


def _baseline(kind: str, task: str) -> dict:
    """The released notebook's baselines: the long-range Transformer has 3 layers."""
    layers = 3 if (kind == "transformer" and task == "long-range") else 2
    return {"model": {"kind": kind, "layers": layers}}


MODELS = {  # name -> overrides per task (None: the task's RSGN config as it is)
    "mean-linear": lambda task: _baseline("mean-linear", task),  # the floor trained as the rest
    "mlp": lambda task: _baseline("mlp", task),
    "transformer": lambda task: _baseline("transformer", task),
    "sparse-transformer": lambda task: _baseline("sparse-transformer", task),
    "lstm": lambda task: _baseline("lstm", task),
    "rsgn-hebbian": lambda task: {},
    "rsgn": lambda task: {"plasticity": {"enabled": False}},
}
ABLATION = {
    "no-hebbian": {"plasticity": {"enabled": False}},
    "k3": {"model": {"n_steps": 3}},
    "k1": {"model": {"n_steps": 1}},
    "nodes128": {"model": {"n_nodes": 128}},
    "nodes512": {"model": {"n_nodes": 512}},
}
# (homeostatic target, ignition width): the ignition alone lights ~58 % of the nodes at width
# 0.4 (untrained, 64 spark points), ~5 % at 0.1 and ~2 % at 0.05, so a sparse run needs both.
ACTIVITY_POINTS = ((0.02, 0.05), (0.01, 0.03), (0.05, 0.1), (0.1, 0.4))
ACTIVITY_EPOCHS = 10  # budget: a 10-epoch cosine schedule (the main grid runs 50)


def cells(grid: str) -> list[Cell]:
    """The grid's cells, cheapest and most informative first."""
    if grid == "main":
        out = []
        for seed in SEEDS:
            for model in MODELS:
                for task, base in TASKS.items():
                    over = {"seed": seed, **MODELS[model](task)}
                    out.append(Cell("main", f"{task}-{model}-seed{seed}", base, over))
        return out
    if grid == "ablation":
        base = TASKS["hierarchical"]
        return [Cell("ablation", name, base, {"seed": 42, **o}) for name, o in ABLATION.items()]
    if grid == "activity":
        out = []
        for target, sigma in ACTIVITY_POINTS:
            for k in (5, 0):
                model = {"target_activity": target, "ignition_sigma": sigma, "n_steps": k}
                over = {"seed": 42, "epochs": ACTIVITY_EPOCHS, "model": model}
                name = f"target{target:g}-sigma{sigma:g}-k{k}"
                out.append(Cell("activity", name, "rsgn-paper-sparse-hierarchical", over))
        return out
    raise AtomsparkError(f"grid {grid!r}: unknown (main, ablation, activity)")


# ----- running ---------------------------------------------------------------------------------
def run_cell(cell: Cell, runs: Path) -> Path:
    """Train one cell into runs/<grid>/<name>; resume it if a checkpoint is there."""
    from atomspark.networks.torch_path.training import CHECKPOINT, train

    out = runs / cell.grid / cell.name
    if (out / "final_metrics.json").is_file():
        return out
    resume = (out / CHECKPOINT).is_file()
    if out.exists() and not resume:
        shutil.rmtree(out)  # started but never checkpointed: nothing worth keeping
    cfg = cell.config()
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "cell.json", json.dumps({"cell": vars(cell), "config": cfg}))
    train(cfg, out, resume=resume, progress=False)
    return out


def run(grid: str, runs: Path, only: str | None = None) -> None:
    """Run the grid's unfinished cells in order (those matching the glob `only`)."""
    from tqdm import tqdm

    todo = [c for c in cells(grid) if only is None or fnmatch.fnmatch(c.name, only)]
    for cell in tqdm(todo, desc=f"grid {grid}", unit="cell"):
        tqdm.write(f"[grid] {cell.grid}/{cell.name}")
        run_cell(cell, runs)


# ----- results -----------------------------------------------------------------------------------
def summarise(cell: Cell, out: Path) -> dict:
    """The small JSON committed per cell: config, seed, per-epoch validation accuracy and
    activity, best and last epoch, parameter count, wall time, date and machine."""
    import torch
    from atomspark.networks.torch_path.baselines import n_parameters
    from atomspark.networks.torch_path.config import validate_config
    from atomspark.networks.torch_path.training import build_model

    cfg = validate_config(json.loads((out / "cell.json").read_text())["config"])
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line]
    evals = [r for r in rows if r["type"] == "eval"]
    keep = ("epoch", "accuracy", "loss", "activity", "activity_steps", "activity_by_step")
    epochs = [{k: r[k] for k in (*keep, "epoch_s", "load") if k in r} for r in evals]
    best = max(epochs, key=lambda r: (r["accuracy"], -r["epoch"]))
    d = cfg["data"]
    module = build_model(cfg, d["dim"], {"n_classes": d["n_classes"]}, "cpu", torch.float32)
    engine = engine_costs(out, cfg) if cell.grid == "activity" else None
    return {
        "grid": cell.grid,
        "cell": cell.name,
        "engine": engine,
        "seed": cfg["seed"],
        "config": cfg,
        "n_parameters": n_parameters(module),
        "epochs": epochs,
        "best": best,
        "last": epochs[-1],
        "wall_s": sum(r.get("epoch_s", 0.0) for r in epochs),
        "finished": datetime.fromtimestamp(
            (out / "final_metrics.json").stat().st_mtime, timezone.utc
        ).isoformat(timespec="seconds"),
        "machine": _machine(),
    }


ENGINE_SEQUENCES = 64  # validation sequences run through the event engine per activity cell


def engine_costs(out: Path, cfg: dict, n: int = ENGINE_SEQUENCES) -> dict:
    """The trained model on the event engine (its own semantics), first `n` validation
    sequences: accuracy, mean active fraction over the engine's steps, synaptic events and the
    Loihi 2 energy per sequence priced from the engine's counters (mapping/ energy model).
    Cached in out/engine.json (the engine is slow; collect runs often)."""
    cache = out / "engine.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    from atomspark.networks.torch_path.training import build_data
    from atomspark.scenarios.compare import compare

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
    costs = {
        "sequences": n,
        "hardware": "loihi2",
        "accuracy": eng["accuracy"],
        "mean_active_fraction": eng["active_fraction"],
        "energy_per_sample_j": eng["energy_per_sample_j"],
        "energy_source": eng["energy_source"],
    }
    atomic_write_text(cache, json.dumps(costs, indent=1))
    return costs


def logistic_floor(task: str) -> dict:
    """The floor: scikit-learn's logistic regression (defaults: L2, C = 1, lbfgs) on the
    standardised mean token of each sequence, fitted on the fixed 80 % split and scored on the
    20 %. Deterministic: the data and the split do not depend on the run seed."""
    import time

    from atomspark.networks.torch_path.training import build_data
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    cfg = Cell("main", f"{task}-floor-sklearn", TASKS[task]).config()
    x_tr, y_tr, x_va, y_va, extra = build_data(cfg)
    t0 = time.perf_counter()
    fit = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    fit.fit(x_tr.mean(1), y_tr)
    acc = float(fit.score(x_va.mean(1), y_va))
    n_params = (x_tr.shape[-1] + 1) * extra["n_classes"]
    return {
        "grid": "main",
        "cell": f"{task}-floor-sklearn",
        "seed": None,
        "config": {"data": cfg["data"], "val_fraction": cfg["val_fraction"], "model": "sklearn"},
        "n_parameters": n_params,
        "epochs": [],
        "best": {"accuracy": acc},
        "last": {"accuracy": acc},
        "wall_s": time.perf_counter() - t0,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": _machine(),
    }


def _machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        "(shared with other jobs), torch on CPU, one thread"
    )


def collect(runs: Path, results: Path = RESULTS) -> list[Path]:
    """Write results/<grid>/<cell>.json for every finished cell of every grid, and the floor."""
    written = []
    for task in TASKS:
        path = results / "main" / f"{task}-floor-sklearn.json"
        if not path.is_file():  # deterministic: computed once
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(logistic_floor(task), indent=1) + "\n")
            written.append(path)
    for grid in ("main", "ablation", "activity"):
        for cell in cells(grid):
            out = runs / grid / cell.name
            if not (out / "final_metrics.json").is_file():
                continue
            path = results / grid / f"{cell.name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(summarise(cell, out), indent=1) + "\n")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m atomspark.scenarios.paper_grid")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="train a grid's unfinished cells (resumable)")
    r.add_argument("grid", choices=("main", "ablation", "activity"))
    r.add_argument("--runs", type=Path, default=Path("results/rsgn-paper"))
    r.add_argument("--only", help="glob on cell names, e.g. 'hierarchical-*-seed42'")
    c = sub.add_parser("collect", help="finished cells -> docs/results/rsgn/<grid>/<cell>.json")
    c.add_argument("--runs", type=Path, default=Path("results/rsgn-paper"))
    ls = sub.add_parser("list", help="print a grid's cells and whether they finished")
    ls.add_argument("grid", choices=("main", "ablation", "activity"))
    ls.add_argument("--runs", type=Path, default=Path("results/rsgn-paper"))
    args = ap.parse_args(argv)
    try:
        if args.cmd == "run":
            run(args.grid, args.runs, args.only)
        elif args.cmd == "collect":
            for path in collect(args.runs):
                print(path)
        else:
            for cell in cells(args.grid):
                done = (args.runs / cell.grid / cell.name / "final_metrics.json").is_file()
                print(f"{'done' if done else 'todo'}  {cell.grid}/{cell.name}")
    except AtomsparkError as exc:
        print(f"error: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
