"""One-file model storage: arrays in an .npz, metadata as JSON inside it, versioned, written atomically."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError, atomic_write_bytes

__all__ = ["load_arrays", "read_task", "save_arrays"]

FORMAT_VERSION = 1
_META_KEY = "__atomspark_meta__"


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
    """A plain numeric array from a .npy file; arrays of Python objects are refused."""
    path = check_file_format(path, what, "npy")
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc):
            raise AtomsparkError(
                f"{what} {path}: holds Python objects, not numbers (atomspark only reads "
                "numeric arrays)"
            ) from None
        raise AtomsparkError(f"{what} {path}: not a readable .npy array ({exc})") from None
    except (OSError, EOFError) as exc:
        raise AtomsparkError(f"{what} {path}: not a readable .npy array ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise AtomsparkError(
            f"{what} {path}: holds {arr.dtype} values; give real numbers (float or int)"
        )
    return arr


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


def load_arrays(path: str | os.PathLike, kind: str) -> tuple[dict[str, np.ndarray], dict]:
    """Load what save_arrays wrote; a missing, corrupt, foreign or wrong-version file is an error."""
    path = check_file_format(path, "model file", "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        detail = "holds Python objects" if "pickle" in str(exc) else str(exc)
        raise AtomsparkError(f"model file {path}: unreadable ({detail})") from None
    if _META_KEY not in arrays:
        raise not_a_model(path, list(arrays))
    try:
        meta = json.loads(arrays.pop(_META_KEY).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AtomsparkError(f"model file {path}: corrupt metadata ({exc})") from exc
    if meta.get("kind") != kind:
        raise AtomsparkError(
            f"model file {path}: holds a {meta.get('kind')!r} model, expected {kind!r}"
        )
    if meta.get("format_version") != FORMAT_VERSION:
        raise AtomsparkError(
            f"model file {path}: format version {meta.get('format_version')!r}, "
            f"this atomspark reads version {FORMAT_VERSION}"
        )
    return arrays, meta


def read_task(path: str | os.PathLike) -> dict | None:
    """The training task config stored with a model (`train` writes it), or None (older files,
    models saved without one). Lets profile/compare draw data from the model's own task."""
    path = check_file_format(path, "model file", "npz")
    try:
        with np.load(path, allow_pickle=False) as data:
            if _META_KEY not in data.files:
                return None
            meta = json.loads(data[_META_KEY].tobytes().decode("utf-8"))
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise AtomsparkError(f"model file {path}: unreadable ({exc})") from exc
    task = meta.get("task")
    return task if isinstance(task, dict) else None
