"""One sweep cell, as it runs on a worker: its folder, its attempts, its result or its error.

Layout under the sweep folder:

    cells/<id>.partial/   the command's folder while the cell runs (checkpoints, metrics,
                          model.npz, plots): only the command writes there, so the command's own
                          run-folder rules (new / resume) apply to it unchanged
    cells/<id>.sweep/     the sweep's files for the unfinished cell: cell.json (its settings),
                          attempts.jsonl (one line per attempt: the worker's host and pid),
                          failed.json (after an error, with the traceback), lock (held
                          by the worker running the cell)
    cells/<id>/           the finished cell: the .partial folder with result.json, cell.json and
                          attempts.jsonl added, renamed in one step (atomic)

A cell is finished exactly when cells/<id>/result.json exists, so a sweep that stops at any
moment (worker killed, machine down, Ctrl-C) leaves no half-finished cell that looks finished.

Two sweeps of the same grid into the same folder (a second terminal, a script started twice)
never run one cell at once: a worker holds an exclusive lock on cells/<id>.sweep/lock while it
runs the cell, and a worker that finds the lock held leaves the cell to its holder (status
"busy"). The lock is the kernel's (flock): it goes with the process that held it, so a killed
worker leaves no stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import time
import traceback
from pathlib import Path

from atomspark.scenarios.sweep.grid import Cell
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.run_folder import release_run

RESULT = "result.json"
FAILED = "failed.json"
ATTEMPTS = "attempts.jsonl"
SETTINGS = "cell.json"
LOCK = "lock"
PARTIAL = ".partial"
SIDECAR = ".sweep"


def cell_dir(out: Path, cell_id: str) -> Path:
    """The finished cell's folder."""
    return Path(out) / "cells" / cell_id


def partial_dir(out: Path, cell_id: str) -> Path:
    """The command's folder until the cell is finished."""
    return Path(out) / "cells" / f"{cell_id}{PARTIAL}"


def sidecar_dir(out: Path, cell_id: str) -> Path:
    """The sweep's own files for an unfinished cell."""
    return Path(out) / "cells" / f"{cell_id}{SIDECAR}"


def settings_file(folder: Path) -> Path:
    """cell.json of a cell folder, finished (cells/<id>) or running (cells/<id>.partial)."""
    folder = Path(folder)
    if folder.name.endswith(PARTIAL):
        return folder.with_name(folder.name[: -len(PARTIAL)] + SIDECAR) / SETTINGS
    return folder / SETTINGS


