"""Time one torch workload on its device, and meter its GPU energy through NVML where possible.

`measure(work, device)` is the one entry point. The workload runs under torch.no_grad for every
call, timed and metered alike (one workload, one figure). Timing: a few warm-up calls, then
repetitions until a window of several seconds is full, synchronised on the run's own device
(torch.cuda.synchronize(device), not the current device).

Energy (CUDA with pynvml, the `nvidia-ml-py` package): the NVML board is found by the PCI bus id
of the torch device, so CUDA_VISIBLE_DEVICES and CUDA's device order are honoured. NVML's
total-energy counter (mJ, updated every 20-100 ms) is read around an idle interval first (idle
power) and then around the timed window. Both are reported: the whole-board energy per call
(idle power and every other process on that GPU included) and that minus idle power x time
(the energy attributed to the workload). When any of this is impossible the result says why
(`energy_detail`), with the real NVML error, and the caller falls back to a cost model.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

WINDOW_S_CUDA = 5.0  # the energy counter's 20-100 ms update is then ~1-2 % of the window
WINDOW_S_CPU = 0.5  # CPU time needs no energy counter; perf_counter resolves far finer
IDLE_S = 2.0  # idle-power interval before the warm-up
WARMUP_CALLS = 3  # first calls: allocator, kernel selection, clocks ramping up
MIN_REPEATS = 3

# Injected by the tests (a fake clock drives a fake NVML counter).
_clock: Callable[[], float] = time.perf_counter
_sleep: Callable[[float], None] = time.sleep


class EnergyUnavailable(Exception):
    """NVML cannot meter this device; the message is the reason shown to the user."""


@dataclass(frozen=True)
class GPUMeasurement:
    """Measured wall time per call of a workload, and (CUDA + NVML) its measured energy.

    energy_status is "measured" or "unavailable"; energy_detail names the counter and board
    or says why there is no measurement. Energies are per call (one batch), in joules.
    """

    device: str
    device_name: str
    time_per_call_s: float
    repeats: int
    window_s: float
    warmup_calls: int
    energy_status: str
    energy_detail: str
    board_energy_per_call_j: float | None = None  # whole board, idle included
    idle_power_w: float | None = None
    energy_per_call_j: float | None = None  # board energy minus idle power x time

    @property
    def measured(self) -> bool:
        """True when the energy figures come from the NVML counter."""
        return self.energy_status == "measured"

    def to_dict(self) -> dict:
        return asdict(self)


def synchronize(device: torch.device) -> None:
    """Wait for all work queued on `device` (a no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def pci_bus_id(device: torch.device) -> str:
    """NVML-style PCI bus id ("00000000:65:00.0") of a CUDA torch device."""
    props = torch.cuda.get_device_properties(device)
    return f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"


def _nvml_error(exc: Exception) -> str:
    """The NVML error's own name and text (e.g. 'NVMLError_NotSupported: Not Supported')."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class _Board:
    """One NVML device handle opened by PCI bus id; `energy_j()` reads the total counter."""

    def __init__(self, device: torch.device) -> None:
        if device.type != "cuda":
            raise EnergyUnavailable(f"no energy counter for a {device.type} device")
        try:
            import pynvml
        except ImportError as exc:
            raise EnergyUnavailable(
                f"pynvml is not installed ({exc}); pip install nvidia-ml-py"
            ) from exc
        self.nvml = pynvml
        try:
            pynvml.nvmlInit()
        except Exception as exc:  # noqa: BLE001 - pynvml raises NVMLError subclasses
            raise EnergyUnavailable(f"nvmlInit failed ({_nvml_error(exc)})") from exc
        try:
            self.bus_id = pci_bus_id(device)
            self.handle = pynvml.nvmlDeviceGetHandleByPciBusId(self.bus_id)
            name = pynvml.nvmlDeviceGetName(self.handle)
            self.name = name.decode() if isinstance(name, bytes) else str(name)
        except Exception as exc:  # noqa: BLE001
            self.close()
            raise EnergyUnavailable(f"no NVML device for {device} ({_nvml_error(exc)})") from exc
        self.failure = ""
        if self.energy_j() is None:  # no counter: say so before any timing
            self.close()
            raise EnergyUnavailable(self.failure)

    def energy_j(self) -> float | None:
        """Total energy counter in joules, or None (reason in `failure`) if it cannot be read."""
        try:
            return self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle) * 1e-3
        except Exception as exc:  # noqa: BLE001
            self.failure = (
                f"NVML total energy counter unreadable on {self.name} "
                f"({_nvml_error(exc)}; it needs Volta or newer and is not available on MIG "
                "instances)"
            )
            return None

    def close(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down after a failure: nothing to report
            pass


def _open_board(device: torch.device) -> tuple[_Board | None, str]:
    try:
        return _Board(device), ""
    except EnergyUnavailable as exc:
        return None, str(exc)


def measure(
    work: Callable[[], object],
    device: torch.device | str,
    window_s: float | None = None,
    warmup_calls: int = WARMUP_CALLS,
    idle_s: float = IDLE_S,
) -> GPUMeasurement:
    """Time `work()` on `device` (and meter its energy on CUDA); see the module docstring.

    window_s: minimum timed window (default WINDOW_S_CUDA on CUDA, WINDOW_S_CPU otherwise);
    at least MIN_REPEATS calls are timed whatever the window.
    """
    device = torch.device(device)
    if window_s is None:
        window_s = WINDOW_S_CUDA if device.type == "cuda" else WINDOW_S_CPU
    board, why = _open_board(device)
    reads = []  # (energy J or None, clock s): idle start, idle end, window start, window end
    try:
        with torch.no_grad():
            if board is not None:
                synchronize(device)
                reads.append((board.energy_j(), _clock()))
                _sleep(idle_s)
                reads.append((board.energy_j(), _clock()))
            for _ in range(warmup_calls):
                work()
            synchronize(device)
            if board is not None:
                reads.append((board.energy_j(), _clock()))
            repeats, t0 = 0, _clock()
            while repeats < MIN_REPEATS or _clock() - t0 < window_s:
                work()
                repeats += 1
                synchronize(device)
            elapsed = _clock() - t0
            if board is not None:
                reads.append((board.energy_j(), _clock()))
    finally:
        if board is not None:
            board.close()
    common = {
        "device": str(device),
        "device_name": device_name(device),
        "time_per_call_s": elapsed / repeats,
        "repeats": repeats,
        "window_s": elapsed,
        "warmup_calls": warmup_calls,
    }
    if board is not None and any(e is None for e, _ in reads):
        board, why = None, board.failure
    if board is None:
        return GPUMeasurement(**common, energy_status="unavailable", energy_detail=why)
    (ei0, ti0), (ei1, ti1), (e0, c0), (e1, c1) = reads
    idle_w = (ei1 - ei0) / (ti1 - ti0)
    board_j = (e1 - e0) / repeats
    per_call_s = (c1 - c0) / repeats
    return GPUMeasurement(
        **common,
        energy_status="measured",
        energy_detail=(
            f"NVML total energy counter, {board.name} (PCI {board.bus_id}): whole board over "
            f"{elapsed:.1f} s; idle power over {idle_s:.1f} s before the warm-up, subtracted"
        ),
        board_energy_per_call_j=board_j,
        idle_power_w=idle_w,
        energy_per_call_j=board_j - idle_w * per_call_s,
    )
