"""Every bad input from issue 14 ends in ONE line naming the problem and what to do: exit status 2
from the command line, AtomsparkError from Python; nothing is computed first."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.hardware import DATA_DIR, load_hardware
from atomspark.networks import rsgn
from atomspark.networks.rsgn.geometry import poincare_distance
from atomspark.networks.torch_path.config import validate_config
from atomspark.networks.vn import VNModel
from atomspark.networks.vn.energy import keep_top_k
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError

SMALL = rsgn.RSGNConfig(n_nodes=8, d_hidden=4, d_in=3, n_classes=2, n_steps=2)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("inputs")
    VNModel.random(6, [(5, 4)], seed=0).save(d / "vn.npz")
    rsgn.save_model(d / "rsgn.npz", rsgn.init_params(SMALL), SMALL)
    (d / "empty.npz").write_bytes(b"")
    np.save(d / "x.npy", np.zeros((3, 6)))
    np.save(d / "scalar.npy", np.float64(1.0))
    np.save(d / "none.npy", np.zeros((0, 6)))
    np.save(d / "complex.npy", np.zeros((2, 6), complex))
    np.save(d / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (d / "random.npz").write_bytes(os.urandom(256))
    (d / "text.npz").write_text("just text\n")
    (d / "a_file").write_text("x")
    return d


def one_line(capsys, argv: list[str], *needles: str) -> str:
    """Run the CLI: exit status 2, exactly one line on stderr, containing every needle."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    err = [ln for ln in err if ln.strip() and "%|" not in ln]  # train's progress bar (cleared)
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith(f"atomspark {argv[0]}: error: ")
    for needle in needles:
        assert needle in line, line
    assert "allow_pickle" not in line and "Traceback" not in line
    return line


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["profile", "{d}/empty.npz"], ["is empty (0 bytes)"]),
        (["export", "{d}/x.npy", "--to", "nir"], ["single .npy array, not an atomspark model"]),
        (["profile", "{d}/random.npz"], ["not an .npz archive"]),
        (["profile", "{d}/text.npz"], ["not an .npz archive"]),
        (["profile", "{d}/vn.npz", "--input", "{d}/random.npz"], ["--input", "not a .npy"]),
        (["profile", "{d}/vn.npz", "--input", "{d}/objects.npy"], ["holds Python objects"]),
        (["profile", "{d}/vn.npz", "--input", "{d}/complex.npy"], ["complex"]),
        (["export", "{d}/vn.npz", "--to", "nir", "--input", "{d}/scalar.npy"], ["(samples, d)"]),
        (["export", "{d}/vn.npz", "--to", "nir", "--input", "{d}/none.npy"], ["at least one"]),
        (["profile", "{d}/vn.npz", "--input", "builtin:0"], ["N must be >= 1"]),
        (
            ["profile", "{d}/vn.npz", "--input", "builtin:100000000000"],
            ["needs about", "available"],
        ),
        (["profile", "{d}/vn.npz", "--steps", "0"], ["--steps: must be >= 1"]),
        (["profile", "{d}/rsgn.npz", "--steps", "50"], ["omit --steps"]),
        (["profile", "{d}/vn.npz", "--hardware", "loihi3"], ["unknown hardware 'loihi3'"]),
        (["profile", "{d}/vn.npz", "--out", "{d}/a_file"], ["is a file, not a folder"]),
        (["export", "{d}/vn.npz", "--to", "nir", "--steps", "0"], ["--steps: must be >= 1"]),
        (["demo", "--hardware", "loihi3"], ["unknown hardware 'loihi3'"]),
        (["demo", "--out", "{d}/a_file"], ["is a file, not a folder"]),
        (["compare", "{d}/missing.npz"], ["no such file"]),
        (["compare", "{d}/vn.npz", "--samples", "-3"], ["--samples: must be >= 1"]),
        (["compare", "{d}/vn.npz", "--samples", "0"], ["--samples: must be >= 1"]),
    ],
)
def test_cli_bad_input_is_one_line(files, capsys, argv, needles):
    if argv[0] in ("demo", "compare"):  # without torch these say "needs PyTorch" (tested below)
        pytest.importorskip("torch")
    one_line(capsys, [a.replace("{d}", str(files)) for a in argv], *needles)


@pytest.mark.torch
def test_compare_npy_data_is_read_or_refused(files, capsys):
    pytest.importorskip("torch")
    one_line(
        capsys,
        ["compare", str(files / "vn.npz"), "--data", str(files / "objects.npy")],
        "holds Python objects",
    )


