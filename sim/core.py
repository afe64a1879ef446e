"""The bottom of atomspark: its error type, argument checks and atomic file writes.

Every layer (sim, networks, mapping, scenarios, benchmarks) may import this module, and it imports
nothing from atomspark, so none of these helpers pulls a higher layer in. Old import paths stay:
atomspark.sim.core (errors, checks) and atomspark.networks.model_io (atomic writes)
re-export from here.
"""

from __future__ import annotations

import errno
import io
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


class AtomsparkError(ValueError):
    """Base class of atomspark's input errors (a ValueError, so callers may catch either)."""


def as_finite_array(
    name: str, value, ndim: int | Sequence[int] | None = None, dtype=np.float64
) -> np.ndarray:
    """Return `value` as an array of `dtype`, rejecting NaN/Inf, complex values for a real
    dtype and a wrong number of dimensions."""
    if np.iscomplexobj(value) and np.dtype(dtype).kind != "c":
        raise AtomsparkError(f"{name}: holds complex values; give real numbers")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise AtomsparkError(
            f"{name}: cannot be read as a {np.dtype(dtype).name} array ({exc})"
        ) from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise AtomsparkError(
                f"{name}: expected {' or '.join(map(str, allowed))} dimension(s), "
                f"got shape {arr.shape}"
            )
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise AtomsparkError(f"{name}: contains {bad} NaN or Inf value(s)")
    return arr


def require_shape(name: str, arr: np.ndarray, shape: tuple) -> None:
    """Check `arr.shape` against `shape`; None in `shape` matches any size."""
    ok = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
    if not ok:
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise AtomsparkError(f"{name}: expected shape {want}, got {arr.shape}")


def require_positive(name: str, value: float, allow_zero: bool = False) -> float:
    """Check that a scalar is finite and > 0 (or >= 0 with allow_zero)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise AtomsparkError(f"{name}: must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        rel = ">= 0" if allow_zero else "> 0"
        raise AtomsparkError(f"{name}: must be finite and {rel}, got {value!r}")
    return v


def require_int(name: str, value, minimum: int | None = None) -> int:
    """Check that a value is an integer (not bool) at least `minimum`."""
    try:
        is_int = not isinstance(value, bool) and int(value) == value
    except (TypeError, ValueError, OverflowError):
        is_int = False
    if not is_int:
        raise AtomsparkError(f"{name}: must be an integer, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise AtomsparkError(f"{name}: must be >= {minimum}, got {v}")
    return v


def file_mode() -> int:
    """Permission bits of a newly created regular file under the process umask (0o666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


# In the name of every temporary file an atomic write makes (`.NAME.atomspark-tmp-XXXX.tmp`), so
# that cleaning up after a killed write can never match a file atomspark did not make.
TMP_TAG = ".atomspark-tmp-"


# errno of a write refused for want of space: a full device, or the user's quota.
FULL_DISK = (errno.ENOSPC, errno.EDQUOT)


class DiskFullError(OSError):
    """A write refused for want of space, with the size of the file it was writing (`needed`,
    bytes; None when not known) so that the message can say how much space the write needs."""

    def __init__(self, cause: OSError, path: Path, needed: int | None) -> None:
        super().__init__(cause.errno, cause.strerror, str(path))
        self.needed = needed


def atomic_write_with(
    path: str | os.PathLike, write: Callable[[str], None], size: int | None = None
) -> None:
    """Call write(tmp_path) on a temporary file beside `path`, then rename it onto `path`.
    size: the bytes write() will write, when known; a full disk raises DiskFullError with it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TMP_TAG}", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        os.close(fd)
        write(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno in FULL_DISK and type(exc) is not DiskFullError:
            raise DiskFullError(exc, path, size) from exc
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically."""

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)

    atomic_write_with(path, write, len(data))


def atomic_write_figure(path: str | os.PathLike, fig, **savefig_options) -> None:
    """Save a Matplotlib figure as PNG to `path` atomically (rendered in memory first, so that a
    full disk can say how many bytes the image needs)."""
    buffer = io.BytesIO()
    buffer.name = str(path)  # for whoever inspects the save (tests/test_plots.py's checks)
    fig.savefig(buffer, format="png", **savefig_options)
    atomic_write_bytes(path, buffer.getvalue())


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 `text` to `path` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
