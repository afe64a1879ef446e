"""`atomspark sweep`: its arguments and handler (registered by scenarios/cli/main.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cmd_sweep(args: argparse.Namespace) -> int:
    from atomspark.scenarios.sweep.run import run_sweep

    out = args.out or str(Path("results") / "sweeps" / Path(args.grid).stem)
    try:
        summary = run_sweep(
            args.grid,
            out,
            scheduler=args.scheduler,
            workers=args.workers,
            memory_limit=args.memory_limit,
            retries=args.retries,
            max_cells=args.max_cells,
            force=args.force,
            report_only=args.report,
            connect_timeout=args.connect_timeout,
            progress=sys.stderr.isatty(),
            only=args.only,
        )
    except KeyboardInterrupt:
        return 130  # the sweep has said what it kept
    return 1 if summary.failed else 0


def add_sweep_parser(sub) -> None:
    """`atomspark sweep`: a grid of runs on Dask."""
    sw = sub.add_parser(
        "sweep",
        help="run a grid of train/profile/compare/bench/import cells on Dask (resumable); "
        "see docs/sweeps.md",
    )
    sw.add_argument("grid", help="GRID.toml: kind, base, seeds, [set], [axes], [[variants]]")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://HOST:PORT)")
    where.add_argument(
        "--workers", type=int, help="LocalCluster worker processes (default: one per core)"
    )
    sw.add_argument(
        "--memory-limit",
        default="auto",
        help="LocalCluster memory per worker, e.g. 4GiB (auto: 90%% of RAM / workers)",
    )
    sw.add_argument("--out", help="sweep folder (default results/sweeps/<grid name>)")
    sw.add_argument(
        "--report",
        action="store_true",
        help="compute nothing: write the report of the cells finished so far",
    )
    sw.add_argument("--retries", type=int, default=2, help="reruns of a cell whose worker died")
    sw.add_argument(
        "--only",
        metavar="GLOB",
        help="run just the cells whose folder name matches, e.g. '*rsgn*' (the rest stay to do)",
    )
    sw.add_argument("--max-cells", type=int, default=500, help="refuse larger grids (see --force)")
    sw.add_argument("--force", action="store_true", help="run a grid above --max-cells")
    sw.add_argument(
        "--connect-timeout", type=float, default=10.0, help="seconds to reach --scheduler"
    )
    sw.set_defaults(func=_cmd_sweep)
