"""One writer per run folder: an exclusive kernel lock on `.atomspark-run.lock`, held for the run.

The lock file holds the writer's pid, command and start time, so a refused second run can name
the process it waits for. The lock itself is the kernel's (flock): it goes with the process that
held it, so a run that was killed leaves a file whose lock anyone can take again (a stale lock is
recovered without guessing whether its pid is still alive). A process that already holds a
folder's lock may take it again (one process running commands one after another, as the tests
and a sweep worker do). Nothing here decides whether a folder may be written: run_folder.py does,
before the lock file is ever created.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = ".atomspark-run.lock"


@dataclass
class HeldRun:
    """A run folder this process holds: its lock's descriptor and what the run is."""

    folder: Path
    fd: int
    command: str
    arg: str
    resume_file: str | None


_HELD: dict[str, HeldRun] = {}


def _key(folder: Path) -> str:
    return os.path.realpath(folder)


def held_runs() -> list[HeldRun]:
    """The run folders this process holds, oldest first."""
    return list(_HELD.values())


def holder(folder: Path) -> dict | None:
    """Who holds `folder`'s lock, when another process does ({pid, command, started_utc}); None
    when nobody does or this process does. Creates nothing."""
    if _key(folder) in _HELD:
        return None
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # no lock file (or not one we can read): nobody holds it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _describe(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _describe(fd: int) -> dict:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def acquire(
    folder: Path, command: str, arg: str = "--out", resume_file: str | None = None
) -> dict | None:
    """Take `folder`'s lock for this process; returns None when taken, else the holder's info."""
    key = _key(folder)
    if key in _HELD:
        held = _HELD[key]
        held.command, held.arg, held.resume_file = command, arg, resume_file
        return None
    path = folder / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = _describe(fd)
            os.close(fd)
            return info
        try:  # the file may have been unlinked by a holder releasing it: lock the live one
            same = os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    info = {
        "pid": os.getpid(),
        "command": command,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
    _HELD[key] = HeldRun(Path(folder), fd, command, arg, resume_file)
    return None


def release(folder: Path) -> None:
    """Let go of `folder`'s lock (the lock file is removed while still held)."""
    held = _HELD.pop(_key(folder), None)
    if held is None:
        return
    try:
        os.unlink(held.folder / LOCK_FILE)
    except OSError:
        pass
    os.close(held.fd)


def busy_message(folder: Path, arg: str, info: dict) -> str:
    """The one line refusing a second writer, naming the running process."""
    pid = info.get("pid", "?")
    what = f"`atomspark {info['command']}`" if info.get("command") else "another atomspark run"
    since = f", started {info['started_utc']}" if info.get("started_utc") else ""
    return (
        f"{arg} {folder}: {what} (process {pid}{since}) is writing to it; wait for it to end, "
        "or choose another folder"
    )
