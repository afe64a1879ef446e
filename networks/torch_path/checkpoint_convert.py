"""Convert a checkpoint the user trusts into the plain format (tensors and plain data only).

This is the one place in atomspark that lets torch unpickle arbitrary objects, because a
checkpoint written by an older atomspark (no digest header, or a payload naming classes such as
torch's version string) can only be read that way. It runs only when the user passes --trust,
i.e. says they know where the file came from. The original is kept beside the result as
`<name>.orig`; the converted file is read back with the weights-only reader before this returns.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import torch
from atomspark.networks.torch_path.checkpoint_file import (
    _DIGEST_CHARS,
    MAGIC,
    checkpoint_bytes,
    read_checkpoint,
)
from atomspark.sim.core import AtomsparkError, atomic_write_bytes

ORIGINAL_SUFFIX = ".orig"


def _payload(path: Path, data: bytes) -> bytes:
    """The torch.save payload: after the digest header when there is one (checked), else all."""
    if not data.startswith(MAGIC):
        return data
    header_end = len(MAGIC) + _DIGEST_CHARS
    payload = data[header_end + 1 :]
    stored = data[len(MAGIC) : header_end].decode("ascii", errors="replace")
    if data[header_end : header_end + 1] != b"\n" or hashlib.sha256(payload).hexdigest() != stored:
        raise AtomsparkError(
            f"checkpoint {path}: damaged (its digest does not match); not converted"
        )
    return payload


def convert_checkpoint(path: str | Path, trust: bool = False) -> Path:
    """Rewrite the checkpoint at `path` as tensors and plain data, keeping the original as
    `<path>.orig`; refused unless `trust` (the file's pickle may run code when read)."""
    path = Path(path)
    if not trust:
        raise AtomsparkError(
            f"checkpoint {path}: reading an old checkpoint can run code stored in it; pass --trust "
            "only if you know where the file came from"
        )
    if not path.is_file():
        raise AtomsparkError(f"checkpoint {path}: no such file; give the checkpoint.pt to convert")
    original = path.with_name(path.name + ORIGINAL_SUFFIX)
    if original.exists():
        raise AtomsparkError(
            f"checkpoint {path}: {original} exists (an earlier conversion's original); move it away "
            "first"
        )
    data = path.read_bytes()
    try:
        state = torch.load(io.BytesIO(_payload(path, data)), map_location="cpu", weights_only=False)
    except AtomsparkError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unreadable file is reported the same way
        raise AtomsparkError(
            f"checkpoint {path}: not a readable torch checkpoint ({type(exc).__name__})"
        ) from None
    try:
        converted = checkpoint_bytes(state)
    except TypeError as exc:
        raise AtomsparkError(f"checkpoint {path}: cannot be converted: {exc}") from None
    atomic_write_bytes(original, data)
    atomic_write_bytes(path, converted)
    read_checkpoint(path)  # the result loads with the weights-only reader
    return original
