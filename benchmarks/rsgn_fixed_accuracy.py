"""Accuracy cost of RSGN's Loihi fixed point, on trained models: float vs integer event engine on
the same validation sequences.

Each trained RSGN run (a `train` folder or a finished sweep cell with model.npz) is read with the
task it was trained on (stored in model.npz, else the sweep cell's settings), and every
validation sequence of that task runs on the event engine twice: float nodes
(sim/units/rsgn.py) and integer nodes (mapping/quantize.quantize_rsgn_graph ->
sim/units/rsgn_fixed.py, the arithmetic of the Lava fixed_pt process). The readout
sum_j alpha_j h_j -> classes is done on the host in float from each run's final state, so the
difference is the node arithmetic alone. With no folder given, every finished RSGN cell of the
paper grids under results/sweeps/ is evaluated. Results accumulate in
docs/results/rsgn_fixed/accuracy.json (one row per run; --overwrite recomputes) with a plot
beside it.

    python benchmarks/rsgn_fixed_accuracy.py [RUN ...] [--samples N] [--out docs/results/rsgn_fixed]
    python benchmarks/rsgn_fixed_accuracy.py --table     # the table in docs/lava.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.quantize import _dense_weights, quantize_rsgn_graph, quantize_weights
from atomspark.networks.model_io import read_task
from atomspark.networks.rsgn.model import load_model
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.networks.task_data import build_data
from atomspark.networks.torch_path.config import validate_config
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.rsgn_fixed import ALPHA_FRAC, H_FRAC
from tqdm import tqdm

SWEEPS = Path("results") / "sweeps"
CONFIGS = Path(__file__).resolve().parents[1] / "scenarios" / "configs"
PAPER_GRIDS = "rsgn-paper-*"


def task_of(run: Path) -> dict:
    """The training config a run was trained on: stored in its model.npz, else its sweep cell's
    settings (cells finished before models carried their task)."""
    task = read_task(run / "model.npz")
    if task is None:
        from atomspark.scenarios.sweep.cell import settings_file

        settings = settings_file(run)
        if not settings.is_file():
            raise AtomsparkError(f"{run}: model.npz has no task and no sweep settings; retrain it")
        task = json.loads(settings.read_text())["params"]
    return validate_config(task)


def finished_rsgn_runs(sweeps: Path = SWEEPS) -> list[Path]:
    """Finished sweep cells of the paper grids whose model is an RSGN."""
    runs = []
    for result in sorted(sweeps.glob(f"{PAPER_GRIDS}/cells/*/result.json")):
        run = result.parent
        if (run / "model.npz").is_file() and task_of(run)["model"].get("kind", "rsgn") == "rsgn":
            runs.append(run)
    return runs


# Grids whose cell names repeat another grid's (same variants, other data): their rows get a prefix.
NAME_PREFIX = {"rsgn-paper-notebook-data": "notebook-data-"}


def run_name(run: Path) -> str:
    """A sweep cell's variant and seed ("target0.02-sigma0.05-k5-seed42"), else the folder."""
    name = run.name.split("_")[0]
    if name.startswith("variant="):
        variant, _, seed = name[len("variant=") :].rpartition("-seed=")
        return f"{NAME_PREFIX.get(run.parent.parent.name, '')}{variant}-seed{seed}"
    return name


# float nodes with some weights rounded: matrix names, "name:bits" for a wider shared-exponent
# mantissa than the fixed-point unit's 8 bits (what a wider W_h would buy)
WEIGHT_ABLATIONS = {
    "weights": ("w", "w_h"),
    "w": ("w",),
    "w_h": ("w_h",),
    "w_h:10": ("w_h:10",),
    "w_h:12": ("w_h:12",),
}


def round_mantissas(weights: np.ndarray, bits: int) -> np.ndarray:
    """weights rounded to signed `bits`-bit mantissas with one shared power-of-two exponent."""
    top = np.abs(weights).max()
    if top == 0.0:
        return weights.copy()
    step = 2.0 ** np.ceil(np.log2(top / (2 ** (bits - 1) - 1)))
    return np.round(weights / step) * step


