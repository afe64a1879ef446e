"""The torch path on a stand-in accelerator (tests/standin_device.py): CUDA's no-mixing rule on
every op, host syncs and host-to-device copies counted by source line. Catches on a CPU-only CI
what a GPU would: inputs left on the CPU, tensors rebuilt on the wrong device at resume, per-step
host syncs in training, per-iteration syncs in the VN settle."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks.datasets import hierarchical_sequences, sparse_dictionary_data  # noqa: E402
from atomspark.networks.rsgn.model import RSGNConfig, init_params  # noqa: E402
from atomspark.networks.torch_path import rsgn_trainer, training  # noqa: E402
from atomspark.networks.torch_path.config import load_config  # noqa: E402
from atomspark.networks.torch_path.convert import rsgn_to_torch, vn_to_torch  # noqa: E402
from atomspark.networks.torch_path.vn_torch import atomic_hebb, joint_energy, settle  # noqa: E402
from atomspark.networks.vn.model import VNModel  # noqa: E402
from standin_device import CudaRules, DeviceMixError, StandIn, standin_device  # noqa: E402

CONFIGS = Path(training.__file__).resolve().parents[2] / "scenarios" / "configs"


def _host(t: torch.Tensor) -> torch.Tensor:
    return t.elem if isinstance(t, StandIn) else t


def test_rules_refuse_mixing_and_count_syncs_by_line():
    with CudaRules() as rules:
        dev = torch.ones(3, device=standin_device())
        assert dev.device.type == "standin" and (dev + torch.tensor(2.0)).device == dev.device
        with pytest.raises(DeviceMixError, match="mixes standin and cpu"):
            dev + torch.ones(3)
        float(dev.sum())
        dev.cpu()
        torch.ones(2).to(dev.device)
    assert rules.n_syncs == 2 and rules.n_h2d == 1


# ----- VN: settle, energy and Atomic-Hebb ------------------------------------------------------
VN = VNModel.random(12, [(16, 8), (8, 6)], lam=0.1, seed=0)
VN_X = sparse_dictionary_data(n=5, dim=12, n_atoms=12, active=2, seed=1).signals
SETTLE = {"tol": 1e-5, "max_iter": 200, "sweeps": 8}


def _vn_on_standin(check_every=None):
    """Settle, energy and Hebb with the model on the stand-in and the inputs left on the CPU."""
    x = torch.from_numpy(VN_X)
    with CudaRules() as rules:
        model = vn_to_torch(VN).to(standin_device())
        with torch.no_grad():
            res = settle(model, x, check_every=check_every, **SETTLE)
        settle_syncs = rules.n_syncs
        energy = joint_energy(model, res.codes, x)
        atomic_hebb(model, x, res.codes, 5.0, 0.5)
    codes = [_host(c) for c in res.codes]
    return codes, _host(energy), [_host(s) for s in model.S], settle_syncs, rules


def test_vn_settle_and_hebb_stay_on_the_device_and_sync_rarely():
    x = torch.from_numpy(VN_X)
    cpu = vn_to_torch(VN)
    with torch.no_grad():
        ref = settle(cpu, x, **SETTLE)
    ref_energy = joint_energy(cpu, ref.codes, x)
    atomic_hebb(cpu, x, ref.codes, 5.0, 0.5)

    codes, energy, S, syncs, rules = _vn_on_standin()
    every_iteration = _vn_on_standin(check_every=1)
    for a, b, c in zip(codes, ref.codes, every_iteration[0]):
        assert torch.equal(a, c)  # identical whatever the check interval
        torch.testing.assert_close(a, b, rtol=0, atol=1e-13)  # the CPU run, to rounding
    torch.testing.assert_close(energy, ref_energy, rtol=1e-13, atol=0)
    for a, b in zip(S, cpu.S):
        torch.testing.assert_close(a, b.data, rtol=0, atol=1e-13)
    # a convergence check per iteration was the old settle; now one per CHECK_EVERY_DEVICE
    assert syncs * 10 <= every_iteration[3], (syncs, every_iteration[3], rules.syncs)
    # the CPU input is uploaded once by each of settle, joint_energy and atomic_hebb, never per
    # iteration
    assert sum(n for line, n in rules.h2d.items() if "vn_torch" in line) == 3, rules.h2d


# ----- RSGN: forward and backward in both modes ------------------------------------------------
@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_rsgn_forward_backward_on_the_device(mode):
    kw = {"k_nearest": 4} if mode == "sparse" else {}
    cfg = RSGNConfig(n_nodes=16, dim=3, d_in=4, d_hidden=8, n_classes=3, mode=mode, **kw)
    params = init_params(cfg, seed=0)
    tokens = torch.from_numpy(hierarchical_sequences(n=6, length=8, dim=4, seed=2).tokens)

    def run(module):
        scores, alpha = module(tokens)  # tokens stay on the CPU: forward moves them
        scores.square().sum().backward()
        return scores, alpha, {n: p.grad for n, p in module.named_parameters()}

    ref = run(rsgn_to_torch(params, cfg))
    with CudaRules() as rules:
        out = run(rsgn_to_torch(params, cfg).to(standin_device()))
    close = {"rtol": 1e-12, "atol": 1e-12}  # the same CPU arithmetic, to rounding
    torch.testing.assert_close(_host(out[0]), ref[0], **close)
    torch.testing.assert_close(_host(out[1]), ref[1], **close)
    for name, grad in out[2].items():
        assert grad.device.type == "standin", name
        torch.testing.assert_close(_host(grad), ref[2][name], **close)
    assert rules.n_syncs == 0, rules.syncs


# ----- train(): interrupt and resume, sync budget per step -------------------------------------
def _small_sparse_config() -> dict:
    cfg = copy.deepcopy(load_config(CONFIGS / "rsgn-sparse.toml"))
    cfg["data"].update(n=40)
    cfg["model"].update(n_nodes=16, d_hidden=8, k_nearest=4)
    cfg["plasticity"]["structural_every"] = 1  # prune/sprout before the interruption
    cfg.update(epochs=2, batch_size=8, checkpoint_every=0)  # 32 training sequences: 4 steps/epoch
    return cfg


def _train_on_standin(monkeypatch, cfg, out, counts=None, **kw):
    """train() with the stand-in as its device; per-step (syncs, h2d) appended to `counts`."""
    step = rsgn_trainer.rsgn_step

    def counted(*args):
        before = (rules.n_syncs, rules.n_h2d)
        result = step(*args)
        counts.append((rules.n_syncs - before[0], rules.n_h2d - before[1]))
        return result

    with monkeypatch.context() as mp, CudaRules() as rules:
        mp.setattr(training, "select_device", lambda name: standin_device())
        if counts is not None:
            mp.setattr(rsgn_trainer, "rsgn_step", counted)
        return training.train(cfg, out, progress=False, **kw), rules


def _metrics(out: Path) -> list[dict]:
    """metrics.jsonl without its wall-clock fields."""
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in ("epoch_s", "load")} for r in rows]


def test_train_rsgn_sparse_resume_is_bit_identical_with_one_sync_per_step(monkeypatch, tmp_path):
    cfg = _small_sparse_config()
    counts: list = []
    straight, _ = _train_on_standin(monkeypatch, cfg, tmp_path / "a", counts)
    _train_on_standin(monkeypatch, cfg, tmp_path / "b", max_steps=5)  # mid epoch 2, after sprout
    resumed, _ = _train_on_standin(monkeypatch, cfg, tmp_path / "b", resume=True)
    assert resumed.steps == straight.steps == 8
    assert _metrics(tmp_path / "a") == _metrics(tmp_path / "b")
    with np.load(straight.model_path) as a, np.load(resumed.model_path) as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)
    # the budget: one host sync per step (its metrics), no uploads per step
    assert len(counts) == 8 and all(c == (1, 0) for c in counts), counts
    numerics = json.loads((tmp_path / "a" / "final_metrics.json").read_text())["numerics"]
    assert numerics["device"] == "standin:0" and numerics["dtype"] == "float32"
    assert numerics["tf32_matmul"] is False and numerics["deterministic_algorithms"] is True


def test_train_rsgn_published_step_budget(monkeypatch, tmp_path):
    cfg = _small_sparse_config()
    cfg["model"].update(mode="published", k_nearest=None, cutoff=0.01)
    cfg.update(epochs=1)
    counts: list = []
    _train_on_standin(monkeypatch, cfg, tmp_path, counts)
    assert counts and all(c == (1, 0) for c in counts), counts
