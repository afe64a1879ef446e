"""The GPU's own algorithm, measured on the same samples the chip runs, then priced.

VN: the torch path's joint FISTA over all layers (networks/torch_path/vn_joint.py; FISTA with
function-value restart; block descent for top-k models) runs to the loosest tolerance whose
codes are as close to the converged reference as the chip's codes are (the "same tolerance");
its iteration counts per sample, and the tensor operations one iteration launches (counted by a
dispatch-mode trace of the torch path), go into mapping/gpu_pricing.py. RSGN: the published
forward runs its K propagation steps, its messages priced as a dense product or as a sparse
gather over the stored synapses.

On a GPU (`meter` given, e.g. NVML), the same torch workload is also timed (eager PyTorch) and
its board energy measured at batch 1 and at the throughput-optimal batch; the measurement
replaces the per-op rows only (eager launches one kernel per op), labelled as such.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase, assumptions, gpu_table
from atomspark.mapping.layouts import unit_width
from atomspark.networks.torch_path.convert import rsgn_to_torch, vn_to_torch
from atomspark.networks.torch_path.vn_joint import joint_hessian, joint_settle
from atomspark.networks.torch_path.vn_torch import proximal_descent, settle
from atomspark.networks.vn.model import VNModel
from atomspark.scenarios.compare.gpu_meter import measure
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph
from torch.utils._python_dispatch import TorchDispatchMode

# stopping tolerances tried, loosest first, in 1-2-5 steps: a decade ladder held the GPU to up to
# ten times the accuracy the chip reaches (the loosest passing rung lies between two decades)
TOLERANCE_LADDER = (
    1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5, 5e-6, 2e-6, 1e-6,
    5e-7, 2e-7, 1e-7, 5e-8, 2e-8, 1e-8, 1e-10,
)  # fmt: skip
RUNGS_PER_DECADE = 3
SETTLE_LIMITS = {"max_iter": 5000, "sweeps": 200}
JOINT_LIMITS = {"max_iter": 20000}
BYTES = 4  # fp32 on the GPU
# ops that only re-describe a tensor (no kernel launch)
_NO_KERNEL = {
    "view", "_unsafe_view", "expand", "t", "transpose", "slice", "select", "unsqueeze",
    "squeeze", "as_strided", "alias", "detach", "lift_fresh", "permute", "reshape",
}  # fmt: skip


class _OpCounter(TorchDispatchMode):
    """Counts aten operations that launch a kernel (views excluded)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ not in _NO_KERNEL:
            self.count += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn: Callable[[], object]) -> int:
    """Kernel-launching tensor ops that fn() runs (eager PyTorch launches one kernel per op)."""
    with torch.no_grad(), _OpCounter() as counter:
        fn()
    return counter.count


def relative_code_error(codes: list[np.ndarray], reference: list[np.ndarray]) -> np.ndarray:
    """Per sample: max |g - g_ref| / max |g_ref| over all layers' codes."""
    a, b = np.concatenate(codes, axis=1), np.concatenate(reference, axis=1)
    return np.abs(a - b).max(axis=1) / np.maximum(np.abs(b).max(axis=1), 1e-300)


@dataclass(frozen=True)
class MatchedSettle:
    """The GPU's VN settle at the tolerance that matches the chip's accuracy."""

    algorithm: str  # "joint" (FISTA on all layers at once) or "block" (top-k models)
    tol: float
    iterations: np.ndarray  # (samples,) joint, or (samples, layers) block
    max_rel_error: float  # of these codes against the converged reference
    target_rel_error: float  # the chip's


