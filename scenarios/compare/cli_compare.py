"""`atomspark compare`: its arguments, the choice among its three data sources (the task stored
in the model file, a training config's validation split, an --data file) and its report
(registered by scenarios/cli/main.py); the comparison is scenarios/compare/chip_vs_gpu."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from atomspark.scenarios.cli.arguments import (
    add_gpu,
    add_hardware,
    add_overwrite,
    add_ratio_flags,
    ratio_assumptions,
)
from atomspark.scenarios.cli.dependencies import require_torch
from atomspark.scenarios.configs import builtin_config
from atomspark.sim.core import AtomsparkError, require_int

DEFAULT_SAMPLES = 16
VN_STEPS = 2000  # engine steps per VN sample


def _cmd_compare(args: argparse.Namespace) -> int:
    require_torch("compare")
    from atomspark.scenarios.compare.chip_vs_gpu import compare

    assumptions = ratio_assumptions(args)
    if args.samples is not None:
        require_int("--samples", args.samples, minimum=1)
    if not Path(args.model).is_file():
        raise AtomsparkError(f"model {args.model}: no such file (give a model.npz from train)")
    from atomspark.networks.nir_file import is_nir_file

    if is_nir_file(args.model):  # chosen by the file's content, as `import` chooses
        return _compare_nir(args, assumptions)
    for flag in ("producer", "dt", "input"):
        if getattr(args, flag) is not None:
            raise AtomsparkError(f"--{flag}: only for a NIR graph (.nir)")
    args.steps = VN_STEPS if args.steps is None else args.steps
    require_int("--steps", args.steps, minimum=1)
    data = compare_data(args)
    device = None if args.device == "auto" else args.device
    report = compare(
        args.model,
        data,
        args.out,
        device=device,
        hardware=args.hardware,
        gpu=args.gpu,
        fixed_point=not args.no_fixed,
        steps=args.steps,
        overwrite=args.overwrite,
        assumptions=assumptions,
    )
    print_comparison(report)
    print(f"[compare] wrote {args.out}/comparison.json and plots")
    return 0


def _compare_nir(args: argparse.Namespace, assumptions) -> int:
    """An imported NIR graph against the GPU running it in torch (scenarios/compare/nir_compare)."""
    from atomspark.scenarios.compare.nir_compare import DEFAULT_INPUT, DEFAULT_STEPS, compare_nir

    for flag in ("data", "config"):
        if getattr(args, flag) is not None:
            raise AtomsparkError(f"--{flag}: not for a NIR graph (its input is --input)")
    compare_nir(
        args.model, args.out, producer=args.producer or "nir", dt=args.dt,
        input_spec=args.input or DEFAULT_INPUT, samples=args.samples or 4,
        steps=DEFAULT_STEPS if args.steps is None else args.steps, hardware=args.hardware,
        gpu=args.gpu, device=None if args.device == "auto" else args.device,
        assumptions=assumptions, overwrite=args.overwrite,
    )  # fmt: skip
    print(f"[compare] wrote {args.out}/comparison.json")
    return 0


def compare_data(args: argparse.Namespace):
    """The samples to compare on: --data's file (all, or its first --samples), else the task
    stored in the model file, else a training config's validation split (--config, or the
    built-in task of the model's kind)."""
    from atomspark.scenarios.runs.model_task import task_samples

    data = args.data
    own = None if data is not None or args.config else task_samples(args.model, None)
    if own is not None:
        x_val, y_val, what = own
        return first_samples(x_val, y_val, args.samples or DEFAULT_SAMPLES, what)
    if data is None:
        return _config_samples(args)
    if args.samples is not None:
        from atomspark.scenarios.compare.chip_vs_gpu import load_data, load_trained_model

        kind, model = load_trained_model(args.model)
        x, y = load_data(data, kind, model)
        return first_samples(x, y, args.samples, f"--data {args.data}")
    return data


def _config_samples(args: argparse.Namespace) -> tuple:
    """The validation split of --config, or of the built-in task of the model's family (a VN
    model is not an RSGN task)."""
    from atomspark.networks.families import family_named
    from atomspark.networks.torch_path.config import load_config
    from atomspark.networks.torch_path.training import build_data
    from atomspark.scenarios.runs.engine import model_kind

    kind = model_kind(args.model)
    task = family_named(kind).task
    config = args.config or task
    cfg = load_config(builtin_config(config))
    if cfg["task"] != task:
        raise AtomsparkError(
            f"--config {config}: its task is {cfg['task']}, but {args.model} is a "
            f"{kind.upper()} model; give a {task} config (e.g. --config {task})"
        )
    _, _, x_val, y_val, _ = build_data(cfg)
    what = f"the {config} validation split (the model file stores no task)"
    return first_samples(x_val, y_val, args.samples or DEFAULT_SAMPLES, what)


def first_samples(x, y, n: int, what: str) -> tuple:
    """The first `n` samples of (x, y); fewer, with a one-line warning, when `what` has fewer."""
    if n > len(x):
        print(
            f"atomspark compare: warning: --samples {n}: {what} has {len(x)} samples; "
            f"using all {len(x)}",
            file=sys.stderr,
        )
        n = len(x)
    print(f"[compare] data: {n} samples of {what}")
    return x[:n], None if y is None else y[:n]


