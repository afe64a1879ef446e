"""One sweep cell, as it runs on a worker: its folder, its attempts, its result or its error.

Layout under the sweep folder:

    cells/<id>.partial/   the cell while it runs: the sweep's own files cell.json (its settings),
                          attempts.jsonl (one line per attempt: the worker's host and pid) and
                          failed.json (after an error), beside what the command writes
                          (checkpoints, metrics, model.npz, plots)
    cells/<id>/           the finished cell: renamed from .partial in one step (atomic), with
                          result.json added

A cell is finished exactly when cells/<id>/result.json exists, so a sweep that stops at any
moment (worker killed, machine down, Ctrl-C) leaves no half-finished cell that looks finished.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
import traceback
from pathlib import Path

from atomspark.scenarios.sweep_grid import Cell
from atomspark.sim.core import AtomsparkError, atomic_write_text

RESULT = "result.json"
FAILED = "failed.json"
ATTEMPTS = "attempts.jsonl"
SWEEP_FILES = ("cell.json", ATTEMPTS, FAILED, RESULT)


def cell_dir(out: Path, cell_id: str) -> Path:
    """The finished cell's folder."""
    return Path(out) / "cells" / cell_id


def partial_dir(out: Path, cell_id: str) -> Path:
    """The folder a cell runs in until it is finished."""
    return Path(out) / "cells" / f"{cell_id}.partial"


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
        return json.loads((partial_dir(out, cell_id) / FAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def one_line(exc: BaseException, limit: int = 240) -> str:
    """An error as one line: the project's own errors by their message, others with their type."""
    text = " ".join(str(exc).split()) or "(no message)"
    if not isinstance(exc, AtomsparkError):
        text = f"{type(exc).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def record_failure(out: Path, cell: Cell, reason: str, detail: str = "") -> dict:
    """Write failed.json into the cell's .partial folder and return the failure record."""
    work = partial_dir(out, cell.id)
    work.mkdir(parents=True, exist_ok=True)
    record = {
        "id": cell.id,
        "status": "failed",
        "labels": cell.labels,
        "reason": reason,
        "attempts": _count_attempts(work),
        "detail": detail,
    }
    atomic_write_text(work / FAILED, json.dumps(record, indent=2))
    return record


def _count_attempts(work: Path) -> int:
    try:
        return sum(1 for line in (work / ATTEMPTS).read_text().splitlines() if line.strip())
    except OSError:
        return 0


def _clear_command_outputs(work: Path) -> None:
    """Remove what an earlier attempt's command wrote, keeping the sweep's own files."""
    for entry in work.iterdir():
        if entry.name in SWEEP_FILES:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


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


def execute_cell(kind_name: str, cell: Cell, out: str, threads: int | None = 1) -> dict:
    """Run one cell into its folder and return its record (status "done" or "failed").

    Idempotent: a finished cell is returned as it is. A cell whose own command raises is
    recorded as failed (one-line reason, traceback in failed.json) and not raised, so that the
    sweep goes on; only the death of the worker itself makes Dask run the cell again."""
    from atomspark.scenarios.sweep_kinds import KINDS

    out_path = Path(out)
    done = read_result(out_path, cell.id)
    if done is not None:
        return done
    work = partial_dir(out_path, cell.id)
    work.mkdir(parents=True, exist_ok=True)
    attempt = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
    with open(work / ATTEMPTS, "a", encoding="utf-8") as log:
        log.write(json.dumps(attempt) + "\n")
    atomic_write_text(
        work / "cell.json",
        json.dumps({"id": cell.id, "labels": cell.labels, "params": cell.params}, indent=2),
    )
    _limit_threads(threads)
    kind = KINDS[kind_name]
    resume = kind.resumable(work)
    if not resume:
        _clear_command_outputs(work)  # an earlier attempt's leftovers, nothing to continue from
    start = time.perf_counter()
    try:
        result = kind.run(cell.params, work, resume)
    except Exception as exc:  # noqa: BLE001 - the cell's own error is recorded, the sweep goes on
        return record_failure(out_path, cell, one_line(exc), traceback.format_exc())
    record = {
        "id": cell.id,
        "status": "done",
        "kind": kind_name,
        "labels": cell.labels,
        "result": result,
        "wall_s": time.perf_counter() - start,
        "attempts": _count_attempts(work),
        "resumed_from_checkpoint": resume,
        "host": attempt["host"],
    }
    atomic_write_text(work / RESULT, json.dumps(record, indent=2))
    (work / FAILED).unlink(missing_ok=True)
    os.replace(work, cell_dir(out_path, cell.id))
    return record
