"""Check a size before allocating it: estimate against the machine's available memory."""

from __future__ import annotations

import os

from atomspark.sim.core import AtomsparkError

GIB = 1024**3


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
    reduce. Nothing is checked when the available memory cannot be read."""
    available = available_memory_bytes()
    if available is None or need_bytes <= fraction * available:
        return
    raise AtomsparkError(
        f"{what}: needs about {format_bytes(need_bytes)} of memory but "
        f"{format_bytes(available)} is available; {hint}"
    )


def format_bytes(n: float) -> str:
    """Bytes in the largest fitting binary unit, 3 significant figures."""
    for unit, size in (("TiB", 1024**4), ("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"
