"""Loihi 2 energy and time model against Intel's measured runs of lava-dl's PilotNet networks.

    python -m atomspark.scenarios.runs.loihi2_validation --out docs/results/loihi2_validation/validation.json
    python -m atomspark.scenarios.runs.loihi2_validation --render docs/results/loihi2_validation/validation.json

The first command imports tests/data/netx/pilotnet_snn.net, runs it on the event engine in Loihi
fixed point with the notebook's input and with surrogate frames, places it with the project's
placement and prices it with the `loihi2` preset; the second prints the Markdown tables that
docs/energy_validation.md carries (tests/test_loihi2_validation.py checks they match).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from atomspark.mapping.hardware import load_hardware
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.scenarios.runs.netx_predict import predict, sample_inputs
from atomspark.sim.core import atomic_write_text

ROOT = Path(__file__).resolve().parents[2]
PILOTNET = ROOT / "tests" / "data" / "netx" / "pilotnet_snn.net"
LAVA_DL = "lava-dl (github.com/lava-nc/lava-dl) commit d825ac506eb9bb91ea2b945116fb45a40e775451"
# Saved outputs of Intel's Loihi 2 runs (Loihi2HwCfg, partition 'oheogulch', one chip).
MEASURED = {
    "pilotnet_snn": {
        "source": f"{LAVA_DL}, tutorials/lava/lib/dl/netx/pilotnet_snn/benchmark.ipynb, saved "
        "outputs: 'Throughput : 408.91 fps', 'Total Power : 0.679234 W', 'Dynamic Power : "
        "0.447156 W', 'Static Power : 0.232078 W', energy per inference 1.661103 mJ total, "
        "1.093544 mJ dynamic; 16 steps per inference; 'Per core distribution' table: 74 cores",
        "inferences_per_s": 408.91,
        "steps_per_inference": 16,
        "total_power_w": 0.679234,
        "dynamic_power_w": 0.447156,
        "static_power_w": 0.232078,
        "energy_per_inference_j": 1.661103e-3,
        "dynamic_energy_per_inference_j": 1.093544e-3,
        "cores": 74,
        # the notebook's per-core table, one row per layer (cores, neurons per core)
        "cores_per_layer": {
            "input": 13,
            "conv1": 25,
            "conv2": 13,
            "conv3": 3,
            "conv4": 3,
            "conv5": 2,
            "dense1": 12,
            "dense2": 1,
            "dense3": 1,
            "dense4": 1,
        },
    },  # fmt: skip
    "pilotnet_sdnn": {
        "source": f"{LAVA_DL}, tutorials/lava/lib/dl/netx/pilotnet_sdnn/benchmark.ipynb, saved "
        "outputs: 'Throughput : 16.87 fps' (the notebook: bottlenecked by sending input frames "
        "from the host), 'Total Power : 0.275709 W', 'Static Power : 0.281775 W', 'Dynamic "
        "Power : -0.006066 W'; 'Per core distribution' table: 61 cores (no input layer)",
        "static_power_w": 0.281775,
        "total_power_w": 0.275709,
        "cores": 61,
    },
}
LAYER_NAMES = ["input", "conv1", "conv2", "conv3", "conv4", "conv5",
               "dense1", "dense2", "dense3", "dense4"]  # fmt: skip
SENSITIVITY = ("gray:0.25", "gray:0.5", "gray:0.75", "uniform:0")


def _cores_per_layer(pred, ng) -> dict[str, int]:
    sizes = [ng.graph.population(n).size for n in ng.layer_populations]
    bounds = np.cumsum([0] + sizes)
    core = pred.placement.unit_core
    return {name: int(np.unique(core[a:b]).size)
            for name, a, b in zip(LAYER_NAMES, bounds[:-1], bounds[1:])}  # fmt: skip


def run_validation(hardware: str = "loihi2", log=print) -> dict:
    """Predictions for the notebook's input and the surrogate inputs, with the measurements."""
    hw = load_hardware(hardware)
    net = read_netx(PILOTNET)
    ng = netx_graph(net)
    steps = MEASURED["pilotnet_snn"]["steps_per_inference"]
    runs, preds = {}, {}
    for spec, samples in (("zero", 1),) + tuple(
        (s, 2 if "uniform" in s else 1) for s in SENSITIVITY
    ):
        pred = predict(ng, sample_inputs(net, ng, spec, samples, steps), steps, hw)
        preds[spec] = pred
        runs[spec] = pred.to_dict() | {"cores_per_layer": _cores_per_layer(pred, ng)}
        log(f"[validation] {spec}: {runs[spec]['energy_per_inference_j'] * 1e3:.4g} mJ")
    static_per_core = hw.static_power_per_core_w
    # the SDNN has the same conv/dense layers and no input layer: the cores its units occupy in
    # the LIF placement (a core shared with the input layer counts once, not per layer)
    n_input = ng.graph.population(ng.layer_populations[0]).size
    sdnn_cores = int(np.unique(preds["zero"].placement.unit_core[n_input:]).size)
    return {
        "hardware": hw.name,
        "network": "tests/data/netx/pilotnet_snn.net",
        "measured": MEASURED,
        "predicted": runs,
        "static_power_per_core_w": static_per_core,
        "sdnn_static": {  # same conv/dense topology, no input layer (skip_layers=1)
            "cores": sdnn_cores,
            "static_power_w": sdnn_cores * static_per_core,
            "static_power_at_measured_cores_w": MEASURED["pilotnet_sdnn"]["cores"]
            * static_per_core,
        },
        "snn_static_at_measured_cores_w": MEASURED["pilotnet_snn"]["cores"] * static_per_core,
    }


