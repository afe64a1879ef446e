"""Agreement of the NIR import with each producer's own run, and the worked import example.

    python benchmarks/nir_agreement.py --write

replays every committed producer case (tests/data/nir: each file written by the library's own
NIR writer, each .npz the library's own run, from tests/nir_producer_cases.py) on the event
engine and records, per producer, the spikes compared and how many differ, and the largest
voltage difference (absolute, and relative to the layer's largest |v|); then imports the Sinabs
convolutional case for Loihi 2 (`atomspark import ... --producer sinabs --input rate:0.3:1
--samples 4 --steps 50`) and compares it with a GPU (`atomspark compare`, same arguments).
Writes docs/results/nir/agreement.json, import_sinabs_conv.json and compare_sinabs_conv.json,
and the generated blocks of docs/nir.md and README.md (tests/test_nir_docs.py checks both); the
README block also cites the Lava run (benchmarks/nir_lava_agreement.py, run that first).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "nir"
RESULTS = ROOT / "docs" / "results" / "nir"
CASES = {
    "snntorch_recurrent": "snntorch",
    "snntorch_conv": "snntorch",
    "norse_cells": "norse",
    "sinabs_conv": "sinabs",
}
EXAMPLE_ARGS = ["--producer", "sinabs", "--input", "rate:0.3:1", "--samples", "4", "--steps", "50"]
DOC_MARK = ("<!-- nir-agreement:begin -->\n", "\n<!-- nir-agreement:end -->")
README_MARK = ("<!-- nir-example:begin -->\n", "\n<!-- nir-example:end -->")


def measure() -> dict:
    """Per case: spikes compared and differing, worst voltage difference per node."""
    from atomspark.networks.nir_file import read_nir
    from atomspark.networks.nir_graph import convention, nir_graph
    from atomspark.networks.nir_run import run_nir

    out = {}
    for name, producer in CASES.items():
        ref = np.load(DATA / f"{name}.npz")
        ng = nir_graph(read_nir(DATA / f"{name}.nir"), convention(producer))
        (inp,) = ng.inputs
        steps = len(ref["input"])
        run = run_nir(ng, {inp: ref["input"]}, steps)
        compared = differing = 0
        v_abs = v_rel = 0.0
        for key in ref.files:
            kind, _, node = key.partition(":")
            if kind == "s":
                compared += int(ref[key].size)
                differing += int(np.count_nonzero(run.spikes[node] != ref[key]))
            elif kind == "v":
                d = float(np.abs(run.v[node] - ref[key]).max())
                v_abs = max(v_abs, d)
                v_rel = max(v_rel, d / max(1.0, float(np.abs(ref[key]).max())))
        out[name] = {
            "producer": producer,
            "steps": steps,
            "neuron_nodes": len(ng.neurons),
            "spikes_emitted": int(sum(ref[k].sum() for k in ref.files if k.startswith("s:"))),
            "spike_entries_compared": compared,
            "spike_entries_differing": differing,
            "max_abs_v_difference": float(f"{v_abs:.3g}"),
            "max_rel_v_difference": float(f"{v_rel:.3g}"),
        }
    return out


def render(res: dict) -> str:
    lines = [
        "| producer | case | steps | spikes emitted | spike entries compared | differing | "
        "largest voltage difference (relative to the layer's largest abs v) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in res.items():
        lines.append(
            f"| {r['producer']} | {name} | {r['steps']} | {r['spikes_emitted']} | "
            f"{r['spike_entries_compared']} | {r['spike_entries_differing']} | "
            f"{r['max_abs_v_difference']:.2g} ({r['max_rel_v_difference']:.2g}) |"
        )
    return "\n".join(lines) + "\n"


def compare_example(out: Path) -> dict:
    """`compare` on the example's graph, input, samples and steps (the torch run's own timing,
    which depends on the machine, left out)."""
    from atomspark.scenarios.compare.nir_compare import compare_nir

    a = dict(zip(EXAMPLE_ARGS[::2], EXAMPLE_ARGS[1::2]))
    rep = compare_nir(DATA / "sinabs_conv.nir", out, producer=a["--producer"],
                      input_spec=a["--input"], samples=int(a["--samples"]),
                      steps=int(a["--steps"]), device="cpu", log=lambda _: None)  # fmt: skip
    rep["model"]["path"] = "tests/data/nir/sinabs_conv.nir"
    rep["torch"] = {"device": "cpu", "measured_on_gpu": False}
    return json.loads(json.dumps(rep, default=str))


def render_compare(cmp: dict, lava: dict) -> str:
    """The chip-vs-GPU row and the Lava run of the worked example."""
    r, head = cmp["chip_vs_gpu"]["batch_1"], cmp["chip_vs_gpu"]["headline"]
    gpu = cmp["chip_vs_gpu"]["gpu"][0]
    fl, fx = lava["float"], lava["fixed"]
    return (
        "```\natomspark compare tests/data/nir/sinabs_conv.nir "
        + " ".join(EXAMPLE_ARGS)
        + "\n```\n"
        f"prices the same inferences against {gpu['hardware']} running the network in torch "
        f"(one matrix product per projection and one LIF update per population each step): at "
        f"batch 1 the chip takes {r['chip_energy_uJ']:.3g} uJ and {r['chip_time_per_sample_us']:.3g} "
        f"us per inference, the GPU at its best ({head['precision']}, {head['kernel']} "
        f"products, {head['launch_model']} launches) {r['gpu_energy_uJ']:.4g} uJ and "
        f"{r['gpu_time_per_sample_us']:.3g} us: {r['ratio']:.3g}x the chip's energy (from "
        f"{r['ratio_min']:.3g}x to {r['ratio_max']:.3g}x over the headline's choices; "
        "docs/results/nir/compare_sinabs_conv.json). The torch run that checks each precision "
        "ran on a CPU here, so the GPU side is priced from its hardware description, not "
        "measured.\n"
        "```\natomspark export tests/data/nir/sinabs_conv.nir --to lava --producer sinabs "
        "--fixed --verify --report\n```\n"
        "writes it as a Lava bundle whose input is a stream of spikes (lava-nc's RingBuffer). "
        f"Run on Lava with the recorded input, the float bundle differs from Sinabs' own run in "
        f"{fl['differ_vs_producer']} of {fl['entries_vs_producer']} spike entries and the "
        f"fixed-point bundle from the engine in {fx['differ_vs_engine']} of "
        f"{fx['entries_vs_engine']}; fixed point keeps {100 * fx['spike_agreement_with_float']:.1f} "
        "% of the float run's spikes (docs/results/nir/lava_agreement.json).\n"
    )


def render_example(imp: dict) -> str:
    p, nb = imp["prediction"], imp["neurobench"]
    return (
        "```\natomspark import tests/data/nir/sinabs_conv.nir " + " ".join(EXAMPLE_ARGS) + "\n```\n"
        f"reads the graph as Sinabs runs it ({imp['units']} units, {imp['synapses']} synapses), "
        f"runs {p['samples']} samples of {imp['input']} input spikes and places it on "
        f"{p['cores']} {imp['hardware']} core(s): {p['events_per_inference']:.0f} events and "
        f"{p['synops_per_inference']:.0f} synaptic operations per inference, activation sparsity "
        f"{nb['activation_sparsity']:.3f}, {p['inferences_per_s']:.4g} inferences/s and "
        f"{p['energy_per_inference_j'] * 1e6:.3g} uJ per inference "
        f"({p['static_energy_per_inference_j'] * 1e6:.3g} uJ static; "
        "docs/results/nir/import_sinabs_conv.json).\n"
    )


def block_of(path: Path, mark: tuple[str, str]) -> str:
    """The generated block between the two marks of `path` (without its last newline)."""
    rest = path.read_text(encoding="utf-8").split(mark[0])[1]
    return rest.split(mark[1].lstrip("\n"))[0].rstrip("\n")


def _replace(path: Path, mark: tuple[str, str], block: str) -> None:
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(mark[0])
    _, tail = rest.split(mark[1].lstrip("\n"))
    path.write_text(head + mark[0] + block.rstrip("\n") + mark[1] + tail, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the results and the doc blocks")
    args = ap.parse_args()
    res = measure()
    print(render(res))
    if not args.write:
        return
    import tempfile

    from atomspark.scenarios.runs.nir_import import import_nir

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "agreement.json").write_text(json.dumps(res, indent=2) + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        a = dict(zip(EXAMPLE_ARGS[::2], EXAMPLE_ARGS[1::2]))
        imp = import_nir(DATA / "sinabs_conv.nir", a["--input"], int(a["--samples"]),
                         int(a["--steps"]), out=Path(tmp) / "imp", producer=a["--producer"])  # fmt: skip
        cmp = compare_example(Path(tmp) / "cmp")
    imp["network"] = "tests/data/nir/sinabs_conv.nir"
    (RESULTS / "import_sinabs_conv.json").write_text(json.dumps(imp, indent=2) + "\n")
    (RESULTS / "compare_sinabs_conv.json").write_text(json.dumps(cmp, indent=2) + "\n")
    lava = json.loads((RESULTS / "lava_agreement.json").read_text())["sinabs_conv"]
    _replace(ROOT / "docs" / "nir.md", DOC_MARK, render(res))
    _replace(ROOT / "README.md", README_MARK, render_example(imp) + render_compare(cmp, lava))


if __name__ == "__main__":
    main()
