"""Probes, as an attacker and a careless user would run them: the command line in a subprocess
on crafted files made here in tmp_path. Each fails on a traceback, a signal, a hang, a user file
deleted or changed, two runs mixed in one folder, or a partial run that looks finished.

Classes: run folders (a refused --out is left byte for byte; temporaries of atomspark only),
one writer per folder (busy folder refused naming the process; a dead writer's lock recovered),
runs complete or visibly incomplete (disk full, kill; advice and --resume agree; a torn
metrics.jsonl), and user-given paths and configs (FIFO, deep nesting, non-UTF-8, oversized,
object arrays, truncated .npz). Checkpoints that carry code: tests/test_no_code_from_data.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from atomspark.sim.core import AtomsparkError

TOML = (
    'task = "rsgn-sequence"\ndtype = "float64"\nepochs = 3\nbatch_size = 16\n'
    'checkpoint_every = 1\ndevice = "cpu"\n'
    '[data]\nkind = "long-range"\nn = 48\nlength = 16\ndim = 4\nn_classes = 3\n'
    "[model]\nn_nodes = 10\nd_hidden = 4\naffinity_rank = 2\nn_steps = 2\n"
)
CLI = [sys.executable, "-m", "atomspark.scenarios.cli.main"]


def cli(*argv: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `atomspark ARGV`; a hang fails the probe (TimeoutExpired)."""
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def refused(result: subprocess.CompletedProcess, *needles: str) -> str:
    """The one line of a refusal: exit 2, no signal, no traceback; it names each needle."""
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lines = [ln for ln in result.stderr.splitlines() if ": error: " in ln]
    assert len(lines) == 1, result.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def snapshot(folder: Path) -> dict:
    """Every entry's name, kind, bytes and times (the folder's own too)."""
    st = folder.stat()
    state = {".": (st.st_mode, st.st_mtime_ns)}
    for p in sorted(folder.rglob("*")):
        s = p.lstat()
        state[str(p.relative_to(folder))] = (
            s.st_mode,
            s.st_mtime_ns,
            p.read_bytes() if p.is_file() and not p.is_symlink() else None,
        )
    return state


@pytest.fixture(scope="module")
def vn_model(tmp_path_factory) -> Path:
    from atomspark.networks.vn import VNModel

    path = tmp_path_factory.mktemp("model") / "vn.npz"
    VNModel.random(12, [(16, 8)], seed=0).save(path)
    return path


def _profile(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "profile",
        str(model),
        "--input",
        "builtin:1",
        "--steps",
        "5",
        "--out",
        str(out),
        *extra,
    ]


# --- never touch what is not ours ---------------------------------------------------------------


def test_a_refused_out_is_left_byte_for_byte(tmp_path, vn_model):
    user = tmp_path / "userdir"
    user.mkdir()
    (user / "data.txt").write_text("mine")
    (user / ".notes.tmp").write_text("my notes")
    (user / ".draft.atomspark-tmp-x.tmp").write_text("named like ours, but not a run folder")
    before = snapshot(user)
    refused(cli(*_profile(vn_model, user), cwd=tmp_path), "not an atomspark run folder")
    assert snapshot(user) == before


# --- one writer per run folder ------------------------------------------------------------------