def _row(name: str, measured: float, predicted: float, unit: str, scale: float = 1.0) -> str:
    u = f" {unit}" if unit else ""
    return (
        f"| {name} | {measured * scale:.4g}{u} | {predicted * scale:.4g}{u} | "
        f"{predicted / measured:.2f} |"
    )


def ratios(res: dict) -> dict[str, float]:
    """predicted / measured for every row of the first table (core counts included)."""
    m, p = res["measured"]["pilotnet_snn"], res["predicted"]["zero"]
    t_meas = 1.0 / (m["inferences_per_s"] * m["steps_per_inference"])
    sd, msd = res["sdnn_static"], res["measured"]["pilotnet_sdnn"]
    return {
        "throughput": p["inferences_per_s"] / m["inferences_per_s"],
        "time per step": p["time_per_step_s"] / t_meas,
        "total energy": p["energy_per_inference_j"] / m["energy_per_inference_j"],
        "dynamic energy": p["dynamic_energy_per_inference_j"] / m["dynamic_energy_per_inference_j"],
        "static power": p["static_power_w"] / m["static_power_w"],
        "dynamic power": p["dynamic_power_w"] / m["dynamic_power_w"],
        "total power": (p["static_power_w"] + p["dynamic_power_w"]) / m["total_power_w"],
        "cores": p["cores"] / m["cores"],
        "static power (SDNN)": sd["static_power_w"] / msd["static_power_w"],
        "cores (SDNN)": sd["cores"] / msd["cores"],
    }


def layer_core_ratios(res: dict) -> dict[str, float]:
    """atomspark / Intel's compiler, cores per layer (the layer table)."""
    m, p = res["measured"]["pilotnet_snn"], res["predicted"]["zero"]
    return {n: p["cores_per_layer"][n] / m["cores_per_layer"][n] for n in LAYER_NAMES}


def whole_chip_static(res: dict) -> dict[str, float]:
    """Static power at the scope chip-vs-GPU pricing charges (static_scope "device": every core
    of the chip in use, as a GPU is charged its whole idle power), and the LIF run's total energy
    per inference with it."""
    m, p = res["measured"]["pilotnet_snn"], res["predicted"]["zero"]
    cores = load_hardware(res["hardware"]).limits.cores_per_chip
    static = res["static_power_per_core_w"] * cores
    t_inf = p["steps_per_sample"] * p["time_per_step_s"]
    return {
        "cores": cores,
        "static_power_w": static,
        "energy_per_inference_j": p["dynamic_energy_per_inference_j"] + static * t_inf,
        "lif_ratio": static / m["static_power_w"],
        "sdnn_ratio": static / res["measured"]["pilotnet_sdnn"]["static_power_w"],
    }


def _worst(res: dict) -> str:
    name, r = max(ratios(res).items(), key=lambda kv: abs(np.log(kv[1])))
    return f"{name}, predicted / measured = {r:.2f} ({'within' if 0.5 <= r <= 2 else 'outside'} 2x)"