def gpu_settle(model: VNModel, x: np.ndarray, tol: float, max_iter: int | None = None):
    """(codes, iterations) of the GPU's settle: joint FISTA, or block descent with top-k;
    `max_iter` caps the iterations (default: JOINT_LIMITS / SETTLE_LIMITS)."""
    module = vn_to_torch(model)
    xt = torch.from_numpy(np.asarray(x, dtype=model.dtype))
    with torch.no_grad():
        if model.layers[-1].topk is None:
            limit = JOINT_LIMITS["max_iter"] if max_iter is None else max_iter
            codes, iterations, _ = joint_settle(module, xt, tol=tol, max_iter=limit)
        else:
            kw = SETTLE_LIMITS if max_iter is None else {**SETTLE_LIMITS, "max_iter": max_iter}
            res = settle(module, xt, tol=tol, **kw)
            codes, iterations = res.codes, res.iterations
    return [c.numpy() for c in codes], iterations.numpy()


def match_tolerance(
    model: VNModel, x: np.ndarray, reference: list[np.ndarray], target_rel_error: float
) -> MatchedSettle:
    """Loosest tolerance on the ladder whose torch codes are within the chip's relative error of
    the reference on every sample (the tightest rung if none is)."""
    kind = "joint" if model.layers[-1].topk is None else "block"
    for tol in TOLERANCE_LADDER:
        codes, iterations = gpu_settle(model, x, tol)
        err = relative_code_error(codes, reference)
        if err.max() <= target_rel_error or tol == TOLERANCE_LADDER[-1]:
            return MatchedSettle(kind, tol, iterations, float(err.max()), target_rel_error)
    raise AssertionError("unreachable")  # pragma: no cover


def _fista_ops_per_iteration(H: torch.Tensor, topk: int | None = None) -> int:
    """Ops of one FISTA iteration of the torch path on Hessian H: trace 3 and 2 iterations and
    take the difference (tol < 0: nothing converges, so both run in full). The step size is
    given (its eigensolve is set-up, the same in both traces, and O(K^3) at large K)."""
    b = torch.ones(1, H.shape[0], dtype=H.dtype)
    eta = torch.ones((), dtype=H.dtype)

    def run(n: int):
        return lambda: proximal_descent(
            H, b, 0.1, torch.zeros_like(b), "fista", -1.0, n, topk, eta=eta
        )

    return count_ops(run(3)) - count_ops(run(2))


def _fista_phase(name: str, H: np.ndarray, iterations, topk: int | None = None) -> Phase:
    """Per iteration: two products with H's nonzero blocks (the gradient at the momentum point
    and the restart test's E(z) - E(g)) and ~20 element-wise ops on the K codes; H (fp32, its
    nonzero entries) is read once per iteration and batch."""
    nnz, K = float(np.count_nonzero(H)), H.shape[0]
    return Phase(
        name=name,
        iterations=np.asarray(iterations, dtype=float),
        flops=2 * 2.0 * nnz + 20.0 * K,
        weight_bytes=BYTES * nnz,
        sample_bytes=BYTES * 8.0 * K,
        ops=_fista_ops_per_iteration(torch.from_numpy(H), topk),
        gemm_fraction=4.0 * nnz / (4.0 * nnz + 20.0 * K),
    )


def vn_algorithm(model: VNModel, matched: MatchedSettle) -> DenseAlgorithm:
    """The GPU's VN settle: joint FISTA on the block-tridiagonal Hessian (one phase), or, for a
    top-k model, block descent (one phase per layer, its Gram matrix). Hessian / Gram matrices
    and step sizes depend on the model only and are precomputed (not priced)."""
    module = vn_to_torch(model)
    with torch.no_grad():
        if matched.algorithm == "joint":
            H = joint_hessian(module).numpy()
            phases = (_fista_phase("joint FISTA", H, matched.iterations),)
        else:
            phases = tuple(
                _fista_phase(
                    f"layer{l} FISTA",
                    (S.T @ S).numpy(),
                    matched.iterations[:, l],
                    model.layers[l].topk if l == model.n_layers - 1 else None,
                )
                for l, S in enumerate(module.S)
            )
    name = {
        "joint": "joint FISTA with function-value restart over all layers (torch path)",
        "block": "block-coordinate FISTA with restart (torch path; top-k is non-convex)",
    }[matched.algorithm]
    return DenseAlgorithm(
        name=name,
        phases=phases,
        iterations_source=(
            f"measured by the torch path on the same samples at tol {matched.tol:g}, the "
            f"loosest tolerance within the chip's max relative code error "
            f"{matched.target_rel_error:.2g} (torch: {matched.max_rel_error:.2g})"
        ),
        convergence_test=True,
    )


