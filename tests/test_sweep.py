"""`atomspark sweep` on a real Dask LocalCluster of 2 worker processes (no mocks): a sweep equals
the same cells run serially, a rerun computes nothing, a worker killed by pid mid-cell loses only
that cell (resumed from its checkpoint), a cell's own error is recorded and the sweep goes on,
and bad grids are refused with one line."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("distributed")

from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.scenarios.sweep.cell import (  # noqa: E402
    ATTEMPTS,
    cell_dir,
    cell_lock,
    execute_cell,
    partial_dir,
    sidecar_dir,
)
from atomspark.scenarios.sweep.run import (
    local_cluster,
    plan_grid,
    prepare_folder,
    run_sweep,
)  # noqa: E402
from atomspark.sim.core import AtomsparkError  # noqa: E402

pytestmark = pytest.mark.torch

# 2 configs (the published and the sparse built-in RSGN) x 2 seeds, one epoch of 12 small steps
# with a checkpoint after every step (so that a killed cell has something to resume from).
TINY = """
kind = "train"
seeds = [0, 1]

[set]
epochs = 1
device = "cpu"
batch_size = 8
checkpoint_every = 1
"data.n" = 120

[[variants]]
name = "published"
base = "rsgn-sequence"

[[variants]]
name = "sparse"
base = "rsgn-sparse"
"""
# One more variant whose own command fails (model.d_in does not fit the data's dimension 8).
BROKEN = """
[[variants]]
name = "broken"
base = "rsgn-sequence"
set = { "model.d_in" = 5 }
"""


def write_grid(folder: Path, text: str, name: str = "grid.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def cluster():
    """A real LocalCluster: 2 worker processes, 1 thread each, as the sweep builds it."""
    cluster, _ = local_cluster(workers=2, memory_limit="3GiB", retries=2)
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """Every cell of TINY run one after the other in this process (the oracle)."""
    folder = tmp_path_factory.mktemp("serial")
    plan = plan_grid(write_grid(folder, TINY))
    import torch

    threads = torch.get_num_threads()
    try:
        records = {
            c.id: execute_cell("train", c, str(folder / "out"), threads=1) for c in plan.cells
        }
    finally:
        torch.set_num_threads(threads)
    return folder / "out", records


def assert_cells_equal(out: Path, serial_out: Path, serial_records: dict) -> None:
    for cell_id, expected in serial_records.items():
        assert expected["status"] == "done"
        got = json.loads((cell_dir(out, cell_id) / "result.json").read_text())
        assert got["result"] == expected["result"], cell_id
        with (
            np.load(cell_dir(out, cell_id) / "model.npz") as a,
            np.load(cell_dir(serial_out, cell_id) / "model.npz") as b,
        ):
            assert sorted(a.files) == sorted(b.files)
            for key in a.files:
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"{cell_id} {key}")


def _worker_environment(names: tuple) -> dict:
    import os

    return {k: os.environ.get(k) for k in names}


def test_workers_run_one_thread_and_keep_glibcs_adaptive_allocator(cluster):
    """The workers' environment: one thread per library, and no MALLOC_TRIM_THRESHOLD_ (Dask's
    default, which made every large tensor an mmap and doubled the published RSGN's step)."""
    from distributed import Client

    with Client(cluster) as client:
        env = client.submit(_worker_environment, ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS"))
        env = env.result(timeout=60)
    assert env == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "1"}


def test_sweep_equals_serial_and_rerun_computes_nothing(tmp_path, cluster, serial):
    grid = write_grid(tmp_path, TINY)
    out = tmp_path / "sweep"
    lines: list[str] = []
    summary = run_sweep(
        grid, out, scheduler=cluster.scheduler_address, progress=False, log=lines.append
    )
    assert summary.computed == 4 and set(summary.statuses.values()) == {"done"}
    assert_cells_equal(out, *serial)
    report = json.loads((out / "report.json").read_text())
    assert [g["group"] for g in report["groups"]] == ["variant=published", "variant=sparse"]
    for group in report["groups"]:
        stat = group["metrics"]["best_accuracy"]
        values = [
            r["result"]["best_accuracy"]
            for r in serial[1].values()
            if f"variant={r['labels']['variant']}" == group["group"]
        ]
        assert stat["n"] == 2 and stat["mean"] == pytest.approx(np.mean(values))
        assert stat["std"] == pytest.approx(np.std(values, ddof=1))
    assert "| variant=published | 2/0/0 |" in (out / "report.md").read_text()
    image = __import__("matplotlib.image").image.imread(out / "report.png")
    assert image.shape[0] > 200 and image.shape[1] > 400 and image.std() > 0.01

    stamps = {p: p.stat().st_mtime_ns for p in (out / "cells").rglob("*") if p.is_file()}
    again = run_sweep(grid, out, scheduler="tcp://127.0.0.1:1", progress=False, log=lines.append)
    assert again.computed == 0  # no cluster needed: the unreachable address is never contacted
    assert stamps == {p: p.stat().st_mtime_ns for p in (out / "cells").rglob("*") if p.is_file()}


