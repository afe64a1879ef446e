"""The GPU side of a chip-vs-GPU comparison, priced on the GPU's own algorithm.

A GPU user does not run the chip's algorithm (e.g. 1500 Jacobi-ISTA steps, one kernel launch per
projection per step). They run their best dense algorithm to the same tolerance, batched. This
module prices such an algorithm, described as phases of identical iterations whose counts were
MEASURED (by the torch path on the same samples, scenarios/compare/gpu_side.py):

* time: per iteration, a roofline max(FLOPs / peak, bytes / bandwidth) for the batch, and the
  launches that iteration needs: either one fused kernel per iteration ("fused", e.g. a CUDA graph
  or a hand-fused step) or one kernel per tensor operation ("per-op", the op count of the torch
  path, as eager PyTorch launches them). Launches are asynchronous, so an iteration takes
  max(roofline time, launches x launch overhead): tiny kernels leave the GPU launch-bound.
* batches run until their slowest sample converges: batch 1 uses each sample's own iteration
  count (the mean over samples), a larger batch the largest measured count.
* energy = power x time with a two-level power model: the board draws its idle power for the whole
  time and busy power while kernels run at the roofline rate (idle + (busy - idle) x kernel time).
  TDP x time is reported beside it as an upper bound. Both powers come from the hardware file.
* the throughput-optimal batch is the smallest power of two whose energy per sample is within 1 %
  of the best over batches up to `max_batch` (per-sample energy stops falling once the weights'
  traffic is amortised and the step is compute-bound).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from atomspark.mapping.hardware import DenseHardware, load_hardware
from atomspark.sim.core import AtomsparkError, require_int

LAUNCH_MODELS = ("fused", "per-op")
MAX_BATCH = 2**16
OPTIMAL_WITHIN = 0.01


@dataclass(frozen=True)
class Phase:
    """Identical iterations of one part of the algorithm (e.g. FISTA on one VN layer).

    iterations: measured per sample (summed over sweeps). flops / sample_bytes: per sample and
    iteration; weight_bytes: per iteration, shared by the batch (read once); ops: tensor
    operations per iteration (kernel launches when nothing is fused)."""

    name: str
    iterations: np.ndarray
    flops: float
    weight_bytes: float
    sample_bytes: float
    ops: float

    def iterations_at(self, batch: int) -> float:
        """Iterations a batch runs: the sample's own count at batch 1 (mean over samples), the
        slowest measured sample's otherwise."""
        its = np.asarray(self.iterations, dtype=float)
        return float(its.mean() if batch == 1 else its.max())


@dataclass(frozen=True)
class DenseAlgorithm:
    """The GPU's own algorithm: its phases and how its iteration counts were measured."""

    name: str
    phases: tuple[Phase, ...]
    iterations_source: str
    precision: str = "fp32"

    def iterations_per_sample(self) -> float:
        return float(sum(np.mean(p.iterations) for p in self.phases))


@dataclass(frozen=True)
class GPUPrice:
    """One (batch, launch model) point, per sample unless named otherwise."""

    hardware: str
    batch: int
    launches: str
    iterations: float  # per sample at this batch (all phases)
    time_s: float  # batch time / batch (throughput); equals latency at batch 1
    latency_s: float  # time of one batch
    energy_j: float  # power model
    energy_tdp_bound_j: float  # TDP x time: the upper bound
    kernel_time_s: float  # roofline time of the kernels, per sample
    busy_fraction: float
    bound: str  # "launch", "memory" or "compute": what sets the iteration time

    def to_dict(self) -> dict:
        return asdict(self)


