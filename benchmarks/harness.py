"""Shared benchmark plumbing: machine description, median timing, tables, atomic JSON output.

Benchmarks are scripts (`python benchmarks/bench_<name>.py [--quick] [--out DIR]`); they import
this module by its file name because the script's folder is first on sys.path. Importing it loads
no numerical library (NumPy, SciPy, torch, Numba are imported inside the functions that need
them), so a script that calls `pin_one_thread()` right after `import harness` sets the thread
environment before any BLAS or OpenMP pool starts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Timing:
    """Median, min and max of `repeats` timed calls made after `warmup` untimed ones (seconds),
    wall clock; cpu_median: the median CPU time of the process over the same calls. On a shared
    machine CPU time is the fairer figure for one-thread code (it leaves out the time the
    process waited for a core); Brian2's standalone main loop reports CPU time too."""

    median: float
    minimum: float
    maximum: float
    repeats: int
    warmup: int
    cpu_median: float = float("nan")

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def time_call(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> Timing:
    """Time fn() with time.perf_counter (and time.process_time); warm-up calls (Numba
    compilation, caches) are excluded."""
    for _ in range(warmup):
        fn()
    samples, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        samples.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return Timing(
        statistics.median(samples), min(samples), max(samples), repeats, warmup,
        statistics.median(cpu),
    )  # fmt: skip


def time_once(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call; used to report compile / first-call cost separately."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


SIMD_LEVELS = ("avx512f", "avx2", "avx", "sse4_2")  # the widest the CPU reports names it


def host_fingerprint() -> str:
    """CPU model, widest SIMD and bogomips from /proc/cpuinfo: two results with different
    fingerprints came from different kinds of host (a cloud 'AMD EPYC' names several)."""
    fields = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown"
    flags = set(fields.get("flags", "").split())
    simd = next((s for s in SIMD_LEVELS if s in flags), "no avx")
    return f"{fields.get('model name', 'unknown')}, {simd}, bogomips {fields.get('bogomips', '?')}"


def _version(module: str) -> str | None:
    try:
        mod = __import__(module)
    except Exception:  # noqa: BLE001 - an optional peer that fails to import is simply absent
        return None
    return getattr(mod, "__version__", "unknown")


def machine_info() -> dict:
    """CPU model, cores, memory, Python and the numeric libraries' versions of this run."""
    import numpy as np

    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        mem_gb = float("nan")
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": _cpu_model(),
        "host": host_fingerprint(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gib": round(mem_gb, 1),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": _version("numba"),
    }


def print_machine(info: dict) -> None:
    print(
        f"machine: {info['cpu']} | {info['usable_cores']}/{info['logical_cores']} cores | "
        f"{info['memory_gib']} GiB | Python {info['python']} | numpy {info['numpy']} | "
        f"numba {info['numba']}"
    )


def format_table(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    """Plain-text table of dict rows (floats with 4 significant digits)."""
    if not rows:
        return "(no rows)"
    cols = list(columns or rows[0].keys())

    def cell(v) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    body = [[cell(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.rjust(w) for v, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


def parse_args(description: str, extra: Callable | None = None) -> argparse.Namespace:
    """--quick (small sizes, few repeats) and --out (results folder) for every benchmark;
    extra(parser) adds a benchmark's own options."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for JSON and PNG files")
    if extra is not None:
        extra(ap)
    return ap.parse_args()


def write_result(out_dir: Path, name: str, result: dict) -> Path:
    """Write result (plus the machine) as <out_dir>/<name>.json, atomically."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    from atomspark.sim.core import atomic_write_text

    result = {"benchmark": name, "machine": machine_info(), "threads_used": thread_report(),
              **result}  # fmt: skip
    atomic_write_text(path, json.dumps(result, indent=1, default=_json_default) + "\n")
    return path


def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def save_figure(fig, out_dir: Path, name: str) -> Path:
    """Save a matplotlib figure as <out_dir>/<name>.png, atomically."""
    import io

    from atomspark.sim.core import atomic_write_bytes

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    path = Path(out_dir) / f"{name}.png"
    atomic_write_bytes(path, buf.getvalue())
    return path


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (the empirical scaling exponent)."""
    import numpy as np

    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "NUMBA_NUM_THREADS")  # fmt: skip


def pin_one_thread() -> None:
    """One thread for every peer (BLAS, OpenMP, Numba, torch). The environment variables reach
    the libraries not loaded yet (call this before importing NumPy, SciPy, torch or Numba:
    `import harness` loads none of them); the pools of those already loaded are limited now
    (threadpoolctl for BLAS and OpenMP, set_num_threads for Numba and torch), so a late call
    still pins them. `thread_report()` records what each library then uses."""
    for var in THREAD_VARIABLES:
        if var != "NUMBA_NUM_THREADS" or "numba" not in sys.modules:
            os.environ[var] = "1"  # Numba refuses a new value once it is loaded: set_num_threads
    if "numpy" in sys.modules or "scipy" in sys.modules or "torch" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)  # kept for the process: the returned guard is not restored
    if "numba" in sys.modules:
        sys.modules["numba"].set_num_threads(1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def thread_report() -> dict:
    """The threads each loaded library uses now: every BLAS / OpenMP pool threadpoolctl finds
    (its API, implementation, library file name and thread count), torch's intra-op threads and
    Numba's threads (None for a library this process has not loaded)."""
    pools = []
    if any(m in sys.modules for m in ("numpy", "scipy", "torch", "sklearn")):
        from threadpoolctl import threadpool_info

        pools = [{"user_api": p.get("user_api"), "internal_api": p.get("internal_api"),
                  "library": os.path.basename(p.get("filepath", "")),
                  "num_threads": p.get("num_threads")} for p in threadpool_info()]  # fmt: skip
    torch = sys.modules.get("torch")
    numba = sys.modules.get("numba")
    return {
        "pools": pools,
        "torch": torch.get_num_threads() if torch is not None else None,
        "numba": numba.get_num_threads() if numba is not None else None,
        "environment": {v: os.environ.get(v) for v in THREAD_VARIABLES},
    }


def max_threads(report: dict) -> int:
    """The largest thread count any library in a thread_report() uses (1 when pinned)."""
    counts = [p["num_threads"] for p in report["pools"]] + [
        report[k] for k in ("torch", "numba") if report.get(k) is not None
    ]
    return max(counts, default=1)


def settle(below: float = 1.0, max_s: float = 150.0) -> list[float]:
    """Wait (at most max_s) until the 1-minute load average is under `below`, so that timed
    rounds do not start in the wake of a build; returns the load average then."""
    end = time.monotonic() + max_s
    while load_average()[0] >= below and time.monotonic() < end:
        time.sleep(5)
    return load_average()


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages (the machine may be shared: stated with every timing)."""
    return [round(x, 2) for x in os.getloadavg()]


def memory_bandwidth(n: int = 20_000_000, repeats: int = 5) -> dict:
    """Single-thread memory bandwidth, STREAM style on arrays far larger than the caches: copy
    (16 bytes moved per element: read + write) and add (24 bytes), best of `repeats`, GB/s."""
    import numpy as np

    a, b, c = np.ones(n), np.ones(n), np.empty(n)
    best = {"copy": 0.0, "add": 0.0}
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(c, a)
        best["copy"] = max(best["copy"], 16 * n / (time.perf_counter() - t0) / 1e9)
        t0 = time.perf_counter()
        np.add(a, b, out=c)
        best["add"] = max(best["add"], 24 * n / (time.perf_counter() - t0) / 1e9)
    return {"copy_GBps": round(best["copy"], 2), "add_GBps": round(best["add"], 2), "threads": 1}
