"""Two-time-scale training driven by a TOML config, with atomic checkpoints and exact resume.

RSGN ("rsgn-sequence"): fast scale = AdamW on cross-entropy (grad clip, cosine schedule),
positions projected into the ball in the forward pass (model.position_projection); slow scale, after each step = the reference's
reward-modulated Hebbian affinity update and homeostatic thresholds (plasticity.py's rules, done
on the device by slow_torch.py), and in sparse mode prune/sprout every `structural_every` epochs.
A step makes one host sync (its metrics, copied to the host together); the training set is
uploaded once and each epoch's order once.
VN ("vn-dictionary"): settle each batch on the device, then batched Atomic-Hebb (the slow rule;
no gradient optimiser is used for this task). Its "accuracy" metric is dictionary recovery:
the fraction of planted atoms matched by a learned atom with |cosine| > 0.95.
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
import math
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from atomspark.networks.rsgn.model import RSGNConfig, init_params, save_model
from atomspark.networks.rsgn.plasticity import (
    prune_and_sprout,
)
from atomspark.networks.task_data import build_data
from atomspark.networks.torch_path.baselines import build_baseline
from atomspark.networks.torch_path.checkpoint_file import read_checkpoint, write_checkpoint
from atomspark.networks.torch_path.config import (
    RESUME_MAY_CHANGE,
    check_memory,
    load_config,
    model_config,
    plasticity_config,
    validate_config,
)
from atomspark.networks.torch_path.convert import (
    rsgn_from_torch,
    rsgn_to_torch,
    vn_from_torch,
    vn_to_torch,
)
from atomspark.networks.torch_path.device import (
    autocast_context,
    pinned_numerics,
    resolve_dtype,
    select_device,
)
from atomspark.networks.torch_path.slow_torch import (
    DeviceRewardBaseline,
    hebbian_affinity_,
    homeostatic_thresholds_,
)
from atomspark.networks.torch_path.vn_torch import atomic_hebb, joint_energy, settle
from atomspark.networks.vn.model import VNModel
from atomspark.sim.core import AtomsparkError, atomic_write_text, atomic_write_with
from atomspark.sim.progress import progress as progress_bar
from atomspark.sim.run_folder import prepare_run_folder
from tqdm.auto import tqdm

CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = 1
# What the "accuracy" metric measures, per task (VN: the share of planted atoms recovered).
METRIC_NAMES = {"rsgn-sequence": "accuracy", "vn-dictionary": "dictionary recovery"}


@dataclass
class TrainResult:
    """Where the outputs went and the last metrics."""

    out_dir: Path
    steps: int
    final_metrics: dict
    model_path: Path
    task: str = "rsgn-sequence"


# ----- data and model construction -------------------------------------------------------------
def _rsgn_config(cfg: dict, d_in: int, n_classes: int) -> RSGNConfig:
    m = cfg["model"]
    if m["d_in"] is not None and m["d_in"] != d_in:
        raise AtomsparkError(f"data: tokens have dimension {d_in} but model.d_in is {m['d_in']}")
    return model_config(cfg, d_in, n_classes)


def build_model(cfg: dict, input_dim: int, extra: dict, device, dtype):
    """The torch module for the task, initialised from the NumPy reference's initialiser."""
    if cfg["task"] == "rsgn-sequence" and cfg["model"]["kind"] != "rsgn":
        m, d = cfg["model"], cfg["data"]
        net = build_baseline(
            m["kind"], input_dim, extra["n_classes"], d["length"], m["d_hidden"], m["layers"]
        )
        return net.to(device=device, dtype=dtype)
    if cfg["task"] == "rsgn-sequence":
        rc = _rsgn_config(cfg, input_dim, extra["n_classes"])
        module = rsgn_to_torch(init_params(rc, seed=cfg["seed"]), rc).to(device=device, dtype=dtype)
        # the released rule (project in the forward pass) or atomspark's earlier one (in place)
        module.project_in_forward = cfg["model"]["position_projection"] == "forward"
        return module
    m = cfg["model"]
    if m["input_dim"] is not None and m["input_dim"] != input_dim:
        raise AtomsparkError(
            f"data: signals have dimension {input_dim} but model.input_dim is {m['input_dim']}"
        )
    sizes = [tuple(s) for s in m["layer_sizes"]]
    vn = VNModel.random(input_dim, sizes, lam=m["lam"], seed=cfg["seed"], topk=m["topk"])
    return vn_to_torch(vn).to(device=device, dtype=dtype)


