"""The command kinds a sweep runs, one cell at a time: how a kind checks a grid's keys, builds a
cell's complete settings and runs one cell into its folder.

- train:   `atomspark train` (networks/torch_path/training.train); the base is a training config;
           every config key can be set or varied; a retried cell resumes from its checkpoint.pt.
- profile: `atomspark profile` (scenarios/profile_run.profile_model) on a saved model.
- compare: `atomspark compare` (scenarios/compare.compare) on a trained model.
- bench:   `atomspark bench` (scenarios/bench/): one benchmark family x model x seed per cell.
- import:  `atomspark import` (scenarios/runs/nir_import.import_nir or netx_import) on a NIR
           graph or a netx network, chosen by the file's content as the command does.

A kind's `run(params, folder, resume)` writes the command's outputs into the cell's folder and
returns a JSON-able dict of results; the numeric entries (nested ones as dotted keys) are what
the report averages over seeds. `resumable(folder)` says whether an earlier attempt left
something to continue from (train: a checkpoint); otherwise the sweep removes that attempt's
outputs before a new one.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from atomspark.scenarios.sweep.grid import (
    SEED_AXIS,
    Grid,
    apply_overrides,
    read_toml,
    set_dotted,
)
from atomspark.sim.core import AtomsparkError, atomic_write_text


@dataclass(frozen=True)
class Kind:
    """How a sweep drives one command: see the module docstring."""

    name: str
    seeded: bool
    resolve_base: Callable[[str | None, Path], tuple[str | None, dict]]
    check: Callable[[dict, str, object], None]  # (base content, key, value): one setting
    build: Callable[[dict, dict, Path], dict]  # (variant, overrides, grid folder): settings
    run: Callable[[dict, Path, bool], dict]  # (settings, cell folder, resume) -> results
    headline: tuple[str, ...]  # the metrics in the Markdown table and the plots
    resumable: Callable[[Path], bool] = lambda folder: False
    identity: Callable[[dict], dict] = lambda settings: settings  # what names a cell (hashed)


# ----- train -----------------------------------------------------------------------------------
def _train_identity(settings: dict) -> dict:
    from atomspark.networks.torch_path.config import identity_settings

    return identity_settings(settings)


def _train_base(base: str | None, grid_dir: Path) -> tuple[str, dict]:
    from atomspark.scenarios.configs import builtin_config

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


def _train_resumable(folder: Path) -> bool:
    """An earlier attempt left a checkpoint that reads as tensors and plain data with a matching
    digest (weights-only reader: a planted file runs nothing); any other is not resumed."""
    from atomspark.networks.torch_path.checkpoint_file import read_checkpoint
    from atomspark.networks.torch_path.training import CHECKPOINT

    if not (folder / CHECKPOINT).is_file():
        return False
    try:
        read_checkpoint(folder / CHECKPOINT)
    except AtomsparkError:
        return False
    return True


def _train_run(params: dict, folder: Path, resume: bool) -> dict:
    """Train into `folder`, continuing from its checkpoint when `resume`."""
    from atomspark.networks.torch_path.training import train

    # the cell folder may also hold the sweep's own files: a fresh attempt replaces only train's
    result = train(params, folder, resume=resume, overwrite=not resume, progress=False)
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
    from atomspark.scenarios.runs.profile import profile_model

    result = profile_model(
        params["model"],
        params["input"],
        work,
        hardware=params["hardware"],
        gpu=params["gpu"],
        steps=params["steps"],
        strategy=params["strategy"],
        log=lambda line: None,
        overwrite=True,  # the cell folder also holds the sweep's own files
    )
    return {k: v for k, v in result.items() if k != "model"}


def _import_run(params: dict, work: Path, resume: bool) -> dict:
    from atomspark.networks.nir_file import is_nir_file
    from atomspark.scenarios.runs.netx_import import import_network
    from atomspark.scenarios.runs.nir_import import import_nir

    nir = is_nir_file(params["network"])
    extra = {"producer": params["producer"], "dt": params["dt"]} if nir else {}
    result = (import_nir if nir else import_network)(
        params["network"],
        params["input"],
        samples=params["samples"],
        steps=params["steps"],
        hardware=params["hardware"],
        strategy=params["strategy"],
        out=work,
        overwrite=True,  # the cell folder also holds the sweep's own files
        log=lambda line: None,
        **extra,
    )
    return {k: v for k, v in result.items() if k != "network"}


def _compare_run(params: dict, work: Path, resume: bool) -> dict:
    from atomspark.scenarios.compare.chip_vs_gpu import compare

    if params["data"] is not None:
        data = params["data"]
    else:
        from atomspark.networks.torch_path.config import load_config
        from atomspark.networks.torch_path.training import build_data
        from atomspark.scenarios.configs import builtin_config

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
        overwrite=True,  # the cell folder also holds the sweep's own files
    )
    return {k: v for k, v in report.items() if k != "model"}


# ----- bench -----------------------------------------------------------------------------------
BENCH_OPTIONS = {  # one cell = one benchmark family x model (or all models) x seed
    "model": ((str,), None),  # None: every model of the family, in one cell
    "quick": ((bool,), False),
    "device": ((str,), "auto"),
}


def _bench_family(name: str):
    from atomspark.scenarios.bench.registry import get_family

    return get_family(name)


def _bench_base(base: str | None, grid_dir: Path) -> tuple[str, dict]:
    if importlib.util.find_spec("atomspark.scenarios.bench") is None:
        raise AtomsparkError("grid key 'kind': this installation has no `atomspark bench`")
    if not isinstance(base, str):
        raise AtomsparkError("grid key 'base': bench needs a benchmark family (e.g. fn1d)")
    _bench_family(base)  # an unknown family is a one-line error listing the known ones
    return base, {"name": base}


def _bench_check(base: dict, key: str, value) -> None:
    if key == SEED_AXIS:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise AtomsparkError(f"expected an integer >= 0, got {value!r}")
        return
    if key.startswith("sizes."):
        from dataclasses import fields

        sizes = _bench_family(base["name"]).sizes(False)
        names = [f.name for f in fields(sizes)]
        if key[len("sizes.") :] not in names:
            raise AtomsparkError(f"unknown size (valid: {', '.join(names)})")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise AtomsparkError(f"expected a number, got {value!r}")
        return
    if key not in BENCH_OPTIONS:
        allowed = ", ".join([*BENCH_OPTIONS, "sizes.<name>"])
        raise AtomsparkError(f"unknown option for bench (allowed: {allowed})")
    types, _ = BENCH_OPTIONS[key]
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        want = " or ".join(t.__name__ for t in types)
        raise AtomsparkError(f"expected {want}, got {type(value).__name__} {value!r}")


def _bench_build(variant: dict, overrides: dict, grid_dir: Path) -> dict:
    params = {k: d for k, (_, d) in BENCH_OPTIONS.items()}
    params.update(name=variant["base"], sizes={}, seed=0)
    return apply_overrides(params, overrides)


def _bench_run(params: dict, folder: Path, resume: bool) -> dict:
    """One family x model x seed of `atomspark bench` (its runner's run_cell): train, tune
    facts on the validation split, evaluate on every split; the cell's record is also written
    to bench_cell.json (the benchmark report reads these)."""
    from atomspark.scenarios.bench.family import override_sizes
    from atomspark.scenarios.bench.runner import run_cell
    from atomspark.scenarios.bench.validation import prepare_data

    family = _bench_family(params["name"])
    size = override_sizes(family.sizes(params["quick"]), params["sizes"])
    data = prepare_data(family, size, params["seed"])
    factories = family.models(size, data)
    names = list(factories) if params["model"] is None else [params["model"]]
    unknown = [m for m in names if m not in factories]
    if unknown:
        raise AtomsparkError(f"model {unknown[0]!r}: unknown (valid: {', '.join(factories)})")
    cells = {
        m: run_cell(
            family,
            size,
            data,
            m,
            factories[m],
            params["seed"],
            params["device"],
            keep_examples=False,
        )
        for m in names
    }
    atomic_write_text(folder / "bench_cell.json", json.dumps(cells, indent=1, default=str))
    drop = ("model", "seed", "kind", "config", "examples")
    results = {m: {k: v for k, v in c.items() if k not in drop} for m, c in cells.items()}
    return results[names[0]] if len(names) == 1 else results


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
        _train_identity,
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
        (
            "events_per_sample",
            "synops_per_sample",
            "mean_active_fraction.",
            "costs.neuromorphic.energy_per_sample_j",
            "costs.neuromorphic.time_per_sample_s",
            "costs.dense.energy_j",
        ),
    ),
    "import": _options_kind(
        "import",
        {
            "network": ((str,), REQUIRED),
            "producer": ((str,), "nir"),
            "dt": ((float,), None),
            "input": ((str,), "zero"),
            "samples": ((int,), 1),
            "steps": ((int,), None),
            "hardware": ((str,), "loihi2"),
            "strategy": ((str,), "sequential"),
        },
        ("network",),
        _import_run,
        (
            "prediction.events_per_inference",
            "prediction.synops_per_inference",
            "prediction.energy_per_inference_j",
            "prediction.inferences_per_s",
            "neurobench.activation_sparsity",
        ),
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
        (
            "backends.torch.accuracy",
            "backends.engine_float.accuracy",
            "backends.engine_float.agreement_vs_torch.decision_agreement",
            "backends.engine_float.energy_per_sample_j",
            "backends.torch.energy_per_sample_j",
        ),
    ),
    "bench": Kind(
        "bench",
        True,
        _bench_base,
        _bench_check,
        _bench_build,
        _bench_run,
        ("metrics.masked.",),
    ),
}


def check_grid(grid: Grid, kind: Kind) -> None:
    """Check every setting and axis value against the kind before any cell is built, naming
    where in the grid a bad key or value sits."""
    if grid.seeds is not None and not kind.seeded:
        raise AtomsparkError(f"grid key 'seeds': kind {kind.name} has no seed; remove `seeds`")
    for variant in grid.variants:
        for key, value in variant["set"].items():
            where = "[set]" if len(grid.variants) == 1 else f"variants[{variant['name']}]"
            _check_one(kind, variant, f"{where} key {key!r}", key, value)
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
