"""Print the headline tables of docs/performance.md from the committed benchmark results.

    python benchmarks/perf_table.py [docs/results/performance]

Reads cuba.json (bench_cuba.py) and vn_batch.json (bench_vn_batch.py) and prints Markdown: every
number in the headline section comes from these files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _g(x: float) -> str:
    return f"{x:.3g}"


def cuba_table(res: dict) -> list[str]:
    lines = [
        "| network | simulator | CPU s | wall s | compile s | first run s | rate Hz "
        "| synaptic events / s | engine vs this | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, size in res["sizes"].items():
        for r in size["details"]:
            comp = "-" if r["compile_s"] is None else _g(r["compile_s"])
            first = "-" if r["first_run_s"] is None else _g(r["first_run_s"])
            ratio = size["summary"]["engine_synops_per_s"] / r["synops_per_s"]
            lines.append(
                f"| {name}, {size['summary']['steps']} steps | {r['simulator']} "
                f"| {_g(r['headline_seconds'])} | {_g(r['wall_median_s'])} | {comp} | {first} "
                f"| {r['rate_hz']:.2f} | {_g(r['synops_per_s'])} | {ratio:.2f}x "
                f"| {r['load_average'][0]} |"
            )
    return lines


def vn_table(res: dict) -> list[str]:
    lines = [
        "| method | CPU s (batch) | wall s | ms / sample | iterations | samples within tol "
        "| engine vs this | load (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in res["rows"]:
        iters = "-" if r["iters"] is None else str(r["iters"])
        lines.append(
            f"| {r['method']} | {_g(r['batch_s'])} | {_g(r['wall_s'])} "
            f"| {_g(r['per_sample_ms'])} | {iters} | {r['samples_within_tol']}/{res['batch']} "
            f"| {r['engine_speedup']:.2f}x | {r['load']} |"
        )
    return lines


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/results/performance")
    out = []
    cuba_path, vn_path = folder / "cuba.json", folder / "vn_batch.json"
    if cuba_path.is_file():
        cuba = json.loads(cuba_path.read_text())
        out += [f"CUBA ({cuba['date_utc']} UTC, {cuba['machine']['cpu']}, "
                f"bandwidth {cuba['memory_bandwidth']}):", ""] + cuba_table(cuba) + [""]  # fmt: skip
        for name, size in cuba["sizes"].items():
            s = size["summary"]
            out.append(
                f"- {name}: engine {_g(s['engine_events_per_s'])} spikes/s, "
                f"{_g(s['engine_synops_per_s'])} synaptic events/s = "
                f"{s['engine_fraction_of_bandwidth_ceiling']:.3f} of the "
                f"{_g(s['synops_per_s_at_copy_bandwidth'])}/s that the measured copy bandwidth "
                f"could stream at 12 bytes per synapse"
            )
        out.append("")
    if vn_path.is_file():
        vn = json.loads(vn_path.read_text())
        out += [f"VN settle, K = {vn['K']}, d = {vn['d']}, batch {vn['batch']} "
                f"({vn['date_utc']} UTC):", ""] + vn_table(vn) + [""]  # fmt: skip
        eng = vn["rows"][0]
        s = vn["summary"]
        out.append(
            f"- engine: {_g(eng['events_per_s'])} events/s, {_g(eng['synops_per_s'])} synaptic "
            f"ops/s; streaming float64 Gram entries from memory at the measured copy bandwidth "
            f"({s['memory_bandwidth']['copy_GBps']} GB/s) would give "
            f"{_g(s['synops_per_s_at_copy_bandwidth'])}/s"
        )
    print("\n".join(out))


if __name__ == "__main__":
    main()
