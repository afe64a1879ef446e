"""The data of a training task, in NumPy only: `train` builds its splits with it, and export,
profile and compare draw a trained model's validation split with it in environments without
torch (the Lava one)."""

from __future__ import annotations

from functools import partial

from atomspark.networks.datasets import (
    SequenceDataset,
    hierarchical_sequences,
    long_range_sequences,
    sparse_dictionary_data,
)
from atomspark.networks.notebook_data import (
    notebook_hierarchical,
    notebook_long_range,
    notebook_split,
)


def build_data(cfg: dict):
    """(train inputs, train targets, val inputs, val targets, extra) as NumPy arrays, drawn by
    the config's task's data builder (TASK_DATA)."""
    return TASK_DATA[cfg["task"]](cfg)


def _sequence_data(cfg: dict):
    """The sequence task: labelled token sequences, split 80/20 (or the notebook's split)."""
    d, seed = cfg["data"], cfg["seed"]
    # The RSGN notebook draws one data set and one split (seed 42) for all its run seeds.
    data_seed = seed if d["seed"] is None else d["seed"]
    split_seed = seed if d["split_seed"] is None else d["split_seed"]
    hierarchical = d["kind"] == "hierarchical"
    if d["stream"] == "notebook":
        gen = notebook_hierarchical if hierarchical else notebook_long_range
        split = partial(notebook_split, seed=split_seed)
    else:
        gen = hierarchical_sequences if hierarchical else long_range_sequences
        split = partial(SequenceDataset.split, seed=split_seed)
    ds = gen(
        n=d["n"],
        length=d["length"],
        dim=d["dim"],
        n_classes=d["n_classes"],
        noise=d["noise"],
        seed=data_seed,
    )
    train, val = split(ds, 1.0 - cfg["val_fraction"])
    return train.tokens, train.labels, val.tokens, val.labels, {"n_classes": ds.n_classes}


def _dictionary_data(cfg: dict):
    """The dictionary task: sparse combinations of planted atoms; the atoms in `extra`."""
    d, seed = cfg["data"], cfg["seed"]
    data = sparse_dictionary_data(
        n=d["n"],
        dim=d["dim"],
        n_atoms=d["n_atoms"],
        active=d["active"],
        noise=d["noise"],
        seed=seed,
    )
    cut = int(round((1.0 - cfg["val_fraction"]) * d["n"]))
    x = data.signals
    return x[:cut], None, x[cut:], None, {"dictionary": data.dictionary}


# each training task's data builder (the config schema names the tasks: config.TASKS)
TASK_DATA = {"rsgn-sequence": _sequence_data, "vn-dictionary": _dictionary_data}
