"""Check a size before allocating it: estimate against the machine's available memory.

`require_memory` is the one guard every entry point calls before it allocates from a size the
user gave (engine steps, samples, nodes, hidden width, batch): the message names the argument,
the estimate and what is available. `run_record_bytes` estimates what an engine run keeps.
"""

from __future__ import annotations

import os

from atomspark.sim.core import AtomsparkError

GIB = 1024**3
SMALL_BYTES = 64 * 1024**2  # any machine that runs atomspark has this much free


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), else free physical pages; None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def require_memory(what: str, need_bytes: float, hint: str, fraction: float = 0.9) -> None:
    """Raise one line when `need_bytes` exceeds `fraction` of the available memory.

    `what` names the request (e.g. "config model.n_nodes = 1000000000"), `hint` says what to
    reduce. Nothing is checked when the available memory cannot be read, or for requests below
    SMALL_BYTES (so a hot path pays nothing for the check)."""
    if need_bytes < SMALL_BYTES:
        return
    available = available_memory_bytes()
    if available is None or need_bytes <= fraction * available:
        return
    raise AtomsparkError(
        f"{what}: needs about {format_bytes(need_bytes)} of memory but "
        f"{format_bytes(available)} is available; {hint}"
    )


def format_bytes(n: float) -> str:
    """Bytes in the largest fitting binary unit, 3 significant figures."""
    units = (("EiB", 1024**6), ("PiB", 1024**5), ("TiB", 1024**4), ("GiB", GIB))
    for unit, size in (*units, ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


# Counters an engine run keeps per step and population (sim/profile.py COUNTER_FIELDS), int64.
PROFILE_COUNTERS = 7


def run_record_bytes(steps: int, n_populations: int, n_samples: int = 1) -> float:
    """Bytes the per-step records of `n_samples` engine runs of `steps` steps take: the
    profile counters of each run, plus one copy when the runs are joined into one profile."""
    per_run = 8.0 * PROFILE_COUNTERS * float(steps) * n_populations
    return per_run * n_samples * (2 if n_samples > 1 else 1)
