"""The split RSGN as a Lava bundle: the whole-node description export_lava writes (weights.npz,
metadata.json, run_bundle.py), plus metadata "layout": "split" and a "split" section that fixes
the deployment: block sizes, node order, every process with its kind, Process class and core,
every connection with its synapses, the schedule, and the on-chip programs (microcode) with
their instruction counts and cost. The per-core costs a report prints are recomputed from the
bundle (`split_bundle_costs`), so a report and a bundle cannot disagree.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from atomspark.mapping.hardware import NeuromorphicHardware, load_hardware
from atomspark.mapping.lava.export import ENTRY_FILE, META_FILE, export_lava, load_bundle
from atomspark.mapping.lava.net import LavaNet
from atomspark.mapping.lava.rsgn_split import (
    PERIOD,
    PHASES,
    SplitModel,
    channels,
    split_model,
)
from atomspark.mapping.lava.split_run import MAX_PROCESSES
from atomspark.mapping.split_cores import (
    MEMORY_NOTE,
    ReadoutPlacement,
    SplitBlocks,
    SplitCoreCost,
    assign_cores,
    place_readout,
    search_blocks,
    split_core_costs,
    split_margins,
    split_problems,
)
from atomspark.mapping.split_microcode import (
    LOAD_IGNITION,
    READOUT_PRODUCT,
    instruction_cost,
    load_instructions,
    program_table,
    readout_instructions,
)
from atomspark.mapping.split_readout import (
    Readout,
    classifier_weights,
    quantize_readout,
    readout_from_dict,
    readout_groups,
    stored_weights,
)
from atomspark.sim.core import AtomsparkError, atomic_write_text

SPLIT_LAYOUT = "split"
PROCESS_CLASS = {"sum": "RSGNMessageSum", "transform": "RSGNTransform", "norm": "RSGNNorm"}
MAX_NODES = 1 << 20  # a bundle's node order is read only up to this size
ENCODING = (
    "host: each sample's ignition (alpha0, h0) is computed on the host from its tokens (the "
    "model file's encoder) and loaded as the programs' initial state; not a chip process (no "
    "program computes GELU, tanh, the ball projection, the token-node distances, their minimum "
    "or exp), so priced on neither side of the chip-vs-GPU rows"
)


@dataclass(frozen=True)
class SplitBundle:
    """A split bundle read back: the whole-node LavaNet, its SplitModel, blocks and node order."""

    net: LavaNet
    model: SplitModel
    blocks: SplitBlocks
    order: np.ndarray
    hardware: str
    readout: Readout | None = None

    def cores(self) -> list[dict]:
        return assign_cores(self.model.n, self.model.d, self.blocks, self.order)

    def readout_groups(self) -> list[np.ndarray]:
        """The compartments each feature partial of the readout sums (split_readout.py)."""
        group = self.readout.node_cores_per_group if self.readout else 1
        return readout_groups(self.cores(), self.model.d, group)

    def readout_placement(self, hardware=None) -> ReadoutPlacement | None:
        """Where the readout sits on `hardware` (default: the bundle's): split_cores.place_readout
        at its group size, the one placement export, report and price use (None: no readout)."""
        if self.readout is None:
            return None
        hw = _hardware(hardware or self.hardware)
        costs = split_core_costs(self.model, self.blocks, self.order, hw)
        r = self.readout
        return place_readout(self.model.n, self.model.d, self.blocks, self.order, costs,
                             r.classes, stored_weights(r), hw, r.node_cores_per_group,
                             composed=not r.fixed)  # fmt: skip


def plan_split(net: LavaNet, hardware: str = "loihi2", classifier=None) -> SplitBundle:
    """The split bundle export_split would write for `net`, in memory (nothing written): the
    search's block sizes and node order for `hardware` and, with `classifier` (the model's
    parameters: cls_w, cls_b, ln_gain, ln_bias), the readout as chip processes
    (mapping/split_readout.py), quantised when `net` is fixed point. Refuses, naming why, when
    no block size fits."""
    hw = _hardware(hardware)
    model = split_model(net)
    search = search_blocks(model, hw)
    if not search.fits:
        raise AtomsparkError(
            f"split layout on {hw.name}: no block size fits ({'; '.join(search.problems)})"
        )
    readout = None
    if classifier is not None:  # the group size the readout placement chooses
        fixed, classes = model.arithmetic == "fixed", int(np.shape(classifier.cls_w)[1])
        ro = place_readout(model.n, model.d, search.blocks, search.order, search.costs, classes,
                           classifier_weights(classifier, fixed), hw, composed=not fixed)  # fmt: skip
        nb = search.blocks.nodes_per_core
        readout = quantize_readout(classifier, fixed, model.n, ro.group * nb)
        readout = replace(readout, node_cores_per_group=ro.group)
    return SplitBundle(net, model, search.blocks, search.order, hw.name, readout)


def export_split(
    net: LavaNet, out_dir: str | Path, hardware: str = "loihi2", classifier=None
) -> Path:
    """Write `net` (one RSGN population) as the split bundle plan_split lays out for `hardware`
    (with the readout of `classifier` on chip processes when given)."""
    hw = _hardware(hardware)
    plan = plan_split(net, hw, classifier)
    model, readout = plan.model, plan.readout
    costs = split_core_costs(model, plan.blocks, plan.order, hw)
    out = export_lava(net, out_dir)
    meta = json.loads((out / META_FILE).read_text(encoding="utf-8"))
    meta["layout"] = SPLIT_LAYOUT
    meta["split"] = _section(model, plan.blocks, plan.order, costs, hw)
    if readout is not None:
        meta["split"]["readout"] = _readout_section(model, readout, plan, hw)
    meta["hardware_run"] = _hardware_run(net.arithmetic, meta["split"])
    atomic_write_text(out / META_FILE, json.dumps(meta, indent=2))
    atomic_write_text(out / ENTRY_FILE, _ENTRY_SOURCE)
    return out


def _readout_section(model: SplitModel, readout: Readout, plan: SplitBundle, hw) -> dict:
    """metadata.json's split.readout: the weights, the processes on their cores (the readout
    placement: shared with the network's cores where their limits allow), the pieces' costs and
    the product's microcode (per sample)."""
    ro = plan.readout_placement(hw)
    partial = "GradedVec" if readout.fixed else "Sparse (cls_w per node, float)"
    procs = [{"name": f"readout{g}", "lava_process": partial, "core": c}
             for g, c in enumerate(ro.partial_cores)] if readout.fixed else []  # fmt: skip
    procs += [
        {"name": "scores" if k == 0 else f"scores{k}",
         "lava_process": "RingBuffer (lava.proc.io.sink)", "core": c}
        for k, c in enumerate(ro.score_cores)
    ]  # fmt: skip
    procs.append({"name": "bias", "lava_process": "RingBuffer (lava.proc.io.source)", "core": None})
    return {
        **readout.to_dict(),
        "processes": procs,
        "cores": [c.to_dict() for c in ro.pieces],
        "placement": ro.note(),
        "added_cores": ro.added,
        "microcode": {
            "transform": asdict(READOUT_PRODUCT),
            "instructions_per_sample": readout_instructions(model.n, model.d),
        },
    }


