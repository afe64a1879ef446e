"""Two-time-scale training driven by a TOML config, with atomic checkpoints and exact resume.

The loop is the same for every model family; what differs (building the module, one step, the
epoch's end, validation, the final model file) is the family's Trainer (networks/model_family.py;
the built-ins: rsgn_trainer.py, vn_trainer.py, baseline_trainer.py), found from the config by
the family registry. The other jobs live beside it: checkpoints.py (what a checkpoint holds),
optimiser.py (AdamW, schedule, slow-scale state), metrics_log.py (metrics.jsonl and its plot),
interruption.py (Ctrl-C), resume_rules.py (what a resume may change).
The training set is uploaded once and each epoch's order once; a step makes one host sync.
Defaults (config.py TASK_DEFAULTS and sections) are tuned so that both built-in tasks learn.

Checkpoints (checkpoint.pt, every `checkpoint_every` steps and at the end; all tensors on the
CPU) hold the model, optimiser, scheduler, torch CPU and CUDA, and NumPy RNG states, the epoch's
data order and position, the reward baseline and the numerics record (device, dtype, TF32,
determinism), so that a resumed run is bit-identical to an uninterrupted one on the same device.
Outputs in out_dir: metrics.jsonl, metrics.png, checkpoint.pt, model.npz (NumPy model file),
final_metrics.json (last validation metrics plus the best validation epoch: best_accuracy,
best_epoch, best_activity).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from atomspark.networks.families import family_of_config
from atomspark.networks.model_family import Trainer
from atomspark.networks.task_data import build_data
from atomspark.networks.torch_path.checkpoints import (
    CHECKPOINT,
    load_checkpoint,
    run_state,
    save_checkpoint,
)
from atomspark.networks.torch_path.config import check_memory, load_config, validate_config
from atomspark.networks.torch_path.device import pinned_numerics, resolve_dtype, select_device
from atomspark.networks.torch_path.interruption import StopOnSigint, TrainingInterrupted
from atomspark.networks.torch_path.metrics_log import (
    MetricsAppender,
    best_validation,
    plot_metrics,
    truncate_metrics,
)
from atomspark.networks.torch_path.optimiser import SlowState, cosine_factor
from atomspark.networks.torch_path.resume_rules import check_resume_config
from atomspark.networks.torch_path.slow_torch import DeviceRewardBaseline
from atomspark.networks.torch_path.train_step import LossNotFinite
from atomspark.sim.core import AtomsparkError, atomic_write_text
from atomspark.sim.progress import progress as progress_bar
from atomspark.sim.run_folder import finish_run, lock_released_after, prepare_run_folder
from tqdm.auto import tqdm

__all__ = [
    "CHECKPOINT",
    "TrainResult",
    "TrainingInterrupted",
    "best_validation",
    "build_data",
    "build_model",
    "check_resume_config",
    "load_checkpoint",
    "plot_metrics",
    "save_checkpoint",
    "train",
]
TRAIN_OUTPUTS = ("metrics.jsonl", "metrics.png", CHECKPOINT, "model.npz", "final_metrics.json")


@dataclass
class TrainResult:
    """Where the outputs went and the last metrics."""

    out_dir: Path
    steps: int
    final_metrics: dict
    model_path: Path
    task: str = "rsgn-sequence"


def build_model(cfg: dict, input_dim: int, extra: dict, device, dtype):
    """The torch module of the config's model family, initialised from the NumPy reference's
    initialiser."""
    return family_of_config(cfg).torch_trainer().build(cfg, input_dim, extra, device, dtype)


def _say(text: str, show: bool) -> None:
    """A line of progress on stdout, printed above the progress bar."""
    if show:
        tqdm.write(text)


def train(
    config: str | os.PathLike | dict,
    out_dir: str | os.PathLike,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    max_steps: int | None = None,
) -> TrainResult:
    """Train the config's task; write metrics, plots, checkpoints and model.npz to out_dir.

    out_dir must be new or empty, unless resume=True (continue from its checkpoint.pt, with the
    same config; epochs may grow) or overwrite=True (delete the previous run's outputs first).
    max_steps stops early (after a checkpoint) once that many steps are done in total; Ctrl-C
    stops after the current step with a checkpoint and raises TrainingInterrupted. Device,
    dtype, TF32 and determinism are pinned for the run and recorded ("numerics")."""
    cfg = validate_config(config) if isinstance(config, dict) else load_config(config)
    if not isinstance(out_dir, (str, os.PathLike)):
        raise AtomsparkError(f"out_dir: expected a folder path, got {type(out_dir).__name__}")
    if resume and overwrite:
        raise AtomsparkError("--resume and --overwrite: choose one")
    check_memory(cfg)
    mode = "resume" if resume else "overwrite" if overwrite else "new"
    out = prepare_run_folder(out_dir, "train", mode, TRAIN_OUTPUTS, legacy_files=(CHECKPOINT,),
                             resumable=True, resume_file=CHECKPOINT)  # fmt: skip
    with lock_released_after(out):  # an early stop or a refusal lets go of the folder
        return _train_in(out, cfg, resume, progress, max_steps)


def _train_in(out: Path, cfg: dict, resume: bool, progress: bool, max_steps: int | None):
    """The run inside its locked folder: restore or start, then train."""
    state = load_checkpoint(out / CHECKPOINT, cfg["task"]) if resume else None
    changes = [] if state is None else check_resume_config(state["config"], cfg)
    device = select_device(cfg["device"])
    dtype = resolve_dtype(cfg["dtype"], device)
    if cfg["mixed_precision"] and dtype != torch.float32:
        raise AtomsparkError(
            f"config key 'mixed_precision': needs dtype float32 (autocast leaves {dtype} "
            'untouched); set dtype = "float32" or turn mixed_precision off'
        )
    with pinned_numerics(device, dtype) as numerics:
        run = _start_run(cfg, out, state, device, dtype, numerics)
        _announce(run, state, changes, progress)
        return _train(run, progress, max_steps)


@dataclass
class _Run:
    """A training run's state from step to step: what a checkpoint stores, plus the data, the
    device and the pinned numerics it runs under."""

    cfg: dict
    out: Path
    device: torch.device
    dtype: torch.dtype
    numerics: dict
    data: tuple  # x_train, y_train, x_val, y_val, extra (build_data)
    module: torch.nn.Module
    trainer: Trainer
    n_batches: int
    total: int
    opt: torch.optim.Optimizer | None = None
    sched: torch.optim.lr_scheduler.LRScheduler | None = None
    slow: SlowState = field(default_factory=SlowState)
    ticks: int = 0  # scheduler steps over the run (epochs for "cosine-epoch")
    segments: list = field(default_factory=list)  # the cosine schedule, stretched on resume
    rng: np.random.Generator | None = None
    step: int = 0
    epoch: int = 0
    pos: int = 0
    order: np.ndarray | None = None
    saved_at: int | None = None

    @property
    def task(self) -> str:
        return self.cfg["task"]


def _start_run(cfg: dict, out: Path, state: dict | None, device, dtype, numerics) -> _Run:
    """Data, model, optimiser and random streams, fresh or restored from a checkpoint."""
    trainer = family_of_config(cfg).torch_trainer()
    data = build_data(cfg)
    x_tr = data[0]
    torch.manual_seed(cfg["seed"])
    module = trainer.build(cfg, x_tr.shape[-1], data[4], device, dtype)
    if state is not None:
        trainer.before_load(module, state["model"])
        try:
            module.load_state_dict(state["model"])
        except (RuntimeError, KeyError) as exc:
            raise AtomsparkError(
                f"checkpoint {out / CHECKPOINT}: does not fit this config's model ({exc})"
            ) from exc
    want = trainer.expects_dim(module)
    if want is not None and x_tr.shape[-1] != want:
        raise AtomsparkError(
            f"data: inputs have dimension {x_tr.shape[-1]}, the model expects {want}"
        )
    n_batches = -(-len(x_tr) // cfg["batch_size"])
    total = cfg["epochs"] * n_batches
    run = _Run(
        cfg, out, device, dtype, numerics, data, module, trainer, n_batches, total, ticks=total
    )
    run.segments = [[0, 1.0, total]]
    if state is not None and state.get("schedule"):
        run.segments = [list(seg) for seg in state["schedule"]]
    if trainer.prepare is not None:
        trainer.prepare(run, fresh_schedule=state is None or not state.get("schedule"))
    run.rng = np.random.default_rng(cfg["seed"])
    if state is not None:
        _restore(run, state)
    run.saved_at = None if state is None else run.step
    return run


def _restore(run: _Run, state: dict) -> None:
    """Optimiser, schedule, plasticity state, random streams and position from a checkpoint."""
    if run.opt is not None:
        if "lr_lambdas" not in (state.get("scheduler") or {}):
            raise AtomsparkError(
                f"checkpoint {run.out / CHECKPOINT}: written by an older atomspark (its learning-"
                "rate schedule has another format); train again with --overwrite"
            )
        run.opt.load_state_dict(state["optimizer"])
        run.sched.load_state_dict(state["scheduler"])
        run.slow.baseline = DeviceRewardBaseline(run.device, **state["baseline"])
        run.slow.history = [torch.as_tensor(a).to(run.device) for a in state["history"]]
    run.rng.bit_generator.state = state["numpy_rng"]
    torch.set_rng_state(state["torch_rng"])
    if run.device.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], run.device)
    run.step, run.epoch, run.pos = state["step"], state["epoch"], state["pos"]
    run.order = None if state["order"] is None else np.asarray(state["order"])
    _stretch_schedule(run, state)


def _stretch_schedule(run: _Run, state: dict) -> None:
    """More epochs than before stretch the cosine schedule over them (refused once it ended)."""
    if run.sched is None or run.segments[-1][2] >= run.ticks:
        return
    now = run.sched.last_epoch
    factor = cosine_factor(run.segments)
    if run.cfg["optimizer"]["schedule"] != "constant" and factor(now) <= 0.0:
        cfg = run.cfg
        raise AtomsparkError(
            f"epochs {state['config']['epochs']} -> {cfg['epochs']}: the run's cosine "
            "schedule has ended (learning rate 0), so more epochs would not train; "
            f"start a new run with epochs = {cfg['epochs']} (another --out, or --overwrite)"
        )
    run.segments.append([now, factor(now), run.ticks])


def _checkpoint(run: _Run) -> None:
    """Write the run's state to checkpoint.pt (atomically, with its digest)."""
    save_checkpoint(run.out / CHECKPOINT, run_state(run))
    run.saved_at = run.step


def _announce(run: _Run, state: dict | None, changes: list[str], progress: bool) -> None:
    cfg = run.cfg
    what = family_of_config(cfg).describe(cfg)
    dtype = run.numerics.get("dtype", run.dtype)
    _say(
        f"[train] {what} on {run.device} ({dtype}): {cfg['epochs']} epochs x {run.n_batches} "
        f"steps = {run.total} steps, batch {cfg['batch_size']}, {len(run.data[0])} train / "
        f"{len(run.data[2])} validation samples, output {run.out}",
        progress,
    )
    if state is not None:
        _say(
            f"[train] resuming at step {run.step} (epoch {run.epoch})"
            + (f"; accepted changes: {', '.join(changes)}" if changes else ""),
            progress,
        )


def _train_step(run: _Run, xb, yb) -> dict:
    """One optimiser (or Atomic-Hebb) step on a batch; a non-finite loss stops the run."""
    try:
        return run.trainer.step(run, xb, yb)
    except LossNotFinite as exc:
        advice = run.trainer.advice(run.cfg)
        raise AtomsparkError(
            f"training diverged at step {run.step + 1} (loss {exc.value}); {advice}"
        ) from None


def _evaluate(run: _Run) -> dict:
    _, _, x_va, y_va, extra = run.data
    return run.trainer.evaluate(run.module, run.cfg, x_va, y_va, extra, run.device, run.dtype)


def _end_epoch(run: _Run) -> dict:
    """Close an epoch: the per-epoch schedule, the family's epoch rules, then validation."""
    run.epoch += 1
    run.order = None
    if run.sched is not None and run.cfg["optimizer"]["schedule"] == "cosine-epoch":
        run.sched.step()
    run.trainer.end_epoch(run)
    return _evaluate(run)


@dataclass
class _Loop:
    """What the loop keeps beside the run: the training set on the device, the log, the
    progress bar, the Ctrl-C flag, the step limit and the last metrics."""

    x: torch.Tensor
    y: torch.Tensor | None
    log: object
    bar: object
    stop: StopOnSigint
    max_steps: int | None
    started: float
    last: dict = field(default_factory=dict)


def _run_batches(run: _Run, loop: _Loop) -> bool:
    """The rest of the current epoch's steps; False when max_steps stopped the run."""
    batch, cfg = run.cfg["batch_size"], run.cfg
    order_t = torch.from_numpy(run.order).to(run.device)  # one upload per epoch
    while run.pos < run.n_batches:
        if loop.max_steps is not None and run.step >= loop.max_steps:
            loop.log.flush()
            _checkpoint(run)
            return False
        idx = order_t[run.pos * batch : (run.pos + 1) * batch]
        loop.last = _train_step(run, loop.x[idx], None if loop.y is None else loop.y[idx])
        run.step += 1
        run.pos += 1
        row = {"type": "step", "step": run.step, "epoch": run.epoch, **loop.last}
        loop.log.write(json.dumps(row) + "\n")
        loop.bar.set_postfix(
            loss=f"{loop.last['loss']:.4g}", score=f"{loop.last['accuracy']:.3f}", refresh=False
        )
        loop.bar.update(1)
        if cfg["checkpoint_every"] and run.step % cfg["checkpoint_every"] == 0:
            loop.log.flush()
            _checkpoint(run)
        if loop.stop.requested:
            loop.log.flush()
            _checkpoint(run)
            raise TrainingInterrupted(run.step, run.saved_at)
    return True


def _close_epoch(run: _Run, loop: _Loop, epoch_start: float, progress: bool) -> dict:
    """End the epoch, log its validation row and say it."""
    ev = _end_epoch(run)
    # epoch_s: this epoch's training and validation wall time (load: 1-min load avg)
    timing = {"epoch_s": time.perf_counter() - epoch_start, "load": os.getloadavg()[0]}
    row = {"type": "eval", "step": run.step, "epoch": run.epoch, **ev, **timing}
    loop.log.write(json.dumps(row) + "\n")
    loop.log.flush()
    activity = f", active fraction {ev['activity']:.3f}" if "activity" in ev else ""
    metric = family_of_config(run.cfg).metric
    _say(
        f"[train] epoch {run.epoch}/{run.cfg['epochs']} (step {run.step}/{run.total}, "
        f"{time.perf_counter() - loop.started:.1f} s): validation loss {ev['loss']:.4g}, "
        f"{metric} {ev['accuracy']:.3f}{activity}",
        progress,
    )
    return ev


def _train(run: _Run, progress: bool, max_steps: int | None) -> TrainResult:
    """train()'s loop, with the run folder prepared, the numerics pinned and the run started."""
    out = run.out
    x_tr, y_tr = run.data[0], run.data[1]
    x_dev = torch.from_numpy(x_tr).to(device=run.device, dtype=run.dtype)  # uploaded once
    y_dev = None if y_tr is None else torch.from_numpy(y_tr).to(run.device)
    metrics_path = out / "metrics.jsonl"
    if run.saved_at is not None:  # resumed
        truncate_metrics(metrics_path, run.step, run.epoch)
    ev: dict | None = None
    bar = progress_bar(run.total, "[train]", "step", enabled=progress, initial=run.step)
    try:
        with StopOnSigint() as stop, bar, MetricsAppender(metrics_path) as log:
            loop = _Loop(x_dev, y_dev, log, bar, stop, max_steps, time.perf_counter())
            while run.epoch < run.cfg["epochs"]:
                epoch_start = time.perf_counter()
                if run.order is None:
                    run.order = run.rng.permutation(len(x_tr))
                    run.pos = 0
                if not _run_batches(run, loop):
                    return TrainResult(out, run.step, loop.last, out / "model.npz", run.task)
                ev = _close_epoch(run, loop, epoch_start, progress)
    except KeyboardInterrupt:
        raise TrainingInterrupted(run.step, run.saved_at) from None
    return _finish(run, ev, metrics_path)


def _finish(run: _Run, ev: dict | None, metrics_path: Path) -> TrainResult:
    """The final checkpoint, metrics, plot and model file."""
    out = run.out
    _checkpoint(run)
    if ev is None:  # resumed a run that had already finished: evaluate the model as it is
        ev = _evaluate(run)
    ev = {**ev, **best_validation(metrics_path), "numerics": run.numerics}
    plot_metrics(metrics_path, out / "metrics.png", run.task)
    run.trainer.export(run.module, out / "model.npz", run.cfg)
    atomic_write_text(out / "final_metrics.json", json.dumps(ev, indent=2))
    finish_run(out)  # after the last file: the run is complete
    return TrainResult(out, run.step, ev, out / "model.npz", run.task)
