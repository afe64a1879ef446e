"""What both import verbs (netx: netx_import.py, NIR: nir_import.py) share: the check that
--hardware names a neuromorphic chip, the prediction's log line and the files they write."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from atomspark.mapping.hardware import NeuromorphicHardware, load_hardware
from atomspark.scenarios.runs.netx_predict import Prediction
from atomspark.sim.core import AtomsparkError, atomic_write_text


def neuromorphic_hardware(hardware: str) -> NeuromorphicHardware:
    """The --hardware preset when it is a chip with cores; anything else is one line."""
    hw = load_hardware(hardware)
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(f"--hardware {hardware}: needs a neuromorphic preset (cores)")
    return hw


def prediction_line(hw_name: str, p: dict) -> str:
    """One log line: cores, inferences/s and energy per inference (total, static, dynamic)."""
    return (
        f"[import] {hw_name}: {p['cores']} cores, {p['inferences_per_s']:.4g} inferences/s, "
        f"{p['energy_per_inference_j'] * 1e3:.4g} mJ/inference (static "
        f"{p['static_energy_per_inference_j'] * 1e3:.4g}, dynamic "
        f"{p['dynamic_energy_per_inference_j'] * 1e3:.4g})"
    )


def write_import(folder: Path, pred: Prediction, result: dict, log: Callable[[str], None]) -> None:
    """profile.json and import.json into the prepared run folder, then say so."""
    pred.profile.to_json(folder / "profile.json")
    atomic_write_text(folder / "import.json", json.dumps(result, indent=2))
    log(f"[import] wrote {folder}/import.json, profile.json")
