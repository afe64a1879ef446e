"""One-file model storage: arrays in an .npz, metadata as JSON inside it, versioned, written atomically."""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from atomspark.sim.validation import AtomsparkError

FORMAT_VERSION = 1
_META_KEY = "__atomspark_meta__"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` via a temporary file and rename, so a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


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