def _toml(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cfg.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        ("[optimizer]\nlr = -1.0", ["'optimizer.lr': must be finite and > 0"]),
        ("[optimizer]\nlr = nan", ["'optimizer.lr': must be finite and > 0, got nan"]),
        ("[plasticity]\nstructural_every = 0", ["'plasticity.structural_every': must be >= 1"]),
        ("val_fraction = 0.999", ["'val_fraction'", "leaves 0 training"]),
        ("[model]\nn_steps = 2.7", ["'model.n_steps': expected int"]),
        ("[model]\nn_nodes = 1000000000", ["needs about", "available", "model.n_nodes"]),
        ("[model]\nd_hidden = 100000", ["needs about", "available"]),
        ("[data]\nn = 1000000000", ["needs about", "available", "data.n"]),
    ],
)
def test_train_config_errors_before_any_work(tmp_path, capsys, body, needles):
    pytest.importorskip("torch")
    config = _toml(tmp_path, f'task = "rsgn-sequence"\n{body}\n')
    one_line(capsys, ["train", config, "--out", str(tmp_path / "run")], *needles)
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


@pytest.mark.parametrize(
    ("body", "needles"),
    [
        ("[model]\nmax_iter = 0", ["'model.max_iter': must be >= 1"]),
        ("[hebb]\nrho_s = -1.0", ["'hebb.rho_s': must be finite and >= 0"]),
        ("[model]\nlayer_sizes = [16]", ["layer_sizes", "[[16, 8]]"]),
        ('[model]\nlam = "abc"', ["'model.lam'"]),
    ],
)
def test_vn_config_errors_match_the_python_api(tmp_path, capsys, body, needles):
    pytest.importorskip("torch")
    config = _toml(tmp_path, f'task = "vn-dictionary"\n{body}\n')
    one_line(capsys, ["train", config, "--out", str(tmp_path / "run")], *needles)


@pytest.mark.torch
def test_divergence_names_the_learning_rate(tmp_path, capsys):
    pytest.importorskip("torch")
    config = _toml(
        tmp_path,
        'task = "rsgn-sequence"\nepochs = 2\nbatch_size = 16\n[optimizer]\nlr = 1e12\n'
        "grad_clip = 1e12\n"
        '[data]\nkind = "long-range"\nn = 40\nlength = 16\ndim = 4\nn_classes = 2\n'
        "[model]\nn_nodes = 8\nd_hidden = 4\nn_steps = 2\naffinity_rank = 2\n",
    )
    line = one_line(capsys, ["train", config, "--out", str(tmp_path / "run")], "diverged")
    assert "lower optimizer.lr (now 1e+12)" in line


def test_python_api_errors_name_the_argument(files):
    params = rsgn.init_params(SMALL)
    sparse = rsgn.RSGNConfig(
        mode="sparse", k_nearest=3, n_nodes=8, d_hidden=4, d_in=3, n_classes=2, n_steps=2
    )
    bad = rsgn.init_params(SMALL)
    bad.w_h[:] = np.nan
    bigger = rsgn.init_params(rsgn.RSGNConfig(n_nodes=9, d_hidden=4, d_in=3, n_classes=2))
    tokens = np.zeros((1, 5, 3))
    cases = [
        (lambda: VNModel.random(6, [(5, 4)], lam="abc"), "lam: must be a number"),
        (lambda: VNModel.random(6, [16]), r"layer_sizes\[0\]: expected a \(K, m\) pair"),
        (lambda: keep_top_k(np.ones(4), 0), "k: must be >= 1"),
        (lambda: poincare_distance(np.zeros(3), np.zeros(2)), "same last dimension"),
        (lambda: VNModel.load(files / "x.npy"), "single .npy array"),
        (lambda: rsgn.forward(rsgn.init_params(sparse), SMALL, tokens), "params.affinity_u"),
        (lambda: rsgn.forward(bigger, SMALL, tokens), r"params.positions: expected shape \(8"),
        (lambda: rsgn.forward(bad, SMALL, tokens), "params.w_h: contains 16 NaN"),
        (lambda: rsgn.forward(params, SMALL, tokens.astype(complex)), "complex values"),
        (lambda: validate_config({"task": "vn-dictionary", "model": {"max_iter": 0}}), "max_iter"),
    ]
    for call, match in cases:
        with pytest.raises(AtomsparkError, match=match):
            call()


def test_hardware_json_unit_is_honoured(tmp_path):
    data = json.loads((DATA_DIR / "loihi2.json").read_text())
    reference = load_hardware("loihi2")
    data["energy"]["synop"].update(value=11.8, unit="pJ")
    data["time"]["synop"].update(value=data["time"]["synop"]["value"] * 1e9, unit="ns")
    (tmp_path / "pj.json").write_text(json.dumps(data))
    hw = load_hardware(tmp_path / "pj.json")
    assert hw.energy.synop == pytest.approx(reference.energy.synop, rel=1e-12)
    assert hw.time.synop == pytest.approx(reference.time.synop, rel=1e-12)
    data["energy"]["synop"]["unit"] = "pW"
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(AtomsparkError, match=r"'energy.synop': unit 'pW' is not J"):
        load_hardware(tmp_path / "bad.json")


