"""The PilotNet SDNN (lava-dl's sigma-delta PilotNet) predicted beside Intel's Loihi 2 measurement.

    python -m atomspark.scenarios.runs.loihi2_validation_sdnn \
        --out docs/results/loihi2_validation/pilotnet_sdnn.json
    python -m atomspark.scenarios.runs.loihi2_validation_sdnn \
        --render docs/results/loihi2_validation/pilotnet_sdnn.json

The first command imports tests/data/netx/pilotnet_sdnn.net, streams surrogate video through it
on the event engine in Loihi fixed point (one frame per step, as the notebook runs it; bit-exact
against lava-dl, tests/test_netx_sdnn.py), places it with the project's placement and prices one
frame with the `loihi2` preset; the second prints the tables docs/energy_validation.md carries
(tests/test_loihi2_validation_sdnn.py checks they match). The results JSON holds the measurement
and the predictions side by side for other checks of a Loihi 2 preset.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from atomspark.mapping.hardware import load_hardware
from atomspark.networks.netx_file import read_netx
from atomspark.networks.netx_graph import netx_graph
from atomspark.scenarios.runs.loihi2_validation import LAVA_DL
from atomspark.scenarios.runs.netx_predict import price_inference
from atomspark.sim.core import atomic_write_text
from atomspark.sim.engine import Engine
from atomspark.sim.neurobench import neurobench_metrics

ROOT = Path(__file__).resolve().parents[2]
NETWORK = ROOT / "tests" / "data" / "netx" / "pilotnet_sdnn.net"
LAYER_NAMES = ["conv1", "conv2", "conv3", "conv4", "conv5", "dense1", "dense2", "dense3", "dense4"]
# Saved outputs of Intel's Loihi 2 run (Loihi2HwCfg, partition 'oheogulch', one chip, 2000 steps,
# one frame per step, the DeltaEncoder on the host, skip_layers=1).
MEASURED = {
    "source": f"{LAVA_DL}, tutorials/lava/lib/dl/netx/pilotnet_sdnn/benchmark.ipynb, saved "
    "outputs: 'Throughput : 16.87 fps' (the notebook: execution is bottlenecked by sending input "
    "frames to the chip), 'Total Power : 0.275709 W', 'Dynamic Power : -0.006066 W', 'Static "
    "Power : 0.281775 W', 'VDD Power : 0.103684 W', 'VDD-M Power : 0.167086 W', 'VDD-IO Power : "
    "0.004939 W', 'Total Energy per inference : 16.343833 mJ', 'Dynamic Energy per inference : "
    "-0.359587 mJ'; 'Per core distribution' table: 61 cores",
    "inferences_per_s": 16.87,
    "steps_per_inference": 1,
    "total_power_w": 0.275709,
    "dynamic_power_w": -0.006066,
    "static_power_w": 0.281775,
    "energy_per_inference_j": 16.343833e-3,
    "dynamic_energy_per_inference_j": -0.359587e-3,
    "cores": 61,
    "cores_per_layer": {"conv1": 25, "conv2": 13, "conv3": 3, "conv4": 3, "conv5": 2,
                        "dense1": 12, "dense2": 1, "dense3": 1, "dense4": 1},
}  # fmt: skip
# What the measurement can check (True) and what it cannot (why), per predicted quantity.
CHECKABLE = {
    "static power": "yes: measured with the chip idle after the run",
    "cores": "yes: the compiler's per-core table",
    "time per step": "no: the measured step waits for the host to send each frame (the notebook "
    "says so); the measured time is only an upper bound on the chip's own step",
    "dynamic power": "no: the measured value is below zero, i.e. within the power meter's noise; "
    "it bounds the dynamic power at the measured frame rate only by that noise",
    "energy per frame at the measured step": "partly: at 16.87 frames/s it is static power times "
    "the host-bound step plus a dynamic part below the meter's noise, so it checks static power "
    "again, not the dynamic model",
}
WARMUP, STEPS = 12, 24  # steps before pricing (the 10-layer pipeline fills), steps priced
VIDEOS = ("shift", "smooth", "still")


def surrogate_video(shape_whc: tuple[int, int, int], video: str, steps: int, seed: int = 0):
    """(steps, W*H*C) int frames in (x, y, c) order, the tutorial transform int32(128 x - 64):
    'shift' a U[0, 1] image moved one column per frame (every pixel changes), 'smooth' the same
    image box-filtered over 9x9 pixels first (neighbouring pixels alike, as in camera video),
    'still' the image held (only the first frame is news)."""
    rng = np.random.default_rng(seed)
    img = rng.uniform(0.0, 1.0, shape_whc)
    if video == "smooth":
        k = 9
        pad = np.pad(img, ((k // 2, k // 2), (k // 2, k // 2), (0, 0)), mode="wrap")
        c = pad.cumsum(0).cumsum(1)
        c = np.pad(c, ((1, 0), (1, 0), (0, 0)))
        w, h = shape_whc[:2]
        img = (c[k : k + w, k : k + h] - c[:w, k : k + h] - c[k : k + w, :h] + c[:w, :h]) / k**2
    move = video != "still"
    frames = [np.roll(img, t if move else 0, axis=0) for t in range(steps)]
    return np.stack([(128 * f - 64).astype(np.int32).reshape(-1) for f in frames])


def predict_video(net, ng, hw, video: str) -> dict:
    """Warm up, then run STEPS frames and price one frame (one step) with the project's model."""
    eng = Engine(ng.graph)
    c, h, w = net.layers[0].shape
    frames = surrogate_video((w, h, c), video, WARMUP + STEPS).astype(np.float64)
    warm = eng.run(WARMUP, inputs={ng.input_population: frames[:WARMUP]})
    prof = eng.run(STEPS, inputs={ng.input_population: frames[WARMUP:]})
    # an engine's unit_events count from its last reset: keep the priced steps' own
    prof = replace(prof, unit_events=[u - w for u, w in zip(prof.unit_events, warm.unit_events)])
    pred = price_inference(ng.graph, prof, STEPS, hw, "sequential", 1)
    out = pred.to_dict()
    sizes = [ng.graph.population(n).size for n in ng.layer_populations]
    bounds = np.cumsum([0] + sizes)
    core = pred.placement.unit_core
    out["cores_per_layer"] = {name: int(np.unique(core[a:b]).size) for name, a, b in
                              zip(LAYER_NAMES, bounds[1:-1], bounds[2:])}  # fmt: skip
    chip_cores = int(np.unique(core[sizes[0] :]).size)  # the encoder runs on the host in Intel's
    out["cores_without_encoder"] = chip_cores
    out["static_power_without_encoder_w"] = chip_cores * hw.static_power_per_core_w
    dyn_per_frame = out["dynamic_energy_per_inference_j"]
    out["dynamic_power_at_measured_rate_w"] = dyn_per_frame * MEASURED["inferences_per_s"]
    out["energy_per_frame_at_measured_step_j"] = (
        out["static_power_without_encoder_w"] / MEASURED["inferences_per_s"] + dyn_per_frame
    )
    out["neurobench"] = neurobench_metrics(ng.graph, prof, STEPS, ng.layer_populations[1:])
    return out


