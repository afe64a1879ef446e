"""Single-thread peers are really single-threaded: benchmarks/harness.py pins BLAS, OpenMP, Numba
and torch before or after they load, records the threads each library uses, and no committed
single-thread row shows more CPU time than wall time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "performance"
CPU_OVER_WALL = 1.10  # a one-thread row's CPU time may exceed its wall time by 10 % at most

_PROBE = """
import json, sys, time
sys.path.insert(0, {bench!r})
{early}
import harness
harness.pin_one_thread()
import numpy as np
a = np.random.default_rng(0).standard_normal((900, 900))
a @ a
c0, w0 = time.process_time(), time.perf_counter()
for _ in range(6):
    a @ a
print(json.dumps({{"cpu": time.process_time() - c0, "wall": time.perf_counter() - w0,
                   "report": harness.thread_report()}}))
"""


def _probe(early: str) -> dict:
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("_NUM_THREADS")}
    code = _PROBE.format(bench=str(ROOT / "benchmarks"), early=early)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True, timeout=300)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _harness():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import harness
    finally:
        sys.path.pop(0)
    return harness


def test_importing_the_harness_loads_no_numerical_library():
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import harness; "
            "print(sorted(m for m in ('numpy', 'scipy', 'torch', 'numba') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pinned_blas_uses_one_thread_and_cpu_time_stays_within_wall_time():
    for early in ("", "import numpy, scipy.linalg"):  # pinned before, and after, NumPy loads
        res = _probe(early)
        assert _harness().max_threads(res["report"]) == 1, res["report"]
        assert any(p["user_api"] == "blas" for p in res["report"]["pools"])
        assert res["cpu"] <= CPU_OVER_WALL * res["wall"], res


def _one_thread_rows() -> list[tuple[str, float, float]]:
    """(name, CPU median s, wall median s) of every committed row that claims one thread."""
    rows = []
    cuba = json.loads((RESULTS / "cuba.json").read_text())
    for size in cuba["sizes"].values():
        for r in size["rows"]:
            if "1 thread" in r["simulator"] and "Brian2" not in r["simulator"]:
                rows.append((r["simulator"], r["cpu_median_s"], r["wall_median_s"]))
    vn = json.loads((RESULTS / "vn_batch.json").read_text())
    rows += [(r["method"], r["batch_s"], r["wall_s"]) for r in vn["rows"]]
    return rows


def test_committed_single_thread_rows_use_no_more_cpu_than_wall_time():
    """Brian2's CPU time is its main loop's own clock and its wall time the whole process, so
    its rows are left out; every other one-thread row is timed around the same call."""
    for name, cpu, wall in _one_thread_rows():
        assert cpu <= CPU_OVER_WALL * wall, f"{name}: CPU {cpu:.3g} s > wall {wall:.3g} s"


def test_committed_results_record_one_thread_per_library():
    h = _harness()
    for name in ("cuba.json", "vn_batch.json"):
        res = json.loads((RESULTS / name).read_text())
        assert "threads_used" in res, f"{name}: rerun with the current harness"
        assert h.max_threads(res["threads_used"]) == 1, res["threads_used"]
