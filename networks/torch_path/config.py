"""TOML training configuration: schema, defaults, validation (unknown keys and wrong types name
the key). Read with tomllib (Python 3.11+) or tomli (3.10).

Example (every key optional except `task`):

    task = "rsgn-sequence"          # or "vn-dictionary"
    seed = 0
    device = "auto"                 # "cpu", "cuda", "cuda:1"
    dtype = "float32"               # "float64", or "auto": float32 on CUDA, float64 on CPU
    epochs = 10                     # default per task (TASK_DEFAULTS)
    batch_size = 32
    checkpoint_every = 10           # optimiser steps between checkpoints (0: only at the end)

    [data]                          # rsgn-sequence: kind, n, length, dim, n_classes, noise
    kind = "hierarchical"           # or "long-range";  vn-dictionary: n, dim, n_atoms, active, noise

    [model]                         # rsgn-sequence: kind ("rsgn" or a baseline), RSGNConfig
                                    # fields, layers; vn: layer_sizes, lam, topk, method, ...
    [optimizer]                     # lr, weight_decay, grad_clip, schedule (SCHEDULES)
    [plasticity]                    # rsgn slow scale: PlasticityConfig fields + structural_every
    [hebb]                          # vn: rho_s, rho_u, normalize
"""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

from atomspark.sim.validation import AtomsparkError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 environment
    import tomli as tomllib

TASKS = ("rsgn-sequence", "vn-dictionary")
# "cosine": annealed per optimiser step; "cosine-epoch": per epoch (the RSGN notebook's choice)
SCHEDULES = ("cosine", "cosine-epoch", "constant")
MODEL_KINDS = ("rsgn", "transformer", "sparse-transformer", "lstm", "mlp", "mean-linear")
_NUM = (int, float)

# key -> (accepted types, default)
_TOP = {
    "task": (str, None),
    "seed": (int, 0),
    "device": (str, "auto"),
    "dtype": (str, "float32"),
    "epochs": (int, None),
    "batch_size": (int, 32),
    "checkpoint_every": (int, 0),
    "val_fraction": (_NUM, 0.2),
    "mixed_precision": (bool, False),
}
_SECTIONS = {
    "data": {
        "kind": (str, "hierarchical"),
        "n": (int, None),
        "length": (int, 16),
        "dim": (int, None),
        "n_classes": (int, 4),
        "noise": (_NUM, None),
        "n_atoms": (int, 12),
        "active": (int, 2),
        "seed": (int, None),  # the data set's own seed (default: the run's seed)
        "split_seed": (int, None),  # the 80/20 split's seed (default: the run's seed)
    },
    "model": {
        # rsgn-sequence: "rsgn" or a baseline of networks/torch_path/baselines.py
        "kind": (str, "rsgn"),
        "layers": (int, 2),  # baselines: encoder layers / LSTM layers
        # RSGN
        "mode": (str, "published"),
        "n_nodes": (int, 48),
        "dim": (int, 3),
        "d_hidden": (int, 16),
        "d_in": (int, None),
        "n_steps": (int, 3),
        "temperature": (_NUM, 1.0),
        "tau": (_NUM, 1.0),
        "cutoff": (_NUM, 0.01),
        "radius": (_NUM, None),
        "k_nearest": (int, None),
        "affinity_rank": (int, 8),
        "target_activity": (_NUM, 0.1),
        "ignition_sigma": (_NUM, 0.4),  # width of the ignition's Gaussian around spark points
        "threshold_max": (_NUM, 0.99),  # released code clamps thresholds to [0.01, 0.99]
        # VN
        "input_dim": (int, None),
        "layer_sizes": (list, [[16, 8]]),
        "lam": ((int, float, list), 0.1),
        "topk": (int, None),
        "method": (str, "fista"),
        "tol": (_NUM, 1e-4),
        "max_iter": (int, 300),
        "sweeps": (int, 20),
    },
    "optimizer": {
        "lr": (_NUM, 3e-3),
        "weight_decay": (_NUM, 1e-4),
        "grad_clip": (_NUM, 1.0),
        "schedule": (str, "cosine"),
    },
    "plasticity": {
        "enabled": (bool, True),
        "lr_affinity": (_NUM, 1e-3),
        "lr_threshold": (_NUM, 1e-3),
        "affinity_decay": (_NUM, 0.995),
        "baseline_momentum": (_NUM, 0.9),
        "prune_threshold": (_NUM, 0.01),
        "max_prune": (int, 50),
        "sprout_correlation": (_NUM, 0.7),
        "sprout_affinity": (_NUM, 0.1),
        "max_sprout": (int, 20),
        "structural_every": (int, 10),
        "homeostasis_scope": (str, "node"),  # "node" (released code) or "global"
    },
    "hebb": {
        "rho_s": (_NUM, 5.0),
        "rho_u": (_NUM, 0.5),
        "normalize": (bool, True),
    },
}
# Defaults tuned so that the built-in tasks learn in well under a minute on one CPU core:
# vn-dictionary recovers every planted atom (|cos| > 0.95) by epoch ~8 of 15 (seeds 0-2), as the
# NumPy reference's learn_dictionary does with rho_S = 5; rsgn-sequence reaches ~0.73 validation
# accuracy on 4 classes (chance 0.25) after 10 epochs with lr 3e-3 (1e-3 stays near chance).
TASK_DEFAULTS = {
    "rsgn-sequence": {"epochs": 10},
    "vn-dictionary": {"epochs": 15},
}
DATA_DEFAULTS = {
    "rsgn-sequence": {"n": 240, "dim": 8, "noise": 0.3},
    "vn-dictionary": {"n": 256, "dim": 12, "noise": 0.01},
}


