"""The split RSGN bundle with its readout on chip processes, per model: the cores it holds (the
network's and the readout's) and their fit margin, the readout's number formats, and over a
sample set the agreement of its class scores and decisions: the split schedule's reference run
read out by the readout's processes against the engine-side integer counterpart (the same sums
from the integer engine's final state), its decisions against the float engine's and against
the host readout of the same integer states; with --lava N, a stream of N samples in ONE Lava
run against the per-sample reference runs; and the same samples encoded by the integer
encoder's reference (mapping/fixed_encoder.py, not on chip) instead of the host. Integer nodes
with W_h in two 8-bit parts and W's exponent per target node (export --fixed --split-w-h
--per-target-w).

    python benchmarks/rsgn_split_readout.py [MODEL ...] [--samples 32] [--lava 3]
    python benchmarks/rsgn_split_readout.py --table      # the table in docs/lava.md

MODEL: demo (the demo's untrained published RSGN, seed 0), published, sparse (the released
models under docs/results/rsgn/models); all three by default. Results accumulate in
OUT/readout.json, one row per model.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError, atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "lava.md"
RELEASED = ROOT / "docs" / "results" / "rsgn" / "models"
MODELS = {
    "demo": "the demo's RSGN (published, N 256, untrained, seed 0; its 16 test sequences)",
    "published": "released/hierarchical-rsgn-seed42.npz",
    "sparse": "sparse-threshold/target0.02-sigma0.05-k0-e50-seed43.npz",
}
TWO_PART = {"split_w_h": True, "per_target_w": True}
BEGIN, END = "<!-- rsgn_split_readout: begin -->", "<!-- rsgn_split_readout: end -->"


def load(name: str, samples: int):
    """(params, config, tokens) of a model: the demo's, or a released one on its own task's
    validation sequences (the sparse sigmoid models, trained without propagation, run K = 5)."""
    from atomspark.networks import rsgn
    from atomspark.networks.datasets import hierarchical_sequences

    if name == "demo":
        cfg = rsgn.RSGNConfig(mode="published", n_nodes=256, n_classes=20, n_steps=5)
        tokens = hierarchical_sequences(n=32, seed=0).tokens[16:]  # scenarios/runs/demo.py
        return rsgn.init_params(cfg, seed=0), cfg, tokens[:samples]
    from atomspark.scenarios.runs.model_task import task_samples

    path = RELEASED / MODELS[name]
    params, config = rsgn.load_model(path)
    if config.n_steps == 0:
        config = replace(config, n_steps=5)
    return params, config, task_samples(path, samples)[0]


def evaluate(name: str, samples: int, lava: int) -> dict:
    from atomspark.mapping.lava.bundle import from_graph
    from atomspark.mapping.lava.split_bundle import (
        export_split,
        load_split_bundle,
        split_bundle_costs,
    )
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.mapping.quantize import fixed_rsgn_runner, quantize_rsgn_graph
    from atomspark.mapping.split_readout import engine_scores
    from atomspark.networks.rsgn_compile import compile_rsgn_tokens
    from atomspark.networks.sample_runner import rsgn_runner, rsgn_scores

    params, config, tokens = load(name, samples)
    steps = config.n_steps + 1
    graph = quantize_rsgn_graph(compile_rsgn_tokens(params, config, tokens[0]), **TWO_PART)
    with tempfile.TemporaryDirectory(prefix="atomspark_readout_") as tmp:
        sb = load_split_bundle(export_split(from_graph(graph), Path(tmp) / "b", classifier=params))
    costs = split_bundle_costs(sb)
    t0 = time.process_time()
    stream = run_stream(sb, params, config, tokens)
    reference_cpu = time.process_time() - t0
    finals = fixed_rsgn_runner(rsgn_runner(params, config), **TWO_PART).run(tokens, steps).outputs
    groups = sb.readout_groups()
    same = 0
    for acc, (alpha, h) in zip(stream.accumulator, finals):
        ints = np.round(alpha * 2.0**12).astype(np.int64), np.round(h * 2.0**10).astype(np.int64)
        same += bool(np.array_equal(acc, engine_scores(sb.readout, *ints, groups)[0]))
    host = rsgn_scores(params, finals).argmax(1)
    decisions = stream.float_scores.argmax(1)
    r = sb.readout
    row = {
        "model": MODELS[name],
        "n_nodes": sb.model.n,
        "d_hidden": sb.model.d,
        "classes": r.classes,
        "n_steps": config.n_steps,
        "samples": len(tokens),
        "cores": {
            "network": len(costs["costs"]),
            "readout": costs["cores_total"] - len(costs["costs"]),
        },
        "fits": not costs["problems"],
        "margins": costs["margins"],
        "readout": {
            "weight_exp": r.weight_exp,
            "shift": r.shift,
            "score_exp": r.score_exp,
            "node_cores_per_group": r.node_cores_per_group,
        },  # fmt: skip
        "instructions_per_sample": {
            "readout_product": costs["readout_instructions_per_sample"],
            "load": costs["load_instructions_per_sample"],
        },
        "reference_equals_engine_counterpart": same / len(tokens),
        "overflows": stream.overflows,
        "chip_vs_float_decisions": stream.decision_agreement,
        "host_readout_vs_float_decisions": float(np.mean(host == decisions)),
        "reference_cpu_s": reference_cpu,
    }
    row["fixed_encoder"] = fixed_encoder_row(sb, params, config, tokens, stream)
    if lava:
        t0 = time.perf_counter()
        on_lava = run_stream(sb, params, config, tokens[:lava], lava=True)
        wall = time.perf_counter() - t0
        ref = stream.accumulator[:lava]
        row["lava"] = {
            "samples": min(lava, len(tokens)),
            "runs": on_lava.lava_runs,
            "identical_scores": bool(np.array_equal(on_lava.accumulator, ref)),
            "max_abs_difference": float(np.abs(on_lava.accumulator - ref).max()),
            "wall_s": wall,
        }
    return row


def fixed_encoder_row(sb, params, config, tokens, stream) -> dict:
    """The same samples encoded by the integer reference (mapping/fixed_encoder.py, not on chip)
    instead of the host: its ignition against the host's rounded one (in units of the last
    bit: alpha Q.12, h Q.10) and the decisions of the readout on chip from it."""
    from atomspark.mapping.lava.split_stream import encoded_states, run_stream

    host, _, _ = encoded_states(sb.model, params, config, tokens)
    fixed, _, _ = encoded_states(sb.model, params, config, tokens, encoder="fixed")
    t0 = time.process_time()
    run = run_stream(sb, params, config, tokens, encoder="fixed")
    return {
        "max_alpha_error_lsb": int(
            max(np.abs(a["alpha"] - b["alpha"]).max() for a, b in zip(host, fixed))
        ),  # fmt: skip
        "max_h_error_lsb": int(max(np.abs(a["h"] - b["h"]).max() for a, b in zip(host, fixed))),
        "chip_vs_float_decisions": run.decision_agreement,
        "same_decisions_as_host_encoding": float(np.mean(run.decisions == stream.decisions)),
        "overflows": run.overflows,
        "reference_cpu_s": time.process_time() - t0,
    }


def _pct(v: float) -> str:
    return f"{100 * v:.1f} %"


def table(results: dict) -> str:
    """The Markdown table of every model in the results, with how and where they were measured."""
    head = (
        "| model | N, d, classes, K | cores: network + readout (fit margin, tightest) "
        "| samples | reference = engine-side integer readout | chip readout vs float engine: "
        "same class | host readout of the integer states vs float: same class "
        "| stream on Lava: samples in one run, scores identical to per-sample runs "
        "| integer encoder (reference, not on chip): ignition error alpha / h (last bits), chip "
        "readout vs float: same class |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for name, r in results["models"].items():
        margin = min(r["margins"].values())
        lava = r.get("lava")
        on_lava = (
            f"{lava['samples']} in {lava['runs']} run, "
            + (
                "identical"
                if lava["identical_scores"]
                else f"max diff {lava['max_abs_difference']:g}"
            )
            if lava
            else "not run"
        )
        rows.append(
            f"| {name} | {r['n_nodes']}, {r['d_hidden']}, {r['classes']}, {r['n_steps']} "
            f"| {r['cores']['network']} + {r['cores']['readout']} "
            f"({'fits' if r['fits'] else 'does not fit'}, {_pct(margin)}) | {r['samples']} "
            f"| {_pct(r['reference_equals_engine_counterpart'])} of samples bit for bit "
            f"| {_pct(r['chip_vs_float_decisions'])} | {_pct(r['host_readout_vs_float_decisions'])} "
            f"| {on_lava} | {_encoder(r.get('fixed_encoder'))} |"
        )
    dates = sorted(r["date"][:16] for r in results["models"].values())
    machines = sorted({r["machine"] for r in results["models"].values()})
    note = (
        f"\n`python benchmarks/rsgn_split_readout.py --table` from "
        f"docs/results/rsgn_split/readout.json (measured {dates[0]} to {dates[-1]} UTC on "
        f"{'; '.join(machines)}); integer nodes with W_h in two 8-bit parts and W's exponent per "
        "target node; fit margin: 1 - use / limit of the busiest core in its tightest resource.\n"
    )
    return head + "\n".join(rows) + "\n" + note


def _encoder(e: dict | None) -> str:
    if e is None:
        return "not run"
    return (
        f"{e['max_alpha_error_lsb']} / {e['max_h_error_lsb']}, {_pct(e['chip_vs_float_decisions'])}"
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
    ap.add_argument("models", nargs="*", metavar="MODEL", help=f"of {', '.join(MODELS)} (all)")
    ap.add_argument("--samples", type=int, default=32, help="sequences per model (32)")
    ap.add_argument("--lava", type=int, default=0, help="samples of a stream in one Lava run")
    ap.add_argument("--out", type=Path, default=Path("docs/results/rsgn_split"))
    ap.add_argument("--table", action="store_true", help="only write the table into docs/lava.md")
    args = ap.parse_args(argv)
    path = args.out / "readout.json"
    try:
        if args.table:
            write_table(json.loads(path.read_text()))
            return 0
        unknown = [m for m in args.models if m not in MODELS]
        if unknown:
            raise AtomsparkError(f"MODEL {unknown[0]!r}: choose from {', '.join(MODELS)}")
        results = json.loads(path.read_text()) if path.is_file() else {"models": {}}
        for name in args.models or list(MODELS):
            row = evaluate(name, args.samples, args.lava)
            row.update(
                loadavg=list(os.getloadavg()),
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                machine=f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
                command="python benchmarks/rsgn_split_readout.py " + " ".join(sys.argv[1:]),
            )
            results["models"][name] = row
            args.out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(results, indent=2))
            print(
                f"{name}: {json.dumps({k: row[k] for k in ('cores', 'chip_vs_float_decisions')})}"
            )
    except AtomsparkError as exc:
        print(f"rsgn_split_readout: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
