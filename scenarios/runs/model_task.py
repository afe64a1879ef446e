"""Data from a model's own task: `train` stores its config in the model file, so profile and
compare evaluate a model on the data it was trained for (its validation split), not on a
generator's defaults (a different activity, so a different energy)."""

from __future__ import annotations

import os

import numpy as np
from atomspark.networks.model_io import read_task
from atomspark.sim.core import AtomsparkError, require_int


def task_samples(
    model_path: str | os.PathLike, n: int | None = None
) -> tuple[np.ndarray, np.ndarray | None, str] | None:
    """(inputs, labels or None, description) of the first n validation samples of the model's
    stored task (all of them when n is None), or None when the file stores no task."""
    task = read_task(model_path)
    if task is None:
        return None
    from atomspark.networks.task_data import build_data

    _, _, x_val, y_val, _ = build_data(task)
    if n is not None:
        n = require_int("samples", n, minimum=1)
        if n > len(x_val):
            raise AtomsparkError(
                f"builtin:{n}: the model's task ({task.get('task')}) has {len(x_val)} "
                f"validation samples; ask for at most that many"
            )
        x_val, y_val = x_val[:n], None if y_val is None else y_val[:n]
    what = f"the model's own task ({task.get('task')}, validation split, seed {task.get('seed')})"
    return x_val, y_val, what
