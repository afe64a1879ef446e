"""Run folders that are never damaged: refuse, resume or overwrite, decided once, up front.

Every command that writes an output folder calls `prepare_run_folder` before it computes
anything, and `finish_run` after its last file. The folder gets a small marker file (RUN_MARKER)
naming the command that owns it and whether its run finished, so that a later call can tell "a
run of mine", "a run of mine that stopped before its end", "someone else's run" and "files
atomspark did not write" apart:

- mode "new" (the default): the folder must be missing or empty; otherwise the call is refused
  and the message says how to go on (--resume where the command has it and there is something to
  resume from, --overwrite or another --out); a run that stopped early is named incomplete, with
  the outputs it lacks.
- mode "resume": the folder must hold a run of the same command, with the file it resumes from.
- mode "overwrite": the command's previous outputs (the files named by `outputs`, and the
  marker) are deleted first, so no stale file from the old run survives beside the new one.
  Nothing else is deleted, so a folder shared with other files (e.g. a sweep cell's log) is safe.
  A run of another command is refused.

Nothing in a folder is touched, created or deleted before it is known to be a run folder of the
command (or empty): a refused call leaves the folder exactly as it was. Then one writer at a
time: the run takes the folder's lock (run_lock.py) before it writes anything, and a second run
into a busy folder is refused naming the running process. Stale temporaries of an atomic write
that was killed (`.NAME.atomspark-tmp-*.tmp`, a name only atomspark's writes use) are removed
then, inside the run folder only. A full disk is reported in one line (`disk_full_message`).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from atomspark.sim import run_lock
from atomspark.sim.core import FULL_DISK, TMP_TAG, AtomsparkError, atomic_write_text

__all__ = ["FULL_DISK"]  # re-exported: the command line catches a full disk by these errno

RUN_MARKER = "atomspark-run.json"
# What each one-shot command writes (exact names: --overwrite deletes these and nothing else).
OUTPUTS = {
    "demo": ("summary.json", "vn_profile.json", "vn_activity.png", "costs.png"),
    "profile": ("costs.json", "profile.json", "activity.png", "raster.png", "costs.png"),
    "compare": (
        "comparison.json",
        "accuracy_vs_energy.png",
        "energy_per_sample.png",
        "cutoff_sweep.png",
    ),
    "map": ("points.jsonl", "map_settings.json", "map.json", "map_table.md", "map.png"),
    "export": (
        "export.json",
        "network.nir",
        "network.graphml",
        "weights.npz",
        "metadata.json",
        "run_bundle.py",
    ),
}
MODES = ("new", "resume", "overwrite")
_TMP_GLOB = f".*{TMP_TAG}*.tmp"
RUNNING, FINISHED, FAILED = "running", "finished", "failed"


def _is_own_temporary(path: Path) -> bool:
    name = path.name
    if not (name.startswith(".") and TMP_TAG in name and name.endswith(".tmp")):
        return False
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the `.NAME.atomspark-tmp-*.tmp` files an interrupted atomic write left behind
    (regular files only). Called only on a folder already known to be a run folder."""
    removed = []
    for tmp in folder.glob(_TMP_GLOB):
        if _is_own_temporary(tmp):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def ensure_writable_folder(path: str | os.PathLike, arg: str = "--out") -> Path:
    """Create `path` if needed and check that files can be written in it, or raise one line."""
    folder = Path(path)
    try:
        if folder.exists() and not folder.is_dir():
            raise AtomsparkError(f"{arg} {folder}: is a file, not a folder; choose a folder path")
        folder.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        raise AtomsparkError(
            f"{arg} {folder}: cannot create it (permission denied); choose a writable folder"
        ) from None
    except OSError as exc:
        raise AtomsparkError(
            f"{arg} {folder}: cannot create it ({exc.strerror}); choose another folder"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise AtomsparkError(
            f"{arg} {folder}: not writable (permission denied); choose a writable folder"
        )
    return folder


def read_marker(folder: Path) -> dict | None:
    """The marker of an atomspark run folder, or None when there is none (or it is unreadable)."""
    path = folder / RUN_MARKER
    try:
        if not stat.S_ISREG(path.lstat().st_mode) or path.lstat().st_size > 65536:
            return None
        marker = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def _entries(folder: Path) -> list[str]:
    """The folder's files, less the marker, the lock file and atomspark's own temporaries."""
    names = []
    for p in folder.iterdir():
        if p.name in (RUN_MARKER, run_lock.LOCK_FILE) or _is_own_temporary(p):
            continue
        names.append(p.name)
    return sorted(names)


def _can_resume(folder: Path, resumable: bool, resume_file: str | None) -> bool:
    return resumable and (resume_file is None or (folder / resume_file).is_file())


def redo_advice(folder: Path, resumable: bool, resume_file: str | None) -> str:
    """How to go on with a run in `folder`: the flags that exist and would work now."""
    if _can_resume(folder, resumable, resume_file):
        return "--resume to continue it, --overwrite to replace it"
    return "--overwrite to replace it"


def _missing(folder: Path, command: str, outputs: Iterable[str] | None) -> list[str]:
    names = OUTPUTS.get(command, ()) if outputs is None else tuple(outputs)
    return [n for n in names if not (folder / n).exists()]


def _decide(folder, command, mode, outputs, arg, legacy_files, resumable, resume_file) -> None:
    """Refuse (one line) unless `command` may write `folder` in `mode`; reads only."""
    busy = run_lock.holder(folder)
    if busy is not None:
        raise AtomsparkError(run_lock.busy_message(folder, arg, busy))
    entries = _entries(folder)
    marker = read_marker(folder)
    owner = None if marker is None else marker.get("command")
    legacy = marker is None and any(name in entries for name in legacy_files)
    ours = owner == command or legacy
    incomplete = ours and marker is not None and marker.get("state") in (RUNNING, FAILED)
    if mode == "resume":
        if not ours:
            what = f"a {owner} run" if owner else "no run to resume" if not entries else "no run"
            raise AtomsparkError(
                f"{arg} {folder}: holds {what} of `atomspark {command}`"
                if owner
                else f"{arg} {folder}: holds {what} (no {RUN_MARKER}); start it without --resume"
            )
        if resume_file is not None and not (folder / resume_file).is_file():
            raise AtomsparkError(
                f"{arg} {folder}: its `atomspark {command}` run stopped before writing "
                f"{resume_file}, so there is nothing to resume; pass --overwrite to start it again"
            )
        return
    if not entries:  # empty, or a run that wrote nothing
        return
    if mode == "new":
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        if owner is None and not legacy:
            raise AtomsparkError(
                f"{arg} {folder}: not empty ({shown}) and not an atomspark run folder; "
                "choose an empty or new folder"
            )
        if owner != command and not legacy:
            raise AtomsparkError(
                f"{arg} {folder}: holds a `atomspark {owner}` run; choose another folder"
            )
        hint = redo_advice(folder, resumable, resume_file)
        if incomplete:
            lacking = _missing(folder, command, outputs)
            lacks = f"; missing {', '.join(lacking)}" if lacking else ""
            how = "failed" if marker.get("state") == FAILED else "stopped before its end"
            raise AtomsparkError(
                f"{arg} {folder}: holds an incomplete `atomspark {command}` run (it {how}"
                f"{lacks}); pass {hint}, or choose another folder"
            )
        raise AtomsparkError(
            f"{arg} {folder}: already holds a `atomspark {command}` run ({shown}); pass {hint}, "
            "or choose another folder"
        )
    if owner is not None and owner != command:  # overwrite
        raise AtomsparkError(
            f"{arg} {folder}: holds a `atomspark {owner}` run; --overwrite only replaces a run "
            "of the same command: choose another folder"
        )
    if owner is None and not legacy and mode == "overwrite":
        return  # a foreign folder: overwrite deletes only the command's own output names


def prepare_run_folder(
    path: str | os.PathLike,
    command: str,
    mode: str = "new",
    outputs: Iterable[str] | None = None,
    arg: str = "--out",
    legacy_files: Iterable[str] = (),
    resumable: bool = False,
    resume_file: str | None = None,
) -> Path:
    """Check and set up the output folder of `command` before any work is done, and take its lock.

    `outputs` names the files the command writes (deleted by mode "overwrite"; default
    OUTPUTS[command]); `legacy_files` name files whose presence marks a run written before
    folders had a marker (accepted by "resume" and "overwrite"); `resumable`: the command has
    --resume, and `resume_file` is the file it resumes from (advice names only flags the command
    has, and --resume only when there is something to resume). Nothing is created, deleted or
    changed in an existing folder when the call is refused. Returns the folder as a Path."""
    if mode not in MODES:
        raise AtomsparkError(f"run folder mode {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "resume" and not Path(path).is_dir():
        raise AtomsparkError(
            f"{arg} {path}: no such folder, so no run to resume; start it without --resume"
        )
    folder = ensure_writable_folder(path, arg)
    legacy_files = tuple(legacy_files)
    decide = (command, mode, outputs, arg, legacy_files, resumable, resume_file)
    _decide(folder, *decide)
    busy = run_lock.acquire(folder, command, arg, resume_file if resumable else None)
    if busy is not None:  # another run took it between the look and the lock
        raise AtomsparkError(run_lock.busy_message(folder, arg, busy))
    try:
        _decide(folder, *decide)  # again, under the lock: nobody else writes now
    except AtomsparkError:
        run_lock.release(folder)
        raise
    remove_stale_temporaries(folder)
    if mode == "overwrite":
        names = set(OUTPUTS.get(command, ()) if outputs is None else outputs) | {RUN_MARKER}
        for name in _entries(folder) + [RUN_MARKER]:
            target = folder / name
            if name in names and target.is_file() and not target.is_symlink():
                target.unlink()
    marker = read_marker(folder) if mode == "resume" else None
    _write_marker(folder, command, RUNNING, (marker or {}).get("created_utc"))
    return folder


def finish_run(folder: str | os.PathLike) -> None:
    """Mark the run in `folder` finished (after its last file is written) and release its lock."""
    folder = Path(folder)
    marker = read_marker(folder) or {}
    _write_marker(folder, marker.get("command", "?"), FINISHED, marker.get("created_utc"))
    run_lock.release(folder)


def fail_held_runs(reason: str) -> None:
    """Mark every run this process holds "failed" (with `reason`) and release its lock: called
    when a command ends with an error, so that its partial run reads as incomplete and its folder
    is free for a rerun. On a full disk even the small marker may not be written; it then keeps
    saying "running", which reads as incomplete as well."""
    for run in run_lock.held_runs():
        marker = read_marker(run.folder) or {}
        try:
            _write_marker(run.folder, marker.get("command", run.command), FAILED,
                          marker.get("created_utc"), reason)  # fmt: skip
        except OSError:
            pass
        run_lock.release(run.folder)


def release_run(folder: str | os.PathLike) -> None:
    """Release the lock of a run that stops without finishing (its marker says "running")."""
    run_lock.release(Path(folder))


@contextmanager
def lock_released_after(folder: str | os.PathLike) -> Iterator[None]:
    """Let go of the run's lock when the block ends, early or refused (its marker keeps saying
    "running"); a full disk (OSError) keeps it until exit, so `disk_full_message` names the run."""
    try:
        yield
    except OSError:
        raise
    except BaseException:
        release_run(folder)
        raise
    release_run(folder)


def _write_marker(
    folder: Path, command: str, state: str, created: str | None = None, reason: str = ""
) -> None:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    info = {"command": command, "created_utc": created or now, "state": state}
    if state == FINISHED:
        info["finished_utc"] = now
    if state == FAILED:
        info["failed_utc"], info["reason"] = now, reason[:500]
    atomic_write_text(folder / RUN_MARKER, json.dumps(info) + "\n")


def _size(n_bytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n_bytes < 1024 or unit == "GiB":
            return f"{n_bytes:.0f} {unit}" if unit == "bytes" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1024
    raise AssertionError("unreachable")


def disk_full_message(exc: OSError) -> str:
    """One line for a write that failed on a full disk: the run folder, the space the write
    needed (the size of the file it was writing, which an atomic write knows: DiskFullError)
    and the space left there, and how to redo the run (the advice a rerun into the folder
    gives)."""
    held = run_lock.held_runs()
    where = Path(exc.filename).parent if exc.filename else None
    run = next((h for h in reversed(held) if where is None or h.folder == where), None)
    run = run or (held[-1] if held else None)
    folder = run.folder if run else where or Path.cwd()
    try:
        free = f"{_size(shutil.disk_usage(folder).free)} free"
    except OSError:
        free = "free space unknown"
    needed = getattr(exc, "needed", None)
    need = "size not known" if needed is None else f"needs {_size(needed)}"
    name = f" writing {Path(exc.filename).name}" if exc.filename else ""
    text = f"{folder}: no space left on the device{name} ({need}, {free})"
    if run is None:
        return f"{text}; free some space and run the command again"
    hint = redo_advice(folder, run.resume_file is not None, run.resume_file)
    return f"{run.arg} {text}; the run is incomplete: free some space, then pass {hint}"
