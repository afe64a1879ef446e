"""The simulator graph: populations of units (one unit model each) and CSR projections with delays.

Everything is validated on construction so the engine kernels can trust the arrays they get.
Weights follow the y = W x convention (shape n_target x n_source, like Lava's Dense and scipy);
internally each projection is stored in fan-out orientation (CSR over source units).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.sim.units_lif import LIFFixedParams, LIFParams
from atomspark.sim.units_rsgn import RSGNNodeParams
from atomspark.sim.units_vn import VNParams
from atomspark.sim.units_vn_fixed import VNFixedParams, lava_weight_mantissas
from atomspark.sim.validation import AtomsparkError, as_finite_array, require_int

UnitParams = LIFParams | LIFFixedParams | VNParams | RSGNNodeParams | VNFixedParams


@dataclass(frozen=True)
class Population:
    """`size` units of one unit model; `params` holds the model's parameters (and biases/drive)."""

    name: str
    size: int
    params: UnitParams

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise AtomsparkError(f"population name: must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "size", require_int(f"{self.name}.size", self.size, minimum=1))
        if not isinstance(
            self.params, (LIFParams, LIFFixedParams, VNParams, RSGNNodeParams, VNFixedParams)
        ):
            raise AtomsparkError(
                f"{self.name}.params: expected LIFParams, LIFFixedParams, VNParams, "
                f"RSGNNodeParams or VNFixedParams, "
                f"got {type(self.params).__name__}"
            )
        self.params.check_size(self.name, self.size)

    @property
    def is_fixed_point(self) -> bool:
        return self.params.is_fixed_point


@dataclass(frozen=True)
class Projection:
    """Weighted connections source -> target, stored as fan-out CSR (indptr, indices, weights).

    weights: (n_target, n_source) dense array or scipy sparse matrix (stored entries are synapses,
    zeros included). delays: int >= 1 or an (n_target, n_source) array/sparse matrix read at the
    synapses. channel: which input current of the target receives it (LIF has channels 0 and 1).
    weight_exp: for fixed-point targets, weights are integers scaled by 2**weight_exp (>= 0).
    """

    source: str
    target: str
    weights: object
    delays: object = 1
    channel: int = 0
    weight_exp: int = 0
    indptr: np.ndarray = field(init=False)
    indices: np.ndarray = field(init=False)
    data: np.ndarray = field(init=False)
    delay: np.ndarray = field(init=False)
    shape: tuple[int, int] = field(init=False)

    def __post_init__(self) -> None:
        label = f"projection {self.source}->{self.target}"
        w = self.weights
        if sp.issparse(w):
            if w.ndim != 2:
                raise AtomsparkError(f"{label} weights: expected a 2-D matrix")
            fan_out = sp.csr_matrix(w.T, dtype=np.float64)
            fan_out.sort_indices()
        else:
            arr = as_finite_array(f"{label} weights", w, ndim=2)
            fan_out = sp.csr_matrix(arr.T)
            fan_out.sort_indices()
        data = np.asarray(fan_out.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            raise AtomsparkError(f"{label} weights: contain NaN or Inf")
        n_src, n_tgt = fan_out.shape
        indptr = np.asarray(fan_out.indptr, dtype=np.int64)
        indices = np.asarray(fan_out.indices, dtype=np.int64)
        rows = np.repeat(np.arange(n_src, dtype=np.int64), np.diff(indptr))
        delay = _read_delays(label, self.delays, (n_tgt, n_src), indices, rows)
        object.__setattr__(self, "channel", require_int(f"{label} channel", self.channel, 0))
        exp = require_int(f"{label} weight_exp", self.weight_exp)
        if exp < 0:
            raise AtomsparkError(
                f"{label} weight_exp: must be >= 0 (a right shift of the summed input is not "
                f"modelled), got {exp}"
            )
        object.__setattr__(self, "weight_exp", exp)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "delay", delay)
        object.__setattr__(self, "shape", (n_tgt, n_src))

    @property
    def n_synapses(self) -> int:
        return int(self.data.size)

    def out_degree(self) -> np.ndarray:
        """Number of synapses leaving each source unit."""
        return np.diff(self.indptr)


def _read_delays(label, delays, shape, tgt, src) -> np.ndarray:
    if np.isscalar(delays):
        d = require_int(f"{label} delays", delays)
        out = np.full(tgt.size, d, dtype=np.int64)
    else:
        if sp.issparse(delays):
            mat = sp.csr_matrix(delays)
            if mat.shape != shape:
                raise AtomsparkError(f"{label} delays: expected shape {shape}, got {mat.shape}")
            vals = np.asarray(mat[tgt, src]).ravel()
        else:
            arr = as_finite_array(f"{label} delays", delays, ndim=2)
            if arr.shape != shape:
                raise AtomsparkError(f"{label} delays: expected shape {shape}, got {arr.shape}")
            vals = arr[tgt, src]
        if np.any(vals != np.round(vals)):
            raise AtomsparkError(f"{label} delays: must be integers")
        out = np.asarray(vals, dtype=np.int64)
    if out.size and out.min() < 1:
        raise AtomsparkError(
            f"{label} delays: must be >= 1 step (events arrive the step after emission at the "
            f"earliest), got minimum {int(out.min())}"
        )
    return out


class Graph:
    """Populations plus projections, checked for consistency; ring_length defaults to max delay+1."""

    def __init__(
        self,
        populations: Sequence[Population],
        projections: Sequence[Projection] = (),
        ring_length: int | None = None,
    ) -> None:
        self.populations = list(populations)
        self.projections = list(projections)
        if not self.populations:
            raise AtomsparkError("populations: a graph needs at least one population")
        names = [p.name for p in self.populations]
        if len(set(names)) != len(names):
            raise AtomsparkError(f"populations: names must be unique, got {names}")
        self.index = {n: i for i, n in enumerate(names)}
        max_delay = 1
        for proj in self.projections:
            if not isinstance(proj, Projection):
                raise AtomsparkError(f"projections: expected Projection, got {type(proj).__name__}")
            label = f"projection {proj.source}->{proj.target}"
            for end in (proj.source, proj.target):
                if end not in self.index:
                    raise AtomsparkError(f"{label}: unknown population {end!r}")
            src = self.populations[self.index[proj.source]]
            tgt = self.populations[self.index[proj.target]]
            if proj.shape != (tgt.size, src.size):
                raise AtomsparkError(
                    f"{label} weights: expected shape ({tgt.size}, {src.size}), got {proj.shape}"
                )
            src_shape = getattr(src.params, "payload_shape", ())
            tgt_shape = getattr(tgt.params, "payload_shape", ())
            if src_shape != tgt_shape:
                raise AtomsparkError(
                    f"{label}: source events carry payload shape {src_shape} but the target "
                    f"receives {tgt_shape}"
                )
            n_ch = tgt.params.n_channels
            if proj.channel >= n_ch:
                raise AtomsparkError(
                    f"{label} channel: target {tgt.name} has {n_ch} channel(s), got {proj.channel}"
                )
            if tgt.is_fixed_point:
                if np.any(proj.data != np.round(proj.data)):
                    raise AtomsparkError(f"{label} weights: a fixed-point target needs integers")
                if np.abs(proj.data).max(initial=0) * 2.0**proj.weight_exp >= 2**31:
                    raise AtomsparkError(f"{label} weights: scaled weights exceed 32 bits")
                if isinstance(tgt.params, VNFixedParams):  # Lava's Sparse keeps 8-bit mantissas
                    lava_weight_mantissas(label, proj.data)
            elif proj.weight_exp != 0:
                raise AtomsparkError(f"{label} weight_exp: only for fixed-point targets")
            if proj.delay.size:
                max_delay = max(max_delay, int(proj.delay.max()))
        if ring_length is None:
            ring_length = max_delay + 1
        self.ring_length = require_int("ring_length", ring_length, minimum=2)
        if max_delay >= self.ring_length:
            raise AtomsparkError(
                f"delays: maximum delay {max_delay} does not fit a ring buffer of length "
                f"{self.ring_length} (need ring_length > max delay)"
            )

    @property
    def sizes(self) -> np.ndarray:
        return np.array([p.size for p in self.populations], dtype=np.int64)

    @property
    def offsets(self) -> np.ndarray:
        """Global index of each population's first unit."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    @property
    def total_units(self) -> int:
        return int(self.sizes.sum())

    def population(self, name: str) -> Population:
        if name not in self.index:
            raise AtomsparkError(f"population {name!r}: not in the graph ({list(self.index)})")
        return self.populations[self.index[name]]

    def unit_adjacency(self) -> sp.csr_matrix:
        """(total_units x total_units) CSR, row = global source unit, column = global target unit;
        each entry counts the synapses between the two units (for placement traffic)."""
        n = self.total_units
        offs = self.offsets
        rows, cols = [], []
        for proj in self.projections:
            s0, t0 = offs[self.index[proj.source]], offs[self.index[proj.target]]
            rows.append(np.repeat(np.arange(proj.shape[1]), np.diff(proj.indptr)) + s0)
            cols.append(proj.indices + t0)
        if not rows:
            return sp.csr_matrix((n, n))
        r, c = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n, n))