def test_only_runs_the_chosen_cells_first(tmp_path, cluster, serial):
    grid = write_grid(tmp_path, TINY)
    out = tmp_path / "sweep"
    quiet = {"scheduler": cluster.scheduler_address, "progress": False, "log": lambda _: None}
    with pytest.raises(AtomsparkError, match=r"--only '\*nope\*': matches no cell"):
        run_sweep(grid, out, only="*nope*", **quiet)
    first = run_sweep(grid, out, only="variant=sparse-*", **quiet)
    assert first.computed == 2
    assert sorted(first.statuses.values()) == ["done", "done", "not run", "not run"]
    assert all(s == "done" for i, s in first.statuses.items() if i.startswith("variant=sparse-"))
    rest = run_sweep(grid, out, **quiet)
    assert rest.computed == 2 and set(rest.statuses.values()) == {"done"}
    assert_cells_equal(out, *serial)


def _kill_if_checkpointed(partial: Path, attempts: Path) -> bool:
    """Freeze the cell's worker (SIGSTOP), and kill it if the cell has a checkpoint and has
    not finished: the worker cannot move on between the look and the kill, so a loaded machine
    that schedules this poller rarely only slows the test, never lets the cell slip past."""
    try:
        pid = json.loads(attempts.read_text().splitlines()[-1])["pid"]
    except (OSError, IndexError, ValueError, KeyError):
        return False  # the worker has not written its attempt line yet
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return False
    try:
        if partial.is_dir() and (partial / "checkpoint.pt").is_file():
            os.kill(pid, signal.SIGKILL)
            return True
        return False
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def test_killed_worker_loses_only_its_cell_and_a_failing_cell_is_recorded(
    tmp_path, cluster, serial, capsys
):
    grid = write_grid(tmp_path, TINY + BROKEN)
    out = tmp_path / "sweep"
    result: dict = {}

    def sweep() -> None:
        result["summary"] = run_sweep(
            grid, out, scheduler=cluster.scheduler_address, progress=False, log=lambda s: None
        )

    thread = threading.Thread(target=sweep)
    thread.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and thread.is_alive():
        for partial in (out / "cells").glob("variant=p*.partial"):
            cell_id = partial.name.removesuffix(".partial")
            if _kill_if_checkpointed(partial, sidecar_dir(out, cell_id) / ATTEMPTS):
                killed = cell_id
                break
        time.sleep(0.005)
    thread.join(timeout=180)
    assert killed is not None, "no cell was caught mid-run"
    summary = result["summary"]
    record = json.loads((cell_dir(out, killed) / "result.json").read_text())
    assert record["attempts"] == 2 and record["resumed_from_checkpoint"]
    assert_cells_equal(out, *serial)
    assert sorted(f["labels"]["seed"] for f in summary.failed) == [0, 1]
    assert all("model.d_in is 5" in f["reason"] for f in summary.failed)
    assert "## Failed cells" in (out / "report.md").read_text()
    lost = [ln for ln in capsys.readouterr().out.splitlines() if "lost the worker" in ln]
    mine = [ln for ln in lost if f"holding {killed};" in ln]
    assert len(mine) == 1, lost  # the loss and the retry, in one line per cell it held
    assert "rerunning it (attempt 2 of" in mine[0]