def rsgn_algorithm(
    params, config, graph: Graph, samples: int, kernel: str = "dense", readout: bool = True
) -> DenseAlgorithm:
    """The forward as released, from the ignition to the class scores, as the chip rows price
    it: K propagation steps per sample, then the readout. Per step and sample: messages W^T x
    over N nodes of width d, either as a dense N x N product (tensor cores) or, kernel "sparse",
    as a gather over the nnz synapses the graph stores (CUDA cores; fp32 values plus a 4-byte
    index each); then W_h (a dense d x d product per node) and ~4 element-wise ops per state
    entry; states read and written once (3 N d values). The readout, once per sample:
    F = sum_j alpha_j h_j (2 N d FLOPs) and F cls_w + cls_b (2 d C + C), cls_w read once per
    batch; `readout` False: left out, as where the chip's bundle reads out on the host (the
    node layout). Ops (kernel launches): per step the torch forward's ops in its K steps / K,
    the readout's own (TorchRSGN.readout). The encoder (each sample's ignition) and the weights'
    preparation are priced on neither side (the chip's bundle takes the ignition from the host:
    scenarios/compare/rsgn_compare.ENCODER_NOTE). K = 0 (the ignition, then the readout): no
    propagation step is priced (the phase runs no iteration), as torch runs none; only where
    the readout is not priced either (nothing left to run from the ignition) one step is, so
    that the ratio stays defined. The measured path times the same ops (rsgn_timed_work)."""
    n, d = graph.total_units, unit_width(graph)
    c = int(config.n_classes)
    nnz = float(sum(p.n_synapses for p in graph.projections))
    if kernel == "dense":
        messages, weights, index = 2.0 * n * n * d, float(n * n), 0.0
    elif kernel == "sparse":
        messages, weights, index = 2.0 * nnz * d, nnz, BYTES * (nnz + n + 1)
    else:
        raise AtomsparkError(f"kernel: choose dense or sparse, got {kernel!r}")
    transform = 2.0 * n * d * d
    flops = messages + transform + 4.0 * n * d
    gemm = (messages if kernel == "dense" else 0.0) + transform
    module = rsgn_to_torch(params, config).eval()
    dtype = module.positions.dtype
    tokens = torch.zeros(1, 4, config.d_in, dtype=dtype)
    k = int(config.n_steps)
    outside = count_ops(lambda: module(tokens, n_steps=0))  # the encoder, set-up and readout
    steps_ops = count_ops(lambda: module(tokens, n_steps=max(k, 1))) - outside
    alpha, h = torch.zeros(1, n, dtype=dtype), torch.zeros(1, n, d, dtype=dtype)
    readout_ops = count_ops(lambda: module.readout(alpha, h))
    readout_flops = 2.0 * n * d + 2.0 * d * c + c
    what = "dense N x N messages" if kernel == "dense" else f"sparse gather over {nnz:.0f} synapses"
    return DenseAlgorithm(
        name=f"RSGN forward ({config.mode} model, {what}), K = {k} steps"
        + (" and the readout (torch)" if readout else " (torch; readout on the host)"),
        phases=(
            Phase(
                name="propagation step",
                iterations=np.full(samples, k if k or readout else 1, dtype=float),
                flops=flops,
                weight_bytes=BYTES * (weights + d * d),
                sample_bytes=BYTES * 3.0 * n * d,
                ops=steps_ops / max(k, 1),
                gemm_fraction=gemm / flops,
                index_bytes=index,
            ),
            Phase(
                name="readout",
                iterations=np.ones(samples, dtype=float),
                flops=readout_flops,
                weight_bytes=BYTES * (d * c + c),
                sample_bytes=BYTES * (n * d + n + c),
                ops=float(readout_ops),
                gemm_fraction=(2.0 * d * c) / readout_flops,
            ),
        )[: 2 if readout else 1],
        iterations_source="the model's K propagation steps and one readout (no tolerance: a "
        "fixed forward)",
        kernel=kernel,
    )