def _backend_line(name: str, b: dict, metric: str) -> str:
    """One backend's row: score, agreement with torch, activity, time, energy, latency."""
    if not b.get("supported", True):
        return f"{name:14s} not run: {b['reason']}"
    score = b.get(metric)
    score_text = "n/a" if score is None else f"{score:.4f}"
    if "agreement_vs_torch" in b:
        agree_text = f"{b['agreement_vs_torch'].get('decision_agreement', float('nan')):.3f}"
    else:
        agree_text = "ref"
    if "energy_per_sample_j" not in b:  # an engine run whose network fits no chip layout
        problems = "; ".join(b.get("costs", {}).get("placement", {}).get("problems") or [])
        return f"{name:14s} {score_text:>9s} {agree_text:>6s} does not fit the chip: {problems}"
    return (
        f"{name:14s} {score_text:>9s} {agree_text:>6s} {b['active_fraction']:7.3f} "
        f"{b['wall_s_per_sample'] * 1e3:9.3f} ms {b['energy_per_sample_j'] * 1e6:11.4g} uJ "
        f"{b['latency_per_sample_s'] * 1e6:7.4g} us  {b['energy_source']}"
    )


def print_comparison(report: dict) -> None:
    """One line per backend: the task's score (RSGN accuracy, VN reconstruction error), agreement
    with torch (the reference row), activity, time and energy."""
    from atomspark.networks.families import family_named

    kind = report["model"]["kind"]
    family = family_named(kind)
    metric, title = family.compare_metric
    print(f"[compare] {kind} model, {report['samples']} samples")
    print(
        f"{'backend':14s} {title:>9s} {'agree':>6s} {'active':>7s} {'wall/sample':>12s} "
        f"{'energy/sample':>14s} {'latency':>10s}  energy source"
    )
    for name, b in report["backends"].items():
        print(_backend_line(name, b, metric))
    torch_run = report["backends"].get("torch", {})
    if "idle_power_w" in torch_run:
        print(
            f"[compare] torch energy measured on {torch_run['device']}: whole board "
            f"{torch_run['board_energy_per_sample_j'] * 1e6:.4g} uJ/sample, idle power "
            f"{torch_run['idle_power_w']:.1f} W subtracted -> "
            f"{torch_run['energy_per_sample_j'] * 1e6:.4g} uJ/sample"
        )
    print(
        f"[compare] agree: share of samples whose {family.decision} equals torch's (ref: torch "
        "is the reference)"
    )
    _print_chip_vs_gpu(report)


def _print_chip_vs_gpu(report: dict) -> None:
    """The chip-versus-GPU rows and the cutoff sweep of a comparison report, when present."""
    if "gpu_fair" in report:
        from atomspark.scenarios.compare.gpu_side import format_rows

        fair = report["gpu_fair"]
        print(f"[compare] chip ({fair['chip_backend']}) vs the GPU's own algorithm, fp32:")
        for line in format_rows(report["model"]["kind"].upper(), fair):
            print(line)
    if "standard_form" in report:
        from atomspark.scenarios.compare.vn_standard_side import format_standard_form

        for line in format_standard_form(report["standard_form"]):
            print(line)
    if "chip_vs_gpu" in report:
        from atomspark.mapping.chip_gpu_ratios import format_results

        ratios = report["chip_vs_gpu"]
        for line in format_results({ratios["workload"]: ratios}):
            print(line)
    for row in report.get("cutoff_sweep") or []:
        acc = "n/a" if row.get("accuracy") is None else f"{row['accuracy']:.3f}"
        energy = row["energy_per_sample_j"]
        print(
            f"[compare] cutoff {row['cutoff']:<5g} accuracy {acc} mean active "
            f"{row['mean_active_fraction']:.3f} synops/sample {row['synops_per_sample']:.0f} "
            + (
                "does not fit the chip"
                if energy is None
                else f"energy/sample {energy * 1e6:.4g} uJ"
            )
        )


def add_compare_parser(sub) -> None:
    """`atomspark compare`: a trained model on the GPU path against the event engine."""
    cmp = sub.add_parser("compare", help="a trained model: GPU (torch, dense) vs event engine")
    cmp.add_argument("model", help="model.npz written by `atomspark train`, or a NIR graph")
    src = cmp.add_mutually_exclusive_group()
    src.add_argument("--data", help="an .npz with tokens/signals/x (and labels/y)")
    src.add_argument(
        "--config",
        default=None,
        help="rebuild this training config's validation split (default: the task stored in "
        "the model file by train; otherwise the built-in task of the model's kind: "
        "vn-dictionary for VN, rsgn-sequence for RSGN)",
    )
    cmp.add_argument(
        "--samples",
        type=int,
        default=None,
        help=f"samples to compare: the first N of the validation split (default {DEFAULT_SAMPLES})"
        " or of --data (default: all)",
    )
    cmp.add_argument("--device", default="auto", help="torch device: auto, cpu, cuda, cuda:N")
    add_hardware(cmp, "neuromorphic preset or JSON file")
    add_gpu(cmp, "GPU preset or JSON file that prices the GPU")
    add_ratio_flags(cmp)
    cmp.add_argument("--steps", type=int, default=None,
                     help=f"engine steps per VN sample (default {VN_STEPS}); NIR: steps per "
                     "inference (default 50)")  # fmt: skip
    cmp.add_argument("--producer", default=None, choices=["nir", "snntorch", "norse", "sinabs"],
                     help="NIR only: whose discretisation to read the graph with (default nir)")  # fmt: skip
    cmp.add_argument("--dt", type=float, default=None,
                     help="NIR only: the producer's time step in seconds (default: its own)")  # fmt: skip
    cmp.add_argument("--input", default=None,
                     help="NIR only: zero or rate:P[:SEED] input spikes (default rate:0.2)")  # fmt: skip
    cmp.add_argument("--no-fixed", action="store_true", help="skip the fixed-point engine run")
    cmp.add_argument("--out", default="results/compare", help="output folder (JSON + PNG)")
    add_overwrite(cmp, "compare")
    cmp.set_defaults(func=_cmd_compare)
