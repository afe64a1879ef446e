"""The standard-process form of a VN priced beside the custom form in `compare`: the settle on
Lava SigmaDelta neurons (two compartments per signed atom, graded-spike messages;
mapping/vn_standard.py) run on the engine for the same samples and step budget, stopped by the
same held-out rule against the same reference, and placed and priced by the same search and
energy model as the custom (VNAtom) row (each at the headline's default placement objective and
static scope, batch 1). The headline prices the form `export --to lava` writes
by default (`EXPORTED_FORM`)."""

from __future__ import annotations

import numpy as np
from atomspark.mapping.chip_gpu_ratios import Assumptions
from atomspark.mapping.lava.units.registry import lava_unit_of_params
from atomspark.mapping.vn_standard import codes as standard_codes
from atomspark.mapping.vn_standard import vn_standard_runner
from atomspark.networks.engine_run import concat_profiles
from atomspark.networks.sample_runner import vn_runner
from atomspark.scenarios.compare.chip_rows import SETTLED_REL_ERROR, truncate
from atomspark.sim.core import AtomsparkError
from atomspark.sim.graph import Graph

CUSTOM_FORM = "custom (VNAtom, one compartment per atom)"
STANDARD_FORM = "standard (SigmaDelta + Sparse, two compartments per signed atom)"
EXPORTED_FORM = CUSTOM_FORM  # `export --to lava` writes the custom form unless --standard


def deployable_on_chip(graph: Graph) -> bool:
    """A graph can be compiled for a Loihi 2 chip only in fixed point and only when every
    population is a standard Lava process (mapping/lava/export.deployable_on_chip's rule)."""
    return all(
        p.is_fixed_point and lava_unit_of_params(p.params).standard for p in graph.populations
    )


def standard_run(model, x: np.ndarray, steps: int, frac_bits: int | None):
    """Each sample settled on the standard form: (final codes per layer, profiles, the standard
    graph, (traces of the signed codes per layer in float units, their record keys))."""
    runner = vn_standard_runner(vn_runner(model), frac_bits)
    graph = runner.graph
    layers = [p.name for p in runner.graph.populations if p.name.endswith(".pos")]
    layers = [name[: -len(".pos")] for name in layers]
    runs = runner.run(x, steps, record=tuple((p.name, "act") for p in graph.populations))
    unit = 1.0 if frac_bits is None else 2.0**-frac_bits
    traces = [{(l, "g"): standard_codes(t, graph, l) * unit for l in layers} for t in runs.traces]
    codes = [np.stack([out[i] for out in runs.outputs]) for i in range(len(layers))]
    return codes, runs.profiles, graph, (traces, [(l, "g") for l in layers])


def _rel_error(codes, reference) -> float:
    """Max over samples of the max code error relative to the sample's max |g| (the stop's
    measure, scenarios/compare/chip_rows.code_errors)."""
    a, b = np.concatenate(codes, axis=1), np.concatenate(reference, axis=1)
    scale = np.maximum(np.abs(b).max(axis=1), 1e-12)
    return float((np.abs(a - b).max(axis=1) / scale).max())


def _form_entry(row, stop, profiles, graph: Graph, codes, float_codes, reference) -> dict:
    priced = [truncate(p, s) for p, s in zip(profiles, stop.steps)]
    prof = concat_profiles(priced)
    n = len(stop.steps)
    entry = {
        "compartments": int(sum(p.size for p in graph.populations)),
        "deployable_on_chip": deployable_on_chip(graph),
        "events_per_sample": float(prof.events.sum()) / n,
        "events_each": [int(p.events.sum()) for p in priced],
        "stop_steps": [int(s) for s in stop.steps],
        "synops_per_sample": float(prof.synops.sum()) / n,
        "code_error_vs_float": float(
            np.abs(np.concatenate(codes, axis=1) - np.concatenate(float_codes, axis=1)).max()
        ),
        "rel_error_at_stop": _rel_error(stop.codes, reference),
        "fits": bool(row.fits),
    }
    if row.fits:
        defaults = Assumptions()  # the headline's default placement objective and static scope
        row = row.choose(defaults.placement, defaults.static_scope)
        entry |= {
            "cores": int(row.cores),
            "chips": int(row.chips),
            "chip_steps_per_sample": float(row.steps),
            "energy_per_sample_j": float(row.energy(defaults.static_scope)),
            "latency_per_sample_s": float(row.latency_s),
            "stop": row.stop_detail,
        }
    else:
        entry["problems"] = list(row.problems)
    return entry


def standard_form_entry(
    model, x, steps: int, frac_bits, reference, float_codes, custom, price
) -> dict:
    """The standard form priced as the custom form is, beside it. `custom` is (row, stop,
    profiles, graph, codes) of the custom form's priced run, `price(profiles, traced, graph)`
    the custom form's pricing path (vn_compare.vn_chip_rows with its reference and chip),
    `reference` the codes that set the stop (torch's), `float_codes` the float engine's
    full-budget codes."""
    try:
        codes, profiles, graph, traced = standard_run(model, x, steps, frac_bits)
    except AtomsparkError as err:
        return {"supported": False, "reason": str(err), "headline_prices": EXPORTED_FORM}
    row, stop, _ = price(profiles, traced, graph)
    return {
        "headline_prices": EXPORTED_FORM,
        "steps": steps,
        "forms": {
            CUSTOM_FORM: _form_entry(*custom, float_codes, reference),
            STANDARD_FORM: _form_entry(row, stop, profiles, graph, codes, float_codes, reference),
        },
    }


def format_standard_form(entry: dict) -> list[str]:
    """Lines for `compare`'s output: both forms' cost side by side, and which one the headline
    prices."""
    if not entry.get("supported", True):
        return [f"[compare] standard-process form: not priced ({entry['reason']})"]
    lines = [
        f"[compare] VN on the chip in both Lava forms (same samples, held-out stop, placement "
        f"search and energy model; the headline prices {entry['headline_prices']}, the form "
        "`export --to lava` writes; --standard writes the other):",
        f"  {'form':66s} {'compart.':>8s} {'cores':>5s} {'steps':>6s} {'energy/sample':>14s} "
        f"{'latency':>10s} {'err at stop':>11s} {'err vs float':>12s} deployable",
    ]
    for name, f in entry["forms"].items():
        if not f["fits"]:
            lines.append(f"  {name:66s} {f['compartments']:8d} does not fit the chip")
            continue
        lines.append(
            f"  {name:66s} {f['compartments']:8d} {f['cores']:5d} "
            f"{f['chip_steps_per_sample']:6.1f} {f['energy_per_sample_j'] * 1e6:11.4g} uJ "
            f"{f['latency_per_sample_s'] * 1e6:7.4g} us {f['rel_error_at_stop']:11.3g} "
            f"{f['code_error_vs_float']:12.3g} "
            f"{'yes' if f['deployable_on_chip'] else 'no'}"
        )
    lines.append(
        f"  err at stop: max over samples of |g - reference| / max |g| where the held-out budget "
        f"stops (target {SETTLED_REL_ERROR:g}); a form whose error floor lies above the target "
        "stops within 10 % of its floor, so costs compare only at similar errors"
    )
    return lines