_ENTRY_SOURCE = '''"""Run this atomspark split-layout RSGN bundle on Lava:
python run_bundle.py --steps K+1 [--verify] [--merged] [--out final.npz], or a stream of samples
in one run: python run_bundle.py --steps K+1 --inputs tokens.npy --model model.npz [--verify].

Needs lava-nc 0.10 and atomspark (its split RSGN ProcessModels) in the running environment.
"""

import sys
from pathlib import Path

from atomspark.mapping.lava.split_bundle import split_run_cli

if __name__ == "__main__":
    sys.exit(split_run_cli(Path(__file__).resolve().parent, sys.argv[1:]))
'''


def _hardware(hardware) -> NeuromorphicHardware:
    hw = load_hardware(hardware) if isinstance(hardware, str) else hardware
    if not isinstance(hw, NeuromorphicHardware):
        raise AtomsparkError(f"hardware {hw.name!r}: a split layout needs a neuromorphic chip")
    return hw


def _section(model: SplitModel, blocks, order, costs: list[SplitCoreCost], hw) -> dict:
    cores = assign_cores(model.n, model.d, blocks, order)
    processes = [
        {
            "name": f"{c['kind']}{i}",
            "kind": c["kind"],
            "lava_process": PROCESS_CLASS[c["kind"]],
            "core": int(c["core"]),
            "compartments": int(c["index"].size),
        }
        for i, c in enumerate(cores)
    ]
    conns = [
        {
            "name": ch.name,
            "source": f"{ch.source}.{ch.source_port}",
            "target": f"{ch.target}.{ch.target_port}",
            "lava_process": "Sparse",
            "num_message_bits": 24 if ch.graded else 0,
            "synapses": int(ch.weights.nnz),
        }
        for ch in channels(model)
    ]
    return {
        "hardware": hw.name,
        "blocks": blocks.to_dict(),
        "node_order": [int(v) for v in order],
        "schedule": {
            "chip_steps_per_model_step": PERIOD,
            "phases": list(PHASES),
            "first_chip_step": "emit (the ignition)",
            "stream": {
                "chip_steps_per_sample": "2 + 5 K: load (the reset phase), the ignition's emit, "
                "5 per model step",
                "first_chip_step": "idle (the input sends the first ignition)",
                "input": "RingBuffer sources (lava.proc.io.source) through Sparse ones: h0 and "
                "alpha0 to each transform compartment, alpha0 to each norm compartment",
                "load_microcode": {k: asdict(op) for k, op in LOAD_IGNITION.items()},
                "load_instructions_per_sample": load_instructions(model.n, model.d),
            },
        },
        "processes": processes,
        "connections": conns,
        "microcode": program_table(model.two_part_w_h),
        "instruction_cost": instruction_cost(hw),
        "cores": [c.to_dict() for c in costs],
        "memory_note": MEMORY_NOTE,
        "encoding": ENCODING,
    }


