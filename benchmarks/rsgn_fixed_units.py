"""Which integer RSGN unit keeps a trained model's decisions: the float event engine against the
integer unit with 8-bit W_h (sim/units/rsgn_fixed.py), with W_h in two 8-bit parts
(sim/units/rsgn_fixed_split.py), and the latter with W's exponent per target node
(quantize_rsgn_graph(per_target_w=True)), on the same validation sequences of the run's own
task; float nodes with only W_h rounded (one shared exponent at 8 and 12 bits; 8 bits with one
exponent per row) and with only W (between nodes) in 8 bits (one exponent; one per target node)
show which weight format the decisions need. Readout on the host in float from each run's final
state, as benchmarks/rsgn_fixed_accuracy.py does.

    python benchmarks/rsgn_fixed_units.py RUN [RUN ...] [--samples N] [--out docs/results/rsgn_fixed]
    python benchmarks/rsgn_fixed_units.py docs/results/rsgn/models/released/<cell>.npz
    python benchmarks/rsgn_fixed_units.py --table      # the table in docs/lava.md

Results accumulate in OUT/units.json, one row per run (--overwrite recomputes a run).
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
from atomspark.mapping.quantize import (
    _dense_weights,
    quantize_rsgn_graph,
    quantize_weights,
    split_mantissas,
)
from atomspark.networks.model_io import read_task
from atomspark.networks.rsgn.model import load_model
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.networks.task_data import build_data
from atomspark.networks.torch_path.config import validate_config
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.rsgn_fixed import ALPHA_FRAC, H_FRAC
from atomspark.sim.units.rsgn_fixed_split import LO_SHIFT

# the integer variants: quantize_rsgn_graph's options (the registered units, and the split unit
# with W's exponent per target node)
UNITS = {
    "rsgn_fixed": {},
    "rsgn_fixed_split": {"split_w_h": True},
    "split+per-target-w": {"split_w_h": True, "per_target_w": True},
}
# float nodes with W_h or W rounded, or both as the split + per-target unit stores them
ABLATIONS = ("w_h:8", "w_h:rows8", "w_h:12", "w:8", "w:cols8", "weights:unit")
W_ABLATIONS = ("w:8", "w:cols8")
PARTS = (("w_h:8", "w_h:rows8", "w_h:12"), W_ABLATIONS, ("weights:unit",))  # table columns


def round_w_h(weights: np.ndarray, spec: str) -> np.ndarray:
    """W_h rounded to signed mantissas: "w_h:B" B bits, one exponent for the matrix;
    "w_h:rowsB" B bits, one exponent per row (per input component)."""
    rows = "rows" in spec
    bits = int(spec.rpartition(":")[2].removeprefix("rows"))
    top = np.abs(weights).max(axis=1, keepdims=True) if rows else np.abs(weights).max()
    step = 2.0 ** np.ceil(np.log2(np.where(top > 0, top, 1.0) / (2 ** (bits - 1) - 1)))
    return np.round(weights / step) * step


def round_w(graph: Graph, per_target: bool = False) -> Graph:
    """The float graph with W (between nodes) alone rounded to 8-bit mantissas: with the integer
    units' one shared exponent (both units keep W so), or with one power-of-two exponent per
    target node (per_target: each node would shift its own summed message)."""
    pop, (proj,) = graph.populations[0], graph.projections
    dense = _dense_weights(proj)  # (targets, sources)
    if per_target:
        top = np.abs(dense).max(axis=1, keepdims=True)
        step = 2.0 ** np.ceil(np.log2(np.where(top > 0, top, 1.0) / 255.0))  # W >= 0: 0..255
        rounded_dense = np.round(dense / step) * step
    else:
        w = quantize_weights(dense)
        rounded_dense = w.mantissa * 2.0**w.weight_exp
    sources = np.repeat(np.arange(proj.shape[1]), np.diff(proj.indptr))
    targets = proj.indices.astype(np.int64)  # every stored synapse, as the integer graph keeps
    values = rounded_dense[targets, sources]
    rounded = sp.csr_matrix((values, (targets, sources)), shape=proj.shape)
    return Graph([pop], [Projection(proj.source, proj.target, rounded)])


def variant_graph(graph: Graph, name: str) -> Graph:
    """The float graph, one of the integer units (UNITS) or an ABLATIONS variant of it."""
    if name == "float":
        return graph
    if name in UNITS:
        return quantize_rsgn_graph(graph, **UNITS[name])
    if name in W_ABLATIONS:
        return round_w(graph, per_target=name == "w:cols8")
    if name == "weights:unit":  # W per target node, W_h in two parts: the unit's weights, float
        graph = round_w(graph, per_target=True)
        pop = graph.populations[0]
        hi, lo = split_mantissas(np.asarray(pop.params.w_h, float), LO_SHIFT)
        w_h = (hi.mantissa * 2.0**LO_SHIFT + lo) * 2.0 ** (hi.weight_exp - LO_SHIFT)
        params = replace(pop.params, w_h=w_h)
        return Graph([Population(pop.name, pop.size, params)], graph.projections)
    pop = graph.populations[0]
    params = replace(pop.params, w_h=round_w_h(np.asarray(pop.params.w_h, float), name))
    return Graph([Population(pop.name, pop.size, params)], graph.projections)


def model_file(run: Path) -> Path:
    """A train run folder's model.npz, or a model file itself (docs/results/rsgn/models/...)."""
    return run if run.suffix == ".npz" else run / "model.npz"


