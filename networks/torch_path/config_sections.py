"""A training config's model sections as the Python API's own objects (RSGNConfig,
PlasticityConfig) and the VN model section's checks, so that a TOML file and a Python call are
checked alike."""

from __future__ import annotations

from atomspark.sim.core import AtomsparkError

RSGN_MODEL_KEYS = (
    "mode",
    "n_nodes",
    "dim",
    "d_hidden",
    "n_steps",
    "temperature",
    "tau",
    "cutoff",
    "radius",
    "k_nearest",
    "affinity_rank",
    "target_activity",
    "ignition_sigma",
    "threshold_rule",
)
PLASTICITY_KEYS = (
    "lr_affinity",
    "lr_threshold",
    "affinity_decay",
    "baseline_momentum",
    "prune_threshold",
    "max_prune",
    "sprout_correlation",
    "sprout_affinity",
    "max_sprout",
    "hebbian_reward",
    "hebbian_step",
)


def model_config(cfg: dict, d_in: int, n_classes: int, cls=None):
    """The RSGNConfig a config describes (validated by RSGNConfig itself)."""
    if cls is None:
        from atomspark.networks.rsgn.model import RSGNConfig as cls
    m = cfg["model"]
    kw = {k: m[k] for k in RSGN_MODEL_KEYS}
    return cls(d_in=d_in, n_classes=n_classes, threshold_bounds=(0.01, m["threshold_max"]), **kw)


def plasticity_config(cfg: dict, cls=None):
    """The PlasticityConfig a config describes (validated by PlasticityConfig itself)."""
    if cls is None:
        from atomspark.networks.rsgn.plasticity import PlasticityConfig as cls
    return cls(**{k: cfg["plasticity"][k] for k in PLASTICITY_KEYS})


def check_vn_model(m: dict) -> None:
    """The [model] section of a vn-dictionary config: layer sizes, lam per layer, top-k."""
    from atomspark.sim.core import require_int, require_positive

    sizes = m["layer_sizes"]
    if not sizes or not all(
        isinstance(s, list) and len(s) == 2 and all(isinstance(v, int) for v in s) for s in sizes
    ):
        raise AtomsparkError(
            f"layer_sizes: expected one [atoms, output size] pair of integers per layer, e.g. "
            f"[[16, 8]], got {sizes!r}"
        )
    for i, (k, out) in enumerate(sizes):
        require_int(f"layer_sizes[{i}] atoms", k, minimum=1)
        require_int(f"layer_sizes[{i}] output size", out, minimum=1)
    lams = m["lam"] if isinstance(m["lam"], list) else [m["lam"]]
    if isinstance(m["lam"], list) and len(lams) != len(sizes):
        raise AtomsparkError(f"lam: one value per layer ({len(sizes)}), got {len(lams)}")
    for lam in lams:
        if isinstance(lam, bool) or not isinstance(lam, (int, float)):
            raise AtomsparkError(f"lam: must be a number, got {lam!r}")
        require_positive("lam", lam, allow_zero=True)
    if m["topk"] is not None:
        require_int("topk", m["topk"], minimum=1)
        if m["topk"] > sizes[-1][0]:
            raise AtomsparkError(f"topk: must be <= the top layer's atoms ({sizes[-1][0]})")