def _hardware_run(arithmetic: str, split: dict | None = None) -> dict:
    """metadata.json's hardware_run of a split bundle: every process (none of the three programs
    is a standard Lava process, the Sparse connections are), so not deployable as it is."""
    procs = sorted(PROCESS_CLASS.values())
    table = [{"name": p["name"], "lava_process": p["lava_process"], "core": p["core"],
              "standard_lava_process": False} for p in (split or {}).get("processes", [])]  # fmt: skip
    table += [{"name": c["name"], "lava_process": "Sparse", "standard_lava_process": True}
              for c in (split or {}).get("connections", [])]  # fmt: skip
    table += [{**p, "standard_lava_process": True}
              for p in (split or {}).get("readout", {}).get("processes", [])]  # fmt: skip
    return {
        "run_config": "lava.magma.core.run_configs.Loihi2HwCfg",
        "select_tag": "fixed_pt" if arithmetic == "fixed" else "floating_pt",
        "run_condition": "RunSteps(num_steps=1 + 5 K) for K model steps",
        "command": "python run_bundle.py --steps K+1 --loihi2",
        "requires": "Intel lava-loihi (INRC) and a Loihi 2 system (e.g. Kapoho Point)",
        "processes": table,
        "neurocore_processes": ["Sparse"],
        "host_processes": procs,
        "deployable_on_chip": False,
        "tested": False,
        "note": (
            "untested: atomspark has no Loihi hardware or lava-loihi. The split layout's "
            f"programs ({', '.join(procs)}) need the microcode listed under split.microcode; "
            "atomspark has only their Python ProcessModels, so Loihi2HwCfg would run them on the "
            "host CPU." + ("" if arithmetic == "fixed" else " Float does not run on the chip.")
        ),
    }


