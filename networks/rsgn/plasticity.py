"""RSGN slow time scale: reward-modulated Hebbian affinities, homeostatic thresholds, and
structural pruning / sprouting of the sparse graph. All functions return new arrays/params.

Affinity rule: Delta a_ij = lr * mean_b(alpha_i) * mean_b(alpha_j) * R, applied as a step of
size s = decay * Delta:
- sparse mode: a_ij += s_ij on existing edges, clipped to [0, 1];
- published mode (low-rank a = sigmoid(u v^T)): one unit-step gradient step on u of
  1/2 ||sigmoid(u v^T) - (sigmoid(u v^T) + s)||^2, i.e. u += (s * sigma') v, whose first-order
  effect on a_ij is s_ij scaled by the local sigmoid slope.
Two choices, each with the released notebook's rule (HasiHays/RSGN, RSGN-colab.ipynb and
src/hebbian.py) as an option:
- hebbian_reward "baseline" (default): R = -(loss - running mean of the loss); "raw": R = -loss
  (the notebook passes -loss.item());
- hebbian_step "once" (default): lr applied once, as above; "released": the notebook's factor
  step, u -= lr * grad with Delta already holding lr, i.e. s = lr * decay * Delta (steps of
  about 1e-6). The notebook has no sparse mode; there "released" scales the edge step alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams, validate_graph
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
    require_shape,
)
from scipy.special import expit

HEBBIAN_REWARDS = ("baseline", "raw")  # R = -(loss - running baseline) | R = -loss (notebook)
HEBBIAN_STEPS = ("once", "released")  # lr applied once | twice, as the notebook does


@dataclass(frozen=True)
class PlasticityConfig:
    """Slow-time-scale settings (defaults from the released code where it has them)."""

    lr_affinity: float = 1e-3
    lr_threshold: float = 1e-3
    affinity_decay: float = 0.995
    baseline_momentum: float = 0.9
    prune_threshold: float = 0.01
    max_prune: int = 50
    sprout_correlation: float = 0.7
    sprout_affinity: float = 0.1
    max_sprout: int = 20
    max_out_degree: int | None = None
    hebbian_reward: str = "baseline"
    hebbian_step: str = "once"

    def __post_init__(self) -> None:
        require_positive("lr_affinity", self.lr_affinity, allow_zero=True)
        require_positive("lr_threshold", self.lr_threshold, allow_zero=True)
        for name in ("affinity_decay", "baseline_momentum", "sprout_affinity"):
            v = float(getattr(self, name))
            if not 0.0 <= v <= 1.0:
                raise AtomsparkError(f"{name}: must lie in [0, 1], got {v!r}")
        require_positive("prune_threshold", self.prune_threshold, allow_zero=True)
        if not -1.0 <= self.sprout_correlation <= 1.0:
            raise AtomsparkError(
                f"sprout_correlation: must lie in [-1, 1], got {self.sprout_correlation!r}"
            )
        require_int("max_prune", self.max_prune, minimum=0)
        require_int("max_sprout", self.max_sprout, minimum=0)
        if self.max_out_degree is not None:
            require_int("max_out_degree", self.max_out_degree, minimum=1)
        for name, allowed in (
            ("hebbian_reward", HEBBIAN_REWARDS),
            ("hebbian_step", HEBBIAN_STEPS),
        ):
            if getattr(self, name) not in allowed:
                raise AtomsparkError(
                    f"{name}: must be one of {', '.join(allowed)}, got {getattr(self, name)!r}"
                )

    @property
    def affinity_step(self) -> float:
        """The factor of mean(alpha_i) mean(alpha_j) R in one affinity step: lr * decay, or
        lr * decay * lr with hebbian_step "released" (the notebook's lr applied twice)."""
        step = self.lr_affinity * self.affinity_decay
        return step * self.lr_affinity if self.hebbian_step == "released" else step


def check_reward_rule(rule: str) -> None:
    """One line naming the allowed Hebbian reward rules."""
    if rule not in HEBBIAN_REWARDS:
        raise AtomsparkError(
            f"hebbian_reward: must be one of {', '.join(HEBBIAN_REWARDS)}, got {rule!r}"
        )


@dataclass
class RewardBaseline:
    """Running mean of the loss; R = -(loss - baseline). The first loss seeds it (R = 0)."""

    value: float = 0.0
    initialised: bool = False

    def reward(self, loss: float, momentum: float, rule: str = "baseline") -> float:
        """Reward for this loss against the baseline so far, then fold the loss into it; rule
        "raw" (the released notebook) returns -loss and leaves the baseline as it is."""
        check_reward_rule(rule)
        loss = float(loss)
        if not np.isfinite(loss):
            raise AtomsparkError(f"loss: must be finite, got {loss!r}")
        if rule == "raw":
            return -loss
        if not self.initialised:
            self.value, self.initialised = loss, True
        r = -(loss - self.value)
        self.value = momentum * self.value + (1.0 - momentum) * loss
        return r


def _mean_activity(name: str, alpha, n_nodes: int) -> np.ndarray:
    a = as_finite_array(name, alpha, ndim=2)
    require_shape(name, a, (None, n_nodes))
    if a.shape[0] == 0:
        raise AtomsparkError(f"{name}: needs at least one sample")
    return a.mean(axis=0)


def hebbian_affinity_update(
    params: RSGNParams, config: RSGNConfig, alpha, reward: float, pcfg: PlasticityConfig
) -> RSGNParams:
    """One affinity step of pcfg.affinity_step * mean(alpha_i) mean(alpha_j) * R (module
    docstring: lr once, or twice with hebbian_step "released")."""
    m = _mean_activity("alpha", alpha, config.n_nodes)
    r = float(reward)
    if not np.isfinite(r):
        raise AtomsparkError(f"reward: must be finite, got {reward!r}")
    scale = pcfg.affinity_step * r
    if config.mode == "published":
        a = expit(params.affinity_u @ params.affinity_v.T)
        delta = scale * np.outer(m, m) * a * (1.0 - a)
        return dataclasses.replace(params, affinity_u=params.affinity_u + delta @ params.affinity_v)
    g = params.edge_affinity
    rows = np.repeat(np.arange(config.n_nodes), np.diff(g.indptr))
    data = np.clip(g.data + scale * m[rows] * m[g.indices], 0.0, 1.0)
    new = sp.csr_matrix((data, g.indices.copy(), g.indptr.copy()), shape=g.shape)
    return dataclasses.replace(params, edge_affinity=new)


def homeostatic_thresholds(
    thresholds,
    alpha,
    target: float,
    lr: float,
    bounds: tuple[float, float] = (0.01, 0.99),
    scope: str = "node",
    signal: str = "alpha",
    cutoff: float = 0.0,
) -> np.ndarray:
    """theta += lr (mean(s) - target), clamped to bounds: busy nodes get harder to fire.

    signal "alpha" (released code): s = alpha, the mean activation. signal "events": s = alpha >
    cutoff, the fraction of nodes that send events, which is what a chip pays for: with a soft
    threshold, many nodes just below the cutoff can hold mean(alpha) at the target while almost
    none fire.

    scope "node" (released code): each node's own batch-mean activity; a node that is never
    reached cannot be made active, so the network mean can stay below target. scope "global":
    one network-wide mean shifts every threshold, which holds the mean itself at the target.
    """
    theta = as_finite_array("thresholds", thresholds, ndim=1)
    if signal == "events":
        alpha = (as_finite_array("alpha", alpha) > cutoff).astype(np.float64)
    elif signal != "alpha":
        raise AtomsparkError(f"signal: must be 'alpha' or 'events', got {signal!r}")
    m = _mean_activity("alpha", alpha, theta.shape[0])
    require_positive("lr_threshold", lr, allow_zero=True)
    if scope == "global":
        m = np.full_like(m, m.mean())
    elif scope != "node":
        raise AtomsparkError(f"scope: must be 'node' or 'global', got {scope!r}")
    return np.clip(theta + lr * (m - target), bounds[0], bounds[1])


def activity_correlation(history) -> np.ndarray:
    """Pearson correlation between nodes over samples (S, N); constant nodes correlate 0."""
    x = as_finite_array("activity history", history, ndim=2)
    if x.shape[0] < 2:
        raise AtomsparkError(f"activity history: needs >= 2 samples, got {x.shape[0]}")
    z = x - x.mean(axis=0)
    sd = np.sqrt(np.mean(z * z, axis=0))
    z = np.divide(z, sd, out=np.zeros_like(z), where=sd > 0)
    corr = z.T @ z / x.shape[0]
    np.fill_diagonal(corr, 0.0)
    return corr


@dataclass
class StructuralReport:
    """What one prune-and-sprout call changed."""

    n_pruned: int
    n_sprouted: int
    n_edges: int


def _rank_within_rows(rows: np.ndarray) -> np.ndarray:
    """For a sequence already in priority order, each entry's 0-based rank among its row's entries."""
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_rows)) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows)) - first
    return rank


