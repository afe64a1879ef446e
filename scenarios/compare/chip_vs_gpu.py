"""GPU (torch, dense) against neuromorphic (event engine, float and fixed point): one trained model,
one data set, side by side.

For a model file written by `train` (VN or RSGN) and a data set, `compare`:
(a) runs the torch module on the chosen device, batched and dense, timed; on CUDA the energy is
    measured with NVML when pynvml is present, otherwise it comes from the GPU's hardware
    description (roofline model of the dense equivalent, mapping/costs.py); the output says which;
(b) runs the event engine one sample at a time, in float and in Loihi fixed point (the integer
    VN atom, where the model has no hard top-k; the integer RSGN node), and prices its counters
    on the neuromorphic chip (placement + energy model, mapping/costs.compare_costs), per sample;
and reports agreement of outputs (max / mean absolute error against torch, decision agreement:
RSGN the predicted class, VN the support of the codes), task accuracy (RSGN) or relative
reconstruction error (VN), active fraction, wall time per sample here, energy and latency per
sample. RSGN also gets the soft-vs-event sweep: the sigmoid never reaches exactly zero, so the
event-driven model silences nodes at or below a cutoff; accuracy and activity are measured
against that cutoff. `chip_vs_gpu` in the report is the chip-vs-GPU headline with its range
(mapping/chip_gpu_ratios.py): the chip backend on a layout that fits, a VN settle stopped at its
accuracy target (scenarios/compare/chip_rows.py), the GPU's own algorithm at every precision that
reaches the chip's accuracy. Writes comparison.json (atomic) and PNG plots to out_dir.
What runs for each family is its CompareSide (scenarios/compare/family_sides.py: the built-ins
in vn_compare.py and rsgn_compare.py); what they share is compare_common.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from atomspark.mapping.chip_gpu_ratios import Assumptions, compare_workload
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware
from atomspark.networks.bounded_npz import read_npz
from atomspark.networks.families import family_named
from atomspark.networks.model_io import (
    INPUT_HELD_BY,
    INPUT_LIMIT,
    check_file_format,
    check_representable,
    load_npy,
)
from atomspark.networks.torch_path.device import resolve_dtype, select_device
from atomspark.scenarios.compare.compare_common import CompareRun
from atomspark.scenarios.compare.family_sides import compare_side
from atomspark.scenarios.compare.plots import (
    plot_accuracy_energy,
    plot_cutoff,
    plot_energy_hist,
)
from atomspark.scenarios.compare.ratio_plots import plot_ratios, plot_tornado
from atomspark.scenarios.compare.rsgn_compare import (  # noqa: F401 (named here too)
    rsgn_agreement,
    rsgn_cutoff_sweep,
    rsgn_event_graph,
)
from atomspark.scenarios.compare.vn_compare import (  # noqa: F401 (named here too)
    vn_agreement,
    vn_reconstruction_error,
)
from atomspark.scenarios.runs.engine import LoadedModel, load_model, require_run_memory
from atomspark.sim.core import AtomsparkError, atomic_write_text, require_int
from atomspark.sim.progress import Stages
from atomspark.sim.run_folder import finish_run, prepare_run_folder

VN_ENGINE_STEPS = 2000  # engine step budget per VN sample (fixed, as a chip would run it)
DEFAULT_CUTOFFS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3)
DATA_KEYS = ("tokens", "signals", "x")  # the inputs of a --data .npz, first found is used
LABEL_KEYS = ("labels", "y")


# ----- inputs ----------------------------------------------------------------------------------
def load_trained_model(path: str | os.PathLike) -> tuple[str, object]:
    """(family name, model) from a model.npz written by `train`: ("vn", VNModel) or ("rsgn",
    (params, config))."""
    loaded = load_model(path)
    return loaded.kind, loaded.model


def load_data(data, kind: str, model) -> tuple[np.ndarray, np.ndarray | None]:
    """Inputs and labels (or None) from a path to an .npz (keys tokens/signals/x, labels/y), a
    scenarios.datasets object, an (inputs, labels) pair or an array; shapes checked against the
    model so that a mismatch names what the model expects."""
    labels = None
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.is_file():
            raise AtomsparkError(f"data file {path}: does not exist")
        if path.suffix == ".npy":
            arr = load_npy(path, "data file")
            return load_data(
                check_representable(f"data file {path}", arr, INPUT_LIMIT, INPUT_HELD_BY),
                kind,
                model,
            )
        check_file_format(path, "data file", "npz")
        f = read_npz(path, "data file", only=set(DATA_KEYS + LABEL_KEYS))
        key = next((k for k in DATA_KEYS if k in f), None)
        if key is None:
            raise AtomsparkError(f"data file {path}: needs an array 'tokens', 'signals' or 'x'")
        x = check_representable(f"data file {path}: {key}", f[key], INPUT_LIMIT, INPUT_HELD_BY)
        lk = next((k for k in LABEL_KEYS if k in f), None)
        labels = None if lk is None else f[lk]
    elif hasattr(data, "tokens"):
        x, labels = data.tokens, getattr(data, "labels", None)
    elif hasattr(data, "signals"):
        x = data.signals
    elif isinstance(data, tuple) and len(data) == 2:
        x, labels = data
    else:
        x = data
    side = compare_side(kind)
    x = side.check_data(x, model)
    if x.shape[0] < 1:
        raise AtomsparkError("data: needs at least one sample")
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (x.shape[0],) or not np.issubdtype(labels.dtype, np.integer):
            raise AtomsparkError(
                f"labels: expected {x.shape[0]} integer labels, got {labels.dtype} {labels.shape}"
            )
        side.check_labels(labels, model)
    return x, labels


# ----- the comparison --------------------------------------------------------------------------
def price_model(
    kind: str, model, run: CompareRun, assumptions: Assumptions, cutoffs=None
) -> dict:  # fmt: skip
    """The chip-vs-GPU headline, range and strawmen of one trained model on `run`'s samples:
    the one pricing path of `compare`, `profile` and `demo` (same stopping rule, arithmetic,
    placement objective, copies and range), so one model gives one ratio from every verb."""
    side = compare_side(kind)
    row, variants, chip_name, chip_steps = side.run(run, model, cutoffs)
    ratios = compare_workload(kind.upper(), row, variants, load_hardware(run.gpu), assumptions)
    ratios["chip_backend"] = chip_name
    ratios["chip_steps"] = chip_steps
    return ratios


def pricing_run(
    x: np.ndarray,
    hardware: str,
    gpu: str,
    steps: int = VN_ENGINE_STEPS,
    labels: np.ndarray | None = None,
    fixed_point: bool = True,
    device: str | None = None,
    stage: Callable[[str], None] = lambda message: None,
) -> CompareRun:
    """The CompareRun of a verb that prices a model without writing compare's report (profile):
    compare's defaults (its step budget, fixed point, torch on the CPU unless `device`)."""
    torch_device = select_device(device)
    report = {"backends": {}}
    return CompareRun(x, labels, steps, fixed_point, hardware, gpu, torch_device,
                      resolve_dtype(None, torch_device), stage, report)  # fmt: skip


