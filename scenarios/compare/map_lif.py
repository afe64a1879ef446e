"""The map's LIF family: the CUBA network (scenarios/runs/cuba.py: current-based LIF, 80 %
excitatory, random 2 % connectivity) at n neurons, one sample = `LIF_STEPS` steps of 0.1 ms (a
100 ms inference window, a choice of this map), firing share per step as the activity axis.

Nothing here depends on trained values: the chip row prices the network's graph with each
neuron updating every step and a share `activity` of them spiking to their whole fan-out
(map_points.activity_profile), stopped after the fixed window. The GPU runs the same network
step by step, batched (one network per sample), as a user would: per step the synaptic input as a
dense N x N product (tensor cores) or as a CSR gather over the stored synapses (CUDA cores), and
~`LIF_ELEMENTWISE` element-wise operations per neuron (two current decays, the voltage update,
threshold, reset and refractory count); no convergence test (a fixed window). Its fp32 run is the
model's own arithmetic; a reduced precision moves spike times and is not tested here, so it
counts as not reaching the chip's accuracy (labelled)."""

from __future__ import annotations

import numpy as np
from atomspark.mapping.chip_gpu_ratios import GPUVariant
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase
from atomspark.mapping.hardware import NeuromorphicHardware

LIF_STEPS = 1000  # one sample: a 100 ms window at dt 0.1 ms
LIF_SAMPLES = 16
LIF_ELEMENTWISE = 10  # element-wise ops per neuron and step
LIF_STATE = 4  # values per neuron read and written each step (v, two currents, refractory count)
LIF_LAUNCHES = 8  # tensor operations per step in eager PyTorch (product(s), decays, spike, reset)
BYTES = 4
LIF_NEURONS = {"ci": (250, 500), "full": (500, 1000, 2000, 4000, 8000)}
LIF_ACTIVITIES = {"ci": (0.003,), "full": (0.001, 0.003, 0.01)}
PRECISIONS = ("fp32", "tf32", "bf16", "int8")


def lif_algorithm(n: int, nnz: int, samples: int, kernel: str) -> DenseAlgorithm:
    """The GPU's LIF run of `samples` windows (module docstring)."""
    if kernel == "dense":
        synaptic, weights, index, gemm = 2.0 * n * n, float(n * n), 0.0, 2.0 * n * n
    else:
        synaptic, weights, index, gemm = 2.0 * nnz, float(nnz), BYTES * (nnz + n + 1.0), 0.0
    flops = synaptic + LIF_ELEMENTWISE * n
    what = "dense N x N product" if kernel == "dense" else f"CSR gather over {nnz} synapses"
    return DenseAlgorithm(
        name=f"LIF network step by step ({what}), {LIF_STEPS} steps per sample",
        phases=(
            Phase(
                name="LIF step",
                iterations=np.full(samples, float(LIF_STEPS)),
                flops=flops,
                weight_bytes=BYTES * weights,
                sample_bytes=BYTES * 2.0 * LIF_STATE * n,
                ops=LIF_LAUNCHES,
                gemm_fraction=gemm / flops,
                index_bytes=index,
            ),
        ),
        iterations_source=f"a fixed {LIF_STEPS}-step window (no tolerance)",
        kernel=kernel,
    )


def lif_price(point: dict, carried: dict, hw: NeuromorphicHardware):
    """The CUBA network of the point's size on the chip (fixed window) and its GPU variants."""
    import dataclasses

    from atomspark.scenarios.compare.activity_profile import activity_profile
    from atomspark.scenarios.compare.chip_rows import FIXED_STOP, chip_row
    from atomspark.scenarios.runs.cuba import CubaConfig, cuba_graph, cuba_network

    net = cuba_network(CubaConfig(n=int(point["neurons"])))
    graph = cuba_graph(net)
    profile = activity_profile(graph, LIF_STEPS * LIF_SAMPLES, float(point["activity"]))
    detail = f"a fixed window of {LIF_STEPS} steps per sample"
    row = chip_row(graph, profile, hw, LIF_SAMPLES, None, FIXED_STOP, detail)
    variants = []
    for kernel in ("dense", "sparse"):
        alg = lif_algorithm(graph.total_units, net.n_synapses, LIF_SAMPLES, kernel)
        for p in PRECISIONS:
            reaches = p == "fp32"
            words = ("the model's own arithmetic" if reaches else
                     "not tested: a reduced precision moves spike times")  # fmt: skip
            variants.append(GPUVariant(p, kernel, dataclasses.replace(alg, precision=p),
                                       reaches, words))  # fmt: skip
    return row, variants


def lif_grid(name: str, carried=None) -> list[dict]:
    points = []
    for activity in LIF_ACTIVITIES[name]:
        for n in LIF_NEURONS[name]:
            points.append({"neurons": n, "activity": activity, "size": n,
                           "series": f"activity {activity:g}"})  # fmt: skip
    return points
