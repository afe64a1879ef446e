"""`atomspark bench`: the subcommand's arguments and handler (registered by scenarios/cli/main.py)."""

from __future__ import annotations

import argparse

from atomspark.sim.core import AtomsparkError


def add_bench_parser(sub) -> None:
    bench = sub.add_parser(
        "bench",
        help="VN benchmark families (fn1d, bumps2d, ...): VN vs baselines, ID/OOD tables, costs",
    )
    bench.add_argument("name", nargs="?", help="benchmark family (see --list)")
    bench.add_argument("--list", action="store_true", help="list the benchmark families")
    bench.add_argument("--quick", action="store_true", help="small sizes, one seed (< 60 s)")
    bench.add_argument("--seeds", type=int, default=None, help="seeds 0..N-1 (full default 3)")
    bench.add_argument("--out", default=None, help="run folder (default results/bench/NAME)")
    bench.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="torch device of the baselines",
    )
    bench.add_argument("--models", default=None, help="comma-separated subset of the models")
    bench.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SIZE=VALUE",
        help="override one of the family's sizes (repeatable)",
    )
    mode = bench.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="keep finished model x seed cells")
    mode.add_argument("--overwrite", action="store_true", help="replace the folder's results")
    bench.set_defaults(func=_cmd_bench)


def _parse_sets(items: list[str]) -> dict[str, str]:
    sizes = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise AtomsparkError(f"--set {item!r}: expected SIZE=VALUE, e.g. --set n_train=500")
        sizes[key.strip()] = value.strip()
    return sizes


def _cmd_bench(args: argparse.Namespace) -> int:
    from atomspark.scenarios.bench.registry import family_names
    from atomspark.scenarios.cli.dependencies import require_torch

    require_torch("bench")

    if args.list:
        from atomspark.scenarios.bench import list_benchmarks

        for name, description, splits in list_benchmarks():
            print(f"{name:11s} splits: {', '.join(splits)}\n{'':11s} {description}")
        return 0
    if args.name is None:
        raise AtomsparkError(f"bench: name a benchmark ({', '.join(family_names())}) or --list")
    from atomspark.networks.torch_path.device import select_device  # checks --device early
    from atomspark.scenarios.bench import run_benchmark

    select_device(args.device)
    results = run_benchmark(
        args.name,
        quick=args.quick,
        seeds=args.seeds,
        out=args.out,
        device=args.device,
        resume=args.resume,
        overwrite=args.overwrite,
        sizes=_parse_sets(args.set),
        models=args.models.split(",") if args.models else None,
    )
    if results.get("missing_cells"):
        print(f"[bench] missing cells: {', '.join(results['missing_cells'])}")
    return 0