def run_name(run: Path) -> str:
    """The row's name: the run folder's, or "<grid>/<cell>" for a committed model file."""
    return f"{run.parent.name}/{run.stem}" if run.suffix == ".npz" else run.name


def torch_last_accuracy(run: Path) -> float | None:
    """The torch model's last-epoch validation accuracy: the run's final_metrics.json, or for a
    committed model file docs/results/rsgn/models/<grid>/<cell>.npz its paper-grid summary
    docs/results/rsgn/<grid>/<cell>.json."""
    if run.suffix == ".npz":
        summary = run.parents[2] / run.parent.name / f"{run.stem}.json"
        return json.loads(summary.read_text())["last"]["accuracy"] if summary.is_file() else None
    final = run / "final_metrics.json"
    return json.loads(final.read_text()).get("accuracy") if final.is_file() else None


def evaluate(run: Path, samples: int | None) -> dict:
    """Every variant on the first `samples` validation sequences of the run's task."""
    params, config = load_model(model_file(run))
    task = validate_config(read_task(model_file(run)) or {})
    _, _, x_val, y_val, _ = build_data(task)
    x_val, y_val = x_val[:samples], y_val[:samples]
    names = ("float", *UNITS, *ABLATIONS)
    decisions = {k: [] for k in names}
    wraps = dict.fromkeys(UNITS, 0)
    clips = dict.fromkeys(UNITS, 0)
    t0 = time.process_time()
    for tokens in x_val:
        graph = compile_rsgn_tokens(params, config, tokens)
        for name in names:
            eng = Engine(variant_graph(graph, name))
            prof = eng.run(config.n_steps + 1)
            st = eng.state[NODE_POPULATION]
            alpha, h = st["alpha"], st["h"]
            if name in UNITS:
                alpha, h = alpha / 2.0**ALPHA_FRAC, h / 2.0**H_FRAC
                wraps[name] += int(prof.wraps.sum())
                clips[name] += int(prof.clips.sum())
            scores = (alpha[:, None] * h).sum(axis=0) @ params.cls_w + params.cls_b
            decisions[name].append(int(scores.argmax()))
    pred = {k: np.array(v) for k, v in decisions.items()}
    return {
        "run": str(run),
        "task": task["data"]["kind"],
        "mode": config.mode,
        "n_nodes": config.n_nodes,
        "d_hidden": config.d_hidden,
        "n_steps": config.n_steps,
        "epochs": task["epochs"],
        "seed": task["seed"],
        "samples": int(len(x_val)),
        "accuracy_torch_last_epoch": torch_last_accuracy(run),
        "accuracy": {k: float(np.mean(p == y_val)) for k, p in pred.items()},
        "same_class_as_float": {k: float(np.mean(p == pred["float"])) for k, p in pred.items()},
        "wraps": wraps,
        "clips": clips,
        "chance": 1.0 / config.n_classes,
        "eval_cpu_s": time.process_time() - t0,
    }


DOC = Path(__file__).resolve().parents[1] / "docs" / "lava.md"
BEGIN, END = "<!-- rsgn_fixed_units: begin -->", "<!-- rsgn_fixed_units: end -->"


