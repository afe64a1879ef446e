"""GPU timing and NVML energy (scenarios/compare/gpu_meter.py) against a fake pynvml and a fake clock:
energy arithmetic (whole board, idle, attributed), the board found by PCI bus id (not by the
CUDA index), synchronisation on the run's device, the workload run without autograd, and every
failure reported with its real reason."""

from __future__ import annotations

import dataclasses
import sys
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.scenarios.compare import gpu_meter  # noqa: E402

IDLE_W, WORK_W, CALL_S = 60.0, 240.0, 0.01


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801 - pynvml's own naming
    pass


class NVMLError_NotFound(NVMLError):  # noqa: N801
    pass


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801
    pass


class FakeGPU:
    """A clock and four boards; only the board being worked on draws WORK_W above idle."""

    def __init__(self) -> None:
        self.t = 0.0
        self.bus_ids = [
            "00000000:17:00.0",
            "00000000:65:00.0",
            "00000000:ca:00.0",
            "00000000:e3:00.0",
        ]
        self.energy_mj = {b: 0.0 for b in self.bus_ids}
        self.busy_bus = None
        self.syncs: list = []
        self.grad_enabled_in_work: list[bool] = []

    def advance(self, dt: float, busy: bool) -> None:
        self.t += dt
        for b in self.bus_ids:
            extra = WORK_W if busy and b == self.busy_bus else 0.0
            self.energy_mj[b] += (IDLE_W + extra) * dt * 1e3

    def work(self):
        self.grad_enabled_in_work.append(torch.is_grad_enabled())
        self.advance(CALL_S, busy=True)


def fake_pynvml(gpu: FakeGPU, fail: str | None = None) -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError

    def init():
        if fail == "init":
            raise NVMLError_LibraryNotFound("NVML Shared Library Not Found")

    def by_bus(bus):
        if fail == "bus" or bus not in gpu.bus_ids:
            raise NVMLError_NotFound("Not Found")
        return bus

    def by_index(i):
        raise AssertionError("the board must be found by PCI bus id, not by CUDA index")

    def energy(handle):
        if fail == "energy":
            raise NVMLError_NotSupported("Not Supported")
        return int(gpu.energy_mj[handle])  # NVML reports whole millijoules

    m.nvmlInit = init
    m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetHandleByPciBusId = by_bus
    m.nvmlDeviceGetHandleByIndex = by_index
    m.nvmlDeviceGetTotalEnergyConsumption = energy
    m.nvmlDeviceGetName = lambda h: b"Fake H100"
    return m


@pytest.fixture
def gpu(monkeypatch):
    """CUDA as seen with CUDA_VISIBLE_DEVICES=2,3: cuda:0 and cuda:1 are physical boards 2 and 3
    (torch's device properties report their PCI ids); NVML's own index order differs."""
    g = FakeGPU()
    visible = {0: g.bus_ids[2], 1: g.bus_ids[3]}

    def props(device):
        bus = visible[torch.device(device).index or 0]
        dom, b, rest = bus.split(":")
        return types.SimpleNamespace(
            pci_domain_id=int(dom, 16), pci_bus_id=int(b, 16), pci_device_id=int(rest[:2], 16)
        )

    monkeypatch.setattr(torch.cuda, "get_device_properties", props)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: "Fake H100")
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: g.syncs.append(d))
    monkeypatch.setattr(gpu_meter, "_clock", lambda: g.t)
    monkeypatch.setattr(gpu_meter, "_sleep", lambda s: g.advance(s, busy=False))
    g.busy_bus = visible[1]
    return g


def test_energy_arithmetic_board_idle_and_attributed(gpu, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(gpu))
    run = gpu_meter.measure(gpu.work, "cuda:1")
    assert run.energy_status == "measured" and run.measured
    assert run.device == "cuda:1" and "00000000:e3:00.0" in run.energy_detail
    assert "whole board" in run.energy_detail
    assert run.window_s >= gpu_meter.WINDOW_S_CUDA
    assert run.repeats == pytest.approx(gpu_meter.WINDOW_S_CUDA / CALL_S, abs=1)
    assert run.time_per_call_s == pytest.approx(CALL_S, rel=1e-9)
    assert run.idle_power_w == pytest.approx(IDLE_W, rel=1e-3)
    assert run.board_energy_per_call_j == pytest.approx((IDLE_W + WORK_W) * CALL_S, rel=1e-3)
    assert run.energy_per_call_j == pytest.approx(WORK_W * CALL_S, rel=1e-3)