def price_algorithm(
    alg: DenseAlgorithm, gpu: str | DenseHardware, batch: int = 1, launches: str = "fused"
) -> GPUPrice:
    """Time and energy per sample of `alg` on `gpu` in batches of `batch` (module docstring)."""
    hw = load_hardware(gpu) if isinstance(gpu, str) else gpu
    if not isinstance(hw, DenseHardware):
        raise AtomsparkError(f"gpu {getattr(hw, 'name', hw)!r}: expected a GPU/CPU description")
    batch = require_int("batch", batch, minimum=1)
    if launches not in LAUNCH_MODELS:
        raise AtomsparkError(f"launches: must be one of {LAUNCH_MODELS}, got {launches!r}")
    if alg.precision not in hw.peak_flops:
        raise AtomsparkError(f"precision {alg.precision!r} unknown for {hw.name}")
    peak, bw = hw.peak_flops[alg.precision], hw.bandwidth_bytes_per_s
    total = kernel = iters = 0.0
    limits = {"launch": 0.0, "memory": 0.0, "compute": 0.0}
    for ph in alg.phases:
        n = ph.iterations_at(batch)
        compute = batch * ph.flops / peak
        memory = (ph.weight_bytes + batch * ph.sample_bytes) / bw
        launch = (1.0 if launches == "fused" else ph.ops) * hw.launch_overhead_s
        step = max(compute, memory, launch)
        total += n * step
        kernel += n * max(compute, memory)
        iters += n
        costs = {"launch": launch, "memory": memory, "compute": compute}
        limits[max(costs, key=costs.get)] += n * step
    energy = hw.idle_power_w * total + (hw.busy_power_w - hw.idle_power_w) * kernel
    return GPUPrice(
        hardware=hw.name,
        batch=batch,
        launches=launches,
        iterations=iters,
        time_s=total / batch,
        latency_s=total,
        energy_j=energy / batch,
        energy_tdp_bound_j=hw.tdp_w * total / batch,
        kernel_time_s=kernel / batch,
        busy_fraction=kernel / total if total > 0 else 0.0,
        bound=max(limits, key=limits.get),
    )


def throughput_batch(
    alg: DenseAlgorithm, gpu: str | DenseHardware, launches: str, max_batch: int = MAX_BATCH
) -> int:
    """Smallest power-of-two batch within 1 % of the lowest energy per sample up to max_batch."""
    max_batch = require_int("max_batch", max_batch, minimum=1)
    batches = [2**i for i in range(int(np.log2(max_batch)) + 1)]
    energies = [price_algorithm(alg, gpu, b, launches).energy_j for b in batches]
    best = min(energies)
    return next(b for b, e in zip(batches, energies) if e <= best * (1 + OPTIMAL_WITHIN))


def gpu_table(alg: DenseAlgorithm, gpu: str | DenseHardware) -> list[GPUPrice]:
    """Batch 1 and the throughput-optimal batch, each with fused and per-op launches."""
    rows = []
    for launches in LAUNCH_MODELS:
        rows.append(price_algorithm(alg, gpu, 1, launches))
        rows.append(price_algorithm(alg, gpu, throughput_batch(alg, gpu, launches), launches))
    return rows


def assumptions(alg: DenseAlgorithm, gpu: str | DenseHardware) -> str:
    """One paragraph that goes next to every ratio computed from these prices."""
    hw = load_hardware(gpu) if isinstance(gpu, str) else gpu
    ops = ", ".join(f"{p.name} {p.ops:.0f}" for p in alg.phases)
    return (
        f"GPU side: {alg.name}, {alg.iterations_per_sample():.0f} iterations per sample "
        f"({alg.iterations_source}); {alg.precision} roofline on {hw.name} "
        f"({hw.peak_flops[alg.precision]:.3g} FLOP/s, {hw.bandwidth_bytes_per_s:.3g} B/s); an "
        f"iteration takes max(roofline, launches x {hw.launch_overhead_s * 1e6:g} us); fused = 1 "
        f"launch per iteration, per-op = one per tensor op ({ops} per iteration); batch > 1 runs "
        f"to its slowest measured sample; energy = {hw.idle_power_w:g} W idle x time + "
        f"({hw.busy_power_w:g} - {hw.idle_power_w:g}) W x kernel time; TDP {hw.tdp_w:g} W x "
        f"time is the upper bound"
    )