def read_result(out: Path, cell_id: str) -> dict | None:
    """The finished cell's record, or None when the cell is not finished."""
    path = cell_dir(out, cell_id) / RESULT
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_failure(out: Path, cell_id: str) -> dict | None:
    """The last failure recorded for an unfinished cell, or None."""
    try:
        return json.loads((sidecar_dir(out, cell_id) / FAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def one_line(exc: BaseException, limit: int = 240) -> str:
    """An error as one line: the project's own errors by their message, others with their type."""
    text = " ".join(str(exc).split()) or "(no message)"
    if not isinstance(exc, AtomsparkError):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_failure(
    out: Path, cell: Cell, reason: str, detail: str = "", sweep: str | None = None
) -> dict:
    """Write failed.json beside the unfinished cell and return the failure record."""
    meta = sidecar_dir(out, cell.id)
    meta.mkdir(parents=True, exist_ok=True)
    record = {
        "id": cell.id,
        "status": "failed",
        "labels": cell.labels,
        "reason": reason,
        "attempts": _count_attempts(meta),
        "detail": detail,
        "sweep": sweep,
    }
    atomic_write_text(meta / FAILED, json.dumps(record, indent=2))
    return record


def _count_attempts(meta: Path) -> int:
    try:
        return sum(1 for line in (meta / ATTEMPTS).read_text().splitlines() if line.strip())
    except OSError:
        return 0


@contextlib.contextmanager
def cell_lock(meta: Path):
    """Hold the cell's exclusive lock for the block; yield None, or, when another process holds
    it, yield what that process wrote (its host, pid and start) without waiting."""
    meta.mkdir(parents=True, exist_ok=True)
    with open(meta / LOCK, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held_elsewhere = False
        except BlockingIOError:
            held_elsewhere = True
        if held_elsewhere:  # outside the except: the block's own errors are not chained to it
            handle.seek(0)
            yield handle.read().strip() or "another process"
            return
        try:
            handle.seek(0)
            handle.truncate()
            holder = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()}
            handle.write(json.dumps(holder))
            handle.flush()
            yield None
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _limit_threads(threads: int | None) -> None:
    """One cell per worker thread: keep torch from starting a thread per core on top (the
    LocalCluster also sets OMP/MKL/OpenBLAS/Numba thread counts in the workers' environment)."""
    if threads is None:
        return
    try:
        import torch
    except ImportError:  # a kind that does not use torch, in an environment without it
        return
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def execute_cell(
    kind_name: str, cell: Cell, out: str, threads: int | None = 1, sweep: str | None = None
) -> dict:
    """Run one cell into its folder and return its record (status "done", "failed" or "busy").

    Idempotent: a finished cell is returned as it is. `sweep` names the sweep run that asks (a
    token stored in the records this call writes), so that a sweep counts as its own only the
    cells it computed, not those another sweep of the folder finished. A cell whose own command raises is
    recorded as failed (one-line reason, traceback in failed.json) and not raised, so that the
    sweep goes on; only the death of the worker itself makes Dask run the cell again. A cell
    that another process is running is left to it (status "busy")."""
    out_path = Path(out)
    meta = sidecar_dir(out_path, cell.id)
    done = read_result(out_path, cell.id)
    if done is not None:
        shutil.rmtree(meta, ignore_errors=True)  # left if the last attempt died after the rename
        return done
    with cell_lock(meta) as holder:
        if holder is not None:
            return {
                "id": cell.id,
                "status": "busy",
                "labels": cell.labels,
                "reason": f"running in another sweep ({holder}); left to it",
            }
        done = read_result(out_path, cell.id)  # finished by another sweep since the first look
        if done is None:
            return _run_locked(kind_name, cell, out_path, meta, threads, sweep)
    shutil.rmtree(meta, ignore_errors=True)  # the lock file this look created
    return done


def _run_locked(kind_name, cell: Cell, out_path: Path, meta: Path, threads, sweep) -> dict:
    """execute_cell's work, under the cell's lock."""
    from atomspark.scenarios.sweep.kinds import KINDS

    attempt = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
    with open(meta / ATTEMPTS, "a", encoding="utf-8") as log:
        log.write(json.dumps(attempt) + "\n")
    settings = {"id": cell.id, "labels": cell.labels, "params": cell.params}
    atomic_write_text(meta / SETTINGS, json.dumps(settings, indent=2))
    _limit_threads(threads)
    kind = KINDS[kind_name]
    work = partial_dir(out_path, cell.id)
    resume = work.is_dir() and kind.resumable(work)
    if work.exists() and not resume:
        shutil.rmtree(work)  # an earlier attempt's outputs, with nothing to continue from
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        result = kind.run(cell.params, work, resume)
    except Exception as exc:  # noqa: BLE001 - the cell's own error is recorded, the sweep goes on
        return record_failure(out_path, cell, one_line(exc), traceback.format_exc(), sweep)
    finally:
        release_run(work)  # the command's run-folder lock, should it have stopped without its end
    record = {
        "id": cell.id,
        "status": "done",
        "kind": kind_name,
        "labels": cell.labels,
        "result": result,
        "wall_s": time.perf_counter() - start,
        "attempts": _count_attempts(meta),
        "resumed_from_checkpoint": resume,
        "host": attempt["host"],
        "sweep": sweep,
    }
    for name in (SETTINGS, ATTEMPTS):
        shutil.copyfile(meta / name, work / name)
    atomic_write_text(work / RESULT, json.dumps(record, indent=2))
    os.replace(work, cell_dir(out_path, cell.id))
    shutil.rmtree(meta, ignore_errors=True)
    return record
