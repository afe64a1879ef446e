"""The GPU side of chip-vs-GPU comparisons: joint FISTA (the GPU's VN settle) against the NumPy
reference, the tolerance match, the roofline/power pricing, and measured rows replacing modelled
ones (a fake NVML module and a fake clock stand in for a GPU)."""

from __future__ import annotations

import sys
import types
from dataclasses import replace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.mapping.gpu_pricing import (  # noqa: E402
    DenseAlgorithm,
    Phase,
    price_algorithm,
    throughput_batch,
)
from atomspark.mapping.hardware import load_hardware  # noqa: E402
from atomspark.networks.torch_path.convert import vn_to_torch  # noqa: E402
from atomspark.networks.torch_path.vn_joint import joint_settle  # noqa: E402
from atomspark.networks.vn.model import VNModel  # noqa: E402
from atomspark.networks.vn.settle import settle  # noqa: E402
from atomspark.scenarios.compare import gpu_meter  # noqa: E402
from atomspark.scenarios.compare.gpu_side import (  # noqa: E402
    gpu_side,
    match_tolerance,
    nvml_meter,
    relative_code_error,
    vn_algorithm,
)
from atomspark.scenarios.compare.gpu_side_plots import plot_gpu_side  # noqa: E402


@pytest.fixture(scope="module")
def vn():
    rng = np.random.default_rng(1)
    model = VNModel.random(12, [(16, 8), (10, 6)], lam=[0.4, 0.2], seed=1)
    x = rng.standard_normal((6, 12))
    ref = settle(model, x, tol=1e-12, max_iter=20000, sweeps=2000)
    return model, x, ref


def test_joint_fista_reaches_the_reference_minimiser_in_fewer_iterations(vn):
    model, x, ref = vn
    with torch.no_grad():
        codes, its, ok = joint_settle(vn_to_torch(model), torch.from_numpy(x), tol=1e-12)
    assert bool(ok.all())
    err = relative_code_error([c.numpy() for c in codes], ref.codes)
    assert err.max() < 1e-8
    assert np.all(its.numpy() < ref.iterations.sum(axis=1))  # one loop, not nested sweeps


def test_matched_tolerance_is_the_loosest_within_the_chips_error(vn):
    model, x, ref = vn
    m = match_tolerance(model, x, ref.codes, target_rel_error=1e-3)
    assert m.algorithm == "joint" and m.max_rel_error <= 1e-3
    assert m.iterations.shape == (6,) and m.iterations.min() > 0
    looser = match_tolerance(model, x, ref.codes, target_rel_error=1e-1)
    assert looser.tol >= m.tol and looser.iterations.sum() <= m.iterations.sum()


def _toy(iterations=(10, 30), ops=40.0) -> DenseAlgorithm:
    phase = Phase("p", np.array(iterations, float), 2e3, 4e4, 100.0, ops)
    return DenseAlgorithm("toy", (phase,), "given")


