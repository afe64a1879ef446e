"""Argument blocks that several `atomspark` verbs share, declared once."""

from __future__ import annotations

import argparse


def add_overwrite(parser: argparse.ArgumentParser, command: str) -> None:
    """--overwrite: replace a previous run of `command` in --out."""
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace a previous {command} run in --out (without it a non-empty --out is refused)",
    )


def add_ratio_flags(parser: argparse.ArgumentParser) -> None:
    """Flags that change one assumption of the chip-vs-GPU headline (docs/chip_vs_gpu.md)."""
    parser.add_argument("--static-scope", default=None, choices=("device", "shared"),
                        help="static/idle power of whole devices held (headline) or of the "
                        "fraction used, on both sides; given, it is fixed in the range too")  # fmt: skip
    parser.add_argument("--launch-model", default=None,
                        choices=("graph", "per-iteration", "per-op"),
                        help="GPU launches: graph-captured (headline), one per iteration, per op; "
                        "given, it is fixed in the range too")  # fmt: skip
    parser.add_argument("--placement", default=None, choices=("energy", "latency"),
                        help="chip placement objective: the energy-optimal placement (headline) "
                        "or the latency-optimal one; given, it is fixed in the range too")  # fmt: skip
    parser.add_argument("--precision", default=None, choices=("fp32", "tf32", "bf16", "int8"),
                        help="GPU precision of the headline (default: the cheapest that "
                        "reaches the chip's accuracy)")  # fmt: skip
    parser.add_argument("--kernel", default=None, choices=("dense", "sparse"),
                        help="RSGN messages on the GPU (default: the cheaper)")  # fmt: skip
    parser.add_argument("--assume", action="append", default=[], metavar="NAME=SCALE",
                        help="scale an estimated constant, e.g. gpu_idle_power=0.6 (names: "
                        "gpu_idle_power, gpu_busy_power, gpu_launch_overhead, "
                        "chip_static_power, chip_op_energy); repeatable")  # fmt: skip


def ratio_assumptions(args: argparse.Namespace):
    """The chip-vs-GPU headline's assumptions from add_ratio_flags' flags (refused before any
    work)."""
    from atomspark.scenarios.compare.chip_rows import parse_assumptions

    return parse_assumptions(
        args.static_scope, args.launch_model, args.precision, args.kernel, args.assume,
        args.placement,
    )  # fmt: skip


def add_hardware(parser: argparse.ArgumentParser, help: str) -> None:
    """--hardware: the neuromorphic preset (default: mapping/hardware.DEFAULT_CHIP)."""
    from atomspark.mapping.hardware import DEFAULT_CHIP

    parser.add_argument("--hardware", default=DEFAULT_CHIP, help=f"{help} (default {DEFAULT_CHIP})")


def add_gpu(parser: argparse.ArgumentParser, help: str) -> None:
    """--gpu: the GPU (or dense device) preset (default h100)."""
    parser.add_argument("--gpu", default="h100", help=help)
