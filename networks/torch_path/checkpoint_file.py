"""Checkpoint files that hold tensors and plain data only, with a digest of their contents.

A checkpoint is one header line, `MAGIC <sha256 of the payload>\\n`, followed by torch.save's
payload; the whole file is written atomically (temporary file, fsync, rename). Reading checks the
digest, then loads the payload with torch's weights-only reader, which builds tensors, dicts,
lists, tuples, strings, numbers and None and nothing else: no object named in the file is ever
imported or called, so a checkpoint someone hands you cannot run code. The digest guards against
damage (a flipped bit loads as a different weight); it says nothing about who wrote the file.

Files without the header (written by an older atomspark) or whose payload names other objects
are refused, with one line naming the converter (checkpoint_convert.py, `atomspark
convert-checkpoint --trust PATH`), the one place that may read such a file, and only on the
user's word that they trust it.
"""

from __future__ import annotations

import hashlib
import io
from collections import OrderedDict
from pathlib import Path

import torch
from atomspark.sim.core import AtomsparkError, atomic_write_bytes

MAGIC = b"atomspark-checkpoint sha256 "
_DIGEST_CHARS = 64
PLAIN_SCALARS = (bool, int, float, type(None))


def _damaged(path: Path, what: str) -> AtomsparkError:
    return AtomsparkError(
        f"checkpoint {path}: {what}; the file is damaged: start the run again with --overwrite "
        "(or restore the file from a copy)"
    )


def _untrusted(path: Path, what: str) -> AtomsparkError:
    return AtomsparkError(
        f"checkpoint {path}: {what}, so it is not loaded (loading it could run code); only if "
        f"you trust where it came from, convert it with `atomspark convert-checkpoint --trust "
        f"{path}`, or start the run again with --overwrite"
    )


def plain_state(obj, where: str = "state"):
    """`obj` as tensors (on the CPU) and plain data only: dicts, lists, tuples, str, int, float,
    bool, None. Subclasses of str (torch.__version__) and NumPy scalars and arrays become their
    plain equivalents; anything else is refused (TypeError: a checkpoint must not hold it)."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        out = {plain_state(k, where): plain_state(v, f"{where}[{k!r}]") for k, v in obj.items()}
        if not isinstance(obj, OrderedDict):
            return out
        ordered = OrderedDict(out)  # a state_dict: keep its per-module version record
        if hasattr(obj, "_metadata"):
            ordered._metadata = plain_state(obj._metadata, f"{where}._metadata")
        return ordered
    if isinstance(obj, (list, tuple)):
        items = [plain_state(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, PLAIN_SCALARS):
        return obj
    item = getattr(obj, "item", None)  # NumPy scalars
    if callable(item) and getattr(obj, "shape", None) == ():
        return plain_state(item(), where)
    tolist = getattr(obj, "tolist", None)  # NumPy arrays
    if callable(tolist) and getattr(obj, "dtype", None) is not None:
        if getattr(obj.dtype, "kind", "O") in "biuf":
            return torch.from_numpy(obj.copy())
    raise TypeError(f"{where}: a checkpoint holds tensors and plain data, not {type(obj)!r}")


def checkpoint_bytes(state: dict) -> bytes:
    """The file contents for `state`: the digest header, then torch.save's payload."""
    buffer = io.BytesIO()
    torch.save(plain_state(state), buffer)
    payload = buffer.getvalue()
    return MAGIC + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


def write_checkpoint(path: str | Path, state: dict) -> None:
    """Write `state` atomically, as tensors and plain data, with its digest."""
    atomic_write_bytes(path, checkpoint_bytes(state))


def verified_payload(path: Path, data: bytes) -> bytes:
    """The torch.save payload of a checkpoint file's bytes, after checking its digest."""
    if not data.startswith(MAGIC):
        raise _untrusted(path, "written without a digest (by an older atomspark, or not at all)")
    header_end = len(MAGIC) + _DIGEST_CHARS
    if data[header_end : header_end + 1] != b"\n":
        raise _damaged(path, "its digest header is broken")
    stored = data[len(MAGIC) : header_end].decode("ascii", errors="replace")
    payload = data[header_end + 1 :]
    if hashlib.sha256(payload).hexdigest() != stored:
        raise _damaged(path, "its contents do not match the digest written with it")
    return payload


def load_plain(payload: bytes, path: Path) -> object:
    """torch.load's weights-only reader over `payload`: tensors and plain data, nothing run."""
    try:
        return torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable payload is reported the same way
        text = str(exc)
        if "Weights only load failed" in text or "Unsupported" in text:
            raise _untrusted(path, "it holds objects other than tensors and plain data") from None
        raise _damaged(path, f"unreadable ({type(exc).__name__})") from None


def read_checkpoint(path: str | Path) -> object:
    """The object stored in a checkpoint file, verified against its digest, on the CPU."""
    path = Path(path)
    if not path.is_file():
        raise AtomsparkError(f"checkpoint {path}: does not exist (nothing to resume)")
    return load_plain(verified_payload(path, path.read_bytes()), path)
