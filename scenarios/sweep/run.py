"""`atomspark sweep`: run a grid's cells as tasks on Dask (dask.distributed), resumably.

Dask does the scheduling: a LocalCluster of worker processes by default, or any running
scheduler by address (including SLURM/PBS clusters started with dask-jobqueue). This module
plans the cells (scenarios/sweep/grid.py, scenarios/sweep/kinds.py), skips the finished ones, submits the
rest (scenarios/sweep/cell.execute_cell), shows progress, and writes the summary and report
(scenarios/sweep/report.py). Its own state is only files in the sweep folder:

    grid.json      the grid's canonical form (a different grid in this folder is refused)
    grid.toml      the grid file as given
    cells/         one folder per cell (see scenarios/sweep/cell.py)
    summary.json   every cell's status, reason for failure, attempts and time; machine, cluster
    report.json, report.md, report.png   mean +- std over seeds per group of cells

Fault tolerance: a cell whose command raises is recorded as failed (not retried: the same
inputs raise again) and the sweep goes on. A worker that dies (killed, out of memory) loses
only the cell it ran: the scheduler gives that cell to another worker, up to `retries` more
times (Dask's allowed-failures), and the train kind resumes it from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.util
import json
import logging
import os
import platform
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from atomspark.scenarios.sweep.cell import (
    execute_cell,
    one_line,
    read_failure,
    read_result,
    record_failure,
)
from atomspark.scenarios.sweep.connect import probe_scheduler
from atomspark.scenarios.sweep.grid import Cell, Grid, grid_differences, parse_grid, read_toml
from atomspark.scenarios.sweep.kinds import KINDS, Kind, check_grid
from atomspark.scenarios.sweep.report import write_report
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int, require_positive

MAX_CELLS = 500
CONNECT_TIMEOUT_S = 10.0
RETRIES = 2
# Threads in each worker's environment: one cell per worker process, one thread per cell.
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
# Dask's nanny gives every worker MALLOC_TRIM_THRESHOLD_=65536 (to hand freed memory back to the
# OS). Setting it switches off glibc's adaptive mmap threshold, so every tensor above 128 KiB is
# mmap'ed and unmapped again on each use: measured on the published RSGN (batch 64), half the
# worker's CPU went to page faults and a step took 1.3 s instead of 0.55 s. The sweep unsets it;
# workers then allocate as a plain `atomspark train` does.
UNSET_WORKER_ENV = ("MALLOC_TRIM_THRESHOLD_",)
WORKER_SETUP = "atomspark.scenarios.sweep.worker_setup"


@dataclass
class Plan:
    """A checked grid and its cells."""

    grid: Grid
    kind: Kind
    cells: list[Cell]
    text: str  # the grid file as given


@dataclass
class SweepSummary:
    """What a sweep did: the folder, every cell's status, how many cells ran this time."""

    out: Path
    statuses: dict[str, str]  # cell id -> "done" | "failed" | "not run"
    computed: int
    failed: list[dict] = field(default_factory=list)
    report: dict | None = None


def plan_grid(path: str | os.PathLike, max_cells: int = MAX_CELLS, force: bool = False) -> Plan:
    """Read, check and expand GRID.toml; refuse more than `max_cells` cells unless `force`."""
    path = Path(path)
    raw = read_toml(path, "grid file")
    grid_dir = path.parent
    grid = parse_grid(
        raw,
        tuple(KINDS),
        lambda base, kind: KINDS[kind].resolve_base(base, grid_dir),
        source=path,
    )
    kind = KINDS[grid.kind]
    check_grid(grid, kind)
    n = len(grid.variants) * len(grid.seeds or [None])
    for values in grid.axes.values():
        n *= len(values)
    max_cells = require_int("--max-cells", max_cells, minimum=1)
    if n > max_cells and not force:
        raise AtomsparkError(
            f"grid has {n} cells, above the cap of {max_cells}: pass --force to run it all "
            "(or --max-cells N)"
        )
    cells = grid.cells(
        lambda variant, overrides: kind.build(variant, overrides, grid_dir), kind.identity
    )
    return Plan(grid, kind, cells, path.read_text(encoding="utf-8"))


