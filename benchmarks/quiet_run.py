"""Regenerate every figure docs/performance.md quotes, on a quiet machine, resumably.

    python benchmarks/quiet_run.py --out docs/results/performance --resume

Runs, each in its own process and in this order (the cheapest and most quoted first):
threads (bench_threads.py), cuba (bench_cuba.py), vn_batch K 4096 x 64 (bench_vn_batch.py),
the working set's crossover (bench_vn_crossover.py),
scale 250,000 and 1,000,000 neurons with Brian2 and NEST capped at --peer-cap-s per run
(bench_scale.py), vn_batch K 16384 x 16, the LIF step profile (lava_step_profile.py), then
perf_table.py --write. Progress is kept in
<out>/quiet_run.json (each step's exit code, seconds, load average before and after); with
--resume a step that finished with exit 0 is not run again, so an interrupted run continues
where it stopped. The load average is recorded by every benchmark beside its figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def steps(out: str, peer_cap: float) -> list[tuple[str, list[str]]]:
    py = sys.executable
    return [
        ("threads", [py, str(HERE / "bench_threads.py"), "--out", out]),
        ("cuba", [py, str(HERE / "bench_cuba.py"), "--out", out]),
        ("vn_batch", [py, str(HERE / "bench_vn_batch.py"), "--batch", "64", "--out", out]),
        ("vn_crossover", [py, str(HERE / "bench_vn_crossover.py"), "--out", out]),
        ("scale", [py, str(HERE / "bench_scale.py"), "--resume", "--peer-cap-s", str(peer_cap),
                   "--out", out]),
        ("vn_batch_16384", [py, str(HERE / "bench_vn_batch.py"), "--atoms", "16384", "--batch",
                            "16", "--name", "vn_batch_16384", "--out", out]),
        ("lava_profile", [py, str(HERE / "lava_step_profile.py"), "--out", out]),
        ("perf_table", [py, str(HERE / "perf_table.py"), "--results", out, "--write"]),
    ]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/results/performance", help="results folder")
    ap.add_argument("--resume", action="store_true", help="skip steps that already finished")
    ap.add_argument("--peer-cap-s", type=float, default=300.0, help="cap per scale peer run (s)")
    args = ap.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    progress_path = Path(args.out) / "quiet_run.json"
    progress = json.loads(progress_path.read_text()) if args.resume and progress_path.is_file() \
        else {}  # fmt: skip
    import os

    for name, cmd in steps(args.out, args.peer_cap_s):
        if progress.get(name, {}).get("returncode") == 0:
            print(f"=== {name}: done earlier, skipped (--resume)")
            continue
        print(f"=== {name}: {' '.join(cmd)}", flush=True)
        load = [round(x, 2) for x in os.getloadavg()]
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, check=False).returncode
        progress[name] = {"returncode": rc, "seconds": round(time.perf_counter() - t0, 1),
                          "load_before": load,
                          "load_after": [round(x, 2) for x in os.getloadavg()],
                          "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}  # fmt: skip
        progress_path.write_text(json.dumps(progress, indent=1) + "\n")
        print(f"--- {name}: exit {rc}, {progress[name]['seconds']} s", flush=True)
    sys.exit(0 if all(p["returncode"] == 0 for p in progress.values()) else 1)


if __name__ == "__main__":
    main()
