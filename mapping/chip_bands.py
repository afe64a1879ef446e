"""Uncertainty bands of a chip row's estimated constants, from its preset's silicon fit.

A preset calibrated against a measurement (its `calibration` section, written by
scenarios/runs/loihi2_calibrate.py) replaces the blanket x0.5 / x2 of the chip's constants:
static power spans the measured per-chip static power; per-operation energy spans the two
extreme attributions of the fit's misfit (all in synaptic operations, or all in neuron updates),
weighted by the workload's own mix of operations. A preset without a fit keeps x0.5 / x2.
"""

from __future__ import annotations

from atomspark.mapping.energy import EnergyBreakdown
from atomspark.mapping.hardware import NeuromorphicHardware

BLANKET = (1.0, 0.5, 2.0)
# the classes of the energy breakdown each attribution factor applies to
_CLASSES = {"synaptic_ops": ("synaptic_ops",), "updates": ("updates_active", "updates_idle")}
_DYNAMIC = ("synaptic_ops", "updates_active", "updates_idle", "spikes", "routing")


def op_energy_band(hw: NeuromorphicHardware, breakdown: EnergyBreakdown) -> tuple[float, float]:
    """(low, high) scale of the workload's dynamic energy over the fitted uniform factor."""
    cal = hw.calibration
    parts = {c: float(getattr(breakdown, c)) for c in _DYNAMIC}
    total = sum(parts.values())
    if not cal.get("op_attribution") or total <= 0:
        return BLANKET[1], BLANKET[2]
    uniform = float(cal["op_energy"])
    scales = []
    for name, factor in cal["op_attribution"].items():
        inside = sum(parts[c] for c in _CLASSES.get(name, ()))
        scales.append((factor * inside + (total - inside)) / uniform / total)
    return min(scales), max(scales)


def chip_bands(hw: NeuromorphicHardware, breakdown: EnergyBreakdown) -> dict[str, tuple]:
    """{constant name (chip_gpu_ratios.SCALED): scales tried in the range, headline first}."""
    if not hw.calibration:
        return {}
    static = hw.calibration.get("bands", {}).get("chip_static_power")
    op_lo, op_hi = op_energy_band(hw, breakdown)
    out = {"chip_op_energy": _scales(op_lo, op_hi)}
    if static:
        out["chip_static_power"] = _scales(*static)
    return out


def bias_note(hw: NeuromorphicHardware, breakdown: EnergyBreakdown) -> str:
    """One sentence: the direction of the bias left in this row's headline."""
    if not hw.calibration:
        return (
            f"{hw.name} is not calibrated against silicon: bias unmeasured, constants at "
            "x0.5-x2 (choose a calibrated preset, e.g. --hardware loihi2-pilotnet)"
        )
    lo, hi = op_energy_band(hw, breakdown)
    static = hw.calibration.get("bands", {}).get("chip_static_power", [1.0, 1.0])
    ops = "favours the chip" if hi * lo > 1.0 else "against the chip"
    return (
        f"static power at the lowest measured per-chip figure (favours the chip, up to "
        f"x{static[1]:.2f}); per-op energy for this mix x{lo:.2f}-x{hi:.2f} ({ops})"
    )


def _scales(lo: float, hi: float) -> tuple:
    return tuple(dict.fromkeys((1.0, float(lo), float(hi))))
