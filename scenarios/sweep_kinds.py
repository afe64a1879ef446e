"""The command kinds a sweep runs, one cell at a time: how a kind checks a grid's keys, builds a
cell's complete settings and runs one cell into its folder.

- train:   `atomspark train` (networks/torch_path/training.train); the base is a training config;
           every config key can be set or varied; a retried cell resumes from its checkpoint.pt.
- profile: `atomspark profile` (scenarios/profile_run.profile_model) on a saved model.
- compare: `atomspark compare` (scenarios/compare.compare) on a trained model.
- bench:   `atomspark bench` once its Python entry point exists (see `_bench_entry`).

A kind's `run(params, run_dir, resume)` writes the command's outputs into run_dir and returns a
JSON-able dict of results; the numeric entries (nested ones as dotted keys) are what the report
averages over seeds. `resumable(run_dir)` says whether an earlier attempt left something to
continue from (train: a checkpoint); otherwise the sweep empties run_dir before a new attempt.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from atomspark.scenarios.sweep_grid import (
    SEED_AXIS,
    Grid,
    apply_overrides,
    read_toml,
    set_dotted,
)
from atomspark.sim.core import AtomsparkError


@dataclass(frozen=True)
class Kind:
    """How a sweep drives one command: see the module docstring."""

    name: str
    seeded: bool
    resolve_base: Callable[[str | None, Path], tuple[str | None, dict]]
    check: Callable[[dict, str, object], None]  # (base content, key, value): one setting
    build: Callable[[dict, dict, Path], dict]  # (variant, overrides, grid folder): settings
    run: Callable[[dict, Path, bool], dict]  # (settings, run folder, resume) -> results
    headline: tuple[str, ...]  # the metrics in the Markdown table and the plots
    resumable: Callable[[Path], bool] = lambda run_dir: False


# ----- train -----------------------------------------------------------------------------------
def _train_base(base: str | None, grid_dir: Path) -> tuple[str, dict]:
    from atomspark.scenarios.cli import builtin_config

    if base is None:
        raise AtomsparkError("grid key 'base': train needs a training config (built-in or TOML)")
    if not isinstance(base, str):
        raise AtomsparkError(f"grid key 'base': expected a string, got {base!r}")
    local = grid_dir / base
    path = str(local) if local.is_file() else builtin_config(base)
    return base, read_toml(Path(path), "base config")


def _train_check(base: dict, key: str, value) -> None:
    from atomspark.networks.torch_path.config import validate_config

    probe = {"task": base.get("task", "rsgn-sequence")}
    set_dotted(probe, key, value)
    validate_config(probe)


def _train_build(variant: dict, overrides: dict, grid_dir: Path) -> dict:
    from atomspark.networks.torch_path.config import validate_config

    return validate_config(apply_overrides(variant["base_content"], overrides))


def _train_resumable(run_dir: Path) -> bool:
    from atomspark.networks.torch_path.training import CHECKPOINT

    return (run_dir / CHECKPOINT).is_file()


def _train_run(params: dict, run_dir: Path, resume: bool) -> dict:
    """Train into `run_dir`, continuing from its checkpoint when `resume`."""
    from atomspark.networks.torch_path.training import train

    result = train(params, run_dir, resume=resume, progress=False)
    return {"steps": result.steps, **result.final_metrics}


# ----- kinds driven by keyword options (profile, compare, bench) -------------------------------
def _options_kind(
    name: str,
    options: dict[str, tuple[tuple[type, ...], object]],
    paths: tuple[str, ...],
    run: Callable[[dict, Path, bool], dict],
    headline: tuple[str, ...],
    seeded: bool = False,
) -> Kind:
    """A kind whose cell settings are the command's keyword options: `options` maps each to
    (accepted types, default); REQUIRED marks options without a default; `paths` are resolved
    relative to the grid file."""

    def check(base: dict, key: str, value) -> None:
        if key not in options:
            raise AtomsparkError(f"unknown option for {name} (allowed: {', '.join(options)})")
        types, default = options[key]
        if value is None and default is None:
            return
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            want = " or ".join(t.__name__ for t in types)
            raise AtomsparkError(f"expected {want}, got {type(value).__name__} {value!r}")

    def build(variant: dict, overrides: dict, grid_dir: Path) -> dict:
        params = {k: d for k, (_, d) in options.items() if d is not REQUIRED}
        params.update(variant["base_content"])
        params.update(overrides)
        missing = [k for k in options if k not in params]
        if missing:
            raise AtomsparkError(f"{name} needs {missing[0]!r} in [set], [axes] or a variant")
        for key in paths:
            if isinstance(params.get(key), str) and not Path(params[key]).is_absolute():
                params[key] = str((grid_dir / params[key]).resolve())
        return params

    def base(value: str | None, grid_dir: Path) -> tuple[str | None, dict]:
        if value is not None:
            raise AtomsparkError(f"grid key 'base': {name} takes no base; set its options")
        return None, {}

    return Kind(name, seeded, base, check, build, run, headline)


REQUIRED = object()


def _profile_run(params: dict, work: Path, resume: bool) -> dict:
    from atomspark.scenarios.profile_run import profile_model

    result = profile_model(
        params["model"],
        params["input"],
        work,
        hardware=params["hardware"],
        gpu=params["gpu"],
        steps=params["steps"],
        strategy=params["strategy"],
        log=lambda line: None,
    )
    return {k: v for k, v in result.items() if k != "model"}


def _compare_run(params: dict, work: Path, resume: bool) -> dict:
    from atomspark.scenarios.compare import compare

    if params["data"] is not None:
        data = params["data"]
    else:
        from atomspark.networks.torch_path.config import load_config
        from atomspark.networks.torch_path.training import build_data
        from atomspark.scenarios.cli import builtin_config

        _, _, x_val, y_val, _ = build_data(load_config(builtin_config(params["config"])))
        n = params["samples"]
        data = (x_val[:n], None if y_val is None else y_val[:n])
    report = compare(
        params["model"],
        data,
        work,
        device=None if params["device"] == "auto" else params["device"],
        hardware=params["hardware"],
        gpu=params["gpu"],
        fixed_point=params["fixed_point"],
        steps=params["steps"],
    )
    return {k: v for k, v in report.items() if k != "model"}


def _bench_entry() -> Callable | None:
    """The `atomspark bench` Python entry point, when this checkout has it."""
    if importlib.util.find_spec("atomspark.scenarios.bench") is None:
        return None
    module = importlib.import_module("atomspark.scenarios.bench")
    return getattr(module, "run_bench", None)


def _bench_run(params: dict, work: Path, resume: bool) -> dict:
    entry = _bench_entry()
    if entry is None:
        raise AtomsparkError("bench: this checkout has no `atomspark bench` entry point yet")
    return entry(out=work, **params)


KINDS: dict[str, Kind] = {
    "train": Kind(
        "train",
        True,
        _train_base,
        _train_check,
        _train_build,
        _train_run,
        ("best_accuracy", "accuracy", "activity", "loss"),
        _train_resumable,
    ),
    "profile": _options_kind(
        "profile",
        {
            "model": ((str,), REQUIRED),
            "input": ((str,), "builtin:16"),
            "hardware": ((str,), "loihi2"),
            "gpu": ((str,), "h100"),
            "steps": ((int,), None),
            "strategy": ((str,), "auto"),
        },
        ("model",),
        _profile_run,
        ("events_per_sample", "synops_per_sample"),
    ),
    "compare": _options_kind(
        "compare",
        {
            "model": ((str,), REQUIRED),
            "config": ((str,), "rsgn-sequence"),
            "data": ((str,), None),
            "samples": ((int,), 16),
            "device": ((str,), "auto"),
            "hardware": ((str,), "loihi2"),
            "gpu": ((str,), "h100"),
            "fixed_point": ((bool,), True),
            "steps": ((int,), 2000),
        },
        ("model", "data"),
        _compare_run,
        ("backends.torch.accuracy", "backends.engine_float.accuracy"),
    ),
    "bench": _options_kind("bench", {}, (), _bench_run, (), seeded=True),
}


def check_grid(grid: Grid, kind: Kind) -> None:
    """Check every setting and axis value against the kind before any cell is built, naming
    where in the grid a bad key or value sits."""
    if grid.seeds is not None and not kind.seeded:
        raise AtomsparkError(f"grid key 'seeds': kind {kind.name} has no seed; remove `seeds`")
    for variant in grid.variants:
        for key, value in variant["set"].items():
            _check_one(
                kind, variant, f"[set] / variants[{variant['name']}].set {key!r}", key, value
            )
        for key, values in grid.axes.items():
            for value in values:
                _check_one(kind, variant, f"axis {key!r} value {value!r}", key, value)
        if grid.seeds is not None:
            for seed in grid.seeds:
                _check_one(kind, variant, f"seeds value {seed!r}", SEED_AXIS, seed)


def _check_one(kind: Kind, variant: dict, where: str, key: str, value) -> None:
    try:
        kind.check(variant["base_content"], key, value)
    except AtomsparkError as exc:
        raise AtomsparkError(f"grid {where}: {exc}") from None