def is_split_bundle(out_dir: str | Path) -> bool:
    """Whether the bundle at `out_dir` is in the split layout (its metadata says so)."""
    path = Path(out_dir) / META_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("layout") == SPLIT_LAYOUT
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return False


def load_split_bundle(out_dir: str | Path) -> SplitBundle:
    """Read a split bundle (load_bundle's checks, then the split section's): a missing or
    inconsistent field is one AtomsparkError naming it."""
    out = Path(out_dir)
    net = load_bundle(out)
    meta = json.loads((out / META_FILE).read_text(encoding="utf-8"))
    split = meta.get("split")
    if meta.get("layout") != SPLIT_LAYOUT or not isinstance(split, dict):
        raise AtomsparkError(f"bundle {out}: not a split-layout bundle (no split section)")
    model = split_model(net)
    try:
        raw = split["blocks"]
        blocks = SplitBlocks(int(raw["nodes_per_core"]), int(raw["sum_features"]),
                             int(raw["sum_nodes"]))  # fmt: skip
        order_list = split["node_order"]
        if not isinstance(order_list, list) or len(order_list) > MAX_NODES:
            raise ValueError("node_order must be a list of node indices")
        order = np.asarray(order_list, np.int64)
        hardware = str(split["hardware"])
    except (KeyError, TypeError, ValueError) as exc:
        raise AtomsparkError(f"bundle {out}: split section incomplete ({exc})") from None
    if order.shape != (model.n,) or not np.array_equal(np.sort(order), np.arange(model.n)):
        raise AtomsparkError(f"bundle {out}: split node_order is not a permutation of the nodes")
    if min(blocks.to_dict().values()) < 1:
        raise AtomsparkError(f"bundle {out}: split block sizes must be positive")
    readout = None
    if "readout" in split:
        if not isinstance(split["readout"], dict):
            raise AtomsparkError(f"bundle {out}: split readout section must be an object")
        try:
            readout = readout_from_dict(split["readout"], model.arithmetic, model.d)
        except AtomsparkError as exc:
            raise AtomsparkError(f"bundle {out}: {exc}") from None
    return SplitBundle(net, model, blocks, order, hardware, readout)


def split_bundle_costs(bundle: SplitBundle, hardware: str | None = None) -> dict:
    """Per-core costs, problems and margins of a split bundle on `hardware` (default: the one
    it was laid out for), computed from the bundle itself: costs the network's cores,
    readout_costs the readout's pieces on their cores (SplitBundle.readout_placement: the
    network's where they fit, else added ones; empty without a readout), problems and margins
    of every core with what it holds, cores_total the cores in use."""
    hw = _hardware(hardware or bundle.hardware)
    costs = split_core_costs(bundle.model, bundle.blocks, bundle.order, hw)
    ro = bundle.readout_placement(hw)
    every = costs if ro is None else ro.cores
    return {
        "hardware": hw.name,
        "costs": costs,
        "readout_costs": [] if ro is None else ro.pieces,
        "readout_placement": "" if ro is None else ro.note(),
        "cores_total": len(every),
        "readout_instructions_per_sample": (
            readout_instructions(bundle.model.n, bundle.model.d) if ro else 0
        ),
        "load_instructions_per_sample": load_instructions(bundle.model.n, bundle.model.d),
        "problems": split_problems(every, hw),
        "margins": split_margins(every, hw),
        "instruction_cost": instruction_cost(hw),
        "microcode": program_table(bundle.model.two_part_w_h),
    }


# ------------------------------------------------------------------ report, run and verify


