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
