"""`atomspark demo`, `profile`, `import`, `export` and `hardware`: each verb's arguments and
handler (registered by scenarios/cli/main.py); the work is in this package's job modules."""

from __future__ import annotations

import argparse

from atomspark.scenarios.cli.arguments import (
    add_gpu,
    add_hardware,
    add_overwrite,
    add_ratio_flags,
    ratio_assumptions,
)
from atomspark.scenarios.cli.dependencies import require_torch
from atomspark.sim.core import AtomsparkError


def _cmd_demo(args: argparse.Namespace) -> int:
    require_torch("demo")  # its GPU side runs the torch path's own algorithm
    from atomspark.scenarios.runs.demo import run_demo

    assumptions = ratio_assumptions(args)
    run_demo(
        args.out, seed=args.seed, hardware=args.hardware, gpu=args.gpu, overwrite=args.overwrite,
        assumptions=assumptions,
    )  # fmt: skip
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    from atomspark.scenarios.runs.profile import profile_model

    profile_model(
        args.model,
        args.input,
        args.out,
        hardware=args.hardware,
        gpu=args.gpu,
        steps=args.steps,
        strategy=args.strategy,
        overwrite=args.overwrite,
        assumptions=ratio_assumptions(args),
    )
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from atomspark.networks.nir_file import is_nir_file
    from atomspark.scenarios.runs.netx_import import import_network
    from atomspark.scenarios.runs.nir_import import import_nir

    nir = is_nir_file(args.net)  # chosen by the file's content: a NIR graph or a netx network
    extra = {"producer": args.producer, "dt": args.dt} if nir else {}
    (import_nir if nir else import_network)(
        args.net,
        args.input,
        samples=args.samples,
        steps=args.steps,
        hardware=args.hardware,
        strategy=args.strategy,
        out=args.out,
        overwrite=args.overwrite,
        **extra,
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from atomspark.networks.nir_file import is_nir_file
    from atomspark.scenarios.runs.export import export_model

    if is_nir_file(args.model):  # chosen by the file's content, as `import` chooses
        return _export_nir(args)
    for flag in ("producer", "dt"):
        if getattr(args, flag) is not None:
            raise AtomsparkError(f"--{flag}: only for a NIR graph (.nir)")
    export_model(
        args.model,
        args.to,
        args.out,
        inputs=args.input or "builtin:1",
        fixed=args.fixed,
        verify=args.verify,
        steps=args.steps,
        frac_bits=args.frac_bits,
        overwrite=args.overwrite,
        report=args.report,
        hardware=args.hardware,
        **({} if args.min_agreement is None else {"min_agreement": args.min_agreement}),
        split_w_h=args.split_w_h,
        per_target_w=args.per_target_w,
        layout=args.layout,
        accept_disagreement=args.accept_disagreement,
        standard=args.standard,
    )
    return 0


def _export_nir(args: argparse.Namespace) -> int:
    from atomspark.scenarios.runs.nir_lava_export import (
        DEFAULT_INPUT,
        export_nir_lava,
        refuse_options,
    )

    if args.to != "lava":
        raise AtomsparkError(f"--to {args.to}: a NIR graph exports to lava (it is NIR already)")
    refuse_options(standard=args.standard, split_w_h=args.split_w_h,
                   per_target_w=args.per_target_w,
                   accept_disagreement=args.accept_disagreement)  # fmt: skip
    if args.layout != "auto":
        raise AtomsparkError(f"--layout {args.layout}: not for a NIR graph (one layout: node)")
    if args.min_agreement is not None:
        raise AtomsparkError("--min-agreement: not for a NIR graph (its agreement is recorded)")
    export_nir_lava(
        args.model, args.out, producer=args.producer or "nir", dt=args.dt,
        input_spec=args.input or DEFAULT_INPUT, steps=args.steps, fixed=args.fixed,
        verify=args.verify, report=args.report, hardware=args.hardware,
        overwrite=args.overwrite,
    )  # fmt: skip
    return 0


def _cmd_hardware(args: argparse.Namespace) -> int:
    from atomspark.mapping.hardware import known_hardware, load_hardware

    for name in known_hardware():
        hw = load_hardware(name)
        print(f"{name:16s} {type(hw).__name__:22s} {getattr(hw, 'description', '')}")
    return 0


def add_demo_parser(sub) -> None:
    """`atomspark demo`: the main job on built-in defaults."""
    demo = sub.add_parser(
        "demo",
        help="the main job on built-in defaults: VN + RSGN, "
        "reference vs event engine, sparsity, events, energy",
    )
    demo.add_argument("--out", default="results/demo", help="output folder (JSON + PNG)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the models and data")
    add_hardware(demo, "neuromorphic hardware preset")
    add_gpu(demo, "GPU preset or JSON file to compare against")
    add_ratio_flags(demo)
    add_overwrite(demo, "demo")
    demo.set_defaults(func=_cmd_demo)


def add_profile_parser(sub) -> None:
    """`atomspark profile`: a saved model's energy, latency and sparsity profile."""
    prof = sub.add_parser("profile", help="energy/latency/sparsity profile of a saved model")
    prof.add_argument("model", help="a model file (.npz) written by atomspark (VN or RSGN)")
    prof.add_argument(
        "--input",
        default="builtin:16",
        help="a .npy array of inputs, or builtin:N for N built-in samples; VN models take (B, d) signals, RSGN models (B, L, d_in) token sequences",
    )
    add_hardware(prof, "neuromorphic preset or JSON file")
    add_gpu(prof, "dense device preset (GPU or CPU)")
    add_ratio_flags(prof)
    prof.add_argument(
        "--steps",
        type=int,
        default=None,
        help="engine steps per VN sample (default: 1000; an RSGN runs its own K + 1 steps)",
    )
    prof.add_argument(
        "--strategy",
        default="auto",
        choices=["auto", "partition", "sequential", "locality"],
        help="core placement (auto: locality for RSGN positions, else partition)",
    )
    prof.add_argument("--out", default="results/profile", help="output folder (JSON + PNG)")
    add_overwrite(prof, "profile")
    prof.set_defaults(func=_cmd_profile)


def add_import_parser(sub) -> None:
    """`atomspark import`: a lava-dl netx network or a NIR graph on the engine, with its Loihi
    cost (docs/nir.md)."""
    imp = sub.add_parser(
        "import", help="run a lava-dl netx network or a NIR graph and predict its Loihi cost"
    )
    imp.add_argument("net", help="a lava-dl netx network (.net) or a NIR graph (.nir), HDF5")
    imp.add_argument("--producer", default="nir", choices=["nir", "snntorch", "norse", "sinabs"],
                     help="NIR only: whose discretisation to read the graph with (default: "
                     "NIR's equations by forward Euler, one step per time unit)")  # fmt: skip
    imp.add_argument("--dt", type=float, default=None,
                     help="NIR only: the producer's time step in seconds (default: its own)")  # fmt: skip
    imp.add_argument(
        "--input",
        default="zero",
        help="zero, uniform[:SEED] or gray:LEVEL (input-layer frames), rate:P[:SEED] (spikes)",
    )
    imp.add_argument("--samples", type=int, default=1, help="inferences to run")
    imp.add_argument(
        "--steps",
        type=int,
        default=None,
        help="steps per inference (default: a netx file's, or 16; NIR: 50)",
    )
    add_hardware(imp, "neuromorphic preset or JSON file")
    imp.add_argument(
        "--strategy", default="sequential", choices=["sequential", "partition"],
        help="core placement",
    )  # fmt: skip
    imp.add_argument("--out", default="results/import", help="output folder (JSON)")
    add_overwrite(imp, "import")
    imp.set_defaults(func=_cmd_import)


def add_export_parser(sub) -> None:
    """`atomspark export`: a saved model to Lava, NIR or networkx."""
    exp = sub.add_parser("export", help="export a saved model to Lava, NIR or networkx")
    exp.add_argument("model", help="a model file (.npz) written by atomspark, or a NIR graph")
    exp.add_argument("--to", required=True, choices=["lava", "nir", "networkx"])
    exp.add_argument(
        "--input",
        default=None,
        help="the input the graph is compiled for: first sample of a .npy, or builtin:N "
        "(default builtin:1); VN models take (B, d) signals, RSGN models (B, L, d_in) token "
        "sequences; a NIR graph zero or rate:P[:SEED] spikes (default rate:0.2), streamed by "
        "the bundle's spike sources",
    )
    exp.add_argument("--producer", default=None, choices=["nir", "snntorch", "norse", "sinabs"],
                     help="NIR only: whose discretisation to read the graph with (default nir)")  # fmt: skip
    exp.add_argument("--dt", type=float, default=None,
                     help="NIR only: the producer's time step in seconds (default: its own)")  # fmt: skip
    exp.add_argument(
        "--fixed",
        action="store_true",
        help="quantise to Loihi fixed point (VN: --frac-bits; RSGN: alpha Q.12, h Q.10)",
    )
    exp.add_argument(
        "--verify",
        action="store_true",
        help="run the bundle on Lava's Loihi2SimCfg and compare with the engine; with --fixed, "
        "also fail when the integer model agrees with float on less than --min-agreement",
    )
    exp.add_argument(
        "--standard",
        action="store_true",
        help="VN: write the settle on standard Lava processes only (SigmaDelta neurons, two per "
        "signed atom, and Sparse), which a Loihi toolchain compiles; with --fixed in fixed point",
    )
    exp.add_argument(
        "--split-w-h",
        action="store_true",
        help="with --fixed, RSGN: W_h in two 8-bit parts (integer unit rsgn_fixed_split), which "
        "keeps a low-margin model's decisions better than 8-bit W_h (docs/lava.md)",
    )
    exp.add_argument(
        "--per-target-w",
        action="store_true",
        help="with --fixed, RSGN: W (between nodes) with one exponent per target node, each node "
        "shifting its own summed message; with --split-w-h it keeps the published models' "
        "decisions (docs/lava.md)",
    )
    exp.add_argument(
        "--min-agreement",
        type=float,
        default=None,
        help="--fixed: the least share of samples (builtin: at least 32) on which the integer "
        "model makes the float model's decision (RSGN: class, read by the bundle's readout on "
        "chip in the split layout; VN: active atoms); below it the export is refused unless "
        "--accept-disagreement (default 0.95)",
    )
    exp.add_argument(
        "--accept-disagreement",
        action="store_true",
        help="--fixed: export even when the integer model keeps fewer of the float model's "
        "decisions than --min-agreement (otherwise refused, nothing written)",
    )
    exp.add_argument(
        "--steps",
        type=int,
        default=100,
        help="steps for verification and the VN quantisation report (RSGN's report: its K + 1)",
    )
    exp.add_argument("--frac-bits", type=int, default=12, help="fixed-point fraction bits (VN)")
    exp.add_argument(
        "--layout",
        choices=["auto", "node", "split"],
        default="auto",
        help="Lava, RSGN: split = message-sum, transform and norm cores (the layout that is "
        "priced); node = each node whole; auto = split when the node layout does not fit",
    )
    exp.add_argument(
        "--report",
        action="store_true",
        help="deployment report: per core compartments, synapses, memory, axons vs the limits",
    )
    add_hardware(exp, "chip the --report checks against")
    exp.add_argument("--out", default="results/export", help="output folder")
    add_overwrite(exp, "export")
    exp.set_defaults(func=_cmd_export)


def add_hardware_parser(sub) -> None:
    """`atomspark hardware`: the hardware presets."""
    hw = sub.add_parser("hardware", help="list the hardware presets")
    hw.set_defaults(func=_cmd_hardware)