def report_lines(costs: dict, max_cores: int = 6) -> list[str]:
    """Printable: per kind of core its busiest use against the limits, margins, and the
    microcode each process runs with its price per model step."""
    c, ins, rc = costs["costs"], costs["instruction_cost"], costs.get("readout_costs", [])
    n_node = sum(x.kind == "node" for x in c)
    out = [
        f"[deploy] {costs['hardware']}: split layout "
        + ("fits" if not costs["problems"] else "DOES NOT FIT")
        + f" on {costs.get('cores_total', len(c))} cores ({n_node} node cores, {len(c) - n_node} "
        f"message-sum cores, {costs['cores_total'] - len(c) if rc else 0} added for the readout), "
        f"{PERIOD} chip steps per model step"
    ]
    out.append(f"{'core':>6s} {'kind':>5s} {'nodes':>6s} {'compart.':>9s} {'synapses':>9s} "
               f"{'memory B':>9s} {'fan-in':>7s} {'fan-out':>7s} {'instr/step':>10s}")  # fmt: skip
    busiest = {k: max((x for x in c if x.kind == k), key=lambda x: x.memory_bytes)
               for k in ("node", "sum") if any(x.kind == k for x in c)}  # fmt: skip
    shown = c[:max_cores] + [b for b in busiest.values() if b not in c[:max_cores]]
    for x in shown:
        out.append(f"{x.core:6d} {x.kind:>5s} {x.nodes:6d} {x.compartments:9d} {x.synapses:9d} "
                   f"{x.memory_bytes:9.0f} {x.fan_in_axons:7d} {x.fan_out_axons:7d} "
                   f"{x.microcode_instructions:10d}")  # fmt: skip
    margins = ", ".join(f"{k} {v:.1%}" for k, v in costs["margins"].items())
    out.append(f"[deploy] fit margin of the busiest core (1 - use / limit): {margins}")
    for kind, prog in costs["microcode"].items():
        ops = ", ".join(f"{op['name']} {op['instructions']}" for op in prog["operations"])
        out.append(f"[deploy] microcode {PROCESS_CLASS[kind]}: "
                   f"{prog['instructions_per_compartment']} instructions per compartment and "
                   f"model step ({ops})")  # fmt: skip
    total = sum(x.microcode_instructions for x in c)
    slowest = max((x.microcode_instructions for x in c), default=0)
    out.append(
        f"[deploy] microcode price per model step: {total} instructions, "
        f"{total * ins['energy_j']:.3g} J, slowest core {slowest * ins['time_s']:.3g} s "
        f"({ins['derivation']})"
    )
    if rc:
        per = costs["readout_instructions_per_sample"]
        out.append(
            f"[deploy] readout on chip: {costs['readout_placement']} (standard processes, busiest "
            f"fan-in {max(x.fan_in_axons for x in rc)} axons); its product's microcode {per} "
            f"instructions per sample, {per * ins['energy_j']:.3g} J"
        )
    load = costs.get("load_instructions_per_sample", 0)
    out.append(
        f"[deploy] a stream: one more chip step per sample (load, the reset phase), its microcode "
        f"{load} instructions per sample, {load * ins['energy_j']:.3g} J; encoding on the host"
    )
    out += [f"[deploy] does not fit: {p}" for p in costs["problems"]]
    return out


