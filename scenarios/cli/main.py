"""The `atomspark` command line: one subcommand per job, each a thin wrapper over library calls."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from atomspark.scenarios.cli.dependencies import require_torch
from atomspark.scenarios.configs import builtin_config, builtin_config_names
from atomspark.sim.core import AtomsparkError, require_int


def _cmd_demo(args: argparse.Namespace) -> int:
    require_torch("demo")  # its GPU side runs the torch path's own algorithm
    from atomspark.scenarios.compare.chip_rows import parse_assumptions
    from atomspark.scenarios.runs.demo import run_demo

    assumptions = _assumptions(args, parse_assumptions)
    run_demo(
        args.out, seed=args.seed, hardware=args.hardware, gpu=args.gpu, overwrite=args.overwrite,
        assumptions=assumptions,
    )  # fmt: skip
    return 0


def _assumptions(args: argparse.Namespace, parse):
    """The chip-vs-GPU headline's assumptions from the command line (refused before any work)."""
    return parse(args.static_scope, args.launch_model, args.precision, args.kernel, args.assume)


def _add_ratio_flags(parser: argparse.ArgumentParser) -> None:
    """Flags that change one assumption of the chip-vs-GPU headline (docs/chip_vs_gpu.md)."""
    parser.add_argument("--static-scope", default="device", choices=("device", "shared"),
                        help="static/idle power of whole devices held (default) or of the "
                        "fraction used, on both sides")  # fmt: skip
    parser.add_argument("--launch-model", default="graph",
                        choices=("graph", "per-iteration", "per-op"),
                        help="GPU launches: graph-captured (default), one per iteration, per op")  # fmt: skip
    parser.add_argument("--precision", default=None, choices=("fp32", "tf32", "bf16", "int8"),
                        help="GPU precision of the headline (default: the cheapest that "
                        "reaches the chip's accuracy)")  # fmt: skip
    parser.add_argument("--kernel", default=None, choices=("dense", "sparse"),
                        help="RSGN messages on the GPU (default: the cheaper)")  # fmt: skip
    parser.add_argument("--assume", action="append", default=[], metavar="NAME=SCALE",
                        help="scale an estimated constant, e.g. gpu_idle_power=0.6 (names: "
                        "gpu_idle_power, gpu_busy_power, gpu_launch_overhead, "
                        "chip_static_power, chip_op_energy); repeatable")  # fmt: skip