def test_a_cell_another_sweep_is_running_is_left_to_it(tmp_path, cluster, serial, capsys):
    """Two sweeps into one folder never run a cell at once: while another process holds a
    cell's lock, a sweep leaves that cell untouched and says who holds it; a rerun after the
    holder is gone computes it, equal to the serial run."""
    grid = write_grid(tmp_path, TINY)
    out = tmp_path / "sweep"
    plan = plan_grid(grid)
    prepare_folder(out, plan)
    held = plan.cells[0]
    quiet = {"scheduler": cluster.scheduler_address, "progress": False, "log": lambda _: None}
    with cell_lock(sidecar_dir(out, held.id)) as holder:
        assert holder is None
        first = run_sweep(grid, out, **quiet)
    assert first.computed == len(plan.cells) - 1  # the held cell is not counted as computed
    assert first.statuses[held.id] == "not run"
    assert [i for i, s in first.statuses.items() if s != "done"] == [held.id]
    assert not partial_dir(out, held.id).exists()  # nothing of it was started
    printed = capsys.readouterr().out
    assert f"left {held.id}: running in another sweep" in printed
    assert f'"pid": {os.getpid()}' in printed
    rest = run_sweep(grid, out, **quiet)
    assert rest.computed == 1 and set(rest.statuses.values()) == {"done"}
    assert_cells_equal(out, *serial)


