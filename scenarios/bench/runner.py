"""Run a benchmark family: for every seed and model, train, evaluate, price, and write one cell;
then rebuild results.json, results.md and the plots from all cells in the folder."""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import torch
from atomspark.networks.torch_path.device import select_device
from atomspark.scenarios.bench.engine_check import engine_section
from atomspark.scenarios.bench.evaluate import evaluate, example_inputs
from atomspark.scenarios.bench.family import Family, override_sizes
from atomspark.scenarios.bench.plots import plot_curves, plot_errors, plot_examples, plot_vn_atoms
from atomspark.scenarios.bench.registry import get_family
from atomspark.scenarios.bench.store import RunStore
from atomspark.scenarios.bench.tables import aggregate, config_key, markdown
from atomspark.scenarios.bench.validation import data_facts, prepare_data
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.memory import require_memory
from atomspark.sim.progress import track

MEMORY_FRACTION = 0.8  # refuse runs whose estimate exceeds this share of available memory
CPU_THREADS = 1  # torch threads on CPU: small models on a shared machine ran up to 30x faster


def default_out(name: str, quick: bool) -> Path:
    return Path("results") / "bench" / (f"{name}-quick" if quick else name)


def check_memory(family: Family, sizes) -> None:
    """Refuse sizes whose estimate exceeds MEMORY_FRACTION of the available memory (the one
    guard, sim/memory.require_memory)."""
    changed = ", ".join(f"{k} {v}" for k, v in asdict(sizes).items())
    require_memory(
        f"{family.name} sizes ({changed})",
        family.bytes_needed(sizes),
        "lower the sizes (--set NAME=VALUE)",
        fraction=MEMORY_FRACTION,
    )