def test_roofline_launch_bound_and_power_model():
    hw = replace(load_hardware("h100"), l2_bytes=0.0)  # main memory every iteration
    alg = _toy()
    fused = price_algorithm(alg, hw, 1, "per-iteration")
    per_op = price_algorithm(alg, hw, 1, "per-op")
    assert fused.iterations == 20  # batch 1: each sample its own count (mean)
    assert fused.bound == "launch" and fused.time_s == pytest.approx(20 * hw.launch_overhead_s)
    assert per_op.time_s == pytest.approx(40 * fused.time_s)
    kernel = 20 * max(2e3 / hw.peak_flops["fp32"], (4e4 + 100) / hw.bandwidth_bytes_per_s)
    assert fused.kernel_time_s == pytest.approx(kernel)
    expect = hw.idle_power_w * fused.time_s + (hw.busy_power_w - hw.idle_power_w) * kernel
    assert fused.energy_j == pytest.approx(expect)
    assert fused.energy_j < fused.energy_tdp_bound_j == pytest.approx(hw.tdp_w * fused.time_s)
    big = price_algorithm(alg, hw, 1024, "per-iteration")
    assert big.iterations == 30  # a batch runs to its slowest sample
    b = throughput_batch(alg, hw, "per-iteration")
    best = price_algorithm(alg, hw, b, "per-iteration")
    assert b & (b - 1) == 0 and best.energy_j < fused.energy_j / 10
    assert price_algorithm(alg, hw, b // 2, "per-iteration").energy_j > best.energy_j * 1.01


class _Clock:
    def __init__(self):
        self.t, self.mj = 0.0, 0.0

    def advance(self, dt: float, watts: float) -> None:
        self.t += dt
        self.mj += watts * dt * 1e3


def _fake_nvml(clock: _Clock) -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.nvmlInit = lambda: None
    m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetHandleByPciBusId = lambda bus: bus
    m.nvmlDeviceGetTotalEnergyConsumption = lambda h: int(clock.mj)
    m.nvmlDeviceGetName = lambda h: b"Fake H100"
    return m


def test_measured_time_and_nvml_energy_replace_the_model(monkeypatch, tmp_path):
    """On a (fake) CUDA device the meter runs the workload through gpu_meter.measure with a fake
    pynvml: 0.01 s and 300 W per batch call, 50 W idle."""
    clock = _Clock()
    props = types.SimpleNamespace(pci_domain_id=0, pci_bus_id=0x65, pci_device_id=0)
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(clock))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: props)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "Fake H100")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: None)
    monkeypatch.setattr(gpu_meter, "_clock", lambda: clock.t)
    monkeypatch.setattr(gpu_meter, "_sleep", lambda s: clock.advance(s, 50.0))
    batches = []

    def make_work(batch):
        batches.append(batch)
        return lambda: clock.advance(0.01, 300.0)

    meter = nvml_meter(make_work, torch.device("cuda", 0))
    side = gpu_side(_toy(), "h100", chip_energy_j=1e-6, chip_time_s=1e-3, meter=meter)
    measured = [r for r in side["rows"] if r["source"].startswith("measured")]
    assert len(measured) == 2  # eager torch is the per-op launch model; the others stay modelled
    assert all(r["launch_model"] == "per-op (measured: eager PyTorch)" for r in measured)
    assert all(r["source"].startswith("model") for r in side["rows"] if r not in measured)
    for row in measured:
        assert row["source"].startswith("measured on Fake H100") and "NVML" in row["source"]
        scale = row["batch"] / min(row["batch"], 4096)
        assert row["energy_j"] == pytest.approx(3.0 * scale / row["batch"], rel=1e-2)
        assert row["time_s"] == pytest.approx(0.01 * scale / row["batch"], rel=1e-6)
        if row["batch"] == 1:  # a batched row's ratio is the headline's at throughput
            assert row["energy_ratio_gpu_over_chip"] == pytest.approx(row["energy_j"] / 1e-6)
        else:
            assert row["energy_ratio_gpu_over_chip"] is None
    assert sorted(set(batches)) == sorted({min(r["batch"], 4096) for r in measured})
    assert nvml_meter(make_work, torch.device("cpu")) is None  # no GPU: the model stands
    modelled = gpu_side(_toy(), "h100", 1e-6, 1e-3)
    assert all(r["source"].startswith("model") for r in modelled["rows"])
    assert "TDP 700 W x time is the upper bound" in modelled["assumptions"]
    path = tmp_path / "chip_vs_gpu.png"
    plot_gpu_side({"VN": modelled, "RSGN": side}, {"VN": 1e-6, "RSGN": 2e-6}, "loihi2", path)
    assert path.stat().st_size > 10_000


def test_vn_algorithm_counts_ops_of_the_torch_iteration(vn):
    model, x, ref = vn
    m = match_tolerance(model, x, ref.codes, target_rel_error=1e-3)
    alg = vn_algorithm(model, m)
    (phase,) = alg.phases
    assert 20 <= phase.ops <= 200  # eager torch launches tens of kernels per FISTA step
    K = sum(layer.n_atoms for layer in model.layers)
    assert phase.weight_bytes <= 4 * K * K  # the nonzero blocks of H only
    assert "measured by the torch path" in alg.iterations_source
