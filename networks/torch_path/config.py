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
import math
import os
import sys
from pathlib import Path

from atomspark.networks.model_family import families_of_task
from atomspark.networks.torch_path.config_help import HELP  # noqa: F401 (what each key means)
from atomspark.networks.torch_path.config_memory import (  # noqa: F401 (named here too)
    check_memory,
    estimate_memory_bytes,
)
from atomspark.networks.torch_path.config_sections import (  # noqa: F401 (named here too)
    PLASTICITY_KEYS,
    RSGN_MODEL_KEYS,
    check_vn_model,
    model_config,
    plasticity_config,
)
from atomspark.sim.core import AtomsparkError
from atomspark.sim.user_files import load_user_toml

if sys.version_info >= (3, 11):
    import tomllib  # noqa: F401 (parse_setting and others read TOML values through it)
else:  # pragma: no cover - Python 3.10 environment
    import tomli as tomllib  # noqa: F401

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
        # rsgn-sequence: "generator" (NumPy's Generator) or "notebook" (the released notebook's
        # own legacy np.random stream: the paper's exact sequences and split)
        "stream": (str, "generator"),
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
        # "forward": the forward pass projects the positions, the parameter is never rewritten
        # (released code); "in-place": rescaled into the ball after every optimiser step
        "position_projection": (str, "forward"),
        # "homeostat": only the homeostatic update clamps the thresholds (released code);
        # "every-step": clamped after every optimiser step as well, with or without plasticity
        "threshold_clamp": (str, "homeostat"),
        "threshold_rule": (str, "sigmoid"),  # RSGNConfig.threshold_rule
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
        "homeostasis_signal": (str, "alpha"),  # "alpha" (released code) or "events"
        "learn_thresholds": (bool, True),  # thresholds also trained by the optimiser (released)
        # "baseline": R = -(loss - running baseline); "raw": R = -loss (released notebook)
        "hebbian_reward": (str, "baseline"),
        # "once": the affinity learning rate applied once; "released": twice (released notebook)
        "hebbian_step": (str, "once"),
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


RESUME_MAY_CHANGE = ("device", "checkpoint_every")

# key -> ("int", minimum) | ("num", "> 0" | ">= 0")  (checked after the defaults are filled in)
_RANGES = {
    "seed": ("int", 0),
    "epochs": ("int", 1),
    "batch_size": ("int", 1),
    "checkpoint_every": ("int", 0),
    "data.n": ("int", 2),
    "data.length": ("int", 1),
    "data.dim": ("int", 1),
    "data.n_classes": ("int", 2),
    "data.noise": ("num", ">= 0"),
    "data.n_atoms": ("int", 1),
    "data.active": ("int", 1),
    "model.tol": ("num", ">= 0"),
    "model.max_iter": ("int", 1),
    "model.sweeps": ("int", 1),
    "optimizer.lr": ("num", "> 0"),
    "optimizer.weight_decay": ("num", ">= 0"),
    "optimizer.grad_clip": ("num", "> 0"),
    "plasticity.structural_every": ("int", 1),
    "hebb.rho_s": ("num", ">= 0"),
    "hebb.rho_u": ("num", ">= 0"),
}
# Options added after runs existed, with the value that behaves exactly as before they existed:
# a config holding that value is the same run as one without the key, so sweep cells and other
# identities hash the config without it (finished cells stay recognised when the schema grows).
IDENTITY_NEUTRAL = {
    "data.stream": "generator",
    "plasticity.homeostasis_signal": "alpha",
    "plasticity.learn_thresholds": True,
    "model.position_projection": "in-place",
    "model.threshold_clamp": "every-step",
    "model.threshold_rule": "sigmoid",
    "plasticity.hebbian_reward": "baseline",
    "plasticity.hebbian_step": "once",
}