def run_benchmark(
    name: str,
    quick: bool = False,
    seeds: int | None = None,
    out: str | Path | None = None,
    device: str = "auto",
    resume: bool = False,
    overwrite: bool = False,
    sizes: dict[str, str] | None = None,
    models: Sequence[str] | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Run benchmark `name` and return its aggregate results (also written to out/results.json).

    seeds: how many seeds (0..seeds-1; default 1 quick, 3 full); sizes: {field: value} overrides
    of the family's sizes; models: a subset of the family's model names (default all).
    """
    family = get_family(name)
    size = override_sizes(family.sizes(quick), sizes)
    default_seeds = 1 if quick else 3
    n_seeds = require_int("--seeds", default_seeds if seeds is None else seeds, minimum=1)
    check_memory(family, size)
    out = Path(out) if out is not None else default_out(name, quick)
    manifest = {
        "family": name,
        "description": family.description,
        "quick": quick,
        "sizes": asdict(size),
        "splits": list(family.splits),
        "seeds": list(range(n_seeds)),
        "machine": f"{platform.node()} ({platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs)",
    }
    store = RunStore(out, manifest, resume=resume, overwrite=overwrite)
    threads = torch.get_num_threads()
    if select_device(device).type == "cpu":
        torch.set_num_threads(CPU_THREADS)
    try:
        return _run(family, size, n_seeds, store, manifest, device, models, log)
    finally:
        torch.set_num_threads(threads)


def _run(family, size, n_seeds, store, manifest, device, models, log) -> dict:
    name = family.name
    t_start = time.perf_counter()
    order: list[str] = []
    for seed in range(n_seeds):
        data = prepare_data(family, size, seed)
        factories = family.models(size, data)
        order = list(factories)
        chosen = _choose(models, order)
        if seed == 0:
            store.write_text(
                "examples.json",
                json.dumps({"shape": list(data.shape), "splits": example_inputs(data)}),
            )
        for model_name in track(chosen, f"[bench] {name} seed {seed}", "model"):
            if store.has(model_name, seed):
                log(f"[bench] {model_name} seed {seed}: done earlier, skipped (--resume)")
                continue
            cell = run_cell(
                family,
                size,
                data,
                model_name,
                factories[model_name],
                seed,
                device,
                keep_examples=seed == 0,
            )
            store.write(model_name, seed, cell)
            log(_cell_line(cell))
    results = aggregate(store.load_cells(), manifest, order)
    results["wall_s_this_invocation"] = time.perf_counter() - t_start
    results["loadavg_end"] = os.getloadavg()
    write_outputs(store.out, results, family, store.load_cells())
    log(
        f"[bench] wrote {store.out}/results.json, results.md and plots "
        f"({results['wall_s_this_invocation']:.0f} s)"
    )
    return results


def _choose(models: Sequence[str] | None, order: list[str]) -> list[str]:
    if models is None:
        return order
    for m in models:
        if m not in order:
            raise AtomsparkError(f"model {m!r}: unknown (valid: {', '.join(order)})")
    return list(models)


def run_cell(
    family: Family,
    size,
    data,
    model_name: str,
    factory,
    seed: int,
    device: str,
    keep_examples: bool,
) -> dict:
    """Train one model on one seed's ID training data (validation held out: data.val), evaluate
    it on validation and every split, and record its times (and, for networks, its curves)."""
    model = factory(device)
    t_cell = t0 = time.perf_counter()
    model.fit(
        data.train,
        seed,
        random_hidden=lambda rng, n: family.random_hidden(rng, n, size),
        val=data.val,
    )
    train_s = time.perf_counter() - t0
    cell = {
        "model": model_name,
        "seed": seed,
        "kind": model.kind,
        "params": model.n_params(),
        "config": model.describe(),
        "train_s": train_s,
        "train_loadavg": os.getloadavg()[0],
        "data": data_facts(data),
        **evaluate(model, data, keep_examples),
    }
    if hasattr(model, "curves"):
        cell["curves"] = model.curves()
    if hasattr(model, "engine_run") and model.config.layers == 1:
        cell["engine"] = engine_section(model, data)
    if family.extra_metrics is not None:
        cell["extra_metrics"] = family.extra_metrics(model, data)
    cell["wall_s"] = time.perf_counter() - t_cell
    cell["finished_utc"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cell["loadavg"] = os.getloadavg()[0]
    return cell


def write_outputs(out: Path, results: dict, family: Family, cells: list[dict]) -> list[Path]:
    """results.json, results.md and the plots, rebuilt from the cells (the plots use only each
    model's chosen configuration)."""
    out = Path(out)
    atomic_write_text(out / "results.json", json.dumps(results, indent=1))
    atomic_write_text(out / "results.md", markdown(results))
    chosen = {n: config_key(m["config"]) for n, m in results["models"].items()}
    paths = [plot_errors(results, out / "errors.png")]
    curves = plot_curves(cells, chosen, out / "curves.png")
    paths += [curves] if curves is not None else []
    cells = [c for c in cells if chosen.get(c["model"]) == config_key(c["config"])]
    if (out / "examples.json").exists():
        examples = json.loads((out / "examples.json").read_text())
        paths.append(
            plot_examples(examples["splits"], cells, examples["shape"], out / "examples.png")
        )
    for name in results["models"]:
        if any("vn_stats" in c for c in cells if c["model"] == name):
            paths.append(plot_vn_atoms(cells, name, out / f"{name}_atoms.png"))
    if family.plots is not None and any(c.get("probes") for c in cells):
        paths += family.plots(results, cells, out)
    return paths


def _cell_line(cell: dict) -> str:
    m = cell["metrics"]
    parts = " ".join(f"{s}={v:.3g}" for s, v in m["masked"].items())
    return (
        f"[bench] {cell['model']} seed {cell['seed']}: {cell['params']} params, trained in "
        f"{cell['train_s']:.1f} s; masked NMSE {parts}"
    )


def list_benchmarks() -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, description, splits) of every family."""
    from atomspark.scenarios.bench.registry import family_names

    return [(n, get_family(n).description, get_family(n).splits) for n in family_names()]