def run_validation(hardware: str = "loihi2", log=print) -> dict:
    hw = load_hardware(hardware)
    net = read_netx(NETWORK)
    ng = netx_graph(net)
    predicted = {}
    for video in VIDEOS:
        predicted[video] = predict_video(net, ng, hw, video)
        log(f"[validation-sdnn] {video}: {predicted[video]['time_per_step_s'] * 1e6:.1f} us/step")
    return {
        "hardware": hw.name,
        "network": "tests/data/netx/pilotnet_sdnn.net",
        "warmup_steps": WARMUP,
        "priced_steps": STEPS,
        "measured": MEASURED,
        "checkable": CHECKABLE,
        "static_power_per_core_w": hw.static_power_per_core_w,
        "predicted": predicted,
    }


def _ratio(p: float, m: float) -> str:
    return f"{p / m:.3g}" if m > 0 else "-"


def render(res: dict) -> str:
    """The Markdown of docs/energy_validation.md's SDNN subsection, from the committed results."""
    m, preds = res["measured"], res["predicted"]
    t_meas = 1.0 / (m["inferences_per_s"] * m["steps_per_inference"])
    head = " | ".join(f"predicted, `{v}`" for v in preds)
    lines = [
        f"| quantity (PilotNet SDNN, one frame = one step) | measured (Loihi 2) | {head} "
        "| measurement checks it? |",
        "| --- | --- | " + "--- | " * len(preds) + "--- |",
    ]
    rows = [
        ("static power", m["static_power_w"], "static_power_without_encoder_w", "W", 1.0),
        ("cores", m["cores"], "cores_without_encoder", "", 1.0),
        ("time per step", t_meas, "time_per_step_s", "us", 1e6),
        ("dynamic power at 16.87 frames/s", m["dynamic_power_w"],
         "dynamic_power_at_measured_rate_w", "mW", 1e3),
        ("energy per frame at the measured step", m["energy_per_inference_j"],
         "energy_per_frame_at_measured_step_j", "mJ", 1e3),
    ]  # fmt: skip
    for name, meas, key, unit, scale in rows:
        u = f" {unit}" if unit else ""
        cells = " | ".join(
            f"{p[key] * scale:.4g}{u} ({_ratio(p[key], meas)} x)" for p in preds.values()
        )
        key_name = name if name in res["checkable"] else name.split(" at ")[0]
        check = res["checkable"][key_name].split(":")[0]
        lines.append(f"| {name} | {meas * scale:.4g}{u} | {cells} | {check} |")
    lines += ["", "| video | events / frame | synaptic ops / frame | NeuroBench MACs / frame "
              "| activation sparsity | dynamic energy / frame | total energy / frame at the "
              "predicted step |", "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for video, p in preds.items():
        nb = p["neurobench"]
        lines.append(
            f"| `{video}` | {p['events_per_inference']:,.0f} | {p['synops_per_inference']:,.0f} "
            f"| {nb['synaptic_operations']['effective_macs']:,.0f} "
            f"| {nb['activation_sparsity']:.4f} | {p['dynamic_energy_per_inference_j'] * 1e6:.2f}"
            f" uJ | {p['energy_per_inference_j'] * 1e6:.2f} uJ |"
        )
    lines += ["", "| layer | cores, Intel's compiler (notebook) | "
              + " | ".join(f"cores, atomspark (`{v}`)" for v in preds) + " |",
              "| --- | --- | " + "--- | " * len(preds)]  # fmt: skip
    lines[-1] = lines[-1].rstrip()
    for name in LAYER_NAMES:
        cells = " | ".join(str(p["cores_per_layer"][name]) for p in preds.values())
        lines.append(f"| {name} | {m['cores_per_layer'][name]} | {cells} |")
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
        print(render(res), end="")
    if args.render:
        print(render(json.loads(Path(args.render).read_text())), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
