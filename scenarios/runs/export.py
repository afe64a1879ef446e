"""`atomspark export`: a saved model, compiled for one input, written as a Lava bundle (optionally
quantised to Loihi fixed point and verified on Lava's simulator), a NIR file, or a networkx
GraphML file."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import numpy as np
from atomspark.mapping.quantize import DEFAULT_MIN_AGREEMENT
from atomspark.scenarios.runs.engine import (
    LoadedModel,
    engine_side,
    load_model,
    require_run_memory,
)
from atomspark.scenarios.runs.profile import read_inputs
from atomspark.scenarios.runs.quantize_sides import (
    has_split_layout,
    quantize_side,
    split_classifier,
    split_stream,
)
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.graph import Graph
from atomspark.sim.progress import Stages
from atomspark.sim.run_folder import finish_run, prepare_run_folder

TARGETS = ("lava", "nir", "networkx")


def graph_for_first_input(loaded: LoadedModel, samples: np.ndarray) -> Graph:
    """The engine graph of the model on the first input sample (VN drive / RSGN ignition)."""
    return engine_side(loaded).graph_for(loaded.model, samples[0])


def export_model(
    model_path: str | Path,
    to: str,
    out: str | Path,
    inputs: str = "builtin:1",
    fixed: bool = False,
    verify: bool = False,
    steps: int = 100,
    frac_bits: int = 12,
    log: Callable[[str], None] = print,
    overwrite: bool = False,
    report: bool = False,
    hardware: str = "loihi2",
    min_agreement: float = DEFAULT_MIN_AGREEMENT,
    split_w_h: bool = False,
    per_target_w: bool = False,
    layout: str = "auto",
    accept_disagreement: bool = False,
    standard: bool = False,
) -> dict:
    """Export `model_path` (compiled for the first of `inputs`) to `to` in folder `out`;
    `fixed`: quantise to Loihi fixed point and log the quantisation's error (quantize_sides.py);
    `report`: also write deployment.json (per-core use against `hardware`'s limits);
    `verify` of a fixed-point export also fails when the integer model agrees with the float one
    on less than `min_agreement` of the quantisation report (its agreement); RSGN `split_w_h`:
    W_h in two 8-bit parts (rsgn_fixed_split), `per_target_w`: W's exponent per target node; `layout`
    (Lava, RSGN): "split" writes the split layout (mapping/lava/split_bundle.py), "node" each node
    whole, "auto" the split layout when the node layout does not fit `hardware`. A fixed-point
    export measures agreement over at least MIN_AGREEMENT_SAMPLES builtin samples (when --input
    is builtin) and is refused below `min_agreement` unless `accept_disagreement`; `standard`: a
    VN on standard Lava processes only (mapping/vn_standard.py)."""
    if to not in TARGETS:
        raise AtomsparkError(f"--to {to!r}: choose one of {', '.join(TARGETS)}")
    _require_lava_target(to, verify=verify, standard=standard)
    steps = require_int("--steps", steps, minimum=1)
    from atomspark.mapping.quantize import require_frac_bits

    frac_bits = require_frac_bits("--frac-bits", frac_bits)
    if verify and to == "lava":
        require_lava()
    min_agreement = require_fraction("--min-agreement", min_agreement)
    _require_fixed(fixed, split_w_h=split_w_h, per_target_w=per_target_w)
    loaded = load_model(model_path)
    samples = read_inputs(inputs, loaded, model_path=model_path, log=log)
    require_run_memory(loaded, 1, steps, "--steps")
    graph = graph_for_first_input(loaded, samples)
    split = _split_layout(loaded, graph, layout, hardware, to)
    result: dict = {"model": str(model_path), "kind": loaded.kind, "to": to}
    stage = Stages(log, "[export]", 1 + fixed + report + (verify and to == "lava"))
    if standard:
        graph, result["standard_form"] = _standard(
            graph, frac_bits if fixed else None, steps, stage, log
        )
    elif fixed:
        graph = _quantize(loaded, model_path, inputs, samples, graph, steps, frac_bits, stage,
                          log, result, (split_w_h, per_target_w, verify, min_agreement,
                                        accept_disagreement, split, hardware))  # fmt: skip
    out = prepare_run_folder(out, "export", "overwrite" if overwrite else "new")
    if report and not split:
        stage(f"placing the graph on {hardware} cores and checking its limits")
        result["deployment"] = _deployment(loaded, graph, hardware, out, log)
    stage(f"writing the {to} export")
    if to == "lava":
        classifier = split_classifier(loaded.kind, loaded.model) if split else None
        _write_lava(graph, out, result, fixed, split, report, verify, steps, hardware, stage, log,
                    classifier)  # fmt: skip
    elif to == "nir":
        from atomspark.mapping.nir_export import export_nir

        report = export_nir(graph, out / "network.nir")
        result.update(path=report.path, unsupported=report.unsupported)
        log(f"[export] NIR graph with {len(report.nodes)} nodes written to {report.path}")
        for item in report.unsupported:
            log(f"[export] not expressible in NIR: {item}")
    else:
        from atomspark.mapping.graph_export import to_networkx

        g = to_networkx(graph)
        path = out / "network.graphml"
        labelled = nx.relabel_nodes(g, {n: f"{n[0]}:{n[1]}" for n in g.nodes})
        atomic_write_text(path, "\n".join(nx.generate_graphml(labelled)))
        result["path"] = str(path)
        log(
            f"[export] networkx graph ({g.number_of_nodes()} units, {g.number_of_edges()} "
            f"edges) written to {path}"
        )
    atomic_write_text(out / "export.json", json.dumps(result, indent=2, default=str))
    finish_run(out)  # after the last file: the run is complete
    return result


def _quantize(loaded, model_path, inputs, samples, graph, steps, frac_bits, stage, log,
              result: dict, options: tuple) -> Graph:  # fmt: skip
    """The integer graph; its quantisation report and agreement go into `result`. A split bundle
    with a readout on chip is held to the decisions of that readout's integer scores over the
    same samples (_chip_readout), any other to the integer engine's. Below --min-agreement the
    export is refused before anything is written, unless --verify (which records it and fails
    later) or --accept-disagreement."""
    split_w_h, per_target_w, verify, min_agreement, accept_disagreement, split, hardware = options
    side = quantize_side(loaded.kind)
    measured = _agreement_samples(inputs, samples, loaded, model_path, log)
    what = side.measured_over(len(measured), steps)
    stage(f"quantising to Loihi fixed point and measuring its error over {what}")
    graph, result["quantization"] = side.quantize(
        loaded.model, graph, measured, steps, frac_bits, log, split_w_h, per_target_w
    )
    key, what = quantize_side(loaded.kind).agreement
    q = result["quantization"]
    check = _agreement(float(q[key]), what, q.get("samples"), min_agreement)
    chip = _chip_readout(loaded, graph, hardware, measured) if split else None
    if chip is not None:
        q["chip_readout"] = chip
        check = _agreement(chip["decision_agreement"], CHIP_READOUT_AGREEMENT, len(measured),
                           min_agreement)  # fmt: skip
    if verify:
        result["verify"] = check
    elif not check["passed"] and not accept_disagreement:
        raise AtomsparkError(
            check["message"] + "; nothing written (--accept-disagreement exports anyway)"
        )
    result["agreement"] = check
    log(f"[export] {check['message']}")
    return graph


def _write_lava(graph: Graph, out: Path, result: dict, fixed: bool, split: bool, report: bool,
                verify: bool, steps: int, hardware: str, stage, log,
                classifier=None) -> None:  # fmt: skip
    """The Lava bundle (whole-node or split layout, with the readout of `classifier` on chip),
    its report from the bundle (split) and its verification on Lava, recorded in `result`."""
    from atomspark.mapping.lava.export import export_lava

    if split:
        from atomspark.mapping.lava.bundle import from_graph
        from atomspark.mapping.lava.split_bundle import export_split

        bundle = export_split(from_graph(graph), out, hardware, classifier)
        readout = json.loads((bundle / "metadata.json").read_text())["split"].get("readout")
        if readout is not None:
            keys = ("classes", "weight_exp", "shift", "score_exp", "node_cores_per_group",
                    "placement", "added_cores")  # fmt: skip
            result["readout"] = {k: readout[k] for k in keys}
            log(
                f"[export] readout on chip: {readout['classes']} class scores from "
                f"{readout['placement']}; "
                + (
                    f"cls_w in two 8-bit parts (high x 2**{readout['weight_exp']}), products shifted "
                    f"by {readout['shift']}, a score unit 2**{readout['score_exp']}"
                    if fixed
                    else "float"
                )
            )
    else:
        bundle = export_lava(graph, out)
    result.update(bundle=str(bundle), layout="split" if split else "node")
    log(
        f"[export] Lava bundle ({'fixed point' if fixed else 'float'}, "
        f"{result['layout']} layout) written to {bundle}"
    )
    if report and split:
        stage(f"checking the split bundle's cores against {hardware}'s limits")
        result["deployment"] = _split_deployment(bundle, out, log)
    if verify and not result.get("verify", {"passed": True})["passed"]:
        atomic_write_text(out / "export.json", json.dumps(result, indent=2, default=str))
        raise AtomsparkError(result["verify"]["message"])
    if verify:
        stage(f"running the bundle on Lava's Loihi2SimCfg for {steps} steps")
        check = _verify_split if split else _verify
        result["verify"] = {**result.get("verify", {}), **check(bundle, steps, log)}


def _standard(graph: Graph, frac_bits: int | None, steps: int, stage, log) -> tuple[Graph, dict]:
    """The standard-process form of a VN graph and its code error against the VN engine."""
    from atomspark.mapping.vn_standard import standard_code_error, vn_standard_graph

    stage("writing the VN on standard Lava processes (SigmaDelta + Sparse)")
    std = vn_standard_graph(graph, frac_bits)
    err = standard_code_error(graph, std, steps, frac_bits)
    log(
        f"[export] VN on standard processes ({len(std.populations)} SigmaDelta populations, "
        f"{len(std.projections)} Sparse): final-code error against the VN engine over {steps} "
        f"steps max {err:.3g}"
    )
    return std, {"populations": len(std.populations), "code_max_abs_error": err}


def _deployment(loaded: LoadedModel, graph: Graph, hardware: str, out: Path, log) -> dict:
    """deployment.json and its table: does this graph fit the chip, core by core."""
    from atomspark.mapping.deployment import deployment_report

    positions = engine_side(loaded).positions(loaded.model)
    rep = deployment_report(graph, hardware, positions=positions)
    atomic_write_text(out / "deployment.json", json.dumps(rep.to_dict(), indent=2))
    for line in rep.lines():
        log(line)
    log(f"[deploy] wrote {out}/deployment.json")
    return {
        "fits": rep.fits,
        "cores": len(rep.cores),
        "problems": rep.problems,
        "deployable_on_chip": rep.deployable_on_chip,
    }


LAYOUTS = ("auto", "node", "split")
MIN_AGREEMENT_SAMPLES = 32  # a quantisation report's decision agreement is over this many


def _agreement_samples(inputs: str, samples: np.ndarray, loaded, model_path, log) -> np.ndarray:
    """The samples the quantisation report measures agreement over: --input's, or, when --input
    is builtin with fewer than MIN_AGREEMENT_SAMPLES, that many builtin samples."""
    from atomspark.scenarios.runs.model_task import task_samples

    if len(samples) >= MIN_AGREEMENT_SAMPLES or not str(inputs).startswith("builtin:"):
        return samples
    own = task_samples(model_path)  # a model's own task may hold fewer validation samples
    n = MIN_AGREEMENT_SAMPLES if own is None else min(MIN_AGREEMENT_SAMPLES, len(own[0]))
    if n <= len(samples):
        return samples
    log(f"[export] agreement measured over builtin:{n} (--input {inputs})")
    return read_inputs(f"builtin:{n}", loaded, model_path=model_path, log=log)


def _split_layout(loaded: LoadedModel, graph: Graph, layout: str, hardware: str, to: str) -> bool:
    """Whether the Lava export writes the split layout (export_model's `layout`)."""
    if layout not in LAYOUTS:
        raise AtomsparkError(f"--layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
    if layout != "auto" and to != "lava":
        raise AtomsparkError("--layout: only for --to lava (the Lava bundle's layout)")
    split = has_split_layout(loaded.kind)
    if to != "lava" or layout == "node" or (not split and layout == "auto"):
        return False
    if not split:
        raise AtomsparkError("--layout split: only RSGN models have a split layout")
    if layout == "split":
        return True
    from atomspark.mapping.hardware import load_hardware
    from atomspark.mapping.layouts import fit_graph

    return not fit_graph(graph, load_hardware(hardware), layout="node").fits


def _split_deployment(bundle: Path, out: Path, log) -> dict:
    """deployment.json of a split bundle, computed from the bundle itself."""
    from atomspark.mapping.lava.split_bundle import (
        load_split_bundle,
        report_lines,
        split_bundle_costs,
    )

    costs = split_bundle_costs(load_split_bundle(bundle))
    readout = [c.to_dict() for c in costs["readout_costs"]]
    data = {**costs, "costs": [c.to_dict() for c in costs["costs"]], "readout_costs": readout,
            "layout": "split", "fits": not costs["problems"],
            "cores": costs["cores_total"]}  # fmt: skip
    atomic_write_text(out / "deployment.json", json.dumps(data, indent=2))
    for line in report_lines(costs):
        log(line)
    log(f"[deploy] wrote {out}/deployment.json")
    return {"fits": data["fits"], "cores": data["cores"], "problems": costs["problems"],
            "margins": costs["margins"]}  # fmt: skip


def _verify_split(bundle: Path, steps: int, log) -> dict:
    require_lava()
    from atomspark.mapping.lava.split_bundle import verify_split

    r = verify_split(bundle, steps)
    worst = max(r["lava_vs_engine"].values())
    log(
        f"[export] verified the split bundle on Lava ({r['cores']} cores, {r['processes']}, "
        f"{steps} steps): max |Lava - engine| {worst:.3g} (tolerance {r['tolerance']:g}) -> "
        + ("PASS" if r["passed"] else "FAIL")
    )
    if not r["passed"]:
        raise AtomsparkError(f"Lava verification failed: {r['lava_vs_engine']}")
    return {k: r[k] for k in ("passed", "lava_vs_engine", "tolerance", "processes", "cores")}


def _require_lava_target(to: str, **options: bool) -> None:
    """Options that only the Lava export has are refused for other targets, in one line."""
    why = {"verify": "only the Lava export is verified (on Lava's simulator)",
           "standard": "only with --to lava (it chooses the Lava processes)"}  # fmt: skip
    for name, given in options.items():
        if given and to != "lava":
            raise AtomsparkError(f"--{name}: {why[name]}")


def _require_fixed(fixed: bool, **options: bool) -> None:
    """The integer-format options are refused without --fixed, in one line."""
    what = {"split_w_h": "it chooses the integer RSGN unit", "per_target_w": "it sets W's format"}
    for name, given in options.items():
        if given and not fixed:
            flag = "--" + name.replace("_", "-")
            raise AtomsparkError(f"{flag}: only with --fixed ({what[name]})")


def require_fraction(name: str, value) -> float:
    """`value` as a float in [0, 1], else one line naming `name`."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if not 0.0 <= x <= 1.0:
        raise AtomsparkError(f"{name}: must be a fraction in [0, 1] (0.95 = 95 %), got {value!r}")
    return x


CHIP_READOUT_AGREEMENT = "readout on chip: its integer scores' decisions agree with float on"


def _chip_readout(loaded: LoadedModel, graph: Graph, hardware: str, samples) -> dict | None:
    """The split bundle's on-chip readout over `samples` (None: the family's split bundle has no
    readout): its decision agreement with the float model and the sums that left their format,
    from the bundle's NumPy reference (bit for bit the Lava run's), before anything is written."""
    from atomspark.mapping.lava.bundle import from_graph
    from atomspark.mapping.lava.split_bundle import plan_split

    classifier = split_classifier(loaded.kind, loaded.model)
    if classifier is None:
        return None
    plan = plan_split(from_graph(graph), hardware, classifier)
    stream = split_stream(loaded.kind, loaded.model, plan, samples)
    if stream is None:
        return None
    return {
        "decision_agreement": stream.decision_agreement,
        "samples": len(stream.decisions),
        "overflows": int(stream.overflows),
        "decisions": stream.decisions.tolist(),
    }


def _agreement(value: float, what: str, n: int | None, min_agreement: float) -> dict:
    """Whether the integer model keeps the float model's decisions well enough to pass --verify:
    {passed, agreement, min_agreement, message}; `what` names the agreement measured over `n`
    samples."""
    value = float(value)
    passed = value >= min_agreement
    message = (
        f"quantisation: fixed-point {what} {100 * value:.1f} % "
        + (f"of {n} sample(s) " if n is not None else "")
        + f"({'at least' if passed else 'below'} --min-agreement {100 * min_agreement:g} %)"
        + ("" if passed else ": the integer model does not keep the float model's decisions")
    )
    return {"passed": passed, "agreement": value, "min_agreement": min_agreement,
            "message": message}  # fmt: skip


def require_lava() -> None:
    """--verify runs Lava, which lives in its own Python 3.10 environment: say which, and how
    to build it, before anything is written."""
    if importlib.util.find_spec("lava") is None:
        raise AtomsparkError(
            "--verify needs lava-nc, which is installed in the Python 3.10 environment: "
            "run .venv-lava/bin/atomspark export ... --verify (bash tools/setup.sh builds "
            ".venv-lava; it needs python3.10)"
        )


def _verify(bundle: Path, steps: int, log) -> dict:
    require_lava()
    from atomspark.mapping.lava.export import verify_lava

    report = verify_lava(bundle, steps)
    worst = max(report.lava_vs_engine.values(), default=0.0)
    log(
        f"[export] verified on Lava ({report.arithmetic}, {steps} steps): max |Lava - engine| "
        f"{worst:.3g} (tolerance {report.tolerance:g}) -> {'PASS' if report.passed else 'FAIL'}"
    )
    if not report.passed:
        raise AtomsparkError(f"Lava verification failed: {report.lava_vs_engine}")
    return {
        "passed": report.passed,
        "lava_vs_engine": report.lava_vs_engine,
        "lava_vs_reference": report.lava_vs_reference,
        "tolerance": report.tolerance,
    }
