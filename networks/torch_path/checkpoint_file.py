"""Checkpoint files that carry a digest of their contents, so a damaged file is never resumed.

torch.load does not check what it reads: a flipped bit in a weight loads as a different weight.
A checkpoint is therefore written as one header line, `MAGIC <sha256 of the payload>\\n`,
followed by the torch.save payload; the whole file is written atomically (temporary file, fsync,
rename). Reading checks the digest before unpickling anything.

Files without the header (written before checkpoints carried a digest) are still read, with a
one-line warning that they cannot be verified.
"""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

import torch
from atomspark.sim.core import AtomsparkError, atomic_write_bytes

MAGIC = b"atomspark-checkpoint sha256 "
_DIGEST_CHARS = 64


def _damaged(path: Path, what: str) -> AtomsparkError:
    return AtomsparkError(
        f"checkpoint {path}: {what}; the file is damaged: start the run again with --overwrite "
        "(or restore the file from a copy)"
    )


def checkpoint_bytes(state: dict) -> bytes:
    """The file contents for `state`: the digest header, then torch.save's payload."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    payload = buffer.getvalue()
    return MAGIC + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


def write_checkpoint(path: str | Path, state: dict) -> None:
    """Write `state` (tensors already on the CPU) atomically, with its digest."""
    atomic_write_bytes(path, checkpoint_bytes(state))


def verified_payload(path: Path, data: bytes) -> bytes:
    """The torch.save payload of a checkpoint file's bytes, after checking its digest."""
    if not data.startswith(MAGIC):
        print(
            f"warning: checkpoint {path}: written without a digest (by an older atomspark), "
            "so its contents cannot be verified",
            file=sys.stderr,
        )
        return data
    header_end = len(MAGIC) + _DIGEST_CHARS
    if data[header_end : header_end + 1] != b"\n":
        raise _damaged(path, "its digest header is broken")
    stored = data[len(MAGIC) : header_end].decode("ascii", errors="replace")
    payload = data[header_end + 1 :]
    if hashlib.sha256(payload).hexdigest() != stored:
        raise _damaged(path, "its contents do not match the digest written with it")
    return payload


def read_checkpoint(path: str | Path) -> object:
    """The object stored in a checkpoint file, verified against its digest, on the CPU."""
    path = Path(path)
    if not path.is_file():
        raise AtomsparkError(f"checkpoint {path}: does not exist (nothing to resume)")
    payload = verified_payload(path, path.read_bytes())
    try:
        return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - any unreadable payload is reported the same way
        raise _damaged(path, f"unreadable ({type(exc).__name__})") from None