def _check_data_matches(module, task: str, x: np.ndarray) -> None:
    if task == "rsgn-sequence" and not hasattr(module, "config"):
        return  # a baseline: built from the data's own shape
    want = module.config.d_in if task == "rsgn-sequence" else module.input_dim
    if x.shape[-1] != want:
        raise AtomsparkError(f"data: inputs have dimension {x.shape[-1]}, the model expects {want}")


# ----- checkpoints -----------------------------------------------------------------------------
def save_checkpoint(path: Path, state: dict) -> None:
    """Every tensor on the CPU, written atomically with a digest of the contents."""
    write_checkpoint(path, _to_cpu(state))


def _to_cpu(obj):
    """Every tensor in nested dicts/lists/tuples copied to the CPU: a checkpoint that loads on
    any machine, and one well-defined place where device tensors leave the device."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def load_checkpoint(path: Path, task: str) -> dict:
    """Read a checkpoint (its digest checked) and check it belongs to this task/model kind."""
    state = read_checkpoint(path)
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise AtomsparkError(f"checkpoint {path}: not an atomspark training checkpoint")
    if state.get("task") != task:
        raise AtomsparkError(
            f"checkpoint {path}: holds a {state.get('task')!r} model, this config trains {task!r}"
        )
    return state


def _resize_sparse_edges(module, sd: dict) -> None:
    """Sparse RSGN: the graph may have been pruned/sprouted; size the edge tensors like `sd`, on
    the module's device (the checkpoint was read to the CPU)."""
    if getattr(module, "config", None) is None or module.config.mode != "sparse":
        return
    device = module.positions.device
    module.edge_data = torch.nn.Parameter(torch.empty_like(sd["edge_data"], device=device))
    module.edge_rows = torch.empty_like(sd["edge_rows"], device=device)
    module.edge_cols = torch.empty_like(sd["edge_cols"], device=device)


# ----- progress and plots ----------------------------------------------------------------------
def _say(text: str, show: bool) -> None:
    """A line of progress on stdout, printed above the progress bar."""
    if show:
        tqdm.write(text)


def best_validation(metrics_path: Path) -> dict:
    """The epoch with the highest validation accuracy in metrics.jsonl (the figure the RSGN paper
    reports): best_accuracy, best_epoch and that epoch's activity; {} if nothing was evaluated.
    Read from the log so that a resumed run counts the epochs before the interruption."""
    rows = [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]
    evals = [r for r in rows if r["type"] == "eval"]
    if not evals:
        return {}
    best = max(evals, key=lambda r: (r["accuracy"], -r["epoch"]))
    return {
        "best_accuracy": best["accuracy"],
        "best_epoch": best["epoch"],
        "best_activity": best.get("activity"),
    }


