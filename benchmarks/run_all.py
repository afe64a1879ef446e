"""Run every benchmark script, print its tables, and record a summary of the run.

`python benchmarks/run_all.py [--quick] [--out benchmarks/results]`. Each benchmark runs in its
own process (bench_lava.py with the Lava environment's Python, .venv-lava, when it exists) and
writes <out>/<name>.json (+ PNG); this driver writes <out>/run_all.json with durations and exit
codes. A failing benchmark is reported and the others still run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import harness
from atomspark.sim.core import atomic_write_text

HERE = Path(__file__).resolve().parent
LAVA_PYTHON = HERE.parent / ".venv-lava" / "bin" / "python"
BENCHMARKS = ("cuba", "vn_settle", "rsgn_scaling", "memory", "lava", "placement")


def interpreter(name: str) -> str | None:
    if name != "lava":
        return sys.executable
    return str(LAVA_PYTHON) if LAVA_PYTHON.exists() else None


def main() -> None:
    args = harness.parse_args(__doc__.splitlines()[0])
    info = harness.machine_info()
    harness.print_machine(info)
    runs = []
    for name in BENCHMARKS:
        python = interpreter(name)
        script = HERE / f"bench_{name}.py"
        print(f"\n=== bench_{name}.py ===", flush=True)
        if python is None:
            print("skipped: no Lava environment (.venv-lava)")
            runs.append({"benchmark": name, "returncode": None, "seconds": 0.0})
            continue
        cmd = [python, str(script), "--out", str(args.out)] + (["--quick"] if args.quick else [])
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, check=False).returncode
        runs.append({"benchmark": name, "returncode": rc, "seconds": time.perf_counter() - t0})
        print(f"--- bench_{name}.py: exit {rc}, {runs[-1]['seconds']:.1f} s", flush=True)
    print()
    print(harness.format_table(runs))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        Path(args.out) / "run_all.json",
        json.dumps({"quick": args.quick, "machine": info, "runs": runs}, indent=1) + "\n",
    )
    sys.exit(0 if all(r["returncode"] in (0, None) for r in runs) else 1)


if __name__ == "__main__":
    main()
