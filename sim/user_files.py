"""Files the user names on the command line, read as untrusted: a regular file (never a FIFO,
device or socket, which could block or never end), bounded in size, UTF-8, and for JSON and TOML
bounded in nesting depth. Every refusal is one line naming the file and what to do."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from atomspark.sim.core import AtomsparkError

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 (the Lava environment)
    import tomli as tomllib

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # far above any config atomspark ships (the largest is ~10 KB)
MAX_DEPTH = 32  # levels of nested tables/arrays/objects; atomspark's formats use at most 4


def require_regular_file(path: str | os.PathLike, what: str) -> os.stat_result:
    """The file's status, or one line when it is missing, a folder or not a regular file."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise AtomsparkError(f"{what} {path}: does not exist") from None
    except OSError as exc:
        raise AtomsparkError(f"{what} {path}: cannot be read ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise AtomsparkError(f"{what} {path}: is a folder; give a file")
    if not stat.S_ISREG(st.st_mode):
        raise AtomsparkError(
            f"{what} {path}: not a regular file (a pipe, device or socket); give a file"
        )
    return st


def read_user_bytes(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`, or one line saying why not."""
    path = Path(path)
    st = require_regular_file(path, what)
    if st.st_size > max_bytes:
        raise AtomsparkError(
            f"{what} {path}: {st.st_size} bytes, above the {max_bytes} bytes a file of this kind "
            "may have; check it is the right file"
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise AtomsparkError(f"{what} {path}: cannot be read ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # replaced since the look
            raise AtomsparkError(f"{what} {path}: not a regular file; give a file")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise AtomsparkError(f"{what} {path}: above the {max_bytes} bytes a file may have")
    return data


def read_user_text(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """A regular, bounded, UTF-8 text file, or one line saying why not."""
    data = read_user_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AtomsparkError(
            f"{what} {path}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); "
            "save it as UTF-8"
        ) from None


def nesting_depth(value) -> int:
    """How deeply dicts and lists nest in `value` (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        else:
            continue
        deepest = max(deepest, depth + 1)
    return deepest


def _too_deep(path, what: str) -> AtomsparkError:
    return AtomsparkError(
        f"{what} {path}: nested more than {MAX_DEPTH} levels deep; atomspark's files nest a few "
        "levels: check it is the right file"
    )


def _bounded(value, path, what: str):
    if nesting_depth(value) > MAX_DEPTH:
        raise _too_deep(path, what)
    return value


def load_user_json(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES):
    """A JSON file's value: regular file, bounded size and depth, UTF-8, valid JSON."""
    text = read_user_text(path, what, max_bytes)
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(path, what) from None
    except json.JSONDecodeError as exc:
        raise AtomsparkError(f"{what} {path}: cannot be read as JSON ({exc})") from None
    return _bounded(value, path, what)


def load_user_toml(path: str | os.PathLike, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> dict:
    """A TOML file's tables: regular file, bounded size and depth, UTF-8, valid TOML."""
    text = read_user_text(path, what, max_bytes)
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(path, what) from None
    except tomllib.TOMLDecodeError as exc:
        raise AtomsparkError(f"{what} {path}: not valid TOML ({exc})") from None
    return _bounded(value, path, what)