def test_synchronises_on_the_runs_device_and_runs_without_autograd(gpu, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(gpu))
    gpu_meter.measure(gpu.work, torch.device("cuda:1"))
    assert gpu.syncs and all(torch.device(d) == torch.device("cuda:1") for d in gpu.syncs)
    # every call, warm-up and timed/metered alike, ran with autograd off
    assert len(gpu.grad_enabled_in_work) >= gpu_meter.WARMUP_CALLS + gpu_meter.MIN_REPEATS
    assert not any(gpu.grad_enabled_in_work)


@pytest.mark.parametrize(
    "fail, words",
    [
        ("missing", "pynvml is not installed"),
        ("init", "nvmlInit failed (NVMLError_LibraryNotFound: NVML Shared Library Not Found)"),
        ("bus", "no NVML device for cuda:1 (NVMLError_NotFound: Not Found)"),
        ("energy", "NVMLError_NotSupported: Not Supported"),
    ],
)
def test_failures_name_their_real_reason_and_timing_still_runs(gpu, monkeypatch, fail, words):
    nvml = None if fail == "missing" else fake_pynvml(gpu, fail)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    run = gpu_meter.measure(gpu.work, "cuda:1")
    assert run.energy_status == "unavailable" and not run.measured
    assert words in run.energy_detail
    assert run.energy_per_call_j is None and run.board_energy_per_call_j is None
    assert run.time_per_call_s == pytest.approx(CALL_S, rel=1e-9)


def test_cpu_is_timed_and_says_it_has_no_counter():
    calls = []
    run = gpu_meter.measure(lambda: calls.append(torch.is_grad_enabled()), "cpu", window_s=0.0)
    assert run.repeats == gpu_meter.MIN_REPEATS and not any(calls)
    assert run.energy_status == "unavailable" and "no energy counter for a cpu device" in (
        run.energy_detail
    )


def test_compare_labels_measured_and_modelled_figures(monkeypatch):
    from atomspark.networks.torch_path.vn_trainer import VN_TRAINER
    from atomspark.networks.vn.model import VNModel
    from atomspark.scenarios.compare import compare_common

    model = VNModel.random(6, [(5, 4)], lam=0.1, seed=0)
    x = np.random.default_rng(0).normal(size=(4, 6))
    dense = types.SimpleNamespace(energy_j=1e-3, time_s=2e-6)
    cpu = torch.device("cpu")
    measured = gpu_meter.GPUMeasurement(
        device="cuda:1",
        device_name="Fake H100",
        time_per_call_s=0.02,
        repeats=250,
        window_s=5.0,
        warmup_calls=3,
        energy_status="measured",
        energy_detail="NVML total energy counter, Fake H100 (PCI 00000000:e3:00.0): whole board",
        board_energy_per_call_j=6.0,
        idle_power_w=60.0,
        energy_per_call_j=4.8,
    )
    monkeypatch.setattr(compare_common, "measure", lambda work, device: measured)
    entry, _ = compare_common.torch_backend(
        VN_TRAINER.forward, model, x, cpu, torch.float64, "h100", dense
    )
    assert entry["energy_source"].startswith("measured (board minus idle)")
    assert entry["energy_per_sample_j"] == pytest.approx(4.8 / 4)
    assert entry["board_energy_per_sample_j"] == pytest.approx(6.0 / 4)
    assert entry["idle_power_w"] == 60.0
    assert entry["latency_per_sample_s"] == 0.02  # a sample waits for its whole batch call
    assert entry["time_per_sample_s"] == pytest.approx(0.005)  # throughput: call time / batch
    assert entry["time_source"].startswith("measured")

    unmeasured = dataclasses.replace(
        measured,
        energy_status="unavailable",
        energy_detail="pynvml is not installed",
        board_energy_per_call_j=None,
        idle_power_w=None,
        energy_per_call_j=None,
    )
    monkeypatch.setattr(compare_common, "measure", lambda work, device: unmeasured)
    entry, _ = compare_common.torch_backend(
        VN_TRAINER.forward, model, x, cpu, torch.float64, "h100", dense
    )
    assert entry["energy_source"].startswith("model (not measured: pynvml is not installed)")
    assert entry["energy_per_sample_j"] == dense.energy_j
    assert entry["modelled_time_per_sample_s"] == dense.time_s
    assert entry["numerics"]["dtype"] == "float64" and entry["numerics"]["tf32_matmul"] is False
