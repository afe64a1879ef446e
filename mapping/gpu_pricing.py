"""The GPU side of a chip-vs-GPU comparison, priced on the GPU's own algorithm.

A GPU user does not run the chip's algorithm (e.g. 1500 Jacobi-ISTA steps, one kernel launch per
projection per step). They run their best dense algorithm to the same tolerance, batched. This
module prices such an algorithm, described as phases of identical iterations whose counts were
MEASURED (by the torch path on the same samples, scenarios/compare/gpu_side.py):

* precision: fp32 (CUDA cores), or the tensor-core formats the hardware file gives a peak for
  (tf32, bf16, int8). A phase's matrix products (`gemm_fraction` of its FLOPs) run at that
  precision's peak, the rest (element-wise work, sparse gathers) at the fp32 CUDA-core peak;
  weights and activations move at that precision's width (4, 4, 2, 1 bytes), sparse indices at
  4 bytes (`index_bytes`).
* time: per iteration, a roofline max(FLOPs / peak, bytes / bandwidth) for the batch, against
  the launch model's overhead: "per-op" (eager: one host launch per tensor operation, the op count
  of the torch path), "per-iteration" (one fused kernel launched per iteration) or "graph" (the
  loop captured in a CUDA graph or run by one persistent kernel: no host launch, a device-side
  step overhead per iteration). Launches are asynchronous, so an iteration takes
  max(roofline time, overhead): tiny kernels leave the GPU launch-bound.
* the convergence test is paid for (an algorithm with `convergence_test`, e.g. FISTA run to a
  tolerance): each iteration adds a reduction over the codes (3 FLOPs and 4 bytes per code, in
  the phase's `sample_bytes` and `flops` already) and the decision to stop: under "graph" one
  more device-side step (a conditional node of the captured loop: one graph-step overhead), under
  "per-iteration" and "per-op" a host read of the flag (a synchronisation, priced as one more
  launch overhead: an estimate, the same order as a launch).
* memory as it is: when an iteration's whole working set (weights, sparse indices and the batch's
  per-sample operands, at the precision's width) fits in the GPU's L2 cache (`l2_bytes` of the
  hardware file), only the first iteration of a phase reads it from main memory; every later one
  reads it from L2 at `l2_bandwidth_bytes_per_s` (the cache keeps it across kernels and graph
  steps). A working set larger than L2 is read from main memory every iteration (no partial
  residency is credited). A persistent kernel that holds its operands in shared memory would be
  faster still: not priced (it favours the chip).
* batches run until their slowest sample converges: batch 1 uses each sample's own iteration
  count (the mean over samples), a larger batch the largest measured count.
* energy = power x time with a two-level power model: the board draws its idle power while held
  and busy power while kernels run at the roofline rate. static_scope "device" (default): the
  whole board is held for the workload's time (idle x time + (busy - idle) x kernel time);
  "shared": only the device-time the kernels use is charged (busy x kernel time), as a chip's
  "shared" scope charges only the cores in use. TDP x time is reported beside it as an upper
  bound. The powers and overheads come from the hardware file (each with its source).
* the throughput-optimal batch is the smallest power of two whose energy per sample is within 1 %
  of the best over batches up to `max_batch` (per-sample energy stops falling once the weights'
  traffic is amortised and the step is compute-bound).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from atomspark.mapping.hardware import DenseHardware, load_hardware
from atomspark.sim.core import AtomsparkError, require_int

LAUNCH_MODELS = ("graph", "per-iteration", "per-op")
STATIC_SCOPES = ("device", "shared")
BYTES_PER_ELEMENT = {"fp32": 4, "tf32": 4, "bf16": 2, "int8": 1}
MAX_BATCH = 2**16
OPTIMAL_WITHIN = 0.01


@dataclass(frozen=True)
class Phase:
    """Identical iterations of one part of the algorithm (e.g. FISTA on one VN layer).

    iterations: measured per sample (summed over sweeps). flops / sample_bytes: per sample and
    iteration (bytes in fp32); weight_bytes: per iteration, shared by the batch (read once, fp32);
    ops: tensor operations per iteration (kernel launches when nothing is fused); gemm_fraction:
    share of the FLOPs in matrix products (tensor cores); index_bytes: sparse indices read per
    iteration (shared by the batch, not scaled by precision)."""

    name: str
    iterations: np.ndarray
    flops: float
    weight_bytes: float
    sample_bytes: float
    ops: float
    gemm_fraction: float = 1.0
    index_bytes: float = 0.0

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
    kernel: str = "dense"  # "dense" or "sparse" (a gather over stored synapses)
    convergence_test: bool = False  # stops on a tolerance it tests itself (module docstring)

    def iterations_per_sample(self) -> float:
        return float(sum(np.mean(p.iterations) for p in self.phases))


@dataclass(frozen=True)
class GPUPrice:
    """One (batch, launch model, precision, static scope) point, per sample unless named."""

    hardware: str
    batch: int
    launches: str  # the launch model
    iterations: float  # per sample at this batch (all phases)
    time_s: float  # batch time / batch (throughput); equals latency at batch 1
    latency_s: float  # time of one batch
    energy_j: float  # power model
    energy_tdp_bound_j: float  # TDP x time: the upper bound
    kernel_time_s: float  # roofline time of the kernels, per sample
    busy_fraction: float
    bound: str  # "launch", "memory" or "compute": what sets the iteration time
    precision: str = "fp32"
    static_scope: str = "device"
    kernel: str = "dense"
    memory_level: str = "main"  # "l2": every phase's working set stays in L2 after iteration 1

    def to_dict(self) -> dict:
        out = asdict(self)
        out["launch_model"] = self.launches
        return out


def working_set_bytes(ph: Phase, batch: int, precision: str) -> float:
    """Bytes one iteration of `ph` reads for the batch at the precision's width."""
    width = BYTES_PER_ELEMENT.get(precision, 4) / 4.0
    return ph.weight_bytes * width + ph.index_bytes + batch * ph.sample_bytes * width