def gpu_side(
    alg: DenseAlgorithm,
    gpu: str,
    chip_energy_j: float,
    chip_time_s: float,
    meter: Callable[[int], object] | None = None,
) -> dict:
    """Rows (batch 1 / throughput batch x graph / per-iteration / per-op launches), the batch-1
    rows with energy and time ratios against the chip's one sample (a batched row has none here:
    its ratio is the headline's at throughput, mapping/chip_gpu_ratios.py, against the chip's
    copies side by side, the one definition of throughput), and the assumptions. meter(batch) -> Measured (one batch of
    eager torch on the device): where given, its time (and NVML energy where metered) replace the
    model's per-op row, the launch model eager PyTorch runs; the other rows stay modelled."""
    rows = []
    measured: dict[int, Measured] = {}
    for price in gpu_table(alg, gpu):
        row = price.to_dict()
        row["source"] = "model (mapping/gpu_pricing.py)"
        if meter is not None and price.launches == "per-op":
            if price.batch not in measured:
                measured[price.batch] = meter(price.batch)
            m = measured[price.batch]
            row.update(time_s=m.time_s / price.batch, latency_s=m.time_s, source=m.source)
            row["launches"] = row["launch_model"] = "per-op (measured: eager PyTorch)"
            if m.energy_j is not None:
                row["energy_j"] = m.energy_j / price.batch
            else:
                row["source"] += "; energy: model"
        one = price.batch == 1
        row["energy_ratio_gpu_over_chip"] = (
            row["energy_j"] / max(chip_energy_j, 1e-300) if one else None
        )
        row["time_ratio_gpu_over_chip"] = row["time_s"] / max(chip_time_s, 1e-300) if one else None
        rows.append(row)
    return {
        "algorithm": alg.name,
        "iterations_per_sample": alg.iterations_per_sample(),
        "iterations_source": alg.iterations_source,
        "rows": rows,
        "assumptions": assumptions(alg, gpu),
    }


def format_rows(name: str, side: dict) -> list[str]:
    """Printable lines: one per GPU row, with both ratios; then the assumptions."""
    lines = []
    for r in side["rows"]:
        lines.append(
            f"[gpu] {name}: {r['hardware']} batch {r['batch']:>5d} {r['launches']:6s} "
            f"{r['energy_j'] * 1e6:10.4g} uJ {r['time_s'] * 1e6:10.4g} us per sample "
            f"({r['bound']}-bound) | {_vs_chip(r)} [{r['source'].split(' (')[0]}]"
        )
    lines.append(f"[gpu] {name} assumptions: {side['assumptions']}")
    return lines


def _vs_chip(row: dict) -> str:
    if row["energy_ratio_gpu_over_chip"] is None:
        return "GPU/chip at throughput: the headline's (chip copies side by side)"
    return (
        f"GPU/chip energy {row['energy_ratio_gpu_over_chip']:.3g}x, "
        f"time {row['time_ratio_gpu_over_chip']:.3g}x"
    )


MAX_MEASURED_BATCH = 4096  # a measured batch is capped here (device memory of RSGN's (B, N, d))


@dataclass(frozen=True)
class Measured:
    """One batch measured on the device: wall time, and board energy (idle included, like the
    power model) when NVML could meter it, else None."""

    time_s: float
    energy_j: float | None
    source: str