def table(results: dict) -> str:
    """The Markdown table of every run in the results, with how and where they were measured."""
    head = (
        "| run | task | mode, N, d, K | epochs | samples | torch acc. % (all) | float acc. % "
        "| 8-bit W_h: acc. % / same class % | split W_h: acc. % / same class % | split W_h, W "
        "with an exponent per target node: acc. % / same class % "
        "| float nodes, W_h alone in 8 bits / 8 bits per row / 12 bits; W alone in 8 bits / 8 "
        "bits per target node; both as the split + per-target unit stores them: same class % "
        "| wraps / clips (8-bit, split, split + per-target W) | chance % |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for name, r in sorted(results["runs"].items(), key=lambda kv: (kv[1]["task"], kv[0])):
        acc, same = r["accuracy"], r["same_class_as_float"]
        units = [f"{100 * acc[u]:.1f} / {100 * same[u]:.1f}" if u in acc else "-" for u in UNITS]
        ablation = "; ".join(
            " / ".join(f"{100 * same[k]:.1f}" if k in same else "-" for k in part) for part in PARTS
        )
        overflow = ", ".join(
            f"{r['wraps'][u]} / {r['clips'][u]}" if u in r["wraps"] else "-" for u in UNITS
        )
        last = r["accuracy_torch_last_epoch"]
        torch = "-" if last is None else f"{100 * last:.1f}"
        rows.append(
            f"| {name} | {r['task']} | {r['mode']}, {r['n_nodes']}, {r['d_hidden']}, "
            f"{r['n_steps']} | {r['epochs']} | {r['samples']} | {torch} | {100 * acc['float']:.1f} "
            f"| {' | '.join(units)} | {ablation} | {overflow} | {100 * r['chance']:.0f} |"
        )
    reading = [line for r in results["runs"].items() if (line := _reading(*r))]
    dates = sorted(r["date"][:16] for r in results["runs"].values())
    machines = sorted({r["machine"] for r in results["runs"].values()})
    note = (
        f"\n`python benchmarks/rsgn_fixed_units.py --table` from "
        f"docs/results/rsgn_fixed/units.json (runs evaluated {dates[0]} to {dates[-1]} UTC on "
        f"{'; '.join(machines)}); the validation sequences (samples) of each run's own task.\n"
    )
    return head + "\n".join(rows) + "\n" + note + "".join(f"\n{line}\n" for line in reading)


GOAL_SAME, GOAL_POINTS = 0.95, 0.01  # issue goal: >= 95 % of decisions, accuracy within 1 point


def _reading(name: str, r: dict) -> str | None:
    """One generated paragraph per run measured with every variant: what each integer unit keeps,
    whether the goal is met, and whether the weights or the node arithmetic cost the rest."""
    acc, same = r["accuracy"], r["same_class_as_float"]
    if any(k not in same for k in (*UNITS, "weights:unit")):
        return None
    pct = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    kept = [f"{pct(same[u])} ({pct(acc[u])} accuracy)" for u in UNITS]
    best = max(UNITS, key=lambda u: same[u])
    met = same[best] >= GOAL_SAME and abs(acc[best] - acc["float"]) <= GOAL_POINTS
    weights = same["weights:unit"]
    cause = (
        "so what still flips decisions is the integer node arithmetic (formats, tables, "
        "roundings), not the weights"
        if weights >= 0.995
        else f"so the weights alone still flip {pct(1 - weights)} of them"
    )
    return (
        f"**{name}** (float engine {pct(acc['float'])}): the 8-bit unit keeps {kept[0]} of the "
        f"float decisions, W_h in two parts {kept[1]}, and with W's exponent per target node "
        f"{kept[2]}; the goal (>= {pct(GOAL_SAME)} of decisions, accuracy within "
        f"{100 * GOAL_POINTS:.0f} point) is {'met' if met else 'not met'} by the best of them. "
        f"Float nodes holding exactly that last unit's weights keep {pct(weights)}, {cause}."
    )


def write_table(results: dict, doc: Path = DOC) -> None:
    """Replace the table between the markers in docs/lava.md."""
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise AtomsparkError(f"{doc}: has no {BEGIN} ... {END} markers for the table")
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    atomic_write_text(doc, text[:start] + "\n" + table(results) + text[stop:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "runs", nargs="*", type=Path, metavar="RUN", help="train run folders or model .npz files"
    )
    ap.add_argument("--samples", type=int, default=None, help="validation sequences (all)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/rsgn_fixed"))
    ap.add_argument("--overwrite", action="store_true", help="recompute runs already there")
    ap.add_argument("--table", action="store_true", help="only write the table into docs/lava.md")
    args = ap.parse_args(argv)
    path = args.out / "units.json"
    try:
        if args.table:
            write_table(json.loads(path.read_text()))
            return 0
        if not args.runs:
            raise AtomsparkError("RUN: give at least one train run folder (with model.npz)")
        results = json.loads(path.read_text()) if path.is_file() else {"runs": {}}
        for run in args.runs:
            if not model_file(run).is_file():
                raise AtomsparkError(
                    f"{run}: no model (give a folder written by atomspark train or a model .npz)"
                )
            name = run_name(run)
            if name in results["runs"] and not args.overwrite:
                print(f"{name}: in {path} already (--overwrite recomputes)")
                continue
            row = evaluate(run, args.samples)
            row.update(
                loadavg=list(os.getloadavg()),
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                machine=f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
                command="python benchmarks/rsgn_fixed_units.py " + " ".join(sys.argv[1:]),
            )
            results["runs"][name] = row
            args.out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(results, indent=2))
            print(f"{name}: accuracy {row['accuracy']} same class {row['same_class_as_float']}")
    except AtomsparkError as exc:
        print(f"rsgn_fixed_units: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
