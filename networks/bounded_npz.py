"""Bounded reads of .npy files and .npz archives: every header is checked before any data is read.

A file a user opens is untrusted. Before allocating, each array's header (dtype, shape) is read on
its own and checked: plain numbers only (no Python objects, strings or records), the bytes it
declares present in the file (a 300-byte file claiming 90 GiB is refused as truncated), and the
total within the size guard every verb uses (sim/memory.require_memory). In an .npz, a member the
caller does not expect is refused by name before a byte of it is decompressed, so a model file with
a 4 GB deflated extra member costs nothing to refuse.
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from atomspark.sim.core import AtomsparkError
from atomspark.sim.memory import require_memory

NUMBER_KINDS = "biuf"  # bool, signed and unsigned integers, floats
MAX_HEADER_BYTES = 10_000  # NumPy's own default bound on a header it parses
MAX_MEMBERS = 10_000  # an archive with more members than this is not one atomspark wrote


@dataclass(frozen=True)
class ArrayHeader:
    """What a .npy header declares: the array's shape, dtype, layout and its data size in bytes."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def read_header(fh, where: str) -> ArrayHeader:
    """Read and check one .npy header from the open binary stream `fh` (left at the data).
    `where` names the file (and member) in the one-line error."""
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh, MAX_HEADER_BYTES)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh, MAX_HEADER_BYTES)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise AtomsparkError(f"{where}: not a readable .npy array ({exc})") from None
    if dtype.hasobject:
        raise AtomsparkError(
            f"{where}: holds Python objects, not numbers (atomspark only reads numeric arrays)"
        )
    if dtype.kind not in NUMBER_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise AtomsparkError(f"{where}: holds {dtype} values; give real numbers (float or int)")
    if any(not isinstance(s, int) or s < 0 for s in shape):
        raise AtomsparkError(f"{where}: header declares an invalid shape {shape}")
    return ArrayHeader(tuple(shape), dtype, bool(fortran))


def _read_data(fh, header: ArrayHeader, where: str) -> np.ndarray:
    """The array body after a checked header: exactly header.nbytes bytes, read in chunks."""
    data = bytearray(header.nbytes)
    view, filled = memoryview(data), 0
    while filled < header.nbytes:
        chunk = fh.read(min(1 << 24, header.nbytes - filled))
        if not chunk:
            raise AtomsparkError(
                f"{where}: truncated (header declares {header.nbytes} bytes of data, the file "
                f"holds {filled})"
            )
        view[filled : filled + len(chunk)] = chunk
        filled += len(chunk)
    order = "F" if header.fortran_order else "C"
    return np.frombuffer(data, dtype=header.dtype).reshape(header.shape, order=order)


def _guard(where: str, nbytes: int) -> None:
    require_memory(where, float(nbytes), "give a smaller file (or free memory)")


def load_npy_bounded(path: str | os.PathLike, what: str) -> np.ndarray:
    """A numeric array from a .npy file, its header checked against the file's size and the
    memory guard before anything is allocated."""
    path = Path(path)
    where = f"{what} {path}"
    with open(path, "rb") as fh:
        header = read_header(fh, where)
        present = os.fstat(fh.fileno()).st_size - fh.tell()
        if present < header.nbytes:
            raise AtomsparkError(
                f"{where}: truncated (header declares shape {header.shape} of {header.dtype}, "
                f"{header.nbytes} bytes; the file holds {present})"
            )
        _guard(where, header.nbytes)
        return _read_data(fh, header, where)


def read_npz(
    path: str | os.PathLike,
    what: str,
    accept: Callable[[str], bool] | None = None,
    only: set[str] | None = None,
    limits: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """The arrays of an .npz archive by name, bounded before reading.

    accept(name) says whether a member belongs to the format; any other member is refused
    (by name, unread). only: read just these members (others are not decompressed).
    limits: name -> largest allowed data size in bytes (e.g. a metadata blob)."""
    path = Path(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise AtomsparkError(f"{what} {path}: not a readable .npz archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise AtomsparkError(f"{what} {path}: {len(infos)} members; not an atomspark file")
        members: dict[str, zipfile.ZipInfo] = {}
        unknown = []
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if accept is None and name is None:
                continue  # not an array; never read (a caller without a format only looks)
            if name is None or (accept is not None and not accept(name)) or name in members:
                unknown.append(info.filename)
            members[name or info.filename] = info
        if unknown:
            shown = ", ".join(repr(n) for n in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise AtomsparkError(
                f"{what} {path}: unknown arrays {shown} are not part of the format (refused "
                "unread; give the file atomspark wrote)"
            )
        wanted = [n for n in members if only is None or n in only]
        headers = {}
        for name in wanted:
            where = f"{what} {path} member {name!r}"
            try:
                with archive.open(members[name]) as fh:
                    headers[name] = header = read_header(fh, where)
                    declared = members[name].file_size - fh.tell()
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
                raise AtomsparkError(f"{where}: unreadable ({exc})") from None
            if declared < header.nbytes:
                raise AtomsparkError(
                    f"{where}: truncated (header declares shape {header.shape}, "
                    f"{header.nbytes} bytes; the archive holds {declared})"
                )
            limit = (limits or {}).get(name)
            if limit is not None and header.nbytes > limit:
                raise AtomsparkError(f"{where}: {header.nbytes} bytes, more than its {limit}")
        _guard(f"{what} {path}", sum(h.nbytes for h in headers.values()))
        arrays = {}
        for name in wanted:
            where = f"{what} {path} member {name!r}"
            try:
                with archive.open(members[name]) as fh:
                    read_header(fh, where)
                    arrays[name] = _read_data(fh, headers[name], where)
            except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
                raise AtomsparkError(f"{where}: unreadable ({exc})") from None
        return arrays
