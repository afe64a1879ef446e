"""Measured GPU energy through NVML (pynvml), when the board and the library allow it.

NVML's total-energy counter (millijoules since driver load, Volta and later) is read before and
after a workload that is repeated until it has run long enough for the counter's resolution;
the result is board energy, so it includes idle power and everything else running on the GPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MIN_MEASURE_S = 0.5  # run the workload at least this long: the counter ticks in ~mJ steps


@dataclass(frozen=True)
class GPUMeasurement:
    """Board energy and wall time of one call of the workload (means over `repeats` calls)."""

    energy_j: float
    time_s: float
    repeats: int
    source: str


def nvml_energy(
    workload: Callable[[], None], device_index: int, synchronize: Callable[[], None]
) -> GPUMeasurement | None:
    """Energy per call of `workload` on CUDA device `device_index` by NVML, or None when pynvml,
    the driver or the energy counter is not available (the caller then uses the cost model)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - any NVML failure means "no measurement"
        return None
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        start_mj = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        repeats, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < MIN_MEASURE_S or repeats < 3:
            workload()
            synchronize()
            repeats += 1
        elapsed = time.perf_counter() - t0
        end_mj = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        name = pynvml.nvmlDeviceGetName(handle)
    except Exception:  # noqa: BLE001
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    name = name.decode() if isinstance(name, bytes) else str(name)
    return GPUMeasurement(
        energy_j=(end_mj - start_mj) * 1e-3 / repeats,
        time_s=elapsed / repeats,
        repeats=repeats,
        source=f"NVML total energy counter ({name})",
    )