def l2_resident(ph: Phase, hw: DenseHardware, batch: int, precision: str) -> bool:
    """Whether the iteration's working set fits in the GPU's L2 (module docstring)."""
    return 0 < working_set_bytes(ph, batch, precision) <= hw.l2_bytes and (
        hw.l2_bandwidth_bytes_per_s > 0
    )


def _phase_step(
    ph: Phase,
    hw: DenseHardware,
    batch: int,
    precision: str,
    launches: str,
    test: bool = False,
    cached: bool = False,
):
    """(compute, memory, overhead) seconds of one iteration of `ph` for the batch; `test`: the
    iteration also decides whether to stop; `cached`: its operands are read from L2 (module
    docstring)."""
    gemm = ph.flops * ph.gemm_fraction
    compute = batch * (gemm / hw.peak_flops[precision] + (ph.flops - gemm) / hw.peak_flops["fp32"])
    bandwidth = hw.l2_bandwidth_bytes_per_s if cached else hw.bandwidth_bytes_per_s
    memory = working_set_bytes(ph, batch, precision) / bandwidth
    overhead = {
        "per-op": ph.ops * hw.launch_overhead_s,
        "per-iteration": hw.launch_overhead_s,
        "graph": hw.graph_step_overhead_s,
    }[launches]
    if test:
        overhead += hw.graph_step_overhead_s if launches == "graph" else hw.launch_overhead_s
    return compute, memory, overhead


def _checked(alg, gpu, batch, launches, precision, static_scope) -> tuple[DenseHardware, str, int]:
    hw = load_hardware(gpu) if isinstance(gpu, str) else gpu
    if not isinstance(hw, DenseHardware):
        raise AtomsparkError(f"gpu {getattr(hw, 'name', hw)!r}: expected a GPU/CPU description")
    batch = require_int("batch", batch, minimum=1)
    if launches not in LAUNCH_MODELS:
        raise AtomsparkError(
            f"launch model: choose one of {', '.join(LAUNCH_MODELS)}, got {launches!r}"
        )
    if static_scope not in STATIC_SCOPES:
        raise AtomsparkError(
            f"static scope: choose one of {', '.join(STATIC_SCOPES)}, got {static_scope!r}"
        )
    precision = alg.precision if precision is None else precision
    if precision not in hw.peak_flops or "fp32" not in hw.peak_flops:
        raise AtomsparkError(
            f"precision {precision!r}: {hw.name} gives peaks for {', '.join(sorted(hw.peak_flops))}"
        )
    return hw, precision, batch


