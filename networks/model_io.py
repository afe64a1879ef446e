"""One-file model storage: arrays in an .npz, metadata as JSON inside it, versioned, written atomically."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError, atomic_write_bytes, atomic_write_text

__all__ = ["atomic_write_bytes", "atomic_write_text", "load_arrays", "save_arrays"]

FORMAT_VERSION = 1
_META_KEY = "__atomspark_meta__"


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
    path = Path(path)
    if not path.is_file():
        raise AtomsparkError(f"model file {path}: does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise AtomsparkError(f"model file {path}: unreadable ({exc})") from exc
    if _META_KEY not in arrays:
        raise AtomsparkError(f"model file {path}: not an atomspark model (no metadata)")
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
