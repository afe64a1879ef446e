"""Run folders that are never damaged: refuse, resume or overwrite, decided once, up front.

Every command that writes an output folder calls `prepare_run_folder` before it computes
anything. The folder gets a small marker file (RUN_MARKER) naming the command that owns it, so
that a later call can tell "a run of mine", "someone else's run" and "files atomspark did not
write" apart:

- mode "new" (the default): the folder must be missing or empty (stale temporaries aside);
  otherwise the call is refused and the message says how to go on (--resume where the command
  has it, --overwrite or another --out).
- mode "resume": the folder must hold a run of the same command.
- mode "overwrite": the command's previous outputs (the files named by `outputs`, and the
  marker) are deleted first, so no stale file from the old run survives beside the new one.
  Nothing else is deleted, so a folder shared with other files (e.g. a sweep cell's log) is safe.
  A run of another command is refused.

Stale temporaries left by a killed atomic write (`.NAME.*.tmp`) are removed in every mode.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from atomspark.sim.core import AtomsparkError, atomic_write_text

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
_TMP_GLOB = ".*.tmp"


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete `.NAME.*.tmp` files that an interrupted atomic write left behind."""
    removed = []
    for tmp in folder.glob(_TMP_GLOB):
        if tmp.is_file():
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
    try:
        return json.loads((folder / RUN_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def prepare_run_folder(
    path: str | os.PathLike,
    command: str,
    mode: str = "new",
    outputs: Iterable[str] | None = None,
    arg: str = "--out",
    legacy_files: Iterable[str] = (),
    resumable: bool = False,
) -> Path:
    """Check and set up the output folder of `command` before any work is done.

    `outputs` names the files the command writes (deleted by mode "overwrite"; default
    OUTPUTS[command]);
    `legacy_files` name files whose presence marks a run written before folders had a marker
    (accepted by "resume" and "overwrite"); `resumable`: the command has --resume (advice names
    only flags the command has). Nothing is created when the call is refused. Returns the folder
    as a Path."""
    if mode not in MODES:
        raise AtomsparkError(f"run folder mode {mode!r}: choose one of {', '.join(MODES)}")
    if mode == "resume" and not Path(path).is_dir():
        raise AtomsparkError(
            f"{arg} {path}: no such folder, so no run to resume; start it without --resume"
        )
    folder = ensure_writable_folder(path, arg)
    remove_stale_temporaries(folder)
    entries = sorted(p.name for p in folder.iterdir())
    marker = read_marker(folder)
    owner = None if marker is None else marker.get("command")
    legacy = marker is None and any(name in entries for name in legacy_files)
    ours = owner == command or legacy
    if mode == "resume":
        if not ours:
            what = f"a {owner} run" if owner else "no run to resume" if not entries else "no run"
            raise AtomsparkError(
                f"{arg} {folder}: holds {what} of `atomspark {command}`"
                if owner
                else f"{arg} {folder}: holds {what} (no {RUN_MARKER}); start it without --resume"
            )
        return folder
    if not [name for name in entries if name != RUN_MARKER]:  # empty, or a run that wrote nothing
        _write_marker(folder, command)
        return folder
    if mode == "new":
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        hint = (
            "--resume to continue it, --overwrite to replace it"
            if resumable
            else "--overwrite to replace it"
        )
        if owner is None and not legacy:
            raise AtomsparkError(
                f"{arg} {folder}: not empty ({shown}) and not an atomspark run folder; "
                "choose an empty or new folder"
            )
        if owner != command and not legacy:
            raise AtomsparkError(
                f"{arg} {folder}: holds a `atomspark {owner}` run; choose another folder"
            )
        raise AtomsparkError(
            f"{arg} {folder}: already holds a `atomspark {command}` run ({shown}); pass {hint}, "
            "or choose another folder"
        )
    # overwrite
    if owner is not None and owner != command:
        raise AtomsparkError(
            f"{arg} {folder}: holds a `atomspark {owner}` run; --overwrite only replaces a run "
            "of the same command: choose another folder"
        )
    names = set(OUTPUTS.get(command, ()) if outputs is None else outputs) | {RUN_MARKER}
    for name in entries:
        if name in names and (folder / name).is_file():
            (folder / name).unlink()
    _write_marker(folder, command)
    return folder


def _write_marker(folder: Path, command: str) -> None:
    info = {"command": command, "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_text(folder / RUN_MARKER, json.dumps(info) + "\n")