def render(res: dict) -> str:
    """The Markdown tables of docs/energy_validation.md section 3, from the committed results."""
    m, p = res["measured"]["pilotnet_snn"], res["predicted"]["zero"]
    sd, msd = res["sdnn_static"], res["measured"]["pilotnet_sdnn"]
    t_meas = 1.0 / (m["inferences_per_s"] * m["steps_per_inference"])
    lines = [
        "| quantity (PilotNet LIF, one chip) | measured (Loihi 2) | predicted (`loihi2`) "
        "| predicted / measured |",
        "| --- | --- | --- | --- |",
        _row("throughput", m["inferences_per_s"], p["inferences_per_s"], "inferences/s"),
        _row("time per step", t_meas, p["time_per_step_s"], "us", 1e6),
        _row("total energy per inference", m["energy_per_inference_j"],
             p["energy_per_inference_j"], "mJ", 1e3),
        _row("dynamic energy per inference", m["dynamic_energy_per_inference_j"],
             p["dynamic_energy_per_inference_j"], "mJ", 1e3),
        _row("static power", m["static_power_w"], p["static_power_w"], "W"),
        _row("dynamic power", m["dynamic_power_w"], p["dynamic_power_w"], "W"),
        _row("total power", m["total_power_w"], p["static_power_w"] + p["dynamic_power_w"], "W"),
        _row("cores", m["cores"], p["cores"], ""),
        _row("static power (PilotNet SDNN, not used above)", msd["static_power_w"],
             sd["static_power_w"], "W"),
        _row("cores (PilotNet SDNN)", msd["cores"], sd["cores"], ""),
        "",
        "| layer | cores, Intel's compiler (notebook) | cores, atomspark placement |",
        "| --- | --- | --- |",
    ]  # fmt: skip
    for name in LAYER_NAMES:
        lines.append(f"| {name} | {m['cores_per_layer'][name]} | {p['cores_per_layer'][name]} |")
    lines += [
        "",
        "| input (sensitivity) | events / inference | synaptic ops / inference | time per step "
        "| dynamic energy / inference | total energy / inference |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec, r in res["predicted"].items():
        lines.append(
            f"| `{spec}` | {r['events_per_inference']:,.0f} | {r['synops_per_inference']:,.0f} "
            f"| {r['time_per_step_s'] * 1e6:.1f} us | "
            f"{r['dynamic_energy_per_inference_j'] * 1e3:.3f} mJ "
            f"| {r['energy_per_inference_j'] * 1e3:.3f} mJ |"
        )
    dyn = [r["dynamic_energy_per_inference_j"] for r in res["predicted"].values()]
    wc = whole_chip_static(res)
    lines += [
        "",
        f"Across these inputs the predicted dynamic energy spans {min(dyn) * 1e3:.3f}-"
        f"{max(dyn) * 1e3:.3f} mJ per inference ({min(dyn) / m['dynamic_energy_per_inference_j']:.2f}"
        f"-{max(dyn) / m['dynamic_energy_per_inference_j']:.2f} x the measurement). "
        f"Static power charged per core ({res['static_power_per_core_w'] * 1e3:.3f} mW) at "
        f"the notebook's own core counts: {res['snn_static_at_measured_cores_w']:.3f} W "
        f"(LIF, {m['cores']} cores; {res['snn_static_at_measured_cores_w'] / m['static_power_w']:.2f}"
        f" x measured) and {sd['static_power_at_measured_cores_w']:.3f} W (SDNN, {msd['cores']} "
        f"cores; {sd['static_power_at_measured_cores_w'] / msd['static_power_w']:.2f} x measured).",
        f"A per-chip static term fitted on the LIF measurement ({m['static_power_w']:.3f} W per "
        f"chip) would predict {m['static_power_w'] / msd['static_power_w']:.2f} x the SDNN "
        "measurement, which was not used to fit it.",
        "",
        f"Largest deviation in the first table: {_worst(res)}.",
        "",
        f"Per-layer core counts (atomspark / Intel's compiler) range from "
        f"{min(layer_core_ratios(res).values()):.2f} to {max(layer_core_ratios(res).values()):.2f}"
        f" x. At the whole-chip static scope that chip-vs-GPU pricing charges "
        f"({wc['cores']} cores): {wc['static_power_w']:.4g} W static ({wc['lif_ratio']:.2f} x the "
        f"LIF measurement, {wc['sdnn_ratio']:.2f} x the SDNN one), total energy per inference "
        f"{wc['energy_per_inference_j'] * 1e3:.4g} mJ "
        f"({wc['energy_per_inference_j'] / m['energy_per_inference_j']:.2f} x measured).",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the results JSON here")
    ap.add_argument("--render", help="print the doc tables of this results JSON")
    ap.add_argument("--hardware", default="loihi2")
    args = ap.parse_args(argv)
    if args.out:
        res = run_validation(args.hardware)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out, json.dumps(res, indent=1))
        print(render(res))
    if args.render:
        print(render(json.loads(Path(args.render).read_text())), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