def plot_metrics(metrics_path: Path, png_path: Path, task: str = "rsgn-sequence") -> None:
    """Loss, task metric and activity curves from metrics.jsonl (matplotlib, Agg backend), saved
    atomically. The loss axis is logarithmic when the loss is positive and spans a decade."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]
    steps = [r for r in rows if r["type"] == "step"]
    evals = [r for r in rows if r["type"] == "eval"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    titles = {
        "loss": "loss" if task == "rsgn-sequence" else "loss (settled energy per sample)",
        "accuracy": METRIC_NAMES.get(task, "accuracy"),
        "activity": "active fraction",
    }
    for ax, (key, title) in zip(axes, titles.items()):
        if steps and key not in steps[0]:  # baselines have no activity
            ax.text(0.5, 0.5, f"{title}:\nnot defined for this model", ha="center", va="center")
            ax.set_axis_off()
            continue
        ax.plot([r["step"] for r in steps], [r[key] for r in steps], label="train (batch)")
        if evals:
            ax.plot([r["step"] for r in evals], [r[key] for r in evals], "o-", label="validation")
        ax.set_xlabel("optimiser step")
        ax.set_ylabel(title)
        ax.set_title(title)
        ax.legend()
    values = [r["loss"] for r in steps + evals]
    if values and min(values) > 0 and max(values) > 10 * min(values):
        axes[0].set_yscale("log")
    for ax in axes[1:]:
        ax.set_ylim(-0.03, 1.03)
    fig.tight_layout()
    atomic_write_with(png_path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)


# ----- one step per task -----------------------------------------------------------------------
def _rsgn_step(module, opt, sched, xb, yb, cfg, slow: dict) -> dict:
    """Fast AdamW step, projection, then the slow Hebbian/homeostatic updates, all on the
    device; the step's metrics come back in one device-to-host copy (its only host sync)."""
    module.train()
    with autocast_context(xb.device, cfg["mixed_precision"]):
        scores, alpha = module(xb)
    loss = torch.nn.functional.cross_entropy(scores.to(xb.dtype), yb)
    lr = opt.param_groups[0]["lr"]  # the rate this step uses (a Python float: no sync)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(module.parameters(), cfg["optimizer"]["grad_clip"])
    opt.step()
    if cfg["optimizer"]["schedule"] != "cosine-epoch":
        sched.step()
    m = cfg["model"]
    module.project_(
        positions=m["position_projection"] == "in-place",
        thresholds=m["threshold_clamp"] == "every-step",
    )
    alpha = alpha.detach()
    p = cfg["plasticity"]
    if p["enabled"]:
        pcfg = slow["pcfg"]
        reward = slow["baseline"].reward(loss, pcfg.baseline_momentum, pcfg.hebbian_reward)
        hebbian_affinity_(module, alpha, reward, slow["pcfg"])
        homeostatic_thresholds_(
            module, alpha, p["lr_threshold"], p["homeostasis_scope"], p["homeostasis_signal"]
        )
        slow["history"].append(alpha.to(torch.float64))
    metrics = _fetch_metrics(
        loss,
        (scores.argmax(1) == yb).double().mean(),
        (alpha > module.config.cutoff).double().mean(),
    )
    return {**metrics, "lr": lr}


class _LossNotFinite(AtomsparkError):
    """A step's loss came back NaN or Inf (the loop reports it as divergence, with the step)."""

    def __init__(self, value: float):
        self.value = value
        super().__init__(f"loss: became {value} during training")


def _fetch_metrics(loss, accuracy, activity=None) -> dict:
    """One copy of a step's metrics (device scalars) to the host, the step's only host sync;
    a non-finite loss stops the run. Baselines have no activity."""
    values = [loss.detach(), accuracy] + ([] if activity is None else [activity])
    host = torch.stack([v.double() for v in values]).cpu().tolist()
    if not np.isfinite(host[0]):
        raise _LossNotFinite(host[0])
    return dict(zip(("loss", "accuracy", "activity"), host))


def _baseline_step(module, opt, sched, xb, yb, cfg) -> dict:
    """One AdamW step of a baseline (no slow time scale, no activity)."""
    module.train()
    with autocast_context(xb.device, cfg["mixed_precision"]):
        scores = module(xb)
    loss = torch.nn.functional.cross_entropy(scores.to(xb.dtype), yb)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(module.parameters(), cfg["optimizer"]["grad_clip"])
    opt.step()
    if cfg["optimizer"]["schedule"] != "cosine-epoch":
        sched.step()
    return _fetch_metrics(loss, (scores.argmax(1) == yb).double().mean())


def _structural_update(module, opt, slow: dict) -> None:
    """Sparse RSGN, at an epoch boundary: prune/sprout on the epoch's activity; the affinity
    Parameter is replaced and its optimiser state reset (its size changed)."""
    if module.config.mode != "sparse" or len(slow["history"]) == 0:
        return
    params, rc = rsgn_from_torch(module)
    history = torch.cat(slow["history"]).to("cpu", torch.float64).numpy()
    slow["history"].clear()
    if history.shape[0] < 2:
        return
    params, _ = prune_and_sprout(params, rc, history, slow["pcfg"])
    fresh = rsgn_to_torch(params, rc).to(
        device=module.positions.device, dtype=module.positions.dtype
    )
    old = module.edge_data
    module.edge_data = fresh.edge_data
    module.edge_rows, module.edge_cols = fresh.edge_rows, fresh.edge_cols
    for group in opt.param_groups:
        group["params"] = [module.edge_data if q is old else q for q in group["params"]]
    opt.state.pop(old, None)


def _vn_step(module, xb, cfg, extra) -> dict:
    """Settle the batch, Atomic-Hebb; metrics come back in one device-to-host copy."""
    m, h = cfg["model"], cfg["hebb"]
    with torch.no_grad():
        res = settle(
            module, xb, method=m["method"], tol=m["tol"], max_iter=m["max_iter"], sweeps=m["sweeps"]
        )
        energy = joint_energy(module, res.codes, xb)
        atomic_hebb(module, xb, res.codes, h["rho_s"], h["rho_u"], normalize=h["normalize"])
        active = sum((g != 0).double().sum() for g in res.codes) / sum(g.numel() for g in res.codes)
        return _fetch_metrics(energy.mean(), _recovery(module, extra), active)