def prepare_folder(out: Path, plan: Plan) -> None:
    """Claim `out` for this grid: new or empty -> write grid.json; holding the same grid -> use
    it (resume); holding a different grid or other files -> refuse, saying what differs."""
    stored = out / "grid.json"
    if stored.is_file():
        try:
            old = json.loads(stored.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise AtomsparkError(f"sweep folder {out}: grid.json is unreadable ({exc})") from None
        diff = grid_differences(old, plan.grid.canonical)
        if diff:
            raise AtomsparkError(
                f"sweep folder {out} holds a different grid ({'; '.join(diff)}): use another "
                "--out, or the grid that made this folder"
            )
        return
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AtomsparkError(
            f"sweep folder {out}: exists and is not a sweep folder (no grid.json); "
            "choose another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "grid.toml", plan.text)
    atomic_write_text(stored, json.dumps(plan.grid.canonical, indent=2, sort_keys=True))


# ----- the Dask cluster ------------------------------------------------------------------------
def default_workers() -> int:
    """One worker per usable core."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def memory_per_worker(n_workers: int) -> int:
    """90 % of the machine's memory shared equally between the workers, in bytes: a cell above
    it gets its worker restarted by Dask's nanny instead of taking the machine down."""
    import psutil

    return int(0.9 * psutil.virtual_memory().total / n_workers)


@dataclass
class ClusterInfo:
    """How the sweep reached Dask, for the log and summary.json."""

    description: str
    dashboard: str | None
    memory_limit: int | None


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: int | str | None = "auto",
    retries: int = RETRIES,
    connect_timeout: float = CONNECT_TIMEOUT_S,
) -> Iterator[tuple[object, ClusterInfo]]:
    """A Dask client: connected to `scheduler` when given, else on a new LocalCluster of
    `workers` processes (one thread each; see docs/sweeps.md for why)."""
    if importlib.util.find_spec("distributed") is None:
        raise AtomsparkError(
            "sweep needs dask.distributed, which this environment lacks: "
            "pip install 'atomspark[sweep]'"
        )
    from distributed import Client

    if scheduler is not None:
        try:  # run_sweep has probed the address (check_cluster_arguments)
            client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise AtomsparkError(
                f"--scheduler {scheduler}: no Dask scheduler answered within "
                f"{connect_timeout:g} s ({one_line(exc, 120)}); check the address "
                "(tcp://HOST:8786) and that the scheduler is running"
            ) from None
        try:
            n = len(client.scheduler_info(n_workers=-1)["workers"])
            info = ClusterInfo(f"scheduler {scheduler} ({n} workers now)", _dashboard(client), None)
            yield client, info
        finally:
            client.close()
        return

    cluster, limit = local_cluster(workers, memory_limit, retries)
    try:
        client = Client(cluster)
        try:
            mem = "no memory limit" if not limit else f"{_gib(limit)} memory limit each"
            info = ClusterInfo(
                f"LocalCluster: {len(cluster.workers)} worker processes, 1 thread each, {mem}",
                _dashboard(client),
                limit or None,
            )
            yield client, info
        finally:
            client.close()
    finally:
        cluster.close()


def local_cluster(
    workers: int | None = None, memory_limit: int | str | None = "auto", retries: int = RETRIES
) -> tuple[object, int | None]:
    """A LocalCluster and its memory limit per worker in bytes.

    `workers` processes (default: one per core), one thread each, a memory limit per worker
    ("auto": memory_per_worker; bytes or text such as "4GiB"; None: no limit) and `retries`
    reruns of a task whose worker died. One thread per process because every cell is torch,
    NumPy or Numba work that would otherwise start a thread per core in every worker and
    oversubscribe the machine; processes, not threads, so that cells never share the GIL or
    torch's global state, and a runaway cell costs only its own process."""
    import dask
    from distributed import LocalCluster

    n = require_int("--workers", workers if workers is not None else default_workers(), 1)
    limit = worker_memory_limit(memory_limit, n)
    settings = {
        "distributed.scheduler.allowed-failures": retries,
        "distributed.scheduler.worker-saturation": 1.0,  # a worker holds only the cell it runs
        "distributed.worker.preload": [WORKER_SETUP],  # workers leave Ctrl-C to the sweep
        **{f"distributed.nanny.pre-spawn-environ.{k}": None for k in UNSET_WORKER_ENV},
    }
    with dask.config.set(settings):
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            memory_limit=limit,
            dashboard_address=":0",  # any free port: sweeps side by side do not collide
            silence_logs=logging.CRITICAL,
            env=WORKER_ENV,
        )
    return cluster, limit


