"""The map's imported networks: each recorded NIR producer case (tests/data/nir: snnTorch,
Sinabs and Norse networks written by the producers' own writers) at its own size, priced by
compare's function for imported graphs (scenarios/compare/nir_compare.nir_workload: the import's
chip prediction in Loihi fixed point against the graph stepped in torch at every precision and
kernel), with Bernoulli input spikes of rate `activity` as the activity axis."""

from __future__ import annotations

from pathlib import Path

from atomspark.mapping.hardware import NeuromorphicHardware

CASES = Path(__file__).resolve().parents[2] / "tests" / "data" / "nir"
PRODUCERS = {"snntorch_recurrent": "snntorch", "norse_cells": "norse",
             "snntorch_conv": "snntorch", "sinabs_conv": "sinabs"}  # fmt: skip
IMPORT_CASES = {"ci": ("snntorch_recurrent",), "full": tuple(PRODUCERS)}
IMPORT_RATES = {"ci": (0.2,), "full": (0.05, 0.2, 0.5)}
IMPORT_SAMPLES, IMPORT_STEPS = 4, 50  # compare GRAPH.nir's defaults


def _graph(case: str):
    from atomspark.scenarios.runs.nir_import import load_nir

    return load_nir(CASES / f"{case}.nir", PRODUCERS[case], None)


def imported_price(point: dict, carried: dict, hw: NeuromorphicHardware):
    from atomspark.networks.torch_path.device import select_device
    from atomspark.scenarios.compare.nir_compare import nir_workload
    from atomspark.scenarios.runs.nir_import import input_spikes

    ng = _graph(point["case"])
    inputs = input_spikes(ng, f"rate:{point['activity']}", IMPORT_SAMPLES, IMPORT_STEPS)
    chip, variants, _ = nir_workload(ng, inputs, IMPORT_STEPS, hw, select_device("cpu"))
    return chip, variants


def imported_grid(name: str, carried=None) -> list[dict]:
    points = []
    for rate in IMPORT_RATES[name]:
        for case in IMPORT_CASES[name]:
            size = int(_graph(case).graph.total_units)
            points.append({"case": case, "activity": rate, "size": size,
                           "series": f"input rate {rate:g}"})  # fmt: skip
    return points
