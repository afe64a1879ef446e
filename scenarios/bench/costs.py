"""Cost of inference per sample: VN on a neuromorphic chip from its event-engine counters, and each
baseline's forward pass priced on a dense device (GPU presets) by the project's roofline model.

Baseline work is counted while the network runs one forward pass (torch dispatch): FLOPs of
matrix products and convolutions by torch's FlopCounterMode, plus one FLOP per output element of
every other non-view operator (element-wise work); each non-view operator is one kernel launch
(eager PyTorch); bytes moved = the fp32 weights once per batch + every non-view operator's output
written once and read once. The price is mapping.energy.dense_cost at batch 1 (latency) and at
batch `GPU_BATCH` (throughput, per sample).
"""

from __future__ import annotations

import numpy as np
import torch
from atomspark.mapping.costs import compare_costs
from atomspark.mapping.energy import dense_cost
from atomspark.mapping.hardware import load_hardware
from atomspark.sim.neurobench import neurobench_metrics
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

GPU_BATCH = 256
BYTES_FP32 = 4


class _OpCounter(TorchDispatchMode):
    """Counts non-view operators and the elements they write."""

    def __init__(self):
        super().__init__()
        self.launches = 0
        self.elements = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not getattr(func, "is_view", False):
            self.launches += 1
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    self.elements += t.numel()
        return out


def torch_workload(net: torch.nn.Module, dim: int) -> dict:
    """FLOPs, elements written, kernel launches and weights of one forward pass at batch 1."""
    x = torch.zeros(1, dim)
    obs = torch.ones(1, dim)
    net = net.to("cpu").eval()
    counter = _OpCounter()
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)  # fused encoder kernels hide their FLOPs
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as flops, counter:
            net(x, obs)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    n_weights = sum(p.numel() for p in net.parameters())
    return {
        "matmul_flops": float(flops.get_total_flops()),
        "elementwise_flops": float(counter.elements),
        "launches": counter.launches,
        "activation_elements": counter.elements,
        "weights": int(n_weights),
    }


def price_workload(work: dict, gpu: str, batch: int) -> dict:
    """Per-sample energy/time of `work` run in batches of `batch` on a dense device preset."""
    hw = load_hardware(gpu)
    flops = (work["matmul_flops"] + work["elementwise_flops"]) * batch
    bytes_moved = BYTES_FP32 * (work["weights"] + 2 * work["activation_elements"] * batch)
    cost = dense_cost(flops, bytes_moved, hw, n_launches=work["launches"])
    return {
        "hardware": hw.name,
        "batch": batch,
        "energy_j_per_sample": cost.energy_j / batch,
        "time_s_per_sample": cost.time_s / batch,
        "bound": cost.bound,
    }


def baseline_costs(net: torch.nn.Module, dim: int, gpu: str) -> dict:
    """The workload of one forward pass and its price at batch 1 and GPU_BATCH."""
    work = torch_workload(net, dim)
    return {
        "workload": work,
        "gpu_batch1": price_workload(work, gpu, 1),
        f"gpu_batch{GPU_BATCH}": price_workload(work, gpu, GPU_BATCH),
    }


def vn_costs(run: dict, n_samples: int, hardware: str, gpu: str, steps: int) -> dict:
    """Price an engine run (VNBench.engine_run) on the chip, and its dense equivalent on `gpu`."""
    comp = compare_costs(run["graph"], run["profile"], hardware, gpu, n_samples=n_samples)
    chip = comp.neuromorphic
    summary = run["profile"].summary()
    K = run["codes"].shape[1]
    return {
        "engine_steps": steps,
        "samples": n_samples,
        "engine_vs_reference_ista_max_rel_error": run["max_rel_error"],
        "engine_vs_converged_settle_max_rel_error": run["max_rel_error_vs_converged"],
        "engine_wall_s_per_sample": run["wall_s_per_sample"],
        "events_per_sample": summary["total_events"] / n_samples,
        "synops_per_sample": summary["total_synops"] / n_samples,
        "active_fraction_final": float(np.mean(run["codes"] != 0)),
        "active_fraction_mean_over_steps": float(
            np.mean(list(summary["mean_active_fraction"].values()))
        ),
        "atoms": K,
        "neurobench": neurobench_metrics(run["graph"], run["profile"], n_samples),
        "chip": {
            "hardware": chip.hardware,
            "energy_j_per_sample": chip.energy_per_sample_j,
            "time_s_per_sample": chip.time_per_sample_s,
            "cores": chip.cores_used,
        },
        "dense_equivalent_gpu_batch1": {
            "hardware": comp.dense.hardware,
            "energy_j_per_sample": comp.dense.energy_j,
            "time_s_per_sample": comp.dense.time_s,
        },
    }