@pytest.mark.parametrize(
    "text, message",
    [
        ('kind = "train"\nbase = "rsgn-sequence"\n[axes]\n"optimizer.lrr" = [1e-3]', "lrr"),
        ('kind = "train"\nbase = "rsgn-sequence"\n[axes]\n"model.n_nodes" = ["many"]', "int"),
        ('kind = "train"\nbase = "rsgn-sequence"\n[axes]\nepochs = 2', "a list of values"),
        ('kind = "train"\nbase = "rsgn-sequence"\nseeds = ["a"]', "list of integers"),
        ('kind = "train"\nbase = "rsgn-sequence"\nseeds = []', "0 cells"),
        ('kind = "train"\nbase = "rsgn-sequence"\n[axes]\n"data.n" = []', "0 cells"),
        ('kind = "trian"\nbase = "rsgn-sequence"', "'kind'"),
        ('kind = "train"\nbase = "no-such-config"', "no-such-config"),
        ('kind = "profile"\nseeds = [0]\n[set]\nmodel = "m.npz"', "no seed"),
        (
            'kind = "train"\nbase = "rsgn-sequence"\nseeds = [0, 1, 2]\n[axes]\nepochs = [1, 2]',
            "--force",
        ),
        ('kind = "train"\nbase = "rsgn-sequence"\nseed = 3', "unknown"),
    ],
)
def test_bad_grid_is_one_line(tmp_path, capsys, text, message):
    grid = write_grid(tmp_path, text)
    with pytest.raises(AtomsparkError, match=message.replace("-", r"\-").replace(".", r"\.")):
        plan_grid(grid, max_cells=5)
    assert main(["sweep", str(grid), "--out", str(tmp_path / "o"), "--max-cells", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err


def test_cap_is_lifted_by_force(tmp_path):
    grid = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sequence"\nseeds = [0, 1, 2]')
    assert len(plan_grid(grid, max_cells=2, force=True).cells) == 3


def test_unreachable_scheduler_is_a_clear_error_within_the_timeout(tmp_path):
    grid = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sequence"\n[set]\nepochs = 1')
    start = time.monotonic()
    with pytest.raises(AtomsparkError, match="no Dask scheduler answered within 2 s"):
        run_sweep(grid, tmp_path / "o", scheduler="tcp://127.0.0.1:1", connect_timeout=2, log=print)
    assert time.monotonic() - start < 15


def test_options_added_later_keep_finished_cells_recognised(tmp_path, monkeypatch):
    """A cell's id hashes its settings less the identity-neutral keys: adding an option whose
    default behaves as before keeps every id; setting it to another value makes a new cell."""
    from atomspark.networks.torch_path import config
    from atomspark.scenarios.sweep.grid import cell_id

    old_rules = "".join(  # the keys added later, at the values that behave as before
        f'"{key}" = {json.dumps(value)}\n' for key, value in config.IDENTITY_NEUTRAL.items()
    )
    grid = write_grid(
        tmp_path, f'kind = "train"\nbase = "rsgn-sparse"\nseeds = [0]\n[set]\n{old_rules}'
    )
    (cell,) = plan_grid(grid).cells
    before = {  # every section without the keys added later
        section: {k: v for k, v in value.items() if f"{section}.{k}" not in config.IDENTITY_NEUTRAL}
        if isinstance(value, dict) else value
        for section, value in cell.params.items()
    }  # fmt: skip
    assert cell.id == cell_id(cell.labels, before)  # the settings as they were before the keys
    default = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sparse"\nseeds = [0]', "d.toml")
    released = plan_grid(default).cells[0]  # today's defaults (released rules) are new settings
    assert released.id != cell.id
    moved = write_grid(
        tmp_path, 'kind = "train"\nbase = "rsgn-sparse"\nseeds = [0]\n'
        '[set]\n"plasticity.homeostasis_signal" = "events"', "b.toml",
    )  # fmt: skip
    assert plan_grid(moved).cells[0].id != cell.id


def test_folder_of_another_grid_is_refused_with_what_differs(tmp_path):
    first = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sequence"\nseeds = [0]')
    out = tmp_path / "o"
    prepare_folder(out, plan_grid(first))
    second = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sparse"\nseeds = [0]', "b.toml")
    with pytest.raises(AtomsparkError, match=r"different grid \(variants\[base\]\.base"):
        prepare_folder(out, plan_grid(second))
    other = tmp_path / "not-a-sweep"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(AtomsparkError, match="not a sweep folder"):
        prepare_folder(other, plan_grid(first))


def test_report_of_a_sweep_with_nothing_finished_yet(tmp_path):
    grid = write_grid(tmp_path, TINY)
    out = tmp_path / "o"
    with pytest.raises(AtomsparkError, match="not a sweep folder"):
        run_sweep(grid, out, report_only=True, log=print)
    prepare_folder(out, plan_grid(grid))
    summary = run_sweep(grid, out, report_only=True, log=print)
    assert summary.computed == 0 and set(summary.statuses.values()) == {"not run"}
    assert "| variant=sparse | 0/0/2 |" in (out / "report.md").read_text()


def test_profile_and_compare_cells_on_a_trained_cell(tmp_path, serial):
    """The other kinds, serially: a profile axis over two chips prices the same engine run
    differently; a compare cell reports the engine's agreement with torch."""
    serial_out, records = serial
    model = cell_dir(serial_out, next(iter(records))) / "model.npz"
    grid = write_grid(
        tmp_path,
        f'kind = "profile"\n[set]\nmodel = "{model}"\ninput = "builtin:4"\n'
        '[axes]\nhardware = ["loihi2", "loihi1-davies"]\n',
    )
    plan = plan_grid(grid)
    loihi2, loihi1 = (execute_cell("profile", c, str(tmp_path / "p")) for c in plan.cells)
    assert loihi2["status"] == loihi1["status"] == "done"
    assert loihi2["result"]["events_per_sample"] == loihi1["result"]["events_per_sample"] > 0
    energy = [r["result"]["costs"]["neuromorphic"]["energy_per_sample_j"] for r in (loihi2, loihi1)]
    assert energy[0] > 0 and energy[1] > 0 and energy[0] != energy[1]

    grid = write_grid(
        tmp_path,
        f'kind = "compare"\n[set]\nmodel = "{model}"\nsamples = 4\ndevice = "cpu"\n',
        "cmp.toml",
    )
    (cell,) = plan_grid(grid).cells
    record = execute_cell("compare", cell, str(tmp_path / "c"))
    assert record["status"] == "done" and record["result"]["samples"] == 4
    agreement = record["result"]["backends"]["engine_float"]["agreement_vs_torch"]
    assert agreement["decision_agreement"] == 1.0


def test_bench_cell_equals_the_bench_runners_own_cell(tmp_path):
    """kind = "bench": one family x model x seed per cell, equal to `atomspark bench`'s cell."""
    pytest.importorskip("atomspark.scenarios.bench")
    from atomspark.scenarios.bench.family import override_sizes
    from atomspark.scenarios.bench.registry import get_family
    from atomspark.scenarios.bench.runner import run_cell
    from atomspark.scenarios.bench.validation import prepare_data

    grid = write_grid(
        tmp_path,
        'kind = "bench"\nbase = "fn1d"\nseeds = [1]\n[set]\nquick = true\ndevice = "cpu"\n'
        'model = "Trivial"\n"sizes.n_train" = 100\n',
    )
    (cell,) = plan_grid(grid).cells
    record = execute_cell("bench", cell, str(tmp_path / "o"))
    assert record["status"] == "done", record.get("reason")
    family = get_family("fn1d")
    size = override_sizes(family.sizes(True), {"n_train": 100})
    data = prepare_data(family, size, 1)
    direct = run_cell(
        family, size, data, "Trivial", family.models(size, data)["Trivial"], 1, "cpu", False
    )
    for key in ("metrics", "val", "data"):
        assert record["result"][key] == json.loads(json.dumps(direct[key])), key
    bad = write_grid(
        tmp_path, 'kind = "bench"\nbase = "fn1d"\n[set]\n"sizes.n_trian" = 5\n', "b.toml"
    )
    with pytest.raises(AtomsparkError, match="n_trian.*unknown size"):
        plan_grid(bad)


def test_an_http_server_is_not_a_dask_scheduler(tmp_path, capsys):
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    grid = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sequence"\n[set]\nepochs = 1')
    out = tmp_path / "o"
    address = f"tcp://127.0.0.1:{server.server_address[1]}"
    try:
        start = time.monotonic()
        code = main(["sweep", str(grid), "--out", str(out), "--scheduler", address,
                     "--connect-timeout", "1"])  # fmt: skip
        assert time.monotonic() - start < 10
    finally:
        server.shutdown()
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--scheduler {address}: is not a Dask scheduler" in err
    assert not out.exists()  # refused before anything was written


def test_a_port_that_speaks_first_but_not_dask_is_refused(tmp_path):
    import socket
    import threading

    from atomspark.scenarios.sweep.connect import probe_scheduler

    listener = socket.create_server(("127.0.0.1", 0))

    def banner() -> None:
        conn, _ = listener.accept()
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")  # what a proxy may send at once
        conn.close()

    threading.Thread(target=banner, daemon=True).start()
    with pytest.raises(AtomsparkError, match="is not a Dask scheduler"):
        probe_scheduler(f"127.0.0.1:{listener.getsockname()[1]}", 2)
    listener.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--connect-timeout", "-1", "--scheduler", "tcp://127.0.0.1:1"], "--connect-timeout: must be finite and > 0"),
        (["--workers", "0"], "--workers: must be >= 1"),
        (["--workers", "1", "--memory-limit", "lots"], "--memory-limit 'lots'"),
    ],
)  # fmt: skip
def test_bad_cluster_arguments_leave_nothing_behind(tmp_path, capsys, args, message):
    grid = write_grid(tmp_path, 'kind = "train"\nbase = "rsgn-sequence"\n[set]\nepochs = 1')
    out = tmp_path / "o"
    assert main(["sweep", str(grid), "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err
    assert not out.exists()


def test_two_sweeps_of_one_folder_count_each_cell_once(tmp_path, cluster, serial):
    """Concurrent sweeps (two processes, one scheduler): every cell is computed by exactly one
    of them, and their "computed this time" counts add up to the grid."""
    import re
    import subprocess
    import sys

    grid = write_grid(tmp_path, TINY)
    out = tmp_path / "sweep"
    prepare_folder(out, plan_grid(grid))
    argv = [sys.executable, "-m", "atomspark.scenarios.cli.main", "sweep", str(grid)]
    argv += ["--out", str(out), "--scheduler", cluster.scheduler_address]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    texts = [p.communicate(timeout=600)[0] for p in procs]
    counts = [int(re.search(r"\((\d+) computed this time\)", t).group(1)) for t in texts]
    quiet = {"scheduler": cluster.scheduler_address, "progress": False, "log": lambda _: None}
    final = run_sweep(grid, out, **quiet)  # whatever one left to the other is done now
    assert set(final.statuses.values()) == {"done"}
    assert sum(counts) + final.computed == 4, texts
    assert_cells_equal(out, *serial)


def _ctrl_c_as_in_a_terminal() -> None:
    """SIGINT back to its default in the child: a test runner's worker may ignore it (as
    pytest-xdist's do), and an ignored SIGINT is inherited, so Ctrl-C would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_prints_only_the_sweeps_clean_lines(tmp_path):
    """Ctrl-C in a terminal reaches the whole process group, the LocalCluster's workers too:
    the output is the sweep's own lines, without the workers' tracebacks."""
    import subprocess
    import sys

    short = 'kind = "train"\nbase = "rsgn-sequence"\n[set]\ndevice = "cpu"\n"data.n" = 120\n'
    grid = write_grid(tmp_path, short + '[[variants]]\nname = "a"\nset = { epochs = 1 }\n'
                      '[[variants]]\nname = "b"\nset = { epochs = 4000 }\n')  # fmt: skip
    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "atomspark.scenarios.cli.main", "sweep", str(grid)]
    proc = subprocess.Popen(
        [*argv, "--workers", "2", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list(out.glob("cells/variant=a*/result.json")):
        time.sleep(0.2)  # until one worker is idle (its cell done) and the other busy
    time.sleep(2.0)
    os.killpg(proc.pid, signal.SIGINT)
    text, _ = proc.communicate(timeout=180)
    lines = text.strip().splitlines()
    assert proc.returncode == 130, text
    assert all(line.startswith("[sweep] ") for line in lines), text
    assert lines[-1].startswith("[sweep] interrupted: finished cells are kept")