def price_algorithm(
    alg: DenseAlgorithm,
    gpu: str | DenseHardware,
    batch: int = 1,
    launches: str = "graph",
    precision: str | None = None,
    static_scope: str = "device",
) -> GPUPrice:
    """Time and energy per sample of `alg` on `gpu` in batches of `batch` (module docstring)."""
    hw, precision, batch = _checked(alg, gpu, batch, launches, precision, static_scope)
    total = kernel = iters = 0.0
    limits = {"launch": 0.0, "memory": 0.0, "compute": 0.0}
    resident = [l2_resident(ph, hw, batch, precision) for ph in alg.phases]
    for ph, cached in zip(alg.phases, resident):
        n = ph.iterations_at(batch)
        # the first iteration fills L2 from main memory; later ones read L2 when it all fits
        for count, from_l2 in ((min(n, 1.0), False), (max(n - 1.0, 0.0), cached)):
            compute, memory, launch = _phase_step(
                ph, hw, batch, precision, launches, alg.convergence_test, from_l2
            )
            step = max(compute, memory, launch)
            total += count * step
            kernel += count * max(compute, memory)
            costs = {"launch": launch, "memory": memory, "compute": compute}
            limits[max(costs, key=costs.get)] += count * step
        iters += n
    busy = max(hw.busy_power_w, hw.idle_power_w)
    if static_scope == "device":
        energy = hw.idle_power_w * total + (busy - hw.idle_power_w) * kernel
    else:
        energy = busy * kernel
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
        precision=precision,
        static_scope=static_scope,
        kernel=alg.kernel,
        memory_level="l2" if resident and all(resident) else "main",
    )


def throughput_batch(
    alg: DenseAlgorithm,
    gpu: str | DenseHardware,
    launches: str,
    max_batch: int = MAX_BATCH,
    precision: str | None = None,
    static_scope: str = "device",
) -> int:
    """Smallest power-of-two batch within 1 % of the lowest energy per sample up to max_batch."""
    max_batch = require_int("max_batch", max_batch, minimum=1)
    hw = load_hardware(gpu) if isinstance(gpu, str) else gpu
    batches = [2**i for i in range(int(np.log2(max_batch)) + 1)]
    energies = [
        price_algorithm(alg, hw, b, launches, precision, static_scope).energy_j for b in batches
    ]
    best = min(energies)
    return next(b for b, e in zip(batches, energies) if e <= best * (1 + OPTIMAL_WITHIN))


def gpu_table(
    alg: DenseAlgorithm,
    gpu: str | DenseHardware,
    precision: str | None = None,
    static_scope: str = "device",
) -> list[GPUPrice]:
    """Batch 1 and the throughput-optimal batch under every launch model."""
    rows = []
    for launches in LAUNCH_MODELS:
        rows.append(price_algorithm(alg, gpu, 1, launches, precision, static_scope))
        b = throughput_batch(alg, gpu, launches, precision=precision, static_scope=static_scope)
        rows.append(price_algorithm(alg, gpu, b, launches, precision, static_scope))
    return rows


def assumptions(alg: DenseAlgorithm, gpu: str | DenseHardware, precision: str | None = None) -> str:
    """One paragraph that goes next to every ratio computed from these prices."""
    hw = load_hardware(gpu) if isinstance(gpu, str) else gpu
    precision = alg.precision if precision is None else precision
    ops = ", ".join(f"{p.name} {p.ops:.0f}" for p in alg.phases)
    l2 = (
        f"; a working set within its {hw.l2_bytes / 1e6:g} MB L2 is read from there at "
        f"{hw.l2_bandwidth_bytes_per_s:.3g} B/s after the first iteration"
        if hw.l2_bytes > 0
        else ""
    )
    return (
        f"GPU side: {alg.name}, {alg.iterations_per_sample():.0f} iterations per sample "
        f"({alg.iterations_source}); {precision} roofline on {hw.name} "
        f"({hw.peak_flops[precision]:.3g} FLOP/s matrix products, "
        f"{hw.peak_flops['fp32']:.3g} FLOP/s other work, {hw.bandwidth_bytes_per_s:.3g} B/s{l2}); an "
        f"iteration takes max(roofline, launch overhead): graph = "
        f"{hw.graph_step_overhead_s * 1e6:g} us per iteration, per-iteration = 1 host launch of "
        f"{hw.launch_overhead_s * 1e6:g} us, per-op = one per tensor op ({ops} per iteration); "
        f"batch > 1 runs to its slowest measured sample; energy = {hw.idle_power_w:g} W idle x "
        f"time + ({hw.busy_power_w:g} - {hw.idle_power_w:g}) W x kernel time (whole device held); "
        f"TDP {hw.tdp_w:g} W x time is the upper bound"
    )