def _cmd_profile(args: argparse.Namespace) -> int:
    from atomspark.scenarios.runs.profile import profile_model

    profile_model(
        args.model,
        args.input,
        args.out,
        hardware=args.hardware,
        gpu=args.gpu,
        steps=args.steps,
        strategy=args.strategy,
        overwrite=args.overwrite,
    )
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from atomspark.scenarios.runs.netx_import import import_network

    import_network(
        args.net,
        args.input,
        samples=args.samples,
        steps=args.steps,
        hardware=args.hardware,
        strategy=args.strategy,
        out=args.out,
        overwrite=args.overwrite,
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from atomspark.scenarios.runs.export import export_model

    export_model(
        args.model,
        args.to,
        args.out,
        inputs=args.input,
        fixed=args.fixed,
        verify=args.verify,
        steps=args.steps,
        frac_bits=args.frac_bits,
        overwrite=args.overwrite,
        report=args.report,
        hardware=args.hardware,
        **({} if args.min_agreement is None else {"min_agreement": args.min_agreement}),
        split_w_h=args.split_w_h,
        per_target_w=args.per_target_w,
    )
    return 0


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
    from atomspark.networks.torch_path.training import METRIC_NAMES

    score = METRIC_NAMES.get(result.task, "accuracy")
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


DEFAULT_TASKS = {"vn": "vn-dictionary", "rsgn": "rsgn-sequence"}
DEFAULT_SAMPLES = 16


def _cmd_compare(args: argparse.Namespace) -> int:
    require_torch("compare")
    from atomspark.scenarios.compare.chip_rows import parse_assumptions
    from atomspark.scenarios.compare.chip_vs_gpu import compare

    assumptions = _assumptions(args, parse_assumptions)
    from atomspark.scenarios.runs.model_task import task_samples

    if args.samples is not None:
        require_int("--samples", args.samples, minimum=1)
    require_int("--steps", args.steps, minimum=1)
    if not Path(args.model).is_file():
        raise AtomsparkError(f"model {args.model}: no such file (give a model.npz from train)")
    data = args.data
    own = None if data is not None or args.config else task_samples(args.model, None)
    if own is not None:
        x_val, y_val, what = own
        data = first_samples(x_val, y_val, args.samples or DEFAULT_SAMPLES, what)
    elif data is None:
        from atomspark.networks.torch_path.config import load_config
        from atomspark.networks.torch_path.training import build_data
        from atomspark.scenarios.runs.engine import model_kind

        # default: the built-in task of the model's kind (a VN model is not an RSGN task)
        kind = model_kind(args.model)
        config = args.config or DEFAULT_TASKS.get(kind, "rsgn-sequence")
        cfg = load_config(builtin_config(config))
        if cfg["task"] != DEFAULT_TASKS.get(kind):
            raise AtomsparkError(
                f"--config {config}: its task is {cfg['task']}, but {args.model} is a "
                f"{kind.upper()} model; give a {DEFAULT_TASKS.get(kind)} config (e.g. "
                f"--config {DEFAULT_TASKS.get(kind)})"
            )
        _, _, x_val, y_val, _ = build_data(cfg)
        what = f"the {config} validation split (the model file stores no task)"
        data = first_samples(x_val, y_val, args.samples or DEFAULT_SAMPLES, what)
    elif args.samples is not None:
        from atomspark.scenarios.compare.chip_vs_gpu import load_data, load_trained_model

        kind, model = load_trained_model(args.model)
        x, y = load_data(data, kind, model)
        data = first_samples(x, y, args.samples, f"--data {args.data}")
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


def print_comparison(report: dict) -> None:
    """One line per backend: the task's score (RSGN accuracy, VN reconstruction error), agreement
    with torch (the reference row), activity, time and energy."""
    kind = report["model"]["kind"]
    metric, title = (
        ("accuracy", "accuracy") if kind == "rsgn" else ("reconstruction_error", "recon err")
    )
    print(f"[compare] {kind} model, {report['samples']} samples")
    print(
        f"{'backend':14s} {title:>9s} {'agree':>6s} {'active':>7s} {'wall/sample':>12s} "
        f"{'energy/sample':>14s} {'latency':>10s}  energy source"
    )
    for name, b in report["backends"].items():
        if not b.get("supported", True):
            print(f"{name:14s} not run: {b['reason']}")
            continue
        score = b.get(metric)
        score_text = "n/a" if score is None else f"{score:.4f}"
        if "agreement_vs_torch" in b:
            agree_text = f"{b['agreement_vs_torch'].get('decision_agreement', float('nan')):.3f}"
        else:
            agree_text = "ref"
        print(
            f"{name:14s} {score_text:>9s} {agree_text:>6s} {b['active_fraction']:7.3f} "
            f"{b['wall_s_per_sample'] * 1e3:9.3f} ms {b['energy_per_sample_j'] * 1e6:11.4g} uJ "
            f"{b['latency_per_sample_s'] * 1e6:7.4g} us  {b['energy_source']}"
        )
    torch_run = report["backends"].get("torch", {})
    if "idle_power_w" in torch_run:
        print(
            f"[compare] torch energy measured on {torch_run['device']}: whole board "
            f"{torch_run['board_energy_per_sample_j'] * 1e6:.4g} uJ/sample, idle power "
            f"{torch_run['idle_power_w']:.1f} W subtracted -> "
            f"{torch_run['energy_per_sample_j'] * 1e6:.4g} uJ/sample"
        )
    decision = "class" if kind == "rsgn" else "set of active atoms"
    print(
        f"[compare] agree: share of samples whose {decision} equals torch's (ref: torch is the "
        "reference)"
    )
    if "gpu_fair" in report:
        from atomspark.scenarios.compare.gpu_side import format_rows

        fair = report["gpu_fair"]
        print(f"[compare] chip ({fair['chip_backend']}) vs the GPU's own algorithm, fp32:")
        for line in format_rows(report["model"]["kind"].upper(), fair):
            print(line)
    if "chip_vs_gpu" in report:
        from atomspark.mapping.chip_gpu_ratios import format_results

        ratios = report["chip_vs_gpu"]
        for line in format_results({ratios["workload"]: ratios}):
            print(line)
    for row in report.get("cutoff_sweep") or []:
        acc = "n/a" if row.get("accuracy") is None else f"{row['accuracy']:.3f}"
        print(
            f"[compare] cutoff {row['cutoff']:<5g} accuracy {acc} mean active "
            f"{row['mean_active_fraction']:.3f} synops/sample {row['synops_per_sample']:.0f} "
            f"energy/sample {row['energy_per_sample_j'] * 1e6:.4g} uJ"
        )


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


def _cmd_hardware(args: argparse.Namespace) -> int:
    from atomspark.mapping.hardware import known_hardware, load_hardware

    for name in known_hardware():
        hw = load_hardware(name)
        print(f"{name:16s} {type(hw).__name__:22s} {getattr(hw, 'description', '')}")
    return 0


def _add_overwrite(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace a previous {command} run in --out (without it a non-empty --out is refused)",
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


def _add_demo_command(sub) -> None:
    """`atomspark demo`: the main job on built-in defaults."""
    demo = sub.add_parser(
        "demo",
        help="the main job on built-in defaults: VN + RSGN, "
        "reference vs event engine, sparsity, events, energy",
    )
    demo.add_argument("--out", default="results/demo", help="output folder (JSON + PNG)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the models and data")
    demo.add_argument("--hardware", default="loihi2", help="neuromorphic hardware preset")
    demo.add_argument("--gpu", default="h100", help="GPU preset or JSON file to compare against")
    _add_ratio_flags(demo)
    _add_overwrite(demo, "demo")
    demo.set_defaults(func=_cmd_demo)


def _add_profile_command(sub) -> None:
    """`atomspark profile`: a saved model's energy, latency and sparsity profile."""
    prof = sub.add_parser("profile", help="energy/latency/sparsity profile of a saved model")
    prof.add_argument("model", help="a model file (.npz) written by atomspark (VN or RSGN)")
    prof.add_argument(
        "--input",
        default="builtin:16",
        help="a .npy array of inputs, or builtin:N for N built-in samples; VN models take (B, d) signals, RSGN models (B, L, d_in) token sequences",
    )
    prof.add_argument("--hardware", default="loihi2", help="neuromorphic preset or JSON file")
    prof.add_argument("--gpu", default="h100", help="dense device preset (GPU or CPU)")
    prof.add_argument(
        "--steps",
        type=int,
        default=None,
        help="engine steps per VN sample (default: 1000; an RSGN runs its own K + 1 steps)",
    )
    prof.add_argument(
        "--strategy",
        default="auto",
        choices=["auto", "partition", "sequential", "locality"],
        help="core placement (auto: locality for RSGN positions, else partition)",
    )
    prof.add_argument("--out", default="results/profile", help="output folder (JSON + PNG)")
    _add_overwrite(prof, "profile")
    prof.set_defaults(func=_cmd_profile)


def _add_import_command(sub) -> None:
    """`atomspark import`: a lava-dl netx network on the engine, with its Loihi cost."""
    imp = sub.add_parser(
        "import", help="run a lava-dl netx network (.net HDF5) and predict its Loihi cost"
    )
    imp.add_argument("net", help="a lava-dl netx network description (.net, HDF5)")
    imp.add_argument(
        "--input",
        default="zero",
        help="zero, uniform[:SEED] or gray:LEVEL (input-layer frames), rate:P[:SEED] (spikes)",
    )
    imp.add_argument("--samples", type=int, default=1, help="inferences to run")
    imp.add_argument(
        "--steps", type=int, default=None, help="steps per inference (default: the file's, or 16)"
    )
    imp.add_argument("--hardware", default="loihi2", help="neuromorphic preset or JSON file")
    imp.add_argument(
        "--strategy", default="sequential", choices=["sequential", "partition"],
        help="core placement",
    )  # fmt: skip
    imp.add_argument("--out", default="results/import", help="output folder (JSON)")
    _add_overwrite(imp, "import")
    imp.set_defaults(func=_cmd_import)


def _add_export_command(sub) -> None:
    """`atomspark export`: a saved model to Lava, NIR or networkx."""
    exp = sub.add_parser("export", help="export a saved model to Lava, NIR or networkx")
    exp.add_argument("model", help="a model file (.npz) written by atomspark")
    exp.add_argument("--to", required=True, choices=["lava", "nir", "networkx"])
    exp.add_argument(
        "--input",
        default="builtin:1",
        help="the input the graph is compiled for: first sample of a .npy, or builtin:N;"
        " VN models take (B, d) signals, RSGN models (B, L, d_in) token sequences",
    )
    exp.add_argument(
        "--fixed",
        action="store_true",
        help="quantise to Loihi fixed point (VN: --frac-bits; RSGN: alpha Q.12, h Q.10)",
    )
    exp.add_argument(
        "--verify",
        action="store_true",
        help="run the bundle on Lava's Loihi2SimCfg and compare with the engine; with --fixed, "
        "also fail when the integer model agrees with float on less than --min-agreement",
    )
    exp.add_argument(
        "--split-w-h",
        action="store_true",
        help="with --fixed, RSGN: W_h in two 8-bit parts (integer unit rsgn_fixed_split), which "
        "keeps a low-margin model's decisions better than 8-bit W_h (docs/lava.md)",
    )
    exp.add_argument(
        "--per-target-w",
        action="store_true",
        help="with --fixed, RSGN: W (between nodes) with one exponent per target node, each node "
        "shifting its own summed message; with --split-w-h it keeps the published models' "
        "decisions (docs/lava.md)",
    )
    exp.add_argument(
        "--min-agreement",
        type=float,
        default=None,
        help="--verify --fixed: the least share of --input samples on which the integer model "
        "makes the float model's decision (RSGN: class; VN: active atoms); use builtin:N with "
        "N >= 20 for a meaningful share (default 0.95)",
    )
    exp.add_argument(
        "--steps",
        type=int,
        default=100,
        help="steps for verification and the VN quantisation report (RSGN's report: its K + 1)",
    )
    exp.add_argument("--frac-bits", type=int, default=12, help="fixed-point fraction bits (VN)")
    exp.add_argument(
        "--report",
        action="store_true",
        help="deployment report: per core compartments, synapses, memory, axons vs the limits",
    )
    exp.add_argument("--hardware", default="loihi2", help="chip the --report checks against")
    exp.add_argument("--out", default="results/export", help="output folder")
    _add_overwrite(exp, "export")
    exp.set_defaults(func=_cmd_export)


def _add_train_command(sub) -> None:
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


def _add_compare_command(sub) -> None:
    """`atomspark compare`: a trained model on the GPU path against the event engine."""
    cmp = sub.add_parser("compare", help="a trained model: GPU (torch, dense) vs event engine")
    cmp.add_argument("model", help="model.npz written by `atomspark train`")
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
    cmp.add_argument("--hardware", default="loihi2", help="neuromorphic preset or JSON file")
    cmp.add_argument("--gpu", default="h100", help="GPU preset or JSON file that prices the GPU")
    _add_ratio_flags(cmp)
    cmp.add_argument("--steps", type=int, default=2000, help="engine steps per VN sample")
    cmp.add_argument("--no-fixed", action="store_true", help="skip the fixed-point engine run")
    cmp.add_argument("--out", default="results/compare", help="output folder (JSON + PNG)")
    _add_overwrite(cmp, "compare")
    cmp.set_defaults(func=_cmd_compare)


def _add_sweep_command(sub) -> None:
    """`atomspark sweep`: a grid of runs on Dask."""
    sw = sub.add_parser(
        "sweep",
        help="run a grid of train/profile/compare/bench cells on Dask (resumable); "
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


def _add_bench_command(sub) -> None:
    """`atomspark bench`: the VN benchmark families."""
    from atomspark.scenarios.bench.cli_bench import add_bench_parser

    add_bench_parser(sub)


def _add_hardware_command(sub) -> None:
    """`atomspark hardware`: the hardware presets."""
    hw = sub.add_parser("hardware", help="list the hardware presets")
    hw.set_defaults(func=_cmd_hardware)


SUBCOMMANDS = (  # in the order `atomspark --help` lists them
    _add_demo_command,
    _add_profile_command,
    _add_import_command,
    _add_export_command,
    _add_train_command,
    _add_compare_command,
    _add_sweep_command,
    _add_bench_command,
    _add_hardware_command,
)


def build_parser() -> argparse.ArgumentParser:
    """The `atomspark` command line: one subcommand per job, each bound to its _cmd_ handler."""
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
        print(f"atomspark {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"atomspark {args.command}: interrupted; files already written are complete "
            "(every write is atomic), the rest were not written",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
