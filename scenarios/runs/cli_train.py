"""`atomspark train`: its arguments, the --set overrides, the interrupt advice and the closing
summary (registered by scenarios/cli/main.py); the training is networks/torch_path/training."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from atomspark.scenarios.cli.dependencies import require_torch
from atomspark.scenarios.configs import builtin_config, builtin_config_names
from atomspark.sim.core import AtomsparkError, require_int


def _cmd_train(args: argparse.Namespace) -> int:
    config = builtin_config(args.config)
    overrides = train_overrides(args)
    require_torch("train")
    from atomspark.networks.torch_path.training import TrainingInterrupted, train

    if overrides:
        from atomspark.networks.torch_path.config import read_toml_file
        from atomspark.scenarios.sweep.grid import apply_overrides

        config = apply_overrides(read_toml_file(Path(config), "config file"), overrides, "--set")
    try:
        result = train(config, args.out, resume=args.resume, overwrite=args.overwrite)
    except TrainingInterrupted as exc:
        given = " ".join(f"--set {k}={_toml_value(v)}" for k, v in overrides.items())
        resume = f"atomspark train {args.config} {given} --out {args.out} --resume"
        if exc.checkpoint_step is None:
            print(f"atomspark train: {exc}; start again with --overwrite", file=sys.stderr)
        else:
            print(
                f"atomspark train: {exc}; resume with: {' '.join(resume.split())}", file=sys.stderr
            )
        return 130
    for line in train_summary(result):
        print(line)
    return 0


def parse_setting(item: str) -> tuple[str, object]:
    """KEY=VALUE from --set: the value read as a TOML value (3, 1e-3, true, [1, 2], "x"), or as
    text when it is not one (--set model.mode=sparse)."""
    from atomspark.networks.torch_path.config import tomllib

    key, sep, text = item.partition("=")
    key, text = key.strip(), text.strip()
    if not sep or not key or not text:
        raise AtomsparkError(
            f"--set {item!r}: expected KEY=VALUE with a dotted config key, e.g. --set "
            "optimizer.lr=1e-3 (keys: docs/configs.md)"
        )
    try:
        return key, tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return key, text


def train_overrides(args: argparse.Namespace) -> dict:
    """{dotted key: value} from train's --set, --epochs and --device (later ones win)."""
    overrides = dict(parse_setting(item) for item in args.set)
    if args.epochs is not None:
        overrides["epochs"] = require_int("--epochs", args.epochs, minimum=1)
    if args.device is not None:
        overrides["device"] = args.device
    return overrides


def _toml_value(value) -> str:
    if isinstance(value, str):
        return value if value.replace("-", "").replace("_", "").isalnum() else repr(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def train_summary(result) -> list[str]:
    """train's closing lines: a two-column table of the final and best validation metrics, the
    numerics it ran with, and where the model went."""
    from atomspark.networks.families import task_metric

    score = task_metric(result.task)
    names = {
        "loss": "validation loss",
        "accuracy": f"validation {score}",
        "activity": "active fraction",
        "best_accuracy": f"best {score}",
        "best_epoch": "best epoch",
        "best_activity": "active fraction at best",
    }
    metrics = {k: v for k, v in result.final_metrics.items() if not isinstance(v, (dict, list))}
    width = max(len(names.get(k, k.replace("_", " "))) for k in metrics) if metrics else 0
    lines = [f"[train] done: {result.steps} steps"]
    for key, value in metrics.items():
        text = f"{value:.4g}" if isinstance(value, float) else str(value)
        lines.append(f"  {names.get(key, key.replace('_', ' ')):{width}s}  {text:>8s}")
    numerics = result.final_metrics.get("numerics")
    if isinstance(numerics, dict) and numerics:
        keys = ("device_name", "dtype", "deterministic_algorithms", "torch")
        shown = ", ".join(f"{k.replace('_', ' ')} {numerics[k]}" for k in keys if k in numerics)
        lines.append(f"[train] numerics: {shown} (all in final_metrics.json)")
    lines.append(
        f"[train] model written to {result.model_path} (loadable by profile/export/compare)"
    )
    return lines


def add_train_parser(sub) -> None:
    """`atomspark train`: training on a TOML config with PyTorch."""
    tr = sub.add_parser("train", help="train on a TOML config with PyTorch (GPU if present)")
    tr.add_argument(
        "config",
        help="a TOML file (keys: docs/configs.md) or a built-in: "
        + ", ".join(builtin_config_names()),
    )
    tr.add_argument("--out", default="results/train", help="run folder (must be new or empty)")
    tr.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one config key, dotted for sections (e.g. --set optimizer.lr=1e-3, "
        "--set model.n_nodes=64); repeatable",
    )
    tr.add_argument("--epochs", type=int, default=None, help="override the config's epochs")
    tr.add_argument(
        "--device",
        default=None,
        help="override the config's device: auto, cpu, cuda or cuda:N",
    )
    mode = tr.add_mutually_exclusive_group()
    mode.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out from its checkpoint.pt (same config; epochs may grow)",
    )
    mode.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --out (its outputs are deleted first)",
    )
    tr.set_defaults(func=_cmd_train)
