"""One-file model storage: arrays in an .npz, metadata as JSON inside it, versioned, written atomically."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from atomspark.networks.bounded_npz import load_npy_bounded, read_npz
from atomspark.sim.core import AtomsparkError, atomic_write_bytes
from atomspark.sim.fixed_point import CODE_LIMIT

__all__ = ["check_representable", "load_arrays", "read_meta", "read_task", "save_arrays"]

FORMAT_VERSION = 1
_META_KEY = "__atomspark_meta__"
META_LIMIT = 1 << 20  # metadata JSON of any model atomspark writes is a few KiB
FLOAT32_MAX = float(np.finfo(np.float32).max)
# Inputs reach the chip as graded payloads of at most 2**23 - 1 (sim/fixed_point.CODE_LIMIT, Loihi 2's
# 24-bit state); an input beyond that magnitude cannot be represented there in any scaling that keeps
# unit-scale values distinct, and on the engine it only drives every unit to saturation.
INPUT_LIMIT = float(CODE_LIMIT)
INPUT_HELD_BY = "a Loihi 2 graded payload (24-bit)"


_NPZ_MAGIC = b"PK\x03\x04"
# train's checkpoint.pt (networks/torch_path/checkpoint_file.py) starts with this line.
_CHECKPOINT_MAGIC = b"atomspark-checkpoint"
_CHECKPOINT_ADVICE = (
    "is a training checkpoint (checkpoint.pt), not a model file; pass the model.npz that "
    "`atomspark train` writes beside it"
)
_NPY_MAGIC = b"\x93NUMPY"


def check_file_format(path: str | os.PathLike, what: str, want: str) -> Path:
    """Check `path` exists and starts like a `want` file ("npz" or "npy") before NumPy reads it,
    so that an empty, foreign or mistyped file gets one plain line (and never NumPy's advice
    to load untrusted data with allow_pickle)."""
    path = Path(path)
    if not path.is_file():
        raise AtomsparkError(f"{what} {path}: does not exist")
    with open(path, "rb") as fh:
        head = fh.read(len(_CHECKPOINT_MAGIC))
    if not head:
        raise AtomsparkError(f"{what} {path}: is empty (0 bytes); give a file atomspark wrote")
    if want == "npz" and head == _CHECKPOINT_MAGIC:
        raise AtomsparkError(f"{what} {path}: {_CHECKPOINT_ADVICE}")
    if want == "npz" and head.startswith(_NPY_MAGIC):
        raise AtomsparkError(
            f"{what} {path}: is a single .npy array, not an atomspark model file (.npz written "
            "by `atomspark train` or a model's save())"
        )
    magic = _NPZ_MAGIC if want == "npz" else _NPY_MAGIC
    if not head.startswith(magic[: len(head)]) or len(head) < len(magic):
        kind = "an .npz archive" if want == "npz" else "a .npy array"
        raise AtomsparkError(f"{what} {path}: not {kind} (wrong file, or damaged)")
    return path


def load_npy(path: str | os.PathLike, what: str) -> np.ndarray:
    """A plain numeric array from a .npy file, its header bounded before anything is read;
    arrays of Python objects are refused."""
    path = check_file_format(path, what, "npy")
    return load_npy_bounded(path, what)


def not_a_model(path: str | os.PathLike, names: list[str]) -> AtomsparkError:
    """The error for a zip archive without atomspark's metadata; `names`: its members. A
    PyTorch file (torch.save writes a zip holding data.pkl) gets advice on which file to pass."""
    if any(name.endswith("data.pkl") for name in names):
        return AtomsparkError(
            f"model file {path}: is a PyTorch file (torch.save), not an atomspark model; pass "
            "the model.npz that `atomspark train` writes"
        )
    return AtomsparkError(
        f"model file {path}: not an atomspark model (no metadata); pass a model.npz written by "
        "`atomspark train` or a model's save()"
    )


def save_arrays(
    path: str | os.PathLike, kind: str, arrays: dict[str, np.ndarray], meta: dict
) -> None:
    """Save named arrays plus JSON metadata (tagged with `kind` and the format version)."""
    import io

    header = {"kind": kind, "format_version": FORMAT_VERSION, **meta}
    buf = io.BytesIO()
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    payload[_META_KEY] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    np.savez(buf, **payload)
    atomic_write_bytes(path, buf.getvalue())


def read_meta(path: str | os.PathLike) -> tuple[dict | None, list[str]]:
    """(metadata or None, member names) of an atomspark .npz, reading only the metadata
    member (bounded): enough to tell a model's kind or stored task."""
    path = check_file_format(path, "model file", "npz")
    arrays = read_npz(path, "model file", only={_META_KEY}, limits={_META_KEY: META_LIMIT})
    names = _member_names(path)
    if _META_KEY not in arrays:
        return None, names
    return _parse_meta(path, arrays[_META_KEY]), names


