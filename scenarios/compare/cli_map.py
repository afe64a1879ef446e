"""`atomspark map`: the chip-vs-GPU map over sizes and activity (scenarios/compare/chip_gpu_map.py),
its arguments and its report (registered by scenarios/cli/main.py)."""

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


def _cmd_map(args: argparse.Namespace) -> int:
    require_torch("map")
    from atomspark.scenarios.compare.chip_gpu_map import run_map

    assumptions = ratio_assumptions(args)
    if args.resume and args.overwrite:
        raise AtomsparkError("--resume and --overwrite: give one of them")
    run_map(args.out, grid=args.grid, hardware=args.hardware, gpu=args.gpu,
            assumptions=assumptions, resume=args.resume, overwrite=args.overwrite,
            families=args.family or None)  # fmt: skip
    print(f"[map] wrote {args.out}/map.json, map_table.md and map.png")
    return 0


def add_map_parser(sub) -> None:
    p = sub.add_parser(
        "map",
        help="chip vs GPU over model sizes and activity: break-even curves (figure and table)",
        description="Price each model family over sizes and activity levels by the path the "
        "demo's and compare's rows use (same stopping rule, placement objective and "
        "best-practice range), and write the GPU/chip energy and time ratios at batch 1 and at "
        "throughput as break-even curves: points.jsonl (one line per point, as it finishes), "
        "map.json, map_table.md and map.png.",
    )
    p.add_argument("--out", default="results/map", help="output folder")
    p.add_argument("--grid", default="full", choices=("ci", "full"),
                   help="the points: full (the committed map) or ci (a reduced grid)")  # fmt: skip
    p.add_argument("--family", action="append", default=[],
                   help="only this family (repeatable; e.g. 'VN settle')")  # fmt: skip
    p.add_argument("--resume", action="store_true",
                   help="continue a stopped run in --out, keeping its finished points")  # fmt: skip
    add_overwrite(p, "map")
    add_hardware(p, "neuromorphic hardware preset")
    add_gpu(p, "GPU preset")
    add_ratio_flags(p)
    p.set_defaults(func=_cmd_map)
