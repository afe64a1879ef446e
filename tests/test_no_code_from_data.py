"""No file a user opens can run code: checkpoints are read by torch's weights-only reader, the
only unpickling loader is the explicit trusted converter, and a sweep never resumes a planted
checkpoint. Every crafted file is made here, in tmp_path."""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Patterns that load code from data, and the one file allowed to hold each (the converter the
# user runs with --trust).
FORBIDDEN = {
    r"weights_only\s*=\s*False": {"networks/torch_path/checkpoint_convert.py"},
    r"allow_pickle\s*=\s*True": set(),
    r"\bpickle\.loads?\s*\(": set(),
    r"\bpickle\.Unpickler\b": set(),
    r"\b(?:cloudpickle|dill|joblib|marshal|shelve)\.(?:loads?|open)\s*\(": set(),
    r"\byaml\.load\s*\(": set(),
}
CODE_FOLDERS = ("sim", "networks", "mapping", "scenarios", "benchmarks", "tools")


def _code_files():
    for folder in CODE_FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_no_loader_unpickles_outside_the_trusted_converter():
    found = []
    for path in _code_files():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        for pattern, allowed in FORBIDDEN.items():
            if rel not in allowed and re.search(pattern, text):
                found.append(f"{rel}: {pattern}")
        for call in re.finditer(r"torch\.load\s*\(", text):
            args = text[call.end() : call.end() + 200]
            if (
                rel not in FORBIDDEN[r"weights_only\s*=\s*False"]
                and "weights_only=True" not in args
            ):
                found.append(f"{rel}: torch.load without weights_only=True")
    assert not found, found
    assert (ROOT / "networks/torch_path/checkpoint_convert.py").is_file()  # the named exception


class _Payload:
    """Unpickling this runs a shell command that creates a file (the proof that code ran)."""

    def __init__(self, proof: Path):
        self.proof = proof

    def __reduce__(self):
        return (os.system, (f"touch {self.proof}",))


def _with_digest(payload: bytes) -> bytes:
    from atomspark.networks.torch_path.checkpoint_file import MAGIC

    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def _torch_save(obj) -> bytes:
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.torch
@pytest.mark.parametrize("digest", [True, False])
def test_a_checkpoint_holding_code_is_refused_without_running_it(tmp_path, digest):
    from atomspark.networks.torch_path.checkpoint_file import read_checkpoint
    from atomspark.sim.core import AtomsparkError

    proof = tmp_path / "code-ran"
    payload = _torch_save({"format": 1, "x": _Payload(proof)})
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(_with_digest(payload) if digest else payload)
    with pytest.raises(AtomsparkError, match="atomspark convert-checkpoint --trust") as info:
        read_checkpoint(path)
    assert "\n" not in str(info.value)
    assert not proof.exists()


TINY = {
    "task": "rsgn-sequence",
    "dtype": "float64",
    "epochs": 2,
    "batch_size": 16,
    "checkpoint_every": 1,
    "data": {"kind": "long-range", "n": 48, "length": 16, "dim": 4, "n_classes": 3},
    "model": {"n_nodes": 10, "d_hidden": 4, "affinity_rank": 2, "n_steps": 2},
}


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "atomspark.scenarios.cli.main", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(
        'task = "rsgn-sequence"\ndtype = "float64"\nepochs = 2\nbatch_size = 16\n'
        'checkpoint_every = 1\ndevice = "cpu"\n'
        '[data]\nkind = "long-range"\nn = 48\nlength = 16\ndim = 4\nn_classes = 3\n'
        "[model]\nn_nodes = 10\nd_hidden = 4\naffinity_rank = 2\nn_steps = 2\n"
    )
    return path


@pytest.mark.torch
def test_a_real_checkpoint_with_a_planted_object_does_not_resume(tmp_path, config):
    """A real run's checkpoint plus one malicious object and a recomputed digest: `train
    --resume` refuses in one line and the payload never runs; the file is left as it was."""
    from atomspark.networks.torch_path.checkpoint_file import read_checkpoint
    from atomspark.networks.torch_path.training import train

    out = tmp_path / "run"
    train(TINY, out, progress=False, max_steps=2)
    state = read_checkpoint(out / "checkpoint.pt")
    proof = tmp_path / "code-ran"
    state["extra"] = _Payload(proof)
    planted = _with_digest(_torch_save(state))
    (out / "checkpoint.pt").write_bytes(planted)
    result = _cli("train", str(config), "--out", str(out), "--resume", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "convert-checkpoint --trust" in lines[0], lines
    assert not proof.exists()
    assert (out / "checkpoint.pt").read_bytes() == planted


@pytest.mark.torch
def test_an_old_checkpoint_converts_only_with_trust_then_resumes(tmp_path, config):
    """A checkpoint as an older atomspark wrote it (no digest, torch's version object inside) is
    refused by --resume with the converter's command; the converter refuses without --trust,
    converts with it (original kept) and the run then resumes to the end."""
    torch = pytest.importorskip("torch")
    from atomspark.networks.torch_path.checkpoint_file import read_checkpoint
    from atomspark.networks.torch_path.training import train

    out = tmp_path / "run"
    train(TINY, out, progress=False, max_steps=2)
    state = read_checkpoint(out / "checkpoint.pt")
    state["numerics"]["torch"] = torch.__version__  # a TorchVersion object, as before
    old = _torch_save(state)
    (out / "checkpoint.pt").write_bytes(old)
    refused = _cli("train", str(config), "--out", str(out), "--resume", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    command = f"atomspark convert-checkpoint --trust {out / 'checkpoint.pt'}"
    assert command in refused.stderr
    no_trust = _cli("convert-checkpoint", str(out / "checkpoint.pt"), cwd=tmp_path)
    assert no_trust.returncode == 2 and "--trust" in no_trust.stderr
    assert (out / "checkpoint.pt").read_bytes() == old
    done = _cli("convert-checkpoint", "--trust", str(out / "checkpoint.pt"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (out / "checkpoint.pt.orig").read_bytes() == old
    assert read_checkpoint(out / "checkpoint.pt")["step"] == 2
    resumed = _cli("train", str(config), "--out", str(out), "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming at step 2" in resumed.stdout


@pytest.mark.torch
def test_a_sweep_never_resumes_a_planted_partial_checkpoint(tmp_path):
    """cells/<id>.partial/checkpoint.pt planted with code (digest recomputed): the cell starts
    afresh, the payload never runs."""
    pytest.importorskip("distributed")
    from atomspark.scenarios.sweep.cell import execute_cell, partial_dir
    from atomspark.scenarios.sweep.run import plan_grid

    grid = tmp_path / "grid.toml"
    grid.write_text(
        'kind = "train"\nseeds = [0]\n[set]\nepochs = 1\ndevice = "cpu"\nbatch_size = 8\n'
        '"data.n" = 24\n[[variants]]\nname = "published"\nbase = "rsgn-sequence"\n'
    )
    cell = plan_grid(grid).cells[0]
    out = tmp_path / "sweep"
    proof = tmp_path / "code-ran"
    work = partial_dir(out, cell.id)
    work.mkdir(parents=True)
    (work / "checkpoint.pt").write_bytes(_with_digest(_torch_save({"x": _Payload(proof)})))
    record = execute_cell("train", cell, str(out), threads=1)
    assert record["status"] == "done", record
    assert record["resumed_from_checkpoint"] is False
    assert not proof.exists()