def nvml_meter(make_work: Callable[[int], Callable[[], object]], device: torch.device):
    """meter(batch) for gpu_side: time and NVML board energy (scenarios/gpu_meter.measure) of
    the torch workload on a CUDA `device` at min(batch, MAX_MEASURED_BATCH) samples, scaled
    to `batch` when capped; None off CUDA (the model is all there is)."""
    if device.type != "cuda":
        return None

    def meter(batch: int) -> Measured:
        b = min(batch, MAX_MEASURED_BATCH)
        m = measure(make_work(b), device)
        scale = batch / b
        capped = f", measured at batch {b} and scaled" if b < batch else ""
        energy = m.board_energy_per_call_j if m.measured else None
        return Measured(
            time_s=m.time_per_call_s * scale,
            energy_j=None if energy is None else energy * scale,
            source=f"measured on {m.device_name}: time, {m.energy_detail}{capped}",
        )

    return meter


def _tiled(x: np.ndarray, batch: int) -> np.ndarray:
    return np.resize(x, (batch,) + x.shape[1:])


def vn_gpu_side(
    model: VNModel,
    x: np.ndarray,
    reference: list[np.ndarray],
    chip_codes: list[np.ndarray],
    gpu: str,
    chip_energy_j: float,
    chip_time_s: float,
    device: torch.device,
) -> dict:
    """The GPU's VN settle to the chip's accuracy on the same samples, priced (and measured on
    CUDA): see gpu_side."""
    target = float(relative_code_error(chip_codes, reference).max())
    matched = match_tolerance(model, x, reference, target)
    alg = vn_algorithm(model, matched)

    def make_work(batch: int):
        module = vn_to_torch(model).to(device=device, dtype=torch.float32)
        xt = torch.from_numpy(_tiled(x, batch)).to(device=device, dtype=torch.float32)
        if matched.algorithm == "joint":
            return lambda: joint_settle(module, xt, tol=matched.tol, **JOINT_LIMITS)
        return lambda: settle(module, xt, tol=matched.tol, **SETTLE_LIMITS)

    side = gpu_side(alg, gpu, chip_energy_j, chip_time_s, nvml_meter(make_work, device))
    side["tolerance"] = dataclasses.asdict(matched) | {"iterations": matched.iterations.tolist()}
    return side


def rsgn_gpu_side(
    params,
    config,
    graph: Graph,
    x: np.ndarray,
    gpu: str,
    chip_energy_j: float,
    chip_time_s: float,
    device: torch.device,
    readout: bool = True,
) -> dict:
    """The published RSGN forward on the same samples, priced (and measured on CUDA: from the
    ignition, rsgn_timed_work, the ops priced); readout: rsgn_algorithm's."""
    alg = rsgn_algorithm(params, config, graph, len(x), readout=readout)

    def make_work(batch: int):
        module = rsgn_to_torch(params, config).to(device=device, dtype=torch.float32).eval()
        xt = torch.from_numpy(_tiled(x, batch)).to(device=device, dtype=torch.float32)
        return rsgn_timed_work(module, xt, readout)

    return gpu_side(alg, gpu, chip_energy_j, chip_time_s, nvml_meter(make_work, device))


REFERENCE_SETTLE = {"tol": 1e-10, "max_iter": 5000, "sweeps": 200}


def rsgn_timed_work(module, tokens: torch.Tensor, readout: bool = True) -> Callable[[], object]:
    """What the measured GPU path times: the K steps from each sample's ignition and, where the
    row prices one, the readout (TorchRSGN.from_ignition), exactly rsgn_algorithm's priced ops;
    the encoder (the ignition and initial states) and the weights' set-up (W, the inhibition
    neighbourhoods) run once, before, outside the timed region, as they are priced on neither
    side."""
    with torch.no_grad():
        tokens = tokens.to(device=module.positions.device, dtype=module.positions.dtype)
        alpha, h = module.initial_state(tokens)
        prepared = module.prepare()

    def work():
        with torch.no_grad():
            return module.from_ignition(alpha, h, prepared, readout)

    return work
