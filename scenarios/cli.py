"""The `atomspark` command line: one subcommand per job, each a thin wrapper over library calls."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from atomspark.sim.validation import AtomsparkError


def _cmd_demo(args: argparse.Namespace) -> int:
    from atomspark.scenarios.demo import run_demo

    run_demo(args.out, seed=args.seed, hardware=args.hardware, gpu=args.gpu)
    return 0


def _cmd_profile(args: argparse.Namespace) -> int:
    from atomspark.scenarios.profile_run import profile_model

    profile_model(
        args.model,
        args.input,
        args.out,
        hardware=args.hardware,
        gpu=args.gpu,
        steps=args.steps,
        strategy=args.strategy,
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from atomspark.scenarios.export_run import export_model

    export_model(
        args.model,
        args.to,
        args.out,
        inputs=args.input,
        fixed=args.fixed,
        verify=args.verify,
        steps=args.steps,
        frac_bits=args.frac_bits,
    )
    return 0


def _cmd_hardware(args: argparse.Namespace) -> int:
    from atomspark.mapping.hardware import known_hardware, load_hardware

    for name in known_hardware():
        hw = load_hardware(name)
        print(f"{name:16s} {type(hw).__name__:22s} {getattr(hw, 'description', '')}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="atomspark",
        description="Event-driven simulation of Vector Networks and RSGNs, with neuromorphic "
        "energy profiles, Lava export and a PyTorch GPU path.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo",
        help="the main job on built-in defaults: VN + RSGN, "
        "reference vs event engine, sparsity, events, energy",
    )
    demo.add_argument("--out", default="results/demo", help="output folder (JSON + PNG)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--hardware", default="loihi2", help="neuromorphic hardware preset")
    demo.add_argument("--gpu", default="h100", help="GPU preset to compare against")
    demo.set_defaults(func=_cmd_demo)

    prof = sub.add_parser("profile", help="energy/latency/sparsity profile of a saved model")
    prof.add_argument("model", help="a model file (.npz) written by atomspark (VN or RSGN)")
    prof.add_argument(
        "--input",
        default="builtin:16",
        help="a .npy array of inputs, or builtin:N for N built-in samples",
    )
    prof.add_argument("--hardware", default="loihi2", help="neuromorphic preset or JSON file")
    prof.add_argument("--gpu", default="h100", help="dense device preset (GPU or CPU)")
    prof.add_argument("--steps", type=int, default=None, help="engine steps per VN sample")
    prof.add_argument(
        "--strategy",
        default="partition",
        choices=["partition", "sequential", "locality"],
        help="core placement",
    )
    prof.add_argument("--out", default="results/profile")
    prof.set_defaults(func=_cmd_profile)

    exp = sub.add_parser("export", help="export a saved model to Lava, NIR or networkx")
    exp.add_argument("model", help="a model file (.npz) written by atomspark")
    exp.add_argument("--to", required=True, choices=["lava", "nir", "networkx"])
    exp.add_argument(
        "--input",
        default="builtin:1",
        help="the input the graph is compiled for: first row of a .npy, or builtin:N",
    )
    exp.add_argument("--fixed", action="store_true", help="quantise to Loihi fixed point (VN)")
    exp.add_argument(
        "--verify",
        action="store_true",
        help="run the bundle on Lava's Loihi2SimCfg and compare with the engine",
    )
    exp.add_argument("--steps", type=int, default=100, help="steps for verification/quantisation")
    exp.add_argument("--frac-bits", type=int, default=12, help="fixed-point fraction bits (VN)")
    exp.add_argument("--out", default="results/export")
    exp.set_defaults(func=_cmd_export)

    hw = sub.add_parser("hardware", help="list the hardware presets")
    hw.set_defaults(func=_cmd_hardware)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AtomsparkError as exc:
        print(f"atomspark {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