@pytest.mark.torch
def test_compare_takes_the_task_from_the_model_kind(files, tmp_path, capsys):
    """A VN model is compared on the VN task by default (it used to get the RSGN task)."""
    pytest.importorskip("torch")
    vn12 = tmp_path / "vn12.npz"
    VNModel.random(12, [(16, 8)], seed=0).save(vn12)
    argv = ["compare", str(vn12), "--samples", "2", "--steps", "40", "--no-fixed"]
    assert main([*argv, "--out", str(tmp_path / "cmp")]) == 0
    assert "recon err" in capsys.readouterr().out
    one_line(capsys, ["compare", str(files / "vn.npz"), "--samples", "2"], "does not match")


def test_torch_commands_without_torch_are_one_line(capsys, monkeypatch):
    """In an environment without PyTorch (the Lava one), demo, compare, train and bench name
    what is missing."""
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "torch" else real_find_spec(name, *a),
    )
    for argv in (
        ["demo"],
        ["compare", "missing.npz"],
        ["train", "vn-dictionary"],
        ["bench", "fn1d"],
    ):
        one_line(capsys, argv, "needs PyTorch", ".venv/bin/atomspark")


@pytest.mark.torch
def test_compare_says_when_it_uses_fewer_samples_than_asked(tmp_path, capsys):
    """--samples above what the data holds: one warning naming what was used, never silence."""
    pytest.importorskip("torch")
    vn12 = tmp_path / "vn12.npz"
    VNModel.random(12, [(16, 8)], seed=0).save(vn12)
    np.savez(tmp_path / "three.npz", x=np.random.default_rng(0).normal(size=(3, 12)))
    argv = ["compare", str(vn12), "--data", str(tmp_path / "three.npz"), "--samples", "100000"]
    assert main([*argv, "--steps", "40", "--no-fixed", "--out", str(tmp_path / "c")]) == 0
    captured = capsys.readouterr()
    warnings = [ln for ln in captured.err.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "--samples 100000" in warnings[0] and "using all 3" in warnings[0]
    report = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert report["samples"] == 3


@pytest.mark.torch
def test_bench_refuses_zero_seeds_before_writing(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "b"
    one_line(capsys, ["bench", "fn1d", "--quick", "--seeds", "0", "--out", str(out)], "--seeds")
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["export", "{d}/vn.npz", "--to", "lava", "--fixed", "--frac-bits", "99"], ["--frac-bits 99: at most 22"]),
        (["train", "{d}"], ["is a folder; give a TOML file"]),
        (["train", "{d}/latin1.toml"], ["not UTF-8 text", "save it as UTF-8"]),
        (["sweep", "{d}/latin1.toml"], ["not UTF-8 text"]),
        (["sweep", "{d}"], ["is a folder"]),
        (["profile", "{d}/torch.pt"], ["PyTorch file", "model.npz"]),
        (["export", "{d}/checkpoint.pt", "--to", "nir"], ["training checkpoint", "model.npz"]),
        (["compare", "{d}/rsgn.npz", "--config", "vn-dictionary"], ["--config vn-dictionary", "RSGN model", "rsgn-sequence"]),
    ],
)  # fmt: skip
def test_messages_name_the_real_problem(files, tmp_path, capsys, argv, needles):
    if argv[0] in ("compare", "train", "sweep"):
        pytest.importorskip("torch")
    (files / "latin1.toml").write_bytes('task = "vn-dictionary"\n# caf\xe9\n'.encode("latin-1"))
    if not (files / "torch.pt").exists():
        torch = pytest.importorskip("torch")
        torch.save({"w": torch.zeros(3)}, files / "torch.pt")
        from atomspark.networks.torch_path.checkpoint_file import write_checkpoint

        write_checkpoint(files / "checkpoint.pt", {"w": torch.zeros(3)})
    argv = [a.replace("{d}", str(files)) for a in argv]
    one_line(capsys, [*argv, "--out", str(tmp_path / "out")], *needles)
    assert not (tmp_path / "out").exists()


def test_python_entry_points_name_a_missing_config(tmp_path):
    pytest.importorskip("torch")
    from atomspark.networks.torch_path.training import train

    with pytest.raises(AtomsparkError, match="config: expected a TOML file path or a config dict"):
        train(None, tmp_path / "o")
    with pytest.raises(AtomsparkError, match="out_dir: expected a folder path, got NoneType"):
        train({"task": "vn-dictionary"}, None)