def _recovery(module, extra) -> torch.Tensor:
    """Fraction of the true atoms matched by a learned S_1 column with |cosine| > 0.95 (a device
    scalar; the true dictionary is uploaded once)."""
    S = module.S[0].detach()
    if extra.get("dictionary_t") is None or extra["dictionary_t"].device != S.device:
        extra["dictionary_t"] = torch.from_numpy(extra["dictionary"]).to(S)
    D = extra["dictionary_t"].to(S.dtype)
    cos = (D / D.norm(dim=0)).T @ (S / S.norm(dim=0).clamp_min(1e-12))
    return (cos.abs().amax(1) > 0.95).double().mean()


@torch.no_grad()
def _evaluate(module, cfg, x, y, extra, device, dtype) -> dict:
    xt = torch.from_numpy(x).to(device=device, dtype=dtype)
    if cfg["task"] == "rsgn-sequence":
        module.eval()
        yt = torch.from_numpy(y).to(device)
        if not hasattr(module, "config"):  # a baseline
            scores = module(xt)
            steps = {}
        else:
            scores, alpha, per_step = module(xt, trace=True)
            by_step = per_step.double().mean(1)
            steps = {
                "activity": float((alpha > module.config.cutoff).double().mean()),
                "activity_steps": float(by_step.mean()),  # ignition and every step
                "activity_by_step": [float(a) for a in by_step],
            }
        return {
            "loss": float(torch.nn.functional.cross_entropy(scores.to(dtype), yt)),
            "accuracy": float((scores.argmax(1) == yt).double().mean()),
            **steps,
        }
    m = cfg["model"]
    res = settle(
        module, xt, method=m["method"], tol=m["tol"], max_iter=m["max_iter"], sweeps=m["sweeps"]
    )
    active = float(
        sum((g != 0).double().sum() for g in res.codes) / sum(g.numel() for g in res.codes)
    )
    return {
        "loss": float(joint_energy(module, res.codes, xt).mean()),
        "accuracy": float(_recovery(module, extra)),
        "activity": active,
    }


def _export(module, task: str, path: Path, cfg: dict | None = None) -> None:
    """Write the final model as the NumPy reference's model file (loadable by the simulator),
    with the training config stored in it (profile/compare draw data from that task)."""
    if task == "rsgn-sequence" and not hasattr(module, "config"):  # a baseline: its state dict
        arrays = {
            k: v.detach().to("cpu", torch.float64).numpy() for k, v in module.state_dict().items()
        }
        np.savez(path, **arrays)
    elif task == "rsgn-sequence":
        params, rc = rsgn_from_torch(module.to(torch.float64))
        save_model(path, params, rc, task=cfg)
    else:
        vn_from_torch(module.to(torch.float64)).save(path, task=cfg)


# ----- run folder, resume rules, interrupts ----------------------------------------------------
TRAIN_OUTPUTS = ("metrics.jsonl", "metrics.png", CHECKPOINT, "model.npz", "final_metrics.json")


class TrainingInterrupted(AtomsparkError):
    """Ctrl-C during training: where it stopped and which checkpoint a --resume starts from."""

    def __init__(self, step: int, checkpoint_step: int | None):
        self.step, self.checkpoint_step = step, checkpoint_step
        saved = (
            "no checkpoint was written yet"
            if checkpoint_step is None
            else f"last checkpoint at step {checkpoint_step}"
        )
        super().__init__(f"interrupted at step {step}; {saved}")


