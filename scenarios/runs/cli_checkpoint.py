"""`atomspark convert-checkpoint --trust PATH`: an older checkpoint, rewritten as plain data."""

from __future__ import annotations

import argparse

from atomspark.scenarios.cli.dependencies import require_torch


def _cmd_convert_checkpoint(args: argparse.Namespace) -> int:
    require_torch("convert-checkpoint")
    from atomspark.networks.torch_path.checkpoint_convert import convert_checkpoint

    original = convert_checkpoint(args.checkpoint, trust=args.trust)
    print(
        f"[convert-checkpoint] {args.checkpoint} now holds tensors and plain data only "
        f"(original kept as {original}); resume the run with --resume"
    )
    return 0


def add_convert_checkpoint_parser(sub) -> None:
    """`atomspark convert-checkpoint`: rewrite a checkpoint the user trusts as plain data."""
    conv = sub.add_parser(
        "convert-checkpoint",
        help="rewrite a checkpoint from an older atomspark as tensors and plain data",
    )
    conv.add_argument("checkpoint", help="the checkpoint.pt to convert (in place)")
    conv.add_argument(
        "--trust",
        action="store_true",
        help="required: reading an old checkpoint can run code stored in it; pass this only "
        "for a file whose origin you know",
    )
    conv.set_defaults(func=_cmd_convert_checkpoint)