def _check(key: str, value, types, default=None) -> None:
    if value is None and default is None:
        return  # an optional key left unset (validate_config's own output validates again)
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types:
        raise AtomsparkError(f"config key {key!r}: expected {_names(types)}, got a boolean")
    if not isinstance(value, types):
        raise AtomsparkError(
            f"config key {key!r}: expected {_names(types)}, got {type(value).__name__} {value!r}"
        )


def _names(types) -> str:
    return " or ".join(t.__name__ for t in types)


def validate_config(raw: dict) -> dict:
    """Return a complete config (defaults filled in); raise AtomsparkError naming any bad key."""
    if not isinstance(raw, dict):
        raise AtomsparkError(f"config: expected a table/dict, got {type(raw).__name__}")
    out: dict = {}
    for key, value in raw.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise AtomsparkError(f"config key {key!r}: expected a table, got {value!r}")
            section = {}
            for sub, v in value.items():
                if sub not in _SECTIONS[key]:
                    raise AtomsparkError(
                        f"config key '{key}.{sub}': unknown (allowed: {sorted(_SECTIONS[key])})"
                    )
                _check(f"{key}.{sub}", v, *_SECTIONS[key][sub])
                section[sub] = v
            out[key] = section
        elif key in _TOP:
            _check(key, value, *_TOP[key])
            out[key] = value
        else:
            raise AtomsparkError(
                f"config key {key!r}: unknown (allowed: {sorted(_TOP) + sorted(_SECTIONS)})"
            )
    if "task" not in out:
        raise AtomsparkError(f"config key 'task': required, one of {TASKS}")
    if out["task"] not in TASKS:
        raise AtomsparkError(f"config key 'task': must be one of {TASKS}, got {out['task']!r}")
    for key, (_, default) in _TOP.items():
        if out.get(key) is None:
            out[key] = TASK_DEFAULTS[out["task"]].get(key, default)
    for name, fields in _SECTIONS.items():
        section = out.setdefault(name, {})
        for key, (_, default) in fields.items():
            section.setdefault(key, copy.deepcopy(default))
    for key, default in DATA_DEFAULTS[out["task"]].items():
        if out["data"][key] is None:
            out["data"][key] = default
    for key in ("epochs", "batch_size"):
        if out[key] < 1:
            raise AtomsparkError(f"config key {key!r}: must be >= 1, got {out[key]}")
    if out["checkpoint_every"] < 0:
        raise AtomsparkError("config key 'checkpoint_every': must be >= 0")
    if out["dtype"] not in ("float32", "float64", "auto"):
        raise AtomsparkError(
            f"config key 'dtype': must be float32, float64 or auto, got {out['dtype']!r}"
        )
    if out["optimizer"]["schedule"] not in SCHEDULES:
        raise AtomsparkError(f"config key 'optimizer.schedule': must be one of {SCHEDULES}")
    if out["model"]["kind"] not in MODEL_KINDS:
        raise AtomsparkError(f"config key 'model.kind': must be one of {MODEL_KINDS}")
    if out["data"]["kind"] not in ("hierarchical", "long-range"):
        raise AtomsparkError("config key 'data.kind': must be 'hierarchical' or 'long-range'")
    if not 0.0 < out["val_fraction"] < 1.0:
        raise AtomsparkError("config key 'val_fraction': must lie in (0, 1)")
    return out


def load_config(path: str | os.PathLike) -> dict:
    """Read and validate a TOML config file."""
    path = Path(path)
    if not path.is_file():
        raise AtomsparkError(f"config file {path}: does not exist")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise AtomsparkError(f"config file {path}: not valid TOML ({exc})") from exc
    return validate_config(raw)
