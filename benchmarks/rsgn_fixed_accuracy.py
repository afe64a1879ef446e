"""Accuracy cost of RSGN's Loihi fixed point: float vs integer event engine on the same data.

For each paper task (hierarchical, long-range) a SMALL RSGN (published configuration, reduced
sizes and epochs: no full-size trained model is available here) is trained with `train` (or the
model.npz already in the run folder is reused), then every validation sequence runs on the event
engine twice: float nodes (sim/units_rsgn.py) and integer nodes (quantize_rsgn_graph,
sim/units_rsgn_fixed.py). The readout sum_j alpha_j h_j -> classes is done on the host in float
from each run's final state. Writes docs/results/rsgn_fixed/accuracy.json (date, machine, load).

    python benchmarks/rsgn_fixed_accuracy.py [--out docs/results/rsgn_fixed] [--runs results/rsgn_fixed]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from atomspark.mapping.quantize import quantize_rsgn_graph
from atomspark.networks.model_io import atomic_write_text
from atomspark.networks.rsgn.model import load_model
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn_tokens
from atomspark.networks.torch_path.config import load_config
from atomspark.networks.torch_path.training import build_data, train
from atomspark.sim.engine import Engine
from tqdm import tqdm

CONFIGS = Path(__file__).resolve().parents[1] / "scenarios" / "configs"
SMALL = {  # reduced from the paper's sizes so that training fits a shared 2-core CPU
    "epochs": 3,
    "batch_size": 32,
    "device": "cpu",
    "data": {"n": 600},
    "model": {"n_nodes": 32, "d_hidden": 16, "affinity_rank": 8},
}


def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merge(out.get(k, {}), v) if isinstance(v, dict) else v
    return out


def evaluate(model_path: Path, cfg: dict) -> dict:
    params, config = load_model(model_path)
    _, _, x_val, y_val, _ = build_data(cfg)
    rows = {"float": [], "fixed": []}
    wraps = clips = 0
    for tokens in tqdm(x_val, desc=model_path.parent.name, leave=False):
        graph = compile_rsgn_tokens(params, config, tokens)
        for name, g in (("float", graph), ("fixed", quantize_rsgn_graph(graph))):
            eng = Engine(g)
            prof = eng.run(config.n_steps + 1)
            st = eng.state[NODE_POPULATION]
            alpha, h = st["alpha"], st["h"]
            if name == "fixed":
                alpha, h = alpha / 4096.0, h / 1024.0
                wraps += int(prof.wraps.sum())
                clips += int(prof.clips.sum())
            rows[name].append((alpha[:, None] * h).sum(axis=0) @ params.cls_w + params.cls_b)
    sf, sq = np.stack(rows["float"]), np.stack(rows["fixed"])
    return {
        "samples": int(len(x_val)),
        "accuracy_float": float(np.mean(sf.argmax(1) == y_val)),
        "accuracy_fixed": float(np.mean(sq.argmax(1) == y_val)),
        "decision_agreement": float(np.mean(sf.argmax(1) == sq.argmax(1))),
        "max_abs_score_error": float(np.abs(sf - sq).max()),
        "max_abs_score": float(np.abs(sf).max()),
        "wraps": wraps,
        "clips": clips,
        "chance": 1.0 / config.n_classes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/results/rsgn_fixed")
    ap.add_argument("--runs", default="results/rsgn_fixed")
    args = ap.parse_args()
    results = {
        "command": "python benchmarks/rsgn_fixed_accuracy.py",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "small_models": SMALL,
        "tasks": {},
    }
    for task in ("hierarchical", "long-range"):
        cfg = _merge(load_config(str(CONFIGS / f"rsgn-paper-{task}.toml")), SMALL)
        run = Path(args.runs) / task
        t0 = time.perf_counter()
        model = run / "model.npz"
        if not model.is_file():
            train(cfg, run, progress=True)
        trained_s = time.perf_counter() - t0
        row = evaluate(model, load_config_dict(cfg))
        row.update(train_s=trained_s, loadavg=os.getloadavg())
        results["tasks"][task] = row
        print(task, row, flush=True)
        Path(args.out).mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(args.out) / "accuracy.json", json.dumps(results, indent=2))


def load_config_dict(cfg: dict) -> dict:
    from atomspark.networks.torch_path.config import validate_config

    return validate_config(cfg)


if __name__ == "__main__":
    main()
