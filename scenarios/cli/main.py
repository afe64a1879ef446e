"""The `atomspark` command line: it parses and dispatches; each verb's arguments, handler and
report live with its job (scenarios/runs/cli_*.py, compare/cli_compare.py, compare/cli_map.py,
sweep/cli_sweep.py, bench/cli_bench.py), and argument blocks shared by verbs are declared once
(cli/arguments.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from atomspark.scenarios.bench.cli_bench import add_bench_parser
from atomspark.scenarios.compare.cli_compare import add_compare_parser
from atomspark.scenarios.compare.cli_map import add_map_parser
from atomspark.scenarios.runs.cli_checkpoint import add_convert_checkpoint_parser
from atomspark.scenarios.runs.cli_runs import (
    add_demo_parser,
    add_export_parser,
    add_hardware_parser,
    add_import_parser,
    add_profile_parser,
)
from atomspark.scenarios.runs.cli_train import (  # noqa: F401 (parse_setting, _toml_value: public here too)
    _toml_value,
    add_train_parser,
    parse_setting,
)
from atomspark.scenarios.sweep.cli_sweep import add_sweep_parser
from atomspark.sim.core import AtomsparkError
from atomspark.sim.run_folder import FULL_DISK, disk_full_message, fail_held_runs

SUBCOMMANDS = (  # in the order `atomspark --help` lists them
    add_demo_parser,
    add_profile_parser,
    add_import_parser,
    add_export_parser,
    add_train_parser,
    add_compare_parser,
    add_map_parser,
    add_sweep_parser,
    add_bench_parser,
    add_hardware_parser,
    add_convert_checkpoint_parser,
)


class _DefaultsFormatter(argparse.HelpFormatter):
    """Help that shows every option's default (except unset ones and flags)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            if "%(default)" not in text:
                text += " (default: %(default)s)"
        return text


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub.formatter_class = _DefaultsFormatter


def installed_version() -> str:
    """The installed package's version (pyproject.toml's), or a note when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atomspark")
    except PackageNotFoundError:
        return "(not installed: run from a source tree)"


def build_parser() -> argparse.ArgumentParser:
    """The `atomspark` command line: one subcommand per job, each bound to its handler."""
    parser = argparse.ArgumentParser(
        prog="atomspark",
        description="Event-driven simulation of Vector Networks and RSGNs, with neuromorphic "
        "energy profiles, Lava export and a PyTorch GPU path.",
    )
    parser.add_argument("--version", action="version", version=f"atomspark {installed_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add_command in SUBCOMMANDS:
        add_command(sub)
    _show_defaults(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `atomspark` script: run one subcommand, turn AtomsparkError into a
    one-line message and exit status 2 (no traceback for bad input)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AtomsparkError as exc:
        fail_held_runs(str(exc))
        print(f"atomspark {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in FULL_DISK:
            fail_held_runs(f"{type(exc).__name__}: {exc}")
            raise
        message = disk_full_message(exc)  # names the run, so before its lock is released
        fail_held_runs("no space left on the device")
        print(f"atomspark {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        fail_held_runs("interrupted")
        print(
            f"atomspark {args.command}: interrupted; files already written are complete "
            "(every write is atomic), the rest were not written",
            file=sys.stderr,
        )
        return 130
    except BaseException as exc:
        fail_held_runs(f"{type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    sys.exit(main())