def test_a_busy_folder_is_refused_naming_the_writer_and_a_dead_ones_lock_recovered(
    tmp_path, vn_model
):
    out = tmp_path / "run"
    hold = (
        "import sys, time; from atomspark.sim.run_folder import prepare_run_folder; "
        "prepare_run_folder(sys.argv[1], 'profile'); print('held', flush=True); time.sleep(600)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(out)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(out)
        line = refused(
            cli(*_profile(vn_model, out, "--overwrite"), cwd=tmp_path),
            f"process {holder.pid}",
            "`atomspark profile`",
            "is writing to it",
        )
        assert "choose another folder" in line
        assert snapshot(out) == before  # the second run wrote nothing
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (out / ".atomspark-run.lock").exists()  # the dead writer's lock file stays
    done = cli(*_profile(vn_model, out, "--overwrite"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    marker = json.loads((out / "atomspark-run.json").read_text())
    assert marker["state"] == "finished"
    assert not (out / ".atomspark-run.lock").exists()


# --- complete or visibly incomplete ---------------------------------------------------------------


@pytest.mark.torch
def test_a_killed_train_is_incomplete_and_the_advice_names_what_works(tmp_path):
    pytest.importorskip("torch")
    config = tmp_path / "long.toml"
    config.write_text(TOML.replace("epochs = 3", "epochs = 400"))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [*CLI, "train", str(config), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not (out / "checkpoint.pt").exists():
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    marker = json.loads((out / "atomspark-run.json").read_text())
    assert marker["state"] == "running"  # never "finished"
    refused(
        cli("train", str(config), "--out", str(out), cwd=tmp_path),
        "incomplete `atomspark train` run",
        "missing",
        "model.npz",
        "--resume",
    )
    (out / "checkpoint.pt").unlink()  # as if killed before its first checkpoint
    line = refused(
        cli("train", str(config), "--out", str(out), cwd=tmp_path), "incomplete", "--overwrite"
    )
    assert "--resume" not in line
    refused(
        cli("train", str(config), "--out", str(out), "--resume", cwd=tmp_path),
        "nothing to resume",
        "--overwrite",
    )


@pytest.mark.torch
def test_resume_survives_a_torn_metrics_log(tmp_path):
    pytest.importorskip("torch")
    from atomspark.networks.torch_path.training import train
    from atomspark.sim.run_folder import release_run

    config = tmp_path / "tiny.toml"
    config.write_text(TOML)
    out = tmp_path / "run"
    train(str(config), out, progress=False, max_steps=4)
    release_run(out)
    with open(out / "metrics.jsonl", "a") as log:
        log.write('{"type": "step", "epoch": 0, "loss": 1.0, "accuracy": 0.5}\n')  # no step
        log.write('["not", "a", "row"]\n{"type": "step", "st')  # a torn last line
    done = cli("train", str(config), "--out", str(out), "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if r["type"] == "step"] == list(range(1, 10))
    assert json.loads((out / "atomspark-run.json").read_text())["state"] == "finished"


def _in_full_disk(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a shell script with ./full a 64 KiB tmpfs (a private mount namespace)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare (util-linux) to mount a small tmpfs")
    probe = subprocess.run(
        [unshare, "-rm", "sh", "-c", "mkdir -p full && mount -t tmpfs -o size=64k tmpfs full"],
        cwd=cwd,
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("this machine cannot mount a tmpfs in a user namespace")
    return subprocess.run(
        [unshare, "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs full && {script}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_full_disk_is_one_line_and_leaves_a_visibly_incomplete_run(tmp_path, vn_model):
    run = " ".join([*CLI, *_profile(vn_model, Path("full/run"))])
    done = _in_full_disk(f"{run}; echo rc=$?; cat full/run/atomspark-run.json; {run}", tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [ln for ln in done.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 2, done.stderr[-3000:]
    assert "full/run: no space left on the device" in errors[0]
    assert re.search(r"\(needs [0-9.]+ (bytes|KiB|MiB), [0-9.]+ (bytes|KiB) free\)", errors[0])
    assert "incomplete" in errors[0] and "--overwrite" in errors[0]
    assert "rc=2" in done.stdout
    # marked failed, or, when even the marker found no room, still "running": never finished
    assert '"state": "failed"' in done.stdout or '"state": "running"' in done.stdout
    assert "holds an incomplete `atomspark profile` run" in errors[1]


@pytest.mark.parametrize("error", [RuntimeError("boom"), AtomsparkError("bad value")])
def test_a_run_that_errors_is_marked_failed_and_its_folder_freed(
    tmp_path, vn_model, monkeypatch, capsys, error
):
    """A command that dies after its folder was prepared leaves a run marked failed, with the
    reason, and lets go of the lock; a rerun names it incomplete and --overwrite redoes it."""
    import atomspark.scenarios.runs.profile as profile_run
    from atomspark.scenarios.cli.main import main
    from atomspark.sim import run_lock

    def broken(*args, **kwargs):
        raise error

    out = tmp_path / "run"
    monkeypatch.setattr(profile_run, "plot_raster", broken)
    if isinstance(error, AtomsparkError):
        assert main(_profile(vn_model, out)) == 2
    else:
        with pytest.raises(RuntimeError):
            main(_profile(vn_model, out))
    marker = json.loads((out / "atomspark-run.json").read_text())
    assert marker["state"] == "failed" and str(error) in marker["reason"]
    assert run_lock.held_runs() == [] and not (out / run_lock.LOCK_FILE).exists()
    capsys.readouterr()
    assert main(_profile(vn_model, out)) == 2
    line = capsys.readouterr().err
    assert "holds an incomplete `atomspark profile` run (it failed; missing raster.png" in line
    monkeypatch.undo()
    assert main(_profile(vn_model, out, "--overwrite")) == 0
    assert json.loads((out / "atomspark-run.json").read_text())["state"] == "finished"


def test_the_metrics_log_names_the_bytes_a_full_disk_refused():
    from atomspark.networks.torch_path.metrics_log import MetricsAppender
    from atomspark.sim.core import DiskFullError

    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    with pytest.raises(DiskFullError) as caught:
        with MetricsAppender(Path("/dev/full")) as log:
            log.write("x" * 100 + "\n")
            log.flush()
    assert caught.value.needed == 101


def test_a_full_disk_names_the_space_the_write_needs(tmp_path):
    """DiskFullError carries the size of the file an atomic write was writing."""
    import errno

    from atomspark.sim import core
    from atomspark.sim.run_folder import disk_full_message

    def full(tmp):
        raise OSError(errno.ENOSPC, "No space left on device", tmp)

    with pytest.raises(core.DiskFullError) as caught:
        core.atomic_write_with(tmp_path / "big.json", full, size=3 * 1024 * 1024)
    assert caught.value.needed == 3 * 1024 * 1024 and caught.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []  # no temporary left
    line = disk_full_message(caught.value)
    assert "writing big.json (needs 3.0 MiB, " in line and " free)" in line


@pytest.mark.torch
def test_after_a_full_disk_train_the_advice_and_resume_agree(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "tiny.toml").write_text(TOML)
    train = " ".join([*CLI, "train", "tiny.toml", "--out", "full/run"])
    script = f"{train}; {train}; ls full/run; {train} --resume"
    done = _in_full_disk(script, tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    errors = [ln for ln in done.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 3, done.stderr[-3000:]
    assert "no space left on the device" in errors[0] and "(needs " in errors[0]
    resumable = "checkpoint.pt" in done.stdout.split()
    assert ("--resume" in errors[0]) == resumable and ("--resume" in errors[1]) == resumable
    assert "incomplete" in errors[1]
    if resumable:  # the resume it advised starts (and meets the full disk again)
        assert "resuming at step" in done.stdout
        assert "no space left" in errors[2]
    else:
        assert "nothing to resume" in errors[2]


# --- user-given paths and configs -----------------------------------------------------------------


def _deep_json(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize(
    "name, make, needle",
    [
        ("fifo.json", lambda p: os.mkfifo(p), "not a regular file"),
        ("deep.json", lambda p: p.write_text(_deep_json(100_000)), "nested more than"),
        ("deep32.json", lambda p: p.write_text(_deep_json(40)), "nested more than"),
        ("latin1.json", lambda p: p.write_bytes(b'{"kind": "dense\xe9"}'), "not UTF-8"),
        ("big.json", lambda p: p.write_text(" " * (5 << 20) + "{}"), "bytes"),
        ("folder.json", lambda p: p.mkdir(), "is a folder"),
    ],
)
def test_hardware_files_that_are_not_plain_json_are_one_line(
    tmp_path, vn_model, name, make, needle
):
    path = tmp_path / name
    make(path)
    out = tmp_path / "out"
    result = cli(*_profile(vn_model, out, "--hardware", str(path)), cwd=tmp_path, timeout=120)
    refused(result, "hardware file", needle)
    assert not out.exists()


@pytest.mark.torch
@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda p: os.mkfifo(p), "not a regular file"),
        (lambda p: p.write_text("a = " + _deep_json(100_000)), "nested more than"),
        (lambda p: p.write_bytes(b'task = "rsgn-sequence\xff"\n'), "not UTF-8"),
    ],
)
def test_train_configs_that_are_not_plain_toml_are_one_line(tmp_path, make, needle):
    path = tmp_path / "config.toml"
    make(path)
    out = tmp_path / "out"
    refused(cli("train", str(path), "--out", str(out), cwd=tmp_path, timeout=120), needle)
    assert not out.exists()


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["objects", "truncated"])
def test_compare_data_that_is_not_numeric_npz_is_one_line(tmp_path, vn_model, kind):
    pytest.importorskip("torch")
    data = tmp_path / "data.npz"
    if kind == "objects":
        np.savez(data, x=np.array([{"a": 1}, None], dtype=object))
    else:
        np.savez(data, x=np.zeros((4, 12)))
        data.write_bytes(data.read_bytes()[:200])
    argv = ["compare", str(vn_model), "--data", str(data), "--samples", "1", "--steps", "5"]
    refused(cli(*argv, "--no-fixed", "--out", str(tmp_path / "out"), cwd=tmp_path), "data file")