def verify_split(bundle_dir: str | Path, steps: int, merged: bool | None = None) -> dict:
    """Run the split bundle on Lava (core by core, or merged above MAX_PROCESSES processes) and
    compare alpha, h and the payloads per model step with the engine on the bundle's graph, and
    the readout's class scores with its engine-side counterpart (split_readout.engine_scores):
    bit-exact in fixed point, FLOAT_TOLERANCE in float (scores: relative to the largest)."""
    from atomspark.mapping.lava.bundle import to_graph
    from atomspark.mapping.lava.export import FLOAT_TOLERANCE
    from atomspark.mapping.lava.split_run import run_split_lava
    from atomspark.mapping.split_readout import engine_scores
    from atomspark.sim.engine import Engine
    from atomspark.sim.units.rsgn import rsgn_emitted
    from atomspark.sim.units.rsgn_fixed import emitted_payloads

    sb = load_split_bundle(bundle_dir)
    cores = sb.cores()
    merged = len(cores) > MAX_PROCESSES if merged is None else merged
    lava = run_split_lava(sb.model, cores, steps, merged=merged, readout=sb.readout)
    graph = to_graph(sb.net)
    name = graph.populations[0].name
    eng = Engine(graph)
    eng.run(steps, record=((name, "alpha"), (name, "h")))
    alpha, h = eng.traces[(name, "alpha")], eng.traces[(name, "h")]
    fixed = sb.model.arithmetic == "fixed"
    emit = emitted_payloads if fixed else rsgn_emitted
    cut = sb.net.populations[0].scalars["cutoff"]
    x = np.stack([emit(a, hh, cut) for a, hh in zip(alpha, h)])
    errors = {
        "alpha": float(np.abs(lava.alpha - alpha).max(initial=0.0)),
        "h": float(np.abs(lava.h - h).max(initial=0.0)),
        "payloads": float(np.abs(lava.x - x).max(initial=0.0)),
    }
    if sb.readout is not None:  # the readout's scores against its engine-side counterpart
        ref, _ = engine_scores(sb.readout, alpha[-1], h[-1], sb.readout_groups())
        scale = 1.0 if fixed else max(1.0, float(np.abs(ref).max(initial=0.0)))
        errors["scores"] = float(np.abs(lava.scores - ref).max(initial=0.0)) / scale
    tol = 0.0 if fixed else FLOAT_TOLERANCE
    return {
        "passed": all(e <= tol for e in errors.values()),
        "lava_vs_engine": errors,
        "tolerance": tol,
        "processes": "merged by kind" if merged else "one per core and kind",
        "cores": len({c["core"] for c in cores}),
        "final_alpha": lava.alpha[-1],
        "final_h": lava.h[-1],
        "final_scores": lava.scores,
    }


def split_run_cli(bundle_dir: Path, argv: list[str]) -> int:
    """run_bundle.py of a split bundle: run it on Lava (with --verify, against the engine); bad
    input is one line naming it (exit status 2)."""
    import sys

    try:
        return _run_cli(bundle_dir, argv)
    except AtomsparkError as exc:
        print(f"run_bundle.py: {exc}", file=sys.stderr)
        return 2


def _run_cli(bundle_dir: Path, argv: list[str]) -> int:
    import argparse

    from atomspark.mapping.quantize import DEFAULT_MIN_AGREEMENT

    parser = argparse.ArgumentParser(description="Run an atomspark split RSGN Lava bundle")
    parser.add_argument("--steps", type=int, required=True, help="engine steps: K + 1")
    parser.add_argument("--out", type=Path, default=None, help="save final states (.npz)")
    parser.add_argument("--verify", action="store_true",
                        help="compare with the engine (a stream: with its per-sample reference)")  # fmt: skip
    parser.add_argument("--merged", action="store_true", help="one Lava Process per kind")
    parser.add_argument("--loihi2", action="store_true", help="untested: see metadata.json")
    parser.add_argument("--inputs", type=Path, default=None,
                        help="a stream: token sequences (B, L, d_in) .npy, with --model")  # fmt: skip
    parser.add_argument("--model", type=Path, default=None, help="the model file (encoder)")
    parser.add_argument("--min-agreement", type=float, default=DEFAULT_MIN_AGREEMENT,
                        help="a stream with --verify: the least share of samples on which the "
                        "readout on chip decides as the float engine (default 0.95)")  # fmt: skip
    parser.add_argument("--accept-disagreement", action="store_true",
                        help="a stream with --verify: pass below --min-agreement")  # fmt: skip
    args = parser.parse_args(argv)
    if not 0.0 <= args.min_agreement <= 1.0:
        raise AtomsparkError(f"--min-agreement: must be a fraction in [0, 1], got "
                             f"{args.min_agreement!r}")  # fmt: skip
    if args.inputs is not None:
        return _stream_cli(bundle_dir, args)
    if args.loihi2:
        print(f"[bundle] Loihi2HwCfg: {_hardware_run('fixed')['note']}")
        return 1
    result = verify_split(bundle_dir, args.steps, merged=args.merged or None)
    active = int(np.count_nonzero(result["final_alpha"]))
    print(f"split bundle on Lava: {result['cores']} cores ({result['processes']}), "
          f"{args.steps} engine steps, {active} nodes active at the end")  # fmt: skip
    scores = result["final_scores"]
    if scores is not None:
        print(f"readout on chip: class scores (accumulator units) {scores.tolist()} -> class "
              f"{int(np.argmax(scores))}")  # fmt: skip
    if args.out is not None:
        extra = {} if scores is None else {"scores": scores}
        np.savez(args.out, alpha=result["final_alpha"], h=result["final_h"], **extra)
    if args.verify:
        print(f"verify against the engine: max |error| {result['lava_vs_engine']} "
              f"(tolerance {result['tolerance']})")  # fmt: skip
        return 0 if result["passed"] else 1
    return 0


