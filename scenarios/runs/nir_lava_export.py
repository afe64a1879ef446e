"""`atomspark export GRAPH.nir --to lava`: an imported NIR graph as a Lava bundle whose input is
a stream of spikes (mapping/nir_lava.py), float or Loihi fixed point with its quantisation
report, optionally checked on Lava's simulator against the engine and placed on a chip.

Writes the bundle (weights.npz, metadata.json with each process and whether it is standard,
run_bundle.py) and export.json to --out; --report adds deployment.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from atomspark.mapping.hardware import DEFAULT_CHIP
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.run_folder import finish_run, prepare_run_folder

DEFAULT_INPUT = "rate:0.2"
# export_model's options that have no meaning for a NIR graph: refused in one line each
NOT_FOR_NIR = {
    "standard": "--standard writes a VN on SigmaDelta processes; a NIR graph is LIF already",
    "split_w_h": "--split-w-h is RSGN's",
    "per_target_w": "--per-target-w is RSGN's",
    "accept_disagreement": "a NIR export records its agreement in export.json and never refuses",
}


def export_nir_lava(
    path: str | Path,
    out: str | Path,
    producer: str = "nir",
    dt: float | None = None,
    input_spec: str = DEFAULT_INPUT,
    steps: int = 100,
    fixed: bool = False,
    verify: bool = False,
    report: bool = False,
    hardware: str = DEFAULT_CHIP,
    overwrite: bool = False,
    log: Callable[[str], None] = print,
) -> dict:
    """Everything is checked (file, input, Lava when --verify) before --out is touched."""
    from atomspark.mapping.lava.export import export_lava, hardware_run_config
    from atomspark.mapping.nir_lava import nir_lava, quantization_report, verify_on_lava
    from atomspark.networks.nir_closed import closed_graph
    from atomspark.scenarios.runs.export import require_lava
    from atomspark.scenarios.runs.nir_import import input_spikes, load_nir

    steps = require_int("--steps", steps, minimum=1)
    if verify:
        require_lava()
    ng = load_nir(path, producer, dt)
    (spikes,) = input_spikes(ng, input_spec, 1, steps)
    nl = nir_lava(closed_graph(ng, spikes, steps), fixed)
    result: dict = {"model": str(path), "kind": "nir", "producer": producer, "to": "lava",
                    "input": input_spec, "steps": steps,
                    "arithmetic": nl.net.arithmetic}  # fmt: skip
    if fixed:
        q = quantization_report(nl)
        result["quantization"] = q
        for line in quantization_lines(q):
            log(line)
    dep = _deployment(nl, hardware) if report else None
    folder = prepare_run_folder(out, "export", "overwrite" if overwrite else "new")
    bundle = export_lava(nl.net, folder)
    hw_run = hardware_run_config(nl.net)
    result.update(bundle=str(bundle), layout="node", processes=hw_run["processes"],
                  deployable_on_chip=hw_run["deployable_on_chip"])  # fmt: skip
    n_src = sum(r["lava_process"] == "RingBuffer" for r in hw_run["processes"])
    log(f"[export] Lava bundle ({'fixed point' if fixed else 'float'}) written to {bundle}: "
        f"{len(hw_run['processes'])} processes, {n_src} RingBuffer spike source(s) streaming "
        f"{nl.closed.total} steps; deployable on chip: "
        f"{'yes' if hw_run['deployable_on_chip'] else 'no'}")  # fmt: skip
    if dep is not None:
        atomic_write_text(folder / "deployment.json", json.dumps(dep.to_dict(), indent=2))
        for line in dep.lines():
            log(line)
        result["deployment"] = {"fits": dep.fits, "cores": len(dep.cores),
                                "deployable_on_chip": dep.deployable_on_chip}  # fmt: skip
    if verify:
        log(f"[export] running the bundle on Lava's Loihi2SimCfg for {nl.closed.total} steps")
        check = verify_on_lava(nl)
        check.pop("lava_outputs")
        result["verify"] = check
        worst = max(check["lava_vs_engine_differ"].values(), default=0)
        log(f"[export] verified on Lava ({check['arithmetic']}): {worst} spike(s) differ from "
            f"the engine at most per population -> {'PASS' if check['passed'] else 'FAIL'}")  # fmt: skip
    atomic_write_text(folder / "export.json", json.dumps(result, indent=2, default=str))
    finish_run(folder)
    if verify and not result["verify"]["passed"]:
        raise AtomsparkError(
            f"Lava verification failed: {result['verify']['lava_vs_engine_differ']}"
        )
    return result


def quantization_lines(q: dict) -> list[str]:
    """The quantisation report as printed lines."""
    lines = [f"[export] fixed point at {q['scale']:.4g} weight units per float unit: spikes "
             f"equal to float in {100 * q['spike_agreement']:.2f} % of entries over "
             f"{q['steps']} steps"]  # fmt: skip
    for node, r in q["nodes"].items():
        extra = (f", readout v within {r['v_max_rel_error']:.3g} of its largest |v|"
                 if "v_max_rel_error" in r else "")  # fmt: skip
        lines.append(f"[export]   {node}: spikes float {r['spikes_float']}, fixed "
                     f"{r['spikes_fixed']}, {r['spikes_differ']} differ{extra}")  # fmt: skip
    worst = max((r["max_rel_error"] for r in q["projections"].values()), default=0.0)
    lines.append(f"[export]   weights: largest error {worst:.3g} of each projection's largest |w|")
    return lines


def _deployment(nl, hardware: str):
    """The deployment report of the bundle's graph, with the bundle's own processes (spike
    sources included): deployable on chip only when it fits, is fixed point and every process
    is standard."""
    from atomspark.mapping.deployment import deployment_report
    from atomspark.mapping.lava.export import deployable_on_chip, process_table

    rep = deployment_report(nl.graph, hardware)
    return replace(rep, processes=process_table(nl.net),
                   deployable_on_chip=rep.fits and deployable_on_chip(nl.net))  # fmt: skip


def refuse_options(**given: bool) -> None:
    """export_model's options that a NIR graph has no use for, in one line."""
    for name, on in given.items():
        if on and name in NOT_FOR_NIR:
            raise AtomsparkError(
                f"--{name.replace('_', '-')}: not for a NIR graph ({NOT_FOR_NIR[name]})"
            )