def _flatten(cfg: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in cfg.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def check_resume_config(stored: dict, given: dict) -> list[str]:
    """Refuse a resume whose config changes the run; return the accepted changes (as text).

    Allowed: RESUME_MAY_CHANGE, and more epochs than the checkpoint's run was planned with."""
    old, new = _flatten(validate_config(stored)), _flatten(given)
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    refused = [k for k in changed if k not in RESUME_MAY_CHANGE and k != "epochs"]
    if "epochs" in changed and new["epochs"] < old["epochs"]:
        refused.append("epochs")
    if refused:
        shown = "; ".join(f"{k} {old.get(k)!r} -> {new.get(k)!r}" for k in refused[:4])
        more = f" (and {len(refused) - 4} more)" if len(refused) > 4 else ""
        raise AtomsparkError(
            f"--resume: the config differs from the checkpoint's run: {shown}{more}; resume with "
            "the run's own config (epochs may only grow), or start a new run (--overwrite or "
            "another --out)"
        )
    return [f"{k} {old[k]!r} -> {new[k]!r}" for k in changed]


def _truncate_metrics(path: Path, step: int, epoch: int) -> None:
    """Drop the rows written after the checkpoint a resume starts from (they are recomputed)."""
    if not path.is_file():
        return
    keep = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["step"] <= step and (row["type"] != "eval" or row["epoch"] <= epoch):
            keep.append(line)
    atomic_write_text(path, "".join(f"{line}\n" for line in keep))


class _StopOnSigint:
    """The first Ctrl-C asks the loop to stop after the current step (and checkpoint); a second
    one interrupts at once. Only installed in the main thread."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _cosine_factor(segments: list) -> callable:
    """Learning-rate factor of the cosine schedule as a list of segments (start step, factor at
    start, end step): within a segment the factor falls along a half cosine to 0 at its end."""

    def factor(t: int) -> float:
        start, f0, end = segments[-1]
        for seg in segments:
            if seg[0] <= t:
                start, f0, end = seg
        if end <= start:
            return 0.0
        return f0 * 0.5 * (1.0 + math.cos(math.pi * min(t - start, end - start) / (end - start)))

    return factor


def _diverged(step: int, cfg: dict, detail: str) -> AtomsparkError:
    if cfg["task"] == "rsgn-sequence":
        knob = f"lower optimizer.lr (now {cfg['optimizer']['lr']:g})"
    else:
        knob = f"lower hebb.rho_s (now {cfg['hebb']['rho_s']:g}) or hebb.rho_u"
    return AtomsparkError(f"training diverged at step {step} ({detail}); {knob}")


# ----- the loop --------------------------------------------------------------------------------
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
    max_steps stops early (after writing a checkpoint) once that many steps are done in total:
    used to interrupt a run on purpose. Ctrl-C stops after the current step with a checkpoint
    and raises TrainingInterrupted. The run's device, dtype, TF32 and determinism settings are
    pinned for its duration and recorded in the checkpoint and final_metrics.json ("numerics").
    """
    cfg = validate_config(config) if isinstance(config, dict) else load_config(config)
    if not isinstance(out_dir, (str, os.PathLike)):
        raise AtomsparkError(f"out_dir: expected a folder path, got {type(out_dir).__name__}")
    if resume and overwrite:
        raise AtomsparkError("--resume and --overwrite: choose one")
    check_memory(cfg)
    mode = "resume" if resume else "overwrite" if overwrite else "new"
    out = prepare_run_folder(
        out_dir, "train", mode, TRAIN_OUTPUTS, legacy_files=(CHECKPOINT,), resumable=True
    )
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
    n_batches: int
    total: int
    opt: torch.optim.Optimizer | None = None
    sched: torch.optim.lr_scheduler.LRScheduler | None = None
    slow: dict = field(default_factory=lambda: {"history": []})
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

    @property
    def is_rsgn(self) -> bool:
        return self.task == "rsgn-sequence" and self.cfg["model"]["kind"] == "rsgn"


def _start_run(cfg: dict, out: Path, state: dict | None, device, dtype, numerics) -> _Run:
    """Data, model, optimiser and random streams, fresh or restored from a checkpoint."""
    data = build_data(cfg)
    x_tr = data[0]
    torch.manual_seed(cfg["seed"])
    module = build_model(cfg, x_tr.shape[-1], data[4], device, dtype)
    if state is not None:
        _resize_sparse_edges(module, state["model"])
        try:
            module.load_state_dict(state["model"])
        except (RuntimeError, KeyError) as exc:
            raise AtomsparkError(
                f"checkpoint {out / CHECKPOINT}: does not fit this config's model ({exc})"
            ) from exc
    _check_data_matches(module, cfg["task"], x_tr)
    n_batches = -(-len(x_tr) // cfg["batch_size"])
    total = cfg["epochs"] * n_batches
    run = _Run(cfg, out, device, dtype, numerics, data, module, n_batches, total, ticks=total)
    run.segments = [[0, 1.0, total]]
    if state is not None and state.get("schedule"):
        run.segments = [list(seg) for seg in state["schedule"]]
    if run.task == "rsgn-sequence":
        _add_optimiser(run, fresh_schedule=state is None or not state.get("schedule"))
    run.rng = np.random.default_rng(cfg["seed"])
    if state is not None:
        _restore(run, state)
    run.saved_at = None if state is None else run.step
    return run


def _add_optimiser(run: _Run, fresh_schedule: bool) -> None:
    """AdamW over the trained parameters, its learning-rate schedule, and the plasticity state."""
    cfg, o = run.cfg, run.cfg["optimizer"]
    if not cfg["plasticity"]["learn_thresholds"]:  # the homeostat alone sets them
        run.module.thresholds.requires_grad_(False)
    trained = [p for p in run.module.parameters() if p.requires_grad]
    run.opt = torch.optim.AdamW(trained, lr=o["lr"], weight_decay=o["weight_decay"])
    run.ticks = cfg["epochs"] if o["schedule"] == "cosine-epoch" else run.total
    if fresh_schedule:
        run.segments[:] = [[0, 1.0, run.ticks]]
    factor = (lambda t: 1.0) if o["schedule"] == "constant" else _cosine_factor(run.segments)
    run.sched = torch.optim.lr_scheduler.LambdaLR(run.opt, factor)
    run.slow["pcfg"] = plasticity_config(cfg)
    run.slow["baseline"] = DeviceRewardBaseline(run.device)


def _restore(run: _Run, state: dict) -> None:
    """Optimiser, schedule, plasticity state, random streams and position from a checkpoint;
    more epochs than before stretch the cosine schedule over them."""
    if run.opt is not None:
        if "lr_lambdas" not in (state.get("scheduler") or {}):
            raise AtomsparkError(
                f"checkpoint {run.out / CHECKPOINT}: written by an older atomspark (its learning-"
                "rate schedule has another format); train again with --overwrite"
            )
        run.opt.load_state_dict(state["optimizer"])
        run.sched.load_state_dict(state["scheduler"])
        run.slow["baseline"] = DeviceRewardBaseline(run.device, **state["baseline"])
        run.slow["history"] = [torch.as_tensor(a).to(run.device) for a in state["history"]]
    run.rng.bit_generator.state = state["numpy_rng"]
    torch.set_rng_state(state["torch_rng"])
    if run.device.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], run.device)
    run.step, run.epoch, run.pos = state["step"], state["epoch"], state["pos"]
    run.order = None if state["order"] is None else np.asarray(state["order"])
    if run.sched is not None and run.segments[-1][2] < run.ticks:  # epochs extended
        now = run.sched.last_epoch
        factor = _cosine_factor(run.segments)
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
    device, opt, sched = run.device, run.opt, run.sched
    save_checkpoint(
        run.out / CHECKPOINT,
        {
            "format": CHECKPOINT_FORMAT,
            "task": run.task,
            "config": run.cfg,
            "step": run.step,
            "epoch": run.epoch,
            "pos": run.pos,
            "order": None if run.order is None else run.order.tolist(),
            "model": run.module.state_dict(),
            "numpy_rng": run.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
            "numerics": run.numerics,
            "optimizer": None if opt is None else opt.state_dict(),
            "scheduler": None if sched is None else sched.state_dict(),
            "schedule": run.segments,
            "baseline": None if opt is None else run.slow["baseline"].state_dict(),
            "history": list(run.slow["history"]),
        },
    )
    run.saved_at = run.step


