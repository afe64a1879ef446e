"""RSGN configuration, parameters, initialisation, parameter count and storage.

Two configurations of one model:
- "published": the model as released by the authors (HasiHays/RSGN): dense N x N weights with a
  rank-32 affinity sigmoid(u_i . v_j), Euclidean ignition, Euclidean inhibition radius.
- "sparse": connections only between nodes closer than `radius` (geodesic) and/or to the
  `k_nearest` nearest nodes, one learned affinity per edge stored as scipy CSR, hyperbolic ignition,
  and an event cutoff below which a node is exactly silent.

Published parameter set (N=256, dim=3, d_hidden=128, d_in=32, rank 32), which gives 41,672 / 40,382:
  positions N*dim 768 + levels N 256 + thresholds N 256 + affinity u, v 2*N*32 16,384
  + spark MLP (d_in*4dim + 4dim) + (4dim*dim + dim) = 396 + 39 = 435 + spark scale 1
  + W_h with bias 128*128 + 128 = 16,512 + LayerNorm gain and bias 256
  + initial-state projection d_in*128 + 128 = 4,224
  = 39,092, plus the classifier 128*C + C (2,580 for C=20, 1,290 for C=10).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.model_io import check_representable, load_arrays, save_arrays
from atomspark.networks.rsgn.geometry import check_in_ball, pairwise_distances, project_to_ball
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
    require_shape,
)
from atomspark.sim.csr_check import check_csr_structure, check_sparse_matrix
from atomspark.sim.memory import require_memory

MODES = ("published", "sparse")
# "sigmoid": alpha' = sigma((drive - theta) / T) (released code); "resting-subtracted": the same
# less its resting value r = sigma((gain ||b_h|| - theta) / T), the activation of a node whose
# summed message is zero, rescaled to [0, 1): alpha' = max(sigma(...) - r, 0) / (1 - r).
THRESHOLD_RULES = ("sigmoid", "resting-subtracted")
MODEL_KIND = "rsgn"


@dataclass(frozen=True)
class RSGNConfig:
    """Sizes and hyper-parameters of an RSGN (defaults: the paper's hierarchical-task model)."""

    mode: str = "published"
    n_nodes: int = 256
    dim: int = 3
    d_hidden: int = 128
    d_in: int = 32
    n_classes: int = 20
    n_steps: int = 5
    temperature: float = 1.0
    tau: float = 1.0
    curvature: float = 1.0
    target_activity: float = 0.1
    cutoff: float = 0.01  # published: the alpha > 0.01 send gate; sparse: the event cutoff
    radius: float | None = None  # sparse: connect pairs with geodesic distance < radius
    k_nearest: int | None = None  # sparse: keep at most the k nearest targets per node
    affinity_rank: int = 32
    inhibition_radius: float = 0.3  # published: Euclidean neighbourhood of divisive inhibition
    ignition_sigma: float = 0.4
    spark_scale_init: float = 0.7
    spark_max_norm: float = 0.9
    position_max_norm: float = 0.95
    signal_gain: float = 0.1  # alpha <- sigma((alpha + gain * ||h_new|| - theta) / T)
    threshold_init: float = 0.5
    threshold_bounds: tuple[float, float] = (0.01, 0.99)
    layer_norm_eps: float = 1e-5
    threshold_rule: str = "sigmoid"  # THRESHOLD_RULES

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise AtomsparkError(f"mode: must be one of {MODES}, got {self.mode!r}")
        if self.threshold_rule not in THRESHOLD_RULES:
            raise AtomsparkError(
                f"threshold_rule: must be one of {THRESHOLD_RULES}, got {self.threshold_rule!r}"
            )
        for name in ("n_nodes", "dim", "d_hidden", "d_in", "affinity_rank"):
            require_int(name, getattr(self, name), minimum=1)
        require_int("n_classes", self.n_classes, minimum=2)
        require_int("n_steps (K)", self.n_steps, minimum=0)
        for name in ("temperature", "tau", "curvature", "ignition_sigma", "spark_scale_init"):
            require_positive(name, getattr(self, name))
        require_positive("inhibition_radius", self.inhibition_radius)
        require_positive("signal_gain", self.signal_gain, allow_zero=True)
        require_positive("layer_norm_eps", self.layer_norm_eps)
        for name in ("target_activity", "cutoff", "spark_max_norm", "position_max_norm"):
            v = float(getattr(self, name))
            if not 0.0 < v < 1.0:
                raise AtomsparkError(f"{name}: must lie in (0, 1), got {v!r}")
        lo, hi = self.threshold_bounds
        if not lo < hi:
            raise AtomsparkError(f"threshold_bounds: need low < high, got {self.threshold_bounds}")
        if not lo <= self.threshold_init <= hi:
            raise AtomsparkError("threshold_init: must lie within threshold_bounds")
        if self.mode == "sparse":
            if self.radius is None and self.k_nearest is None:
                raise AtomsparkError("sparse mode: set radius and/or k_nearest")
            if self.radius is not None:
                require_positive("radius", self.radius)
            if self.k_nearest is not None:
                require_int("k_nearest", self.k_nearest, minimum=1)
                if self.k_nearest >= self.n_nodes:
                    raise AtomsparkError(f"k_nearest: must be < n_nodes ({self.n_nodes})")

    def to_meta(self) -> dict:
        """JSON-ready dict of the configuration."""
        d = dataclasses.asdict(self)
        d["threshold_bounds"] = list(self.threshold_bounds)
        return d

    @classmethod
    def from_meta(cls, meta: dict) -> RSGNConfig:
        """Rebuild a configuration from `to_meta` output (extra keys are ignored)."""
        if not isinstance(meta, dict):
            raise AtomsparkError(f"config: expected a dict of settings, got {type(meta).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in meta.items() if k in names}
        if "threshold_bounds" in kw:
            kw["threshold_bounds"] = tuple(kw["threshold_bounds"])
        return cls(**kw)


@dataclass
class RSGNParams:
    """All learned arrays of an RSGN. Weight matrices act on row vectors: y = x @ w + b.

    published: affinity_u, affinity_v set, edge_affinity None (dense graph, no self loops).
    sparse: edge_affinity is an (N, N) CSR matrix whose pattern is the graph (row = sender) and
    whose data are the per-edge affinities a_ij in [0, 1]; affinity_u, affinity_v are None.
    """

    positions: np.ndarray  # (N, dim), strictly inside the ball
    levels: np.ndarray  # (N,)
    thresholds: np.ndarray  # (N,)
    embed_w1: np.ndarray  # (d_in, 4 dim)
    embed_b1: np.ndarray  # (4 dim,)
    embed_w2: np.ndarray  # (4 dim, dim)
    embed_b2: np.ndarray  # (dim,)
    spark_scale: np.ndarray  # () learned scalar, init 0.7
    w_h: np.ndarray  # (d_hidden, d_hidden)
    b_h: np.ndarray  # (d_hidden,)
    ln_gain: np.ndarray  # (d_hidden,)
    ln_bias: np.ndarray  # (d_hidden,)
    init_w: np.ndarray  # (d_in, d_hidden): initial node state from the mean token
    init_b: np.ndarray  # (d_hidden,)
    cls_w: np.ndarray  # (d_hidden, n_classes)
    cls_b: np.ndarray  # (n_classes,)
    affinity_u: np.ndarray | None = None  # (N, rank)
    affinity_v: np.ndarray | None = None  # (N, rank)
    edge_affinity: sp.csr_matrix | None = None

    def dense_arrays(self) -> dict[str, np.ndarray]:
        """The plain (non-sparse) arrays by name."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name != "edge_affinity" and v is not None:
                out[f.name] = v
        return out


def _linear(rng: np.random.Generator, n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch nn.Linear default init: U(-1/sqrt(n_in), 1/sqrt(n_in)) for weight and bias."""
    bound = 1.0 / np.sqrt(n_in)
    return rng.uniform(-bound, bound, (n_in, n_out)), rng.uniform(-bound, bound, n_out)


def build_connectivity(positions: np.ndarray, config: RSGNConfig) -> sp.csr_matrix:
    """Sparse-mode graph pattern (row = sender): pairs closer than radius, capped to k nearest."""
    d = pairwise_distances(positions, c=config.curvature)
    n = d.shape[0]
    np.fill_diagonal(d, np.inf)
    keep = np.ones_like(d, dtype=bool) if config.radius is None else d < config.radius
    if config.k_nearest is not None:
        order = np.argsort(d, axis=1, kind="stable")[:, : config.k_nearest]
        knn = np.zeros_like(keep)
        knn[np.arange(n)[:, None], order] = True
        keep &= knn
    np.fill_diagonal(keep, False)
    return sp.csr_matrix(keep.astype(np.float64))


def check_config(config) -> None:
    """Raise unless `config` is an RSGNConfig (its own fields are checked when it is built)."""
    if not isinstance(config, RSGNConfig):
        raise AtomsparkError(f"config: expected RSGNConfig, got {type(config).__name__}")


def init_params_bytes(config: RSGNConfig) -> float:
    """Bytes init_params allocates (float64): the parameters, and in sparse mode the pairwise
    distances, masks and argsort of build_connectivity (n_nodes**2 each)."""
    n, dim, dh, di = config.n_nodes, config.dim, config.d_hidden, config.d_in
    params = n * (dim + 2 * config.affinity_rank + 2) + dh * (dh + di + config.n_classes + 3)
    params += di * 4 * dim + 4 * dim * dim + 5 * dim
    pairwise = 0.0 if config.mode == "published" else 3.0 * n * n
    return 8.0 * (float(params) + pairwise)


def init_params(config: RSGNConfig, seed: int = 0) -> RSGNParams:
    """Random parameters following the released code's initialisation, deterministic in `seed`."""
    check_config(config)
    rng = np.random.default_rng(require_int("seed", seed, minimum=0))
    n, dim, dh = config.n_nodes, config.dim, config.d_hidden
    require_memory(
        f"config n_nodes {n}, d_hidden {dh}",
        init_params_bytes(config),
        "use a smaller n_nodes or d_hidden",
    )
    positions = project_to_ball(
        rng.standard_normal((n, dim)) * 0.3, config.position_max_norm, config.curvature
    )
    w1, b1 = _linear(rng, config.d_in, 4 * dim)
    w2, b2 = _linear(rng, 4 * dim, dim)
    w_h, b_h = _linear(rng, dh, dh)
    init_w, init_b = _linear(rng, config.d_in, dh)
    cls_w, cls_b = _linear(rng, dh, config.n_classes)
    params = RSGNParams(
        positions=positions,
        levels=np.linspace(0.0, 1.0, n),
        thresholds=np.full(n, config.threshold_init),
        embed_w1=w1,
        embed_b1=b1,
        embed_w2=w2,
        embed_b2=b2,
        spark_scale=np.asarray(config.spark_scale_init, dtype=np.float64),
        w_h=w_h,
        b_h=b_h,
        ln_gain=np.ones(dh),
        ln_bias=np.zeros(dh),
        init_w=init_w,
        init_b=init_b,
        cls_w=cls_w,
        cls_b=cls_b,
    )
    if config.mode == "published":
        params.affinity_u = rng.standard_normal((n, config.affinity_rank)) * 0.01
        params.affinity_v = rng.standard_normal((n, config.affinity_rank)) * 0.01
    else:
        pattern = build_connectivity(positions, config)
        # sigmoid(0.01^2 * rank * N(0,1)) ~ 0.5: same starting affinity as the published model.
        pattern.data[:] = 0.5
        params.edge_affinity = pattern
    validate_params(params, config)
    return params


def _expected_shapes(config: RSGNConfig) -> dict[str, tuple]:
    n, dim, dh, di, c = config.n_nodes, config.dim, config.d_hidden, config.d_in, config.n_classes
    shapes = {
        "positions": (n, dim),
        "levels": (n,),
        "thresholds": (n,),
        "embed_w1": (di, 4 * dim),
        "embed_b1": (4 * dim,),
        "embed_w2": (4 * dim, dim),
        "embed_b2": (dim,),
        "spark_scale": (),
        "w_h": (dh, dh),
        "b_h": (dh,),
        "ln_gain": (dh,),
        "ln_bias": (dh,),
        "init_w": (di, dh),
        "init_b": (dh,),
        "cls_w": (dh, c),
        "cls_b": (c,),
    }
    if config.mode == "published":
        shapes["affinity_u"] = (n, config.affinity_rank)
        shapes["affinity_v"] = (n, config.affinity_rank)
    return shapes


def validate_params(params: RSGNParams, config: RSGNConfig) -> None:
    """Check shapes, finiteness, positions inside the ball and (sparse) the graph's validity."""
    check_config(config)
    if not isinstance(params, RSGNParams):
        raise AtomsparkError(f"params: expected RSGNParams, got {type(params).__name__}")
    for name, shape in _expected_shapes(config).items():
        value = getattr(params, name)
        if value is None:
            raise AtomsparkError(f"params.{name}: missing in {config.mode} mode")
        arr = as_finite_array(f"params.{name}", value)
        require_shape(f"params.{name}", arr, shape)
        setattr(params, name, arr)
    check_in_ball("params.positions", params.positions, config.curvature)
    if config.mode == "published":
        if params.edge_affinity is not None:
            raise AtomsparkError("params.edge_affinity: must be None in published mode")
        return
    if params.affinity_u is not None or params.affinity_v is not None:
        raise AtomsparkError("params.affinity_u/v: must be None in sparse mode")
    validate_graph(params.edge_affinity, config.n_nodes)


def validate_graph(graph, n_nodes: int) -> None:
    """A valid sparse graph: (N, N) CSR, canonical (sorted, no duplicate edges), no self loops,
    finite affinities in [0, 1]."""
    if not sp.issparse(graph) or graph.format != "csr":
        raise AtomsparkError("params.edge_affinity: must be a scipy CSR matrix")
    if graph.shape != (n_nodes, n_nodes):
        raise AtomsparkError(
            f"params.edge_affinity: expected shape ({n_nodes}, {n_nodes}), got {graph.shape}"
        )
    check_sparse_matrix("params.edge_affinity", graph)
    if not graph.has_canonical_format:
        raise AtomsparkError("params.edge_affinity: duplicate or unsorted edges")
    rows = np.repeat(np.arange(n_nodes), np.diff(graph.indptr))
    if np.any(rows == graph.indices):
        raise AtomsparkError("params.edge_affinity: self loops are not allowed")
    data = as_finite_array("params.edge_affinity data", graph.data)
    if np.any(data < 0) or np.any(data > 1):
        raise AtomsparkError("params.edge_affinity: affinities must lie in [0, 1]")


def parameter_count(params: RSGNParams) -> int:
    """Number of learned scalars (sparse mode: one affinity per stored edge)."""
    total = sum(int(np.size(v)) for v in params.dense_arrays().values())
    if params.edge_affinity is not None:
        total += int(params.edge_affinity.nnz)
    return total


def save_model(
    path: str | os.PathLike, params: RSGNParams, config: RSGNConfig, task: dict | None = None
) -> None:
    """Write config and parameters to one versioned .npz (kind "rsgn"), atomically; `task`: the
    training config it was trained on (read back by model_io.read_task)."""
    validate_params(params, config)
    arrays = dict(params.dense_arrays())
    if params.edge_affinity is not None:
        g = params.edge_affinity
        arrays.update(graph_indptr=g.indptr, graph_indices=g.indices, graph_data=g.data)
    meta = (
        {"config": config.to_meta()} if task is None else {"config": config.to_meta(), "task": task}
    )
    save_arrays(path, MODEL_KIND, arrays, meta)


def load_model(path: str | os.PathLike) -> tuple[RSGNParams, RSGNConfig]:
    """Read what save_model wrote; the config's types, the sparse graph's index arrays (bounds,
    indptr order and length) and every array's shape and range are checked against the stored
    config before the parameters are built."""
    arrays, meta = load_arrays(path, MODEL_KIND, accept=_is_model_array)
    config = _stored_config(path, meta)
    graph = None
    if config.mode == "sparse":
        graph = _stored_graph(path, arrays, config.n_nodes)
    elif any(k in arrays for k in _GRAPH_ARRAYS):
        raise AtomsparkError(f"model file {path}: a published-mode model holds no sparse graph")
    missing = {n for n in _expected_shapes(config)} - set(arrays)
    if missing:
        raise AtomsparkError(f"model file {path}: missing arrays {sorted(missing)}")
    for name, shape in _expected_shapes(config).items():
        require_shape(f"model file {path}: {name}", arrays[name], shape)
    for name, arr in arrays.items():
        check_representable(f"model file {path}: {name}", arr)
    params = RSGNParams(**arrays, edge_affinity=graph)
    validate_params(params, config)
    return params, config


_GRAPH_ARRAYS = ("graph_indptr", "graph_indices", "graph_data")


def _is_model_array(name: str) -> bool:
    fields = {f.name for f in dataclasses.fields(RSGNParams)} - {"edge_affinity"}
    return name in fields or name in _GRAPH_ARRAYS


def _stored_config(path, meta: dict) -> RSGNConfig:
    """The RSGNConfig in a model file's metadata; wrong types are one line naming the file."""
    raw = meta.get("config")
    if not isinstance(raw, dict):
        raise AtomsparkError(
            f"model file {path}: metadata 'config' must be a mapping of RSGN settings, got "
            f"{type(raw).__name__}"
        )
    bounds = raw.get("threshold_bounds", [0.0, 1.0])
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise AtomsparkError(
            f"model file {path}: config threshold_bounds must be a [low, high] pair, got "
            f"{bounds!r:.40}"
        )
    try:
        return RSGNConfig.from_meta(raw)
    except AtomsparkError as exc:
        raise AtomsparkError(f"model file {path}: config {exc}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise AtomsparkError(
            f"model file {path}: config has a value of the wrong type ({exc})"
        ) from None


def _stored_graph(path, arrays: dict, n: int) -> sp.csr_matrix:
    """The sparse graph from its three stored arrays, checked (index bounds, indptr) first."""
    missing = [k for k in _GRAPH_ARRAYS if k not in arrays]
    if missing:
        raise AtomsparkError(f"model file {path}: sparse model lacks {missing}")
    data = as_finite_array(f"model file {path}: graph_data", arrays.pop("graph_data"), ndim=1)
    indptr, indices = check_csr_structure(
        f"model file {path}: graph",
        arrays.pop("graph_indptr"),
        arrays.pop("graph_indices"),
        n,
        n,
        data.size,
    )
    return sp.csr_matrix((data, indices, indptr), shape=(n, n))