def compare(
    model_path: str | os.PathLike,
    data,
    out_dir: str | os.PathLike,
    device: str | None = None,
    hardware: str = DEFAULT_CHIP,
    gpu: str = "h100",
    fixed_point: bool = True,
    steps: int = VN_ENGINE_STEPS,
    dtype: str | None = None,
    cutoffs: Sequence[float] | None = DEFAULT_CUTOFFS,
    overwrite: bool = False,
    log: Callable[[str], None] = print,
    assumptions: Assumptions | None = None,
) -> dict:
    """Run a trained model (model.npz from `train`) on `data` in torch (dense, on `device`) and on
    the event engine (float; also fixed point when `fixed_point`), and write comparison.json
    plus plots to out_dir. `steps`: engine step budget per VN sample (RSGN runs its K steps + 1).
    `cutoffs`: RSGN event-cutoff sweep (None: skip). `dtype` of the torch run: float32, float64
    or None (float32 on CUDA, float64 on CPU). Returns the report dict."""
    kind, model = load_trained_model(model_path)
    x, labels = load_data(data, kind, model)
    assumptions = assumptions or Assumptions()
    torch_device = select_device(device)
    steps = require_int("steps", steps, minimum=1)
    tdtype = resolve_dtype(dtype, torch_device)
    require_run_memory(LoadedModel(kind, model), len(x), steps, "--steps")
    out = prepare_run_folder(out_dir, "compare", "overwrite" if overwrite else "new")
    n = len(x)
    report: dict = {
        "model": {"path": str(model_path), "kind": kind},
        "samples": n,
        "hardware": {"neuromorphic": hardware, "gpu_model": gpu},
        "backends": {},
    }
    side = compare_side(kind)
    sweep = side.cutoff_sweep and bool(cutoffs)
    stage = Stages(log, "[compare]", 4 + bool(fixed_point) + sweep)
    stage(f"{n} sample(s) on the event engine (float)")
    run = CompareRun(x, labels, steps, fixed_point, hardware, gpu, torch_device, tdtype, stage,
                     report)  # fmt: skip
    ratios = report["chip_vs_gpu"] = price_model(kind, model, run, assumptions, cutoffs)
    atomic_write_text(out / "comparison.json", json.dumps(report, indent=2))
    stage("plots")
    metric = family_named(kind).compare_metric[0]
    plot_accuracy_energy(report, metric, out / "accuracy_vs_energy.png")
    plot_energy_hist(report, out / "energy_per_sample.png")
    if "cutoff_sweep" in report:
        plot_cutoff(report, out / "cutoff_sweep.png")
    plot_ratios({kind.upper(): ratios}, out / "chip_vs_gpu.png")
    plot_tornado({kind.upper(): ratios}, out / "tornado.png")
    finish_run(out)  # after the last file: the run is complete
    return report