def identity_settings(cfg: dict) -> dict:
    """The config less its identity-neutral keys at their neutral values (a copy)."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in cfg.items()}
    for key, neutral in IDENTITY_NEUTRAL.items():
        section, _, sub = key.partition(".")
        if isinstance(out.get(section), dict) and out[section].get(sub, neutral) == neutral:
            out[section].pop(sub, None)
    return out


_CHOICES = {
    "dtype": ("float32", "float64", "auto"),
    "data.kind": ("hierarchical", "long-range"),
    "data.stream": ("generator", "notebook"),
    "model.mode": ("published", "sparse"),
    "model.method": ("fista", "ista"),
    "optimizer.schedule": SCHEDULES,
    "model.kind": MODEL_KINDS,
    "plasticity.homeostasis_scope": ("node", "global"),
    "plasticity.homeostasis_signal": ("alpha", "events"),
    "model.position_projection": ("forward", "in-place"),
    "model.threshold_clamp": ("homeostat", "every-step"),
    "model.threshold_rule": ("sigmoid", "resting-subtracted"),
    "plasticity.hebbian_reward": ("baseline", "raw"),
    "plasticity.hebbian_step": ("once", "released"),
}


def get_key(cfg: dict, key: str):
    """cfg["a"]["b"] for key "a.b"."""
    section, _, sub = key.partition(".")
    return cfg[section][sub] if sub else cfg[section]


def _check_ranges(cfg: dict) -> None:
    for key, (kind, bound) in _RANGES.items():
        value = get_key(cfg, key)
        if kind == "int":
            if value < bound:
                raise AtomsparkError(f"config key {key!r}: must be >= {bound}, got {value}")
        elif not math.isfinite(value) or value < 0 or (value == 0 and bound == "> 0"):
            raise AtomsparkError(f"config key {key!r}: must be finite and {bound}, got {value!r}")
    for key, allowed in _CHOICES.items():
        if key == "model.kind":  # the built-ins, and any family registered for the task since
            allowed += tuple(f.name for f in families_of_task(cfg["task"]) if f.name not in allowed)
        if get_key(cfg, key) not in allowed:
            raise AtomsparkError(
                f"config key {key!r}: must be one of {', '.join(allowed)}, got "
                f"{get_key(cfg, key)!r}"
            )
    n = cfg["data"]["n"]
    n_train = int(round((1.0 - cfg["val_fraction"]) * n))
    if not 0.0 < cfg["val_fraction"] < 1.0 or n_train < 1 or n_train >= n:
        raise AtomsparkError(
            f"config key 'val_fraction': {cfg['val_fraction']!r} of data.n = {n} leaves "
            f"{n_train} training and {n - n_train} validation samples; both need at least one "
            "(use a value in (0, 1), or raise data.n)"
        )


def _check_model(cfg: dict) -> None:
    """Build what the Python API builds, so a TOML file and a Python call are checked alike; its
    errors are reported against the config section."""
    if cfg["task"] == "rsgn-sequence":
        d, m = cfg["data"], cfg["model"]
        d_in = d["dim"] if m["d_in"] is None else m["d_in"]
        _in_section("model", lambda: model_config(cfg, d_in, d["n_classes"]))
        _in_section("plasticity", lambda: plasticity_config(cfg))
        return
    _in_section("model", lambda: check_vn_model(cfg["model"]))
    if cfg["data"]["active"] > cfg["data"]["n_atoms"]:
        raise AtomsparkError(
            f"config key 'data.active': must be <= data.n_atoms ({cfg['data']['n_atoms']}), got "
            f"{cfg['data']['active']}"
        )


def _in_section(section: str, build) -> None:
    try:
        build()
    except AtomsparkError as exc:
        raise AtomsparkError(f"config [{section}] {exc}") from None


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
    _check_ranges(out)
    _check_model(out)
    p = out["plasticity"]
    if out["task"] == "rsgn-sequence" and not p["learn_thresholds"] and not p["enabled"]:
        raise AtomsparkError(
            "plasticity.learn_thresholds = false needs plasticity.enabled = true (the homeostat "
            "then sets the thresholds); with both off they would never move"
        )
    return out


def load_config(path: str | os.PathLike) -> dict:
    """Read and validate a TOML config file."""
    if not isinstance(path, (str, os.PathLike)):
        raise AtomsparkError(
            f"config: expected a TOML file path or a config dict, got {type(path).__name__}"
        )
    return validate_config(read_toml_file(Path(path), "config file"))


def read_toml_file(path: Path, what: str) -> dict:
    """Parse a TOML file; a missing file, a folder, a pipe or device, an oversized or too deeply
    nested file, non-UTF-8 bytes or bad TOML is one line naming the file."""
    return load_user_toml(path, what)