def _announce(run: _Run, state: dict | None, changes: list[str], progress: bool) -> None:
    cfg, task = run.cfg, run.task
    what = task if task != "rsgn-sequence" else f"{task} ({cfg['model']['kind']} model)"
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
        if run.is_rsgn:
            return _rsgn_step(run.module, run.opt, run.sched, xb, yb, run.cfg, run.slow)
        if run.task == "rsgn-sequence":
            return _baseline_step(run.module, run.opt, run.sched, xb, yb, run.cfg)
        return _vn_step(run.module, xb, run.cfg, run.data[4])
    except _LossNotFinite as exc:
        raise _diverged(run.step + 1, run.cfg, f"loss {exc.value}") from None


def _end_epoch(run: _Run) -> dict:
    """Close an epoch: the per-epoch schedule, structural plasticity, then validation."""
    cfg = run.cfg
    run.epoch += 1
    run.order = None
    if run.sched is not None and cfg["optimizer"]["schedule"] == "cosine-epoch":
        run.sched.step()
    if run.is_rsgn and cfg["plasticity"]["enabled"]:
        if run.epoch % cfg["plasticity"]["structural_every"] == 0:
            _structural_update(run.module, run.opt, run.slow)
        elif run.module.config.mode == "published":
            run.slow["history"].clear()
    _, _, x_va, y_va, extra = run.data
    return _evaluate(run.module, cfg, x_va, y_va, extra, run.device, run.dtype)