def _stream_cli(bundle_dir: Path, args) -> int:
    """run_bundle.py --inputs tokens.npy --model model.npz: the stream's decisions."""
    from atomspark.mapping.lava.split_stream import run_stream
    from atomspark.networks.model_io import check_file_format
    from atomspark.networks.rsgn import load_model

    if args.model is None:
        raise AtomsparkError("--inputs: give the model file too (--model model.npz)")
    tokens = np.load(check_file_format(args.inputs, "inputs", "npy"), allow_pickle=False)
    params, config = load_model(args.model)
    bundle = load_split_bundle(bundle_dir)
    result = run_stream(bundle, params, config, tokens, lava=True)
    where = "the bundle's readout" if bundle.readout is not None else "the host"
    print(f"stream of {len(result.scores)} samples on Lava in {result.lava_runs} run(s), read out "
          f"by {where}: decisions {result.scores.argmax(1).tolist()}, agreement with the float "
          f"engine {result.decision_agreement:.3f}")  # fmt: skip
    if args.out is not None:
        np.savez(args.out, scores=result.scores, float_scores=result.float_scores)
    if args.verify:  # against the NumPy reference of each sample, one run each
        ref = run_stream(bundle, params, config, tokens)
        tol = (
            0.0 if bundle.model.arithmetic == "fixed" else 1e-9 * max(1.0, np.abs(ref.scores).max())
        )
        err = float(np.abs(result.scores - ref.scores).max())
        print(f"verify against the per-sample reference runs: max |score error| {err:.3g} "
              f"(tolerance {tol:.3g})")  # fmt: skip
        agreed = stream_agreement(result, args.min_agreement, args.accept_disagreement)
        print(agreed["message"])
        return 0 if err <= tol and agreed["passed"] else 1
    return 0


def stream_agreement(result, min_agreement: float, accept: bool = False) -> dict:
    """Whether a stream's decisions (a StreamResult's: the readout on chip's integer scores
    where the bundle has one) keep the float engine's on at least `min_agreement` of its samples;
    `accept`: passes below it, saying so. {passed, agreement, min_agreement, message}."""
    value = result.decision_agreement
    ok = value >= min_agreement
    who = "the readout on chip" if result.accumulator is not None else "the host readout"
    message = (
        f"decisions of {who} agree with the float engine on {100 * value:.1f} % of "
        f"{len(result.decisions)} sample(s) ({'at least' if ok else 'below'} --min-agreement "
        f"{100 * min_agreement:g} %)"
        + ("" if ok else "; accepted (--accept-disagreement)" if accept else "; FAIL")
    )
    return {"passed": ok or accept, "agreement": value, "min_agreement": min_agreement,
            "message": message}  # fmt: skip
