"""Chip vs GPU ratios of a demo run, old pricing beside the fair one, as a small JSON for docs.

Old: the dense equivalent of the chip's own steps (e.g. 1500 Jacobi-ISTA steps for VN), one
kernel launch per projection and step, energy from (TDP - idle)/peak per FLOP and byte plus idle
power. New: the GPU running its own algorithm to the chip's accuracy (scenarios/compare/gpu_side.py).

    atomspark demo --out results/demo
    python benchmarks/chip_vs_gpu_table.py results/demo/summary.json docs/results/chip_vs_gpu/demo.json
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path


def table(summary: dict) -> dict:
    rows = {}
    for name, cost in summary["costs"].items():
        chip = cost["neuromorphic"]["energy_per_sample_j"]
        old = {
            "batch 1": cost["dense"]["energy_j"] / chip,
            "batch 256": cost["dense_batch_256"]["energy_j"] / chip,
        }
        side = summary["gpu_fair"][name]
        new = {
            f"batch {r['batch']} {r['launches']}": {
                "energy_ratio": r["energy_ratio_gpu_over_chip"],
                "tdp_bound_ratio": r["energy_tdp_bound_j"] / chip,
                "time_ratio": r["time_ratio_gpu_over_chip"],
                "gpu_energy_j": r["energy_j"],
                "bound": r["bound"],
            }
            for r in side["rows"]
        }
        rows[name] = {
            "chip_energy_j": chip,
            "chip_time_s": cost["neuromorphic"]["time_per_sample_s"],
            "old_gpu_over_chip_energy": old,
            "new": new,
            "gpu_iterations_per_sample": side["iterations_per_sample"],
            "assumptions": side["assumptions"],
        }
    return rows


def main(src: str, dst: str) -> None:
    summary = json.loads(Path(src).read_text())
    out = {
        "command": "atomspark demo; python benchmarks/chip_vs_gpu_table.py SUMMARY OUT",
        "summary_file_date": datetime.fromtimestamp(
            Path(src).stat().st_mtime, timezone.utc
        ).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "rows": table(summary),
    }
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    Path(dst).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
