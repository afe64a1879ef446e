"""Training checkpoints: the run's state gathered on the CPU, written atomically with a digest
(checkpoint_file.py), and read back only into a run of the same task."""

from __future__ import annotations

from pathlib import Path

import torch
from atomspark.networks.torch_path.checkpoint_file import read_checkpoint, write_checkpoint
from atomspark.sim.core import AtomsparkError

CHECKPOINT = "checkpoint.pt"
CHECKPOINT_FORMAT = 1


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


def run_state(run) -> dict:
    """What a checkpoint stores of a run (training._Run): config, position, model, optimiser,
    schedule, slow-scale state, random streams and the pinned numerics."""
    device, opt, sched = run.device, run.opt, run.sched
    return {
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
        "baseline": None if opt is None else run.slow.baseline.state_dict(),
        "history": list(run.slow.history),
    }