def worker_memory_limit(memory_limit: int | str | None, n_workers: int) -> int | None:
    """Bytes per worker from --memory-limit ("auto", text such as "4GiB", bytes or None)."""
    from dask.utils import parse_bytes

    if memory_limit == "auto":
        return memory_per_worker(n_workers)
    if isinstance(memory_limit, str):
        try:
            return parse_bytes(memory_limit)
        except ValueError:
            raise AtomsparkError(
                f"--memory-limit {memory_limit!r}: expected bytes such as 4GiB or 'auto'"
            ) from None
    return memory_limit


def check_cluster_arguments(
    scheduler: str | None, workers: int | None, memory_limit, connect_timeout: float
) -> None:
    """Refuse bad cluster arguments before the sweep folder is touched (a --scheduler is
    probed only when there are cells to run: see run_sweep)."""
    require_positive("--connect-timeout", connect_timeout)
    if scheduler is not None:
        return
    n = require_int("--workers", workers if workers is not None else default_workers(), 1)
    if importlib.util.find_spec("dask") is not None:
        worker_memory_limit(memory_limit, n)


def _scheduler_has_bokeh() -> bool:
    return importlib.util.find_spec("bokeh") is not None


def _dashboard(client) -> str | None:
    """The Dask dashboard's address, when the scheduler can serve one (it needs bokeh)."""
    try:
        if not client.run_on_scheduler(_scheduler_has_bokeh):
            return None
        return client.dashboard_link
    except Exception:  # noqa: BLE001 - no dashboard is not an error
        return None


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB"


# ----- running ---------------------------------------------------------------------------------
def run_sweep(
    grid_path: str | os.PathLike,
    out: str | os.PathLike,
    scheduler: str | None = None,
    workers: int | None = None,
    memory_limit: int | str | None = "auto",
    retries: int = RETRIES,
    max_cells: int = MAX_CELLS,
    force: bool = False,
    report_only: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    progress: bool = True,
    log: Callable[[str], None] = print,
    only: str | None = None,
) -> SweepSummary:
    """Run the unfinished cells of GRID.toml into `out` and write summary and report.

    report_only: compute nothing; write the report of the cells finished so far.
    only: run just the cells whose folder name matches this glob (e.g. "*rsgn*"), to choose
    what runs first; the others stay for a later run of the same grid."""
    plan = plan_grid(grid_path, max_cells=max_cells, force=force)
    out = Path(out)
    retries = require_int("--retries", retries, minimum=0)
    if not report_only:
        check_cluster_arguments(scheduler, workers, memory_limit, connect_timeout)
    if report_only:
        if not (out / "grid.json").is_file():
            raise AtomsparkError(f"--report: {out} is not a sweep folder (no grid.json)")
        prepare_folder(out, plan)
        return _finish(out, plan, computed=0, cluster=None, log=log)
    todo = [c for c in plan.cells if read_result(out, c.id) is None]
    if only is not None:
        chosen = {c.id for c in plan.cells if fnmatch.fnmatchcase(c.id, only)}
        if not chosen:
            names = ", ".join(c.id for c in plan.cells[:3])
            raise AtomsparkError(f"--only {only!r}: matches no cell (cell names: {names}, ...)")
        todo = [c for c in todo if c.id in chosen]
    if todo and scheduler is not None:
        probe_scheduler(scheduler, connect_timeout)  # before the folder is claimed
    prepare_folder(out, plan)
    log(
        f"[sweep] {plan.grid.kind} grid {grid_path}: {len(plan.cells)} cells, "
        f"{len(plan.cells) - len(todo)} finished before or not chosen, {len(todo)} to run -> {out}"
    )
    cluster = None
    token = uuid.uuid4().hex[:12]  # this run, in the records of the cells it computes
    start = time.monotonic()
    try:
        if todo:
            with dask_client(scheduler, workers, memory_limit, retries, connect_timeout) as (
                client,
                info,
            ):
                cluster = info
                log(f"[sweep] {info.description}")
                log(
                    f"[sweep] dashboard: {info.dashboard}"
                    if info.dashboard
                    else "[sweep] dashboard: not available (install bokeh for Dask's dashboard)"
                )
                _run_cells(client, plan, todo, out, retries, info, progress, log, token)
    except KeyboardInterrupt:
        _finish(out, plan, computed=computed_by(out, todo, token), cluster=cluster, log=log)
        log("[sweep] interrupted: finished cells are kept; run the same command to continue")
        raise
    computed = computed_by(out, todo, token)
    if todo:
        log(f"[sweep] {computed} cells in {_duration(time.monotonic() - start)}")
    return _finish(out, plan, computed=computed, cluster=cluster, log=log)


