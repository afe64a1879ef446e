"""The producers' NIR files on Lava: each recorded case exported (float and Loihi fixed point),
its recorded input streamed by RingBuffer spike sources, run on Lava's Loihi2SimCfg.

    .venv-lava/bin/python benchmarks/nir_lava_agreement.py --write

records per case: spike entries compared with the engine running the same closed graph and with
the producer's own run, and how many differ; the fixed point's agreement with float (the
quantisation report). Writes docs/results/nir/lava_agreement.json and the generated block of
docs/nir.md (tests/test_nir_docs.py checks the block; tests/test_nir_lava_run.py, -m lava,
checks the same figures on Lava).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "nir"
DOC_MARK = ("<!-- nir-lava:begin -->\n", "\n<!-- nir-lava:end -->")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from nir_agreement import CASES, DATA, _replace  # noqa: E402


def measure_case(name: str) -> dict:
    from atomspark.mapping.nir_lava import (
        nir_lava,
        producer_clock,
        quantization_report,
        verify_on_lava,
    )
    from atomspark.networks.nir_closed import closed_graph
    from atomspark.networks.nir_file import read_nir
    from atomspark.networks.nir_graph import convention, nir_graph

    ref = np.load(DATA / f"{name}.npz")
    ng = nir_graph(read_nir(DATA / f"{name}.nir"), convention(CASES[name]))
    (inp,) = ng.inputs
    closed = closed_graph(ng, {inp: ref["input"]}, len(ref["input"]))
    out = {"producer": CASES[name], "steps": closed.steps}
    for arithmetic in ("float", "fixed"):
        nl = nir_lava(closed, fixed=arithmetic == "fixed")
        check = verify_on_lava(nl)
        on_producer = producer_clock(nl, check["lava_outputs"])
        keys = [k for k in on_producer if f"s:{k}" in ref.files]
        row = {
            "entries_vs_engine": int(
                sum(check["lava_outputs"][p.name].size for p in nl.net.populations)
            ),  # fmt: skip
            "differ_vs_engine": int(sum(check["lava_vs_engine_differ"].values())),
            "entries_vs_producer": int(sum(ref[f"s:{k}"].size for k in keys)),
            "differ_vs_producer": int(
                sum(np.count_nonzero(on_producer[k] != ref[f"s:{k}"]) for k in keys)
            ),  # fmt: skip
            "lava_spikes": int(sum(check["lava_spikes"].values())),
        }
        if arithmetic == "fixed":
            q = quantization_report(nl)
            row["spike_agreement_with_float"] = round(q["spike_agreement"], 4)
        out[arithmetic] = row
    return out


def render(res: dict) -> str:
    lines = [
        "| producer | case | steps | Lava float vs engine (differ / compared) | Lava float vs "
        "producer | Lava fixed vs engine | Lava fixed vs producer | fixed keeps float's spikes |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in res.items():
        f, x = r["float"], r["fixed"]
        lines.append(
            f"| {r['producer']} | {name} | {r['steps']} | {f['differ_vs_engine']} / "
            f"{f['entries_vs_engine']} | {f['differ_vs_producer']} / {f['entries_vs_producer']} | "
            f"{x['differ_vs_engine']} / {x['entries_vs_engine']} | {x['differ_vs_producer']} / "
            f"{x['entries_vs_producer']} | {100 * x['spike_agreement_with_float']:.2f} % |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the results and the doc block")
    args = ap.parse_args()
    res = {name: measure_case(name) for name in CASES}
    print(render(res))
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "lava_agreement.json").write_text(json.dumps(res, indent=2) + "\n")
        _replace(ROOT / "docs" / "nir.md", DOC_MARK, render(res))


if __name__ == "__main__":
    main()