def prune_and_sprout(
    params: RSGNParams, config: RSGNConfig, history, pcfg: PlasticityConfig
) -> tuple[RSGNParams, StructuralReport]:
    """Sparse mode: remove edges with affinity < prune_threshold (weakest first, <= max_prune) and
    add edges i -> j between unconnected nodes whose activity correlation over `history` (S, N)
    exceeds sprout_correlation (strongest first, <= max_sprout, out-degree <= max_out_degree).

    New edges start at sprout_affinity. The result has no self loops or duplicate edges.
    """
    if config.mode != "sparse":
        raise AtomsparkError(
            "prune_and_sprout: needs mode 'sparse' (the published model has a dense graph; the "
            "released code only shrinks u, v rows there)"
        )
    n = config.n_nodes
    g = params.edge_affinity
    corr = activity_correlation(history)
    require_shape("activity history", corr, (n, n))
    rows = np.repeat(np.arange(n), np.diff(g.indptr))
    cols, data = g.indices, g.data

    weak = np.flatnonzero(data < pcfg.prune_threshold)
    weak = weak[np.argsort(data[weak], kind="stable")][: pcfg.max_prune]
    keep = np.ones(len(data), dtype=bool)
    keep[weak] = False

    existing = np.zeros((n, n), dtype=bool)
    existing[rows, cols] = True
    cand = (corr > pcfg.sprout_correlation) & ~existing
    np.fill_diagonal(cand, False)
    ci, cj = np.nonzero(cand)
    order = np.argsort(-corr[ci, cj], kind="stable")
    ci, cj = ci[order], cj[order]
    if pcfg.max_out_degree is not None:
        degree_after_prune = np.bincount(rows[keep], minlength=n)
        room = np.maximum(pcfg.max_out_degree - degree_after_prune, 0)
        ok = _rank_within_rows(ci) < room[ci]
        ci, cj = ci[ok], cj[ok]
    ci, cj = ci[: pcfg.max_sprout], cj[: pcfg.max_sprout]

    new = sp.coo_matrix(
        (
            np.r_[data[keep], np.full(len(ci), pcfg.sprout_affinity)],
            (np.r_[rows[keep], ci], np.r_[cols[keep], cj]),
        ),
        shape=(n, n),
    ).tocsr()
    new.sum_duplicates()
    new.sort_indices()
    validate_graph(new, n)
    report = StructuralReport(n_pruned=len(weak), n_sprouted=len(ci), n_edges=int(new.nnz))
    return dataclasses.replace(params, edge_affinity=new), report
