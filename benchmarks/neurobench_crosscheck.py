"""NeuroBench's own metrics (neurobench 2.3) on the torch modules of lava-dl networks, beside the
event engine's NeuroBench metrics (sim/neurobench.py) on the same network and inputs.

    .venv/bin/python benchmarks/neurobench_crosscheck.py --out docs/results/neurobench/crosscheck.json

The engine side and --render need neither torch nor neurobench. Running NeuroBench needs torch,
snntorch and neurobench (`pip install neurobench==2.3.0 --no-deps` is enough: its
metric modules import only torch and snntorch). tests/test_neurobench.py compares the engine's
figures with the committed NeuroBench figures, and reruns NeuroBench when it is installed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.scenarios.runs.netx_predict import run_samples, sample_inputs
from atomspark.sim.neurobench import neurobench_metrics

ROOT = Path(__file__).resolve().parents[1]
CASES = {  # name: (network file, input spec, samples, steps)
    "mnist": ("tests/data/netx/mnist.net", "rate:0.3:1", 3, 16),
    "pilotnet_snn": ("tests/data/netx/pilotnet_snn.net", "uniform:0", 2, 16),
}


def case_inputs(name: str):
    path, spec, samples, steps = CASES[name]
    net = read_netx(ROOT / path)
    ng = netx_graph(net)
    return net, ng, sample_inputs(net, ng, spec, samples, steps), steps


def torch_data(ng, inputs, steps: int, shape):
    """(samples, steps, ...) in torch's layout: spikes, or bias_mant as (C, H, W) per step."""
    import torch

    if ng.input_is_bias:
        c, h, w = shape
        frames = [s.bias.reshape(w, h, c).transpose(2, 1, 0) for s in inputs]
        return torch.as_tensor(np.stack([np.repeat(f[None], steps, 0) for f in frames]))
    return torch.as_tensor(np.stack([s.spikes for s in inputs]))


def engine_side(name: str) -> dict:
    net, ng, inputs, steps = case_inputs(name)
    prof = run_samples(ng, inputs, steps)
    layers = ng.layer_populations if ng.input_is_bias else ng.layer_populations[1:]
    m = neurobench_metrics(ng.graph, prof, len(inputs), populations=layers)
    idx = [prof.population_names.index(n) for n in layers]
    m["spikes_per_layer"] = prof.events[:, idx].sum(axis=0).tolist()
    return m


def neurobench_side(name: str) -> dict:
    import torch
    from atomspark.networks.torch_path.netx_torch import NetxTorch
    from neurobench.benchmarks import Benchmark
    from neurobench.metrics.static import ConnectionSparsity, Footprint, ParameterCount
    from neurobench.metrics.workload import ActivationSparsity, SynapticOperations
    from neurobench.models import SNNTorchModel

    net, ng, inputs, steps = case_inputs(name)
    model = NetxTorch(net)
    data = torch_data(ng, inputs, steps, net.layers[0].shape)
    counts = [0] * len(model.neurons)
    hooks = [n.register_forward_hook(lambda mod, i, o, k=k: counts.__setitem__(
        k, counts[k] + int(o[0].sum()))) for k, n in enumerate(model.neurons)]  # fmt: skip
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(data, torch.zeros(len(inputs))), batch_size=len(inputs)
    )
    bench = Benchmark(SNNTorchModel(model), loader, [], [],
                      [[Footprint, ConnectionSparsity, ParameterCount],
                       [ActivationSparsity, SynapticOperations]])  # fmt: skip
    res = bench.run(quiet=True)
    for h in hooks:
        h.remove()
    return {k: (v if not isinstance(v, dict) else dict(v)) for k, v in res.items()} | {
        "spikes_per_layer": counts
    }


def render(res: dict) -> str:
    """The table of docs/neurobench.md from the committed cross-check."""
    lines = [
        "| network (input, samples x steps) | metric | NeuroBench "
        + res["neurobench_version"]
        + " on the torch modules | atomspark engine |",
        "| --- | --- | --- | --- |",
    ]
    for name, c in res["cases"].items():
        nb, en = c["neurobench"], c["engine"]
        so, eo = nb["SynapticOperations"], en["synaptic_operations"]
        head = f"{name} (`{c['input']}`, {c['samples']} x {c['steps']})"
        rows = [
            ("activation sparsity", f"{nb['ActivationSparsity']:.6f}",
             f"{en['activation_sparsity']:.6f}"),
            ("effective ACs / sample", f"{so['Effective_ACs']:,.1f}", f"{eo['effective_acs']:,.1f}"),
            ("effective MACs / sample", f"{so['Effective_MACs']:,.1f}",
             f"{eo['effective_macs']:,.1f}"),
            ("dense synaptic ops / sample", f"{so['Dense']:,.0f}", f"{eo['dense']:,.0f}"),
            ("spikes per layer", str(nb["spikes_per_layer"]), str(en["spikes_per_layer"])),
            ("connection sparsity", f"{nb['ConnectionSparsity']:.4f}",
             f"{en['connection_sparsity']:.4f}"),
            ("parameters / stored synapses", f"{nb['ParameterCount']:,}",
             f"{en['parameter_count']:,}"),
            ("footprint (bytes)", f"{nb['Footprint']:,}", f"{en['footprint_bytes']:,}"),
        ]  # fmt: skip
        for i, (metric, a, b) in enumerate(rows):
            lines.append(f"| {head if i == 0 else ''} | {metric} | {a} | {b} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="run both sides and write the results JSON here")
    ap.add_argument("--render", help="print the doc table of this results JSON")
    args = ap.parse_args()
    if args.render:
        print(render(json.loads(Path(args.render).read_text())), end="")
        return
    import neurobench

    out = {"neurobench_version": neurobench.__version__, "cases": {}}
    for name in CASES:
        out["cases"][name] = {
            "network": CASES[name][0], "input": CASES[name][1], "samples": CASES[name][2],
            "steps": CASES[name][3], "neurobench": neurobench_side(name),
            "engine": engine_side(name),
        }  # fmt: skip
        print(name, json.dumps(out["cases"][name], indent=1, default=float))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