def _train(run: _Run, progress: bool, max_steps: int | None) -> TrainResult:
    """train()'s loop, with the run folder prepared, the numerics pinned and the run started."""
    cfg, out, task = run.cfg, run.out, run.task
    x_tr, y_tr = run.data[0], run.data[1]
    x_dev = torch.from_numpy(x_tr).to(device=run.device, dtype=run.dtype)  # uploaded once
    y_dev = None if y_tr is None else torch.from_numpy(y_tr).to(run.device)
    metrics_path = out / "metrics.jsonl"
    if run.saved_at is not None:  # resumed
        _truncate_metrics(metrics_path, run.step, run.epoch)
    last: dict = {}
    ev: dict | None = None
    batch = cfg["batch_size"]
    started = time.perf_counter()
    bar = progress_bar(run.total, "[train]", "step", enabled=progress, initial=run.step)
    try:
        with _StopOnSigint() as stop, bar, open(metrics_path, "a", encoding="utf-8") as log:
            while run.epoch < cfg["epochs"]:
                epoch_start = time.perf_counter()
                if run.order is None:
                    run.order = run.rng.permutation(len(x_tr))
                    run.pos = 0
                order_t = torch.from_numpy(run.order).to(run.device)  # one upload per epoch
                while run.pos < run.n_batches:
                    if max_steps is not None and run.step >= max_steps:
                        log.flush()
                        _checkpoint(run)
                        return TrainResult(out, run.step, last, out / "model.npz", task)
                    idx = order_t[run.pos * batch : (run.pos + 1) * batch]
                    last = _train_step(run, x_dev[idx], None if y_dev is None else y_dev[idx])
                    run.step += 1
                    run.pos += 1
                    row = {"type": "step", "step": run.step, "epoch": run.epoch, **last}
                    log.write(json.dumps(row) + "\n")
                    bar.set_postfix(
                        loss=f"{last['loss']:.4g}", score=f"{last['accuracy']:.3f}", refresh=False
                    )
                    bar.update(1)
                    if cfg["checkpoint_every"] and run.step % cfg["checkpoint_every"] == 0:
                        log.flush()
                        _checkpoint(run)
                    if stop.requested:
                        log.flush()
                        _checkpoint(run)
                        raise TrainingInterrupted(run.step, run.saved_at)
                ev = _end_epoch(run)
                # epoch_s: this epoch's training and validation wall time (load: 1-min load avg)
                timing = {"epoch_s": time.perf_counter() - epoch_start, "load": os.getloadavg()[0]}
                row = {"type": "eval", "step": run.step, "epoch": run.epoch, **ev, **timing}
                log.write(json.dumps(row) + "\n")
                log.flush()
                activity = f", active fraction {ev['activity']:.3f}" if "activity" in ev else ""
                _say(
                    f"[train] epoch {run.epoch}/{cfg['epochs']} (step {run.step}/{run.total}, "
                    f"{time.perf_counter() - started:.1f} s): validation loss {ev['loss']:.4g}, "
                    f"{METRIC_NAMES[task]} {ev['accuracy']:.3f}{activity}",
                    progress,
                )
    except KeyboardInterrupt:
        raise TrainingInterrupted(run.step, run.saved_at) from None
    _checkpoint(run)
    if ev is None:  # resumed a run that had already finished: evaluate the model as it is
        _, _, x_va, y_va, extra = run.data
        ev = _evaluate(run.module, cfg, x_va, y_va, extra, run.device, run.dtype)
    ev = {**ev, **best_validation(metrics_path), "numerics": run.numerics}
    plot_metrics(metrics_path, out / "metrics.png", task)
    _export(run.module, task, out / "model.npz", cfg)
    atomic_write_text(out / "final_metrics.json", json.dumps(ev, indent=2))
    return TrainResult(out, run.step, ev, out / "model.npz", task)