def _run_cells(client, plan, todo, out, retries, info, progress, log, token: str) -> None:
    """Submit one Dask task per cell and follow them to the end: a progress bar on a terminal,
    otherwise one line per finished cell (done / running / failed / left, ETA). `token` names
    this sweep run in the records its cells write; a cell another sweep of the folder finished
    or holds is reported as left to it."""
    from distributed import wait
    from tqdm import tqdm

    # One key per cell and sweep: two sweeps on one scheduler must not share a task (Dask would
    # run it once and report it to both as their own work); the cell's lock decides who runs it.
    keys = {f"atomspark-cell-{c.id}-{token}": c for c in todo}
    folder = str(out.resolve())
    futures = [
        client.submit(execute_cell, plan.grid.kind, c, folder, key=k, retries=retries, sweep=token)
        for k, c in keys.items()
    ]
    pending, ok, failed, elsewhere, start = set(futures), 0, 0, 0, time.monotonic()
    watch = WorkerWatch(keys)
    bar = tqdm(total=len(futures), unit="cell", desc="[sweep]", disable=not progress)
    try:
        while pending:
            try:
                done, pending = wait(pending, timeout=1.0, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for future in done:
                cell = keys[future.key]
                if future.status == "finished":
                    record = future.result()
                else:
                    reason = _lost_reason(future.exception(), info)
                    record = record_failure(out, cell, reason, sweep=token)
                if record.get("sweep") != token:
                    elsewhere += 1
                    why = record.get("reason", "finished by another sweep of this folder")
                    bar.write(f"[sweep] left {cell.id}: {why}")
                elif record["status"] == "done":
                    ok += 1
                else:
                    failed += 1
                    bar.write(f"[sweep] failed {cell.id}: {record['reason']}")
                bar.update(1)
            running = _running(client, keys)
            for line in watch.check(client):
                bar.write(line)
            state = f"done {ok} running {running} failed {failed} left {len(pending) - running}"
            state += f" elsewhere {elsewhere}" if elsewhere else ""
            bar.set_postfix_str(state)
            if done and not progress:
                eta = (time.monotonic() - start) / max(ok + failed, 1) * len(pending)
                finished = ok + failed + elsewhere
                log(f"[sweep] {finished}/{len(futures)}: {state}, ETA {_duration(eta)}")
    except KeyboardInterrupt:
        client.cancel(futures)
        raise
    finally:
        bar.close()


class WorkerWatch:
    """Reports each cell whose worker died, with the attempt Dask starts next: the scheduler
    counts, per task, the workers that died holding it (its "suspicious" count) and reruns the
    task until that count passes its allowed-failures setting."""

    def __init__(self, keys: dict) -> None:
        self.keys = keys
        self.lost: dict[str, int] = {}  # task key -> deaths already reported

    def check(self, client) -> list[str]:
        """One line per cell whose worker died since the last call."""
        wanted = list(self.keys)

        def deaths(dask_scheduler) -> tuple:  # runs on the scheduler (pickled by value)
            tasks = dask_scheduler.tasks
            counts = {k: tasks[k].suspicious for k in wanted if k in tasks}
            return dask_scheduler.allowed_failures, counts

        try:
            allowed, counts = client.run_on_scheduler(deaths)
        except Exception:  # noqa: BLE001 - watching is best effort
            return []
        lines = []
        for key, n in counts.items():
            if n <= self.lost.get(key, 0):
                continue
            self.lost[key] = n
            then = (
                f"rerunning it (attempt {n + 1} of {allowed + 1})"
                if n <= allowed
                else "no retries left: the cell is recorded as failed"
            )
            lines.append(f"[sweep] lost the worker holding {self.keys[key].id}; {then}")
        return lines


def computed_by(out: Path, cells: list[Cell], token: str) -> int:
    """Cells whose record (result or failure) this sweep run wrote: the "computed this time"
    count, read from the folder so that it is right after Ctrl-C too and never counts a cell
    another sweep of the folder computed."""
    count = 0
    for cell in cells:
        record = read_result(out, cell.id) or read_failure(out, cell.id) or {}
        count += record.get("sweep") == token
    return count


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _running(client, keys: dict) -> int:
    """Cells being computed now: tasks a worker holds, at most one per worker thread."""
    try:
        processing = client.processing()
    except Exception:  # noqa: BLE001 - progress is best effort
        return 0
    threads = client.nthreads()
    return sum(
        min(threads.get(w, 1), sum(1 for k in ks if k in keys)) for w, ks in processing.items()
    )


def _lost_reason(exc: BaseException | None, info: ClusterInfo) -> str:
    """A cell Dask gave up on: its worker died on every attempt (KilledWorker) or the task
    could not run at all."""
    if type(exc).__name__ == "KilledWorker":
        limit = f" ({_gib(info.memory_limit)} per worker)" if info.memory_limit else ""
        return (
            "the worker running it died on every attempt; a cell that goes over the memory "
            f"limit{limit} is stopped this way"
        )
    return one_line(exc) if exc is not None else "cancelled"


def _runs(out: Path, computed: int, cluster: ClusterInfo | None) -> list[dict]:
    """The runs that computed cells in this folder (earlier ones from summary.json, plus this
    one when it computed any): date, machine, load and cluster, for the report's header."""
    try:
        runs = json.loads((out / "summary.json").read_text(encoding="utf-8"))["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        runs = []
    if computed:
        runs.append(
            {
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "cells_computed": computed,
                "host": platform.node(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
                "cluster": None if cluster is None else cluster.description,
            }
        )
    return runs


def _finish(out: Path, plan: Plan, computed: int, cluster, log) -> SweepSummary:
    """Read every cell's state from the folder; write summary.json and the report."""
    statuses, rows, failed, records = {}, [], [], {}
    for cell in plan.cells:
        record = read_result(out, cell.id)
        if record is not None:
            statuses[cell.id] = "done"
            records[cell.id] = record
            rows.append(
                {
                    "id": cell.id,
                    "labels": cell.labels,
                    "status": "done",
                    "attempts": record.get("attempts"),
                    "wall_s": record.get("wall_s"),
                }
            )
            continue
        failure = read_failure(out, cell.id)
        status = "failed" if failure is not None else "not run"
        statuses[cell.id] = status
        row = {"id": cell.id, "labels": cell.labels, "status": status}
        if failure is not None:
            row.update(reason=failure["reason"], attempts=failure.get("attempts"))
            failed.append(row)
        rows.append(row)
    summary = {
        "grid": str(plan.grid.source),
        "kind": plan.grid.kind,
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": _runs(out, computed, cluster),
        "counts": {s: list(statuses.values()).count(s) for s in ("done", "failed", "not run")},
        "cells": rows,
    }
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2))
    report = write_report(out, plan.cells, records, statuses, plan.kind.headline, summary)
    c = summary["counts"]
    log(
        f"[sweep] {c['done']} done, {c['failed']} failed, {c['not run']} not run "
        f"({computed} computed this time); wrote {out}/summary.json, report.json, report.md, "
        "report.png"
    )
    for row in failed:
        log(f"[sweep] failed {row['id']}: {row['reason']}")
    return SweepSummary(out, statuses, computed, failed, report)
