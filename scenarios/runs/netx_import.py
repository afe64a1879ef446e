"""`atomspark import NET.net`: read a lava-dl netx network, run it on the event engine in Loihi
fixed point, place it and predict throughput, static, dynamic and total energy per inference,
with NeuroBench's metrics. Writes import.json and profile.json to --out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from atomspark.mapping.hardware import DEFAULT_CHIP
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.scenarios.runs.import_outputs import (
    neuromorphic_hardware,
    prediction_line,
    write_import,
)
from atomspark.scenarios.runs.netx_predict import predict, sample_inputs
from atomspark.sim.core import require_int
from atomspark.sim.neurobench import format_neurobench, neurobench_metrics
from atomspark.sim.run_folder import finish_run, prepare_run_folder

OUTPUTS = ("import.json", "profile.json")


def import_network(
    net_path: str | Path,
    input_spec: str = "zero",
    samples: int = 1,
    steps: int | None = None,
    hardware: str = DEFAULT_CHIP,
    strategy: str = "sequential",
    out: str | Path = "results/import",
    overwrite: bool = False,
    log: Callable[[str], None] = print,
) -> dict:
    """Everything is checked (file, inputs, hardware) before the output folder is touched."""
    samples = require_int("--samples", samples, minimum=1)
    net = read_netx(net_path)
    steps = require_int("--steps", steps if steps is not None else net.steps_per_sample or 16, 1)
    hw = neuromorphic_hardware(hardware)
    ng = netx_graph(net)
    inputs = sample_inputs(net, ng, input_spec, samples, steps)
    folder = prepare_run_folder(out, "import", "overwrite" if overwrite else "new", OUTPUTS)
    log(net.table())
    g = ng.graph
    n_syn = sum(p.n_synapses for p in g.projections)
    log(f"[import] {g.total_units} units, {n_syn} synapses; {samples} sample(s) x {steps} steps")
    pred = predict(ng, inputs, steps, hw, strategy)
    layers = ng.layer_populations if ng.input_is_bias else ng.layer_populations[1:]
    result = {
        "network": str(net_path),
        "input": input_spec,
        "hardware": hw.name,
        "strategy": strategy,
        "units": int(g.total_units),
        "synapses": int(n_syn),
        "prediction": pred.to_dict(),
        "neurobench": neurobench_metrics(g, pred.profile, samples, populations=layers),
    }
    log(f"[import] NeuroBench: {format_neurobench(result['neurobench'])}")
    p = result["prediction"]
    log(prediction_line(hw.name, p))
    write_import(folder, pred, result, log)
    finish_run(folder)  # after the last file: the run is complete
    return result