def _member_names(path: Path) -> list[str]:
    try:
        with zipfile.ZipFile(path) as archive:
            return [n.removesuffix(".npy") for n in archive.namelist()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return []


def _parse_meta(path: Path, raw: np.ndarray) -> dict:
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise AtomsparkError(f"model file {path}: corrupt metadata ({exc})") from None
    if not isinstance(meta, dict):
        raise AtomsparkError(
            f"model file {path}: metadata must be a mapping of settings, got "
            f"{type(meta).__name__}; give a file atomspark wrote"
        )
    return meta


def load_arrays(
    path: str | os.PathLike, kind: str, accept: Callable[[str], bool] | None = None
) -> tuple[dict[str, np.ndarray], dict]:
    """Load what save_arrays wrote; a missing, corrupt, foreign or wrong-version file is an error.
    accept(name): which array names belong to this kind's format (others are refused unread)."""
    meta, names = read_meta(path)
    if meta is None:
        raise not_a_model(path, names)
    if meta.get("kind") != kind:
        raise AtomsparkError(
            f"model file {path}: holds a {meta.get('kind')!r} model, expected {kind!r}"
        )
    if meta.get("format_version") != FORMAT_VERSION:
        raise AtomsparkError(
            f"model file {path}: format version {meta.get('format_version')!r}, "
            f"this atomspark reads version {FORMAT_VERSION}"
        )
    member_ok = None if accept is None else (lambda name: name == _META_KEY or accept(name))
    arrays = read_npz(path, "model file", member_ok, limits={_META_KEY: META_LIMIT})
    arrays.pop(_META_KEY)
    return arrays, meta


def read_task(path: str | os.PathLike) -> dict | None:
    """The training task config stored with a model (`train` writes it), or None (older files,
    models saved without one). Lets profile/compare draw data from the model's own task.
    A stored task must be a mapping naming its task, data and seed (the data are drawn from it)."""
    meta, _ = read_meta(path)
    task = None if meta is None else meta.get("task")
    if task is None:
        return None
    if not isinstance(task, dict):
        raise AtomsparkError(
            f"model file {path}: stored task must be a mapping, got {type(task).__name__}"
        )
    seed = task.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise AtomsparkError(
            f"model file {path}: stored task has no valid seed (got {seed!r}), so its data "
            "cannot be redrawn; pass --input/--data explicitly"
        )
    if not isinstance(task.get("task"), str) or not isinstance(task.get("data"), dict):
        raise AtomsparkError(
            f"model file {path}: stored task lacks its 'task' name or 'data' table; pass "
            "--input/--data explicitly"
        )
    return task


def check_representable(
    name: str, arr: np.ndarray, limit: float = FLOAT32_MAX, held_by: str = "float32"
) -> np.ndarray:
    """Refuse non-finite values and magnitudes beyond `limit` (float32's range by default: the
    torch path and the chip's arithmetic cannot hold them) in one line naming `name`."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise AtomsparkError(f"{name}: holds NaN or Inf; give finite numbers")
    if arr.size and arr.dtype.kind in "iuf":
        biggest = float(np.max(np.abs(arr.astype(np.float64))))
        if biggest > limit:
            raise AtomsparkError(
                f"{name}: holds |value| {biggest:.3g}, beyond the {limit:.3g} that {held_by} "
                "holds; rescale the data"
            )
    return arr