def rounded_weights(graph: Graph, which: tuple[str, ...]) -> Graph:
    """The float graph with W (between nodes) and/or W_h (the hidden transform) rounded to their
    8-bit Lava mantissas and shared exponents (the fixed-point graph's weights, dequantised), or
    W_h to wider mantissas ("w_h:12"), all else float: the part of the fixed-point error that the
    weight format alone causes."""
    pop, (proj,) = graph.populations[0], graph.projections
    params = pop.params
    if "w_h" in which:
        wh = quantize_weights(np.asarray(params.w_h, np.float64))
        params = replace(params, w_h=wh.mantissa * 2.0**wh.weight_exp)
    for name in which:
        if name.startswith("w_h:"):
            bits = int(name.partition(":")[2])
            params = replace(params, w_h=round_mantissas(np.asarray(params.w_h, float), bits))
    if "w" in which:
        w = quantize_weights(_dense_weights(proj))
        sources = np.repeat(np.arange(proj.shape[1]), np.diff(proj.indptr))
        targets = proj.indices.astype(np.int64)  # every stored synapse, as the fixed graph keeps
        values = w.mantissa[targets, sources] * 2.0**w.weight_exp
        rounded = sp.csr_matrix((values, (targets, sources)), shape=proj.shape)
        proj = Projection(proj.source, proj.target, rounded)
    return Graph([Population(pop.name, pop.size, params)], [proj])


def evaluate(run: Path, samples: int | None) -> dict:
    """Float and integer engine on the first `samples` validation sequences of the run's task."""
    params, config = load_model(run / "model.npz")
    cfg = task_of(run)
    _, _, x_val, y_val, _ = build_data(cfg)
    x_val, y_val = x_val[:samples], y_val[:samples]
    scores = {k: [] for k in ("float", "fixed", *WEIGHT_ABLATIONS)}
    active = {k: [] for k in scores}
    wraps = clips = 0
    t0 = time.perf_counter()
    for tokens in tqdm(x_val, desc=run_name(run), leave=False):
        graph = compile_rsgn_tokens(params, config, tokens)
        runs = [("float", graph), ("fixed", quantize_rsgn_graph(graph))]
        runs += [(k, rounded_weights(graph, which)) for k, which in WEIGHT_ABLATIONS.items()]
        for arithmetic, g in runs:
            eng = Engine(g)
            prof = eng.run(config.n_steps + 1)
            state = eng.state[NODE_POPULATION]
            alpha, h = state["alpha"], state["h"]
            if arithmetic == "fixed":
                alpha, h = alpha / 2.0**ALPHA_FRAC, h / 2.0**H_FRAC
                wraps += int(prof.wraps.sum())
                clips += int(prof.clips.sum())
            scores[arithmetic].append(
                (alpha[:, None] * h).sum(axis=0) @ params.cls_w + params.cls_b
            )
            active[arithmetic].append(float(np.mean(alpha > config.cutoff)))
    sf, sq = np.stack(scores["float"]), np.stack(scores["fixed"])
    rounded = {k: np.stack(scores[k]).argmax(1) for k in WEIGHT_ABLATIONS}
    final = (
        json.loads((run / "final_metrics.json").read_text())
        if (run / "final_metrics.json").is_file()
        else {}
    )
    return {
        "run": str(run),
        "task": cfg["data"]["kind"],
        "mode": config.mode,
        "n_nodes": config.n_nodes,
        "n_steps": config.n_steps,
        "target_activity": config.target_activity,
        "epochs": cfg["epochs"],
        "samples": int(len(x_val)),
        "accuracy_torch_last_epoch": final.get("accuracy"),
        "accuracy_float": float(np.mean(sf.argmax(1) == y_val)),
        "accuracy_fixed": float(np.mean(sq.argmax(1) == y_val)),
        "decision_agreement": float(np.mean(sf.argmax(1) == sq.argmax(1))),
        "rounded_weights_only": {  # float nodes, WEIGHT_ABLATIONS: accuracy, same class as float
            k: [float(np.mean(p == y_val)), float(np.mean(p == sf.argmax(1)))]
            for k, p in rounded.items()
        },
        "max_abs_score_error": float(np.abs(sf - sq).max()),
        "max_abs_score": float(np.abs(sf).max()),
        "final_activity_float": float(np.mean(active["float"])),
        "final_activity_fixed": float(np.mean(active["fixed"])),
        "wraps": wraps,
        "clips": clips,
        "chance": 1.0 / config.n_classes,
        "eval_s": time.perf_counter() - t0,
    }


