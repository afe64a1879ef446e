"""Why the chip's step time has no band in the chip-vs-GPU ranges, and what it moves: a bullet of
docs/chip_vs_gpu.md generated from the calibration's committed results
(docs/results/loihi2_validation/: calibration.json, pilotnet_sdnn.json) and the demo's rows.

The calibrated preset's per-operation and barrier times are one factor fitted on one measured
step; a second measured step would set a band, and the only other one is bound by the host. What
the headline leans on it for: the time ratios in proportion, and the batch-1 energy through
static power (static power x time), whose share of the chip's energy is read from the row's two
static scopes.
"""

from __future__ import annotations

import json
from pathlib import Path

from atomspark.mapping.hardware import load_hardware

VALIDATION = Path(__file__).resolve().parents[2] / "docs" / "results" / "loihi2_validation"
STEP_FACTORS = (0.5, 2.0)  # the step-time factors whose effect the bullet states


def static_share(chip: dict) -> float | None:
    """Share of the chip row's batch-1 energy (whole-device scope) that is static power: the
    device and shared scopes differ only in the static power of the cores not in use."""
    cpc = load_hardware(chip["hardware"]).limits.cores_per_chip
    unused = 1.0 - chip["cores"] / (chip["chips"] * cpc)
    by_scope = chip["energy_uJ_by_static_scope"]
    if unused <= 0 or not by_scope:
        return None
    return (by_scope["device"] - by_scope["shared"]) / unused / by_scope["device"]


def moved_ratio(ratio: float, share: float, factor: float) -> float:
    """The batch-1 energy ratio with the chip's step time x `factor` (static energy scales with
    it, dynamic energy does not)."""
    return ratio / (1.0 - share + share * factor)


def step_time_bullet(results: dict, folder: Path = VALIDATION) -> list[str]:
    """The Method bullet (module docstring), every figure from the committed results."""
    cal = json.loads((folder / "calibration.json").read_text())
    sdnn = json.loads((folder / "pilotnet_sdnn.json").read_text())
    measured, before, _ = cal["fit"]["time per step (s)"]
    m = sdnn["measured"]
    sdnn_step = 1.0 / (m["inferences_per_s"] * m["steps_per_inference"])
    shift = sdnn["predicted"]["shift"]["time_per_step_s"]
    moves = []
    for name, r in results.items():
        share = static_share(r["chip"]) if r["fits"] else None
        if share is None:
            if r["fits"]:
                moves.append(f"{name} holds every core of its chips, so its two static scopes "
                             "coincide and its static share is not read apart here")  # fmt: skip
            continue
        ratio = r["batch_1"]["ratio"]
        lo, hi = (moved_ratio(ratio, share, f) for f in STEP_FACTORS)
        moves.append(
            f"{name} {share:.0%} static, {ratio:.3g}x -> {hi:.3g}x at twice the step and "
            f"{lo:.3g}x at half"
        )
    return [
        "- **The chip's step time has no band.** The calibrated preset's per-operation and "
        f"barrier times are the `{cal['base']}` preset's x{cal['factors']['op_time']:.3f}, "
        f"fitted on the one usable time measurement (PilotNet LIF: {measured * 1e6:.1f} us per "
        f"step measured, {before * 1e6:.1f} us predicted before the fit). One factor on one "
        "measurement fits it exactly, so no residual is left to set a band from, and the other "
        f"measured step (PilotNet SDNN: {sdnn_step * 1e6:,.0f} us, {sdnn_step / shift:,.0f}x the "
        f"{shift * 1e6:.1f} us predicted) waits for the host to send each frame: it bounds the "
        "chip's own step from above only (docs/energy_validation.md). The ranges hold the step "
        "time at its fitted value. What it moves: every time ratio in proportion, and the "
        "batch-1 energy through static power (static power x time; at throughput the copies "
        "share it): " + "; ".join(moves) + ".",
    ]
