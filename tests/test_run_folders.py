"""Run folders are never damaged: refuse/resume/overwrite, resume config rules, no duplicated
metrics rows, stale temporaries, umask, Ctrl-C, and the Numba cache location."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.numba_cache import choose_cache_dir
from atomspark.sim.run_folder import RUN_MARKER, finish_run, prepare_run_folder

TINY = {
    "task": "rsgn-sequence",
    "dtype": "float64",
    "epochs": 2,
    "batch_size": 16,
    "checkpoint_every": 2,
    "data": {"kind": "long-range", "n": 48, "length": 16, "dim": 4, "n_classes": 3},
    "model": {"n_nodes": 10, "d_hidden": 4, "affinity_rank": 2, "n_steps": 2},
}


def _cfg(**changes) -> dict:
    cfg = json.loads(json.dumps(TINY))
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        if sub:
            cfg[section][sub] = value
        else:
            cfg[section] = value
    return cfg


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


# --- the guard itself (no torch) ------------------------------------------------------------------


def test_guard_refuses_foreign_and_existing_runs(tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(AtomsparkError, match="not an atomspark run folder"):
        prepare_run_folder(foreign, "demo")
    prepare_run_folder(foreign, "demo", "overwrite")  # deletes only the demo's own outputs
    assert (foreign / "notes.txt").read_text() == "keep me"

    run = prepare_run_folder(tmp_path / "run", "demo")
    (run / "summary.json").write_text("{}")
    (run / "keep.txt").write_text("user file")
    finish_run(run)
    with pytest.raises(AtomsparkError, match=r"already holds .*--overwrite"):
        prepare_run_folder(run, "demo")
    with pytest.raises(AtomsparkError, match="atomspark demo` run; choose another"):
        prepare_run_folder(run, "profile")
    with pytest.raises(AtomsparkError, match="atomspark demo` run"):
        prepare_run_folder(run, "profile", "overwrite")
    prepare_run_folder(run, "demo", "overwrite")
    finish_run(run)  # the lock file goes with the run
    assert sorted(p.name for p in run.iterdir()) == sorted([RUN_MARKER, "keep.txt"])


def test_guard_out_is_a_file_or_under_a_file(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(AtomsparkError, match="is a file, not a folder"):
        prepare_run_folder(f, "demo")
    with pytest.raises(AtomsparkError, match="cannot create it"):
        prepare_run_folder(f / "sub", "demo")


def test_stale_temporaries_are_removed_and_files_follow_the_umask(tmp_path):
    run = prepare_run_folder(tmp_path / "run", "demo")
    (run / ".checkpoint.pt.atomspark-tmp-abc123.tmp").write_bytes(b"half a file")
    (run / ".notes.tmp").write_bytes(b"the user's")  # not a name atomspark's writes use
    with pytest.raises(AtomsparkError, match="incomplete `atomspark demo` run"):
        prepare_run_folder(run, "demo")
    assert (run / ".checkpoint.pt.atomspark-tmp-abc123.tmp").exists()  # refused: nothing touched
    (run / ".notes.tmp").unlink()
    prepare_run_folder(run, "demo")  # only the marker and a stale temporary: still "empty"
    assert not list(run.glob(".*.tmp"))
    old = os.umask(0o022)
    try:
        atomic_write_text(run / "a.json", "{}")
        assert (run / "a.json").stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        atomic_write_text(run / "b.json", "{}")
        assert (run / "b.json").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


def test_numba_cache_falls_back_then_turns_off(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("x")  # nothing can be created below a file, even as root
    assert choose_cache_dir([tmp_path / "ok"], tmp_path / "tmp") == ("default", None)
    assert choose_cache_dir([blocked / "a"], tmp_path / "tmp") == ("fallback", tmp_path / "tmp")
    assert choose_cache_dir([blocked / "a"], blocked / "b") == ("off", None)


def _as_nobody(argv: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run argv as user nobody (setpriv), or skip saying why this machine cannot."""
    if os.geteuid() != 0:
        pytest.skip("permission cases need to drop privileges: the suite does not run as root")
    setpriv = "/usr/bin/setpriv"
    if not os.path.exists(setpriv):
        pytest.skip("permission cases need setpriv (util-linux) to run as nobody")
    cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    probe = subprocess.run(
        [*cmd[:4], sys.executable, "-c", "import atomspark.sim"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    if probe.returncode != 0:
        pytest.skip(
            "user nobody cannot run this environment's Python or read the source tree here "
            f"({probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else 'no message'})"
        )
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)


@pytest.fixture
def root_owned_folder():
    """A 0755 folder in the temporary directory: readable, not writable, by other users."""
    folder = Path(tempfile.mkdtemp(prefix="atomspark-perm-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_as_nobody_unwritable_out_and_no_writable_home(root_owned_folder):
    """As user nobody with HOME not writable: the import works (Numba and Matplotlib caches
    fall back) and an unwritable --out is one line, for a folder to create and an existing one."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["HOME"] = str(root_owned_folder)
    targets = [root_owned_folder / "out", root_owned_folder]
    code = (
        "import sys; from atomspark.scenarios.cli.main import main; import atomspark.sim.kernels.common; "
        f"sys.exit(max(main(['demo', '--out', str(t)]) for t in {[str(t) for t in targets]!r}))"
    )
    result = _as_nobody([sys.executable, "-c", code], root_owned_folder, env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Matplotlib created" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 2, lines  # one line per refused call, nothing else
    for line, target in zip(lines, targets):
        assert line.startswith(f"atomspark demo: error: --out {target}:")
        assert "permission denied" in line and "choose a writable folder" in line


# --- training runs (torch) ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def training():
    pytest.importorskip("torch")
    from atomspark.networks.torch_path import training

    return training


@pytest.mark.torch
def test_rerun_is_refused_and_overwrite_starts_clean(training, tmp_path):
    out = tmp_path / "run"
    training.train(_cfg(), out, progress=False)
    before = (out / "checkpoint.pt").read_bytes()
    with pytest.raises(AtomsparkError, match="--resume to continue it, --overwrite"):
        training.train(_cfg(), out, progress=False)
    assert (out / "checkpoint.pt").read_bytes() == before  # untouched
    training.train(_cfg(epochs=1), out, overwrite=True, progress=False, max_steps=1)
    assert not (out / "model.npz").exists() and not (out / "final_metrics.json").exists()
    assert [r["step"] for r in _rows(out)] == [1]


@pytest.mark.torch
def test_resume_refuses_changes_that_change_the_run(training, tmp_path):
    training.train(_cfg(), tmp_path, progress=False, max_steps=2)
    for changes, shown in [
        ({"optimizer": {"lr": 0.01}}, "optimizer.lr 0.003 -> 0.01"),
        ({"data__n": 64}, "data.n 48 -> 64"),
        ({"model__mode": "sparse", "model__k_nearest": 3}, "model.mode 'published' -> 'sparse'"),
        ({"epochs": 1}, "epochs 2 -> 1"),
    ]:
        with pytest.raises(AtomsparkError, match=shown.replace(".", r"\.")):
            training.train(_cfg(**changes), tmp_path, resume=True, progress=False)
    training.train(_cfg(checkpoint_every=3), tmp_path, resume=True, progress=False)


@pytest.mark.torch
def test_resume_keeps_one_row_per_step_and_extends_the_cosine(training, tmp_path):
    training.train(_cfg(checkpoint_every=2), tmp_path, progress=False, max_steps=5)
    assert [r["step"] for r in _rows(tmp_path) if r["type"] == "step"] == [1, 2, 3, 4, 5]
    training.train(_cfg(epochs=4), tmp_path, resume=True, progress=False)
    rows = _rows(tmp_path)
    steps = [r["step"] for r in rows if r["type"] == "step"]
    assert steps == list(range(1, 13))  # rows 5 was written after the checkpoint at 4: once only
    assert [r["epoch"] for r in rows if r["type"] == "eval"] == [1, 2, 3, 4]
    lrs = [r["lr"] for r in rows if r["type"] == "step"]
    assert all(b <= a + 1e-15 for a, b in zip(lrs, lrs[1:])), "learning rate rose after resume"
    assert lrs[3] > lrs[4] > lrs[-1] > 0.0


@pytest.mark.torch
def test_extending_a_run_whose_cosine_has_ended_is_refused(training, tmp_path):
    training.train(_cfg(epochs=1), tmp_path, progress=False)
    with pytest.raises(AtomsparkError, match=r"epochs 1 -> 3: the run's cosine schedule has ended"):
        training.train(_cfg(epochs=3), tmp_path, resume=True, progress=False)


@pytest.mark.torch
def test_resume_names_a_checkpoint_from_an_older_schedule_format(training, tmp_path):
    from atomspark.networks.torch_path.checkpoint_file import read_checkpoint, write_checkpoint

    training.train(_cfg(), tmp_path, progress=False, max_steps=2)
    state = read_checkpoint(tmp_path / "checkpoint.pt")
    state["scheduler"] = {"T_max": 6, "eta_min": 0.0, "last_epoch": 2}  # a CosineAnnealingLR's
    write_checkpoint(tmp_path / "checkpoint.pt", state)
    with pytest.raises(AtomsparkError, match="older atomspark.*--overwrite"):
        training.train(_cfg(), tmp_path, resume=True, progress=False)


@pytest.mark.torch
def test_ctrl_c_prints_one_line_with_the_resume_command(tmp_path):
    pytest.importorskip("torch")
    config = tmp_path / "long.toml"
    config.write_text(
        'task = "rsgn-sequence"\nepochs = 400\nbatch_size = 8\ncheckpoint_every = 3\n'
        '[data]\nkind = "long-range"\nn = 48\nlength = 16\ndim = 4\nn_classes = 3\n'
        "[model]\nn_nodes = 10\nd_hidden = 4\naffinity_rank = 2\nn_steps = 2\n"
    )
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "atomspark.scenarios.cli.main",
            "train",
            str(config),
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "checkpoint.pt").exists():
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    last = err.strip().splitlines()[-1].split("\r")[-1].strip()
    assert "Traceback" not in err
    assert last.startswith("atomspark train: interrupted at step ")
    assert f"resume with: atomspark train {config} --out {out} --resume" in last
    step = int(last.split("interrupted at step ")[1].split(";")[0])
    assert f"last checkpoint at step {step}" in last  # the interrupt itself checkpoints
    assert not list(out.glob(".*.tmp"))


def _verb_flags(verb: str) -> set[str]:
    """The option strings `atomspark VERB` accepts."""
    import argparse

    from atomspark.scenarios.cli.main import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {flag for action in subs.choices[verb]._actions for flag in action.option_strings}


@pytest.mark.parametrize("verb", ["demo", "profile", "compare", "export", "train"])
def test_advice_names_only_flags_the_command_has(tmp_path, capsys, verb):
    """Each verb run into a folder holding its own earlier run: the refusal's advice names
    --overwrite, and --resume only where the verb has it."""
    import re

    from atomspark.networks.vn import VNModel
    from atomspark.scenarios.cli.main import main

    if verb in ("demo", "compare", "train"):
        pytest.importorskip("torch")
    model = tmp_path / "vn.npz"
    VNModel.random(12, [(16, 8)], seed=0).save(model)
    run = prepare_run_folder(tmp_path / "run", verb)
    earlier = "checkpoint.pt" if verb == "train" else "earlier-output.json"  # train: resumable
    (run / earlier).write_text("{}")
    finish_run(run)
    argv = {
        "demo": ["demo"],
        "profile": ["profile", str(model), "--input", "builtin:1", "--steps", "5"],
        "compare": ["compare", str(model), "--samples", "1", "--steps", "5", "--no-fixed"],
        "export": ["export", str(model), "--to", "networkx"],
        "train": ["train", "vn-dictionary"],
    }[verb]
    assert main([*argv, "--out", str(run)]) == 2
    message = capsys.readouterr().err.strip()
    named = set(re.findall(r"--[a-z][a-z-]+", message.split(": error: ", 1)[1]))
    assert "--overwrite" in named, message
    assert named <= _verb_flags(verb), (named - _verb_flags(verb), message)
    assert ("--resume" in named) == (verb == "train"), message
    assert sorted(p.name for p in run.iterdir()) == sorted(["atomspark-run.json", earlier])


def test_resume_of_a_missing_folder_creates_nothing(tmp_path):
    with pytest.raises(AtomsparkError, match="no such folder, so no run to resume"):
        prepare_run_folder(tmp_path / "never" / "made", "train", "resume")
    assert not (tmp_path / "never").exists()