def plot(results: dict, path: Path) -> None:
    """Float vs fixed accuracy per run, chance marked; saved as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(results["runs"])
    rows = [results["runs"][n] for n in names]
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(names) + 1.6))
    ax.barh(y - 0.2, [100 * r["accuracy_float"] for r in rows], 0.4, label="float engine")
    ax.barh(y + 0.2, [100 * r["accuracy_fixed"] for r in rows], 0.4, label="Loihi fixed point")
    for i, r in enumerate(rows):
        ax.plot([100 * r["chance"]] * 2, [i - 0.45, i + 0.45], color="black", lw=1)
    ax.set_yticks(y, [f"{r['task']}: {n}" for n, r in zip(names, rows)], fontsize=8)
    ax.set_xlabel("validation accuracy (%); black tick: chance")
    ax.set_title("RSGN accuracy, float vs fixed-point nodes (same sequences)", fontsize=10, pad=24)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


DOC = Path(__file__).resolve().parents[1] / "docs" / "lava.md"
BEGIN, END = "<!-- rsgn_fixed_accuracy: begin -->", "<!-- rsgn_fixed_accuracy: end -->"


def table(results: dict) -> str:
    """The Markdown table of every run in the results, with their date and machine."""
    head = (
        "| run | task | mode, N, K | epochs | float acc. % | fixed acc. % | same class % "
        "| same class % with float nodes and 8-bit W_h / 8-bit W / both / 10-bit W_h / 12-bit W_h "
        "| max score error (max score) | active (float / fixed) | wraps / clips | chance % |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for name, r in sorted(results["runs"].items(), key=lambda kv: (kv[1]["task"], kv[0])):
        ablation = r.get("rounded_weights_only")
        weights = (
            " / ".join(
                f"{100 * ablation[k][1]:.1f}" if k in ablation else "-"
                for k in ("w_h", "w", "weights", "w_h:10", "w_h:12")
            )
            if ablation
            else "-"
        )
        rows.append(
            f"| {name} | {r['task']} | {r['mode']}, {r['n_nodes']}, {r['n_steps']} "
            f"| {r['epochs']} | {100 * r['accuracy_float']:.1f} | {100 * r['accuracy_fixed']:.1f} "
            f"| {100 * r['decision_agreement']:.1f} | {weights} "
            f"| {r['max_abs_score_error']:.3g} ({r['max_abs_score']:.3g}) "
            f"| {r['final_activity_float']:.3f} / {r['final_activity_fixed']:.3f} "
            f"| {r['wraps']} / {r['clips']} | {100 * r['chance']:.0f} |"
        )
    samples = sorted({r["samples"] for r in results["runs"].values()})
    dates = sorted(r.get("date", results["date"])[:16] for r in results["runs"].values())
    machines = sorted({r.get("machine", results["machine"]) for r in results["runs"].values()})
    note = (
        f"\n`python benchmarks/rsgn_fixed_accuracy.py --table` from "
        f"docs/results/rsgn_fixed/accuracy.json (runs evaluated {dates[0]} to {dates[-1]} UTC on "
        f"{'; '.join(machines)}); all validation sequences of each task "
        f"({', '.join(map(str, samples))}).\n"
    )
    return head + "\n".join(rows) + "\n" + note


def write_table(results: dict, doc: Path = DOC) -> None:
    """Replace the table between the markers in docs/lava.md."""
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise AtomsparkError(f"{doc}: has no {BEGIN} ... {END} markers for the table")
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    atomic_write_text(doc, text[:start] + "\n" + table(results) + text[stop:])


def trained_published(spec: str, runs: Path) -> Path:
    """`TASK:EPOCHS` (hierarchical:15): the paper's published configuration for that task at its
    full sizes, trained for EPOCHS epochs (cosine over those epochs) into runs/TASK-EPOCHS-epochs;
    a finished run there is reused."""
    from atomspark.networks.torch_path.config import load_config
    from atomspark.networks.torch_path.training import train

    task, _, epochs = spec.partition(":")
    if task not in ("hierarchical", "long-range") or not epochs.isdigit() or int(epochs) < 1:
        raise AtomsparkError(f"--train {spec!r}: expected hierarchical:N or long-range:N")
    run = runs / f"{task}-{epochs}-epochs"
    if not (run / "model.npz").is_file():
        cfg = load_config(CONFIGS / f"rsgn-paper-{task}.toml")
        train({**cfg, "epochs": int(epochs)}, run, resume=(run / "checkpoint.pt").is_file())
    return run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "runs_given", nargs="*", type=Path, metavar="RUN",
        help="run folders (default: finished paper cells)",
    )  # fmt: skip
    ap.add_argument("--samples", type=int, default=None, help="validation sequences (default all)")
    ap.add_argument("--sweeps", type=Path, default=SWEEPS, help="where the paper grids' sweeps are")
    ap.add_argument("--out", type=Path, default=Path("docs/results/rsgn_fixed"))
    ap.add_argument("--overwrite", action="store_true", help="recompute runs already in the JSON")
    ap.add_argument("--table", action="store_true", help="only write the table into docs/lava.md")
    ap.add_argument(
        "--train",
        action="append",
        default=[],
        metavar="TASK:EPOCHS",
        help="also train (or reuse) the published model of a paper task for EPOCHS epochs "
        "under --runs and evaluate it, e.g. --train hierarchical:15 --train long-range:5",
    )
    ap.add_argument("--runs", type=Path, default=Path("results/rsgn_fixed"), help="for --train")
    args = ap.parse_args(argv)
    try:
        if args.table:
            write_table(json.loads((args.out / "accuracy.json").read_text()))
            return 0
        trained = [trained_published(spec, args.runs) for spec in args.train]
        runs = args.runs_given + trained if (args.runs_given or trained) else []
        runs = runs or finished_rsgn_runs(args.sweeps)
        if not runs:
            raise AtomsparkError(f"no trained RSGN runs given or finished under {args.sweeps}")
        path = args.out / "accuracy.json"
        results = json.loads(path.read_text()) if path.is_file() else {}
        results = results if "runs" in results else {"runs": {}}
        for run in runs:
            name = run_name(run)
            if name in results["runs"] and not args.overwrite:
                print(f"{name}: in {path} already (--overwrite recomputes)")
                continue
            row = evaluate(run, args.samples)
            row.update(
                loadavg=list(os.getloadavg()),
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                machine=f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
            )
            results["runs"][name] = row
            results.update(
                command="python benchmarks/rsgn_fixed_accuracy.py",
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                machine=f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
            )
            args.out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(results, indent=2))
            plot(results, args.out / "accuracy.png")
            print(
                f"{name}: float {row['accuracy_float']:.3f} fixed {row['accuracy_fixed']:.3f} "
                f"agreement {row['decision_agreement']:.3f} wraps {row['wraps']} clips {row['clips']}",
                flush=True,
            )
    except AtomsparkError as exc:
        print(f"rsgn_fixed_accuracy: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
