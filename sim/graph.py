"""The simulator graph: populations of units (one unit model each) and CSR projections with delays.

Everything is validated on construction so the engine kernels can trust the arrays they get.
Weights follow the y = W x convention (shape n_target x n_source, like Lava's Dense and scipy);
internally each projection is stored in fan-out orientation (CSR over source units).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.csr_check import check_sparse_matrix
from atomspark.sim.kernels.fanout import has_repeated_targets
from atomspark.sim.unit_model import UnitParams, model_of
from atomspark.sim.units.lif import FLOAT_DTYPES  # importing sim.units registers the built-ins


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
        model_of(self.params)  # an unregistered parameter class is an error here
        self.params.check_size(self.name, self.size)

    @property
    def is_fixed_point(self) -> bool:
        return self.params.is_fixed_point


WEIGHT_DTYPES = {"float64": np.float64, "float32": np.float32}
INDEX_LIMIT = 2**31  # int32 target indices while a population has fewer units
DELAY_DTYPES = (np.uint8, np.uint16, np.uint32)  # the narrowest that holds the largest delay


@dataclass(frozen=True)
class Projection:
    """Weighted connections source -> target, stored as fan-out CSR (indptr, indices, weights).

    weights: (n_target, n_source) dense array or scipy sparse matrix (stored entries are synapses,
    zeros included). delays: int >= 1 or an (n_target, n_source) array/sparse matrix read at the
    synapses. channel: which input current of the target receives it (LIF has channels 0 and 1).
    weight_exp: for fixed-point targets, weights are integers scaled by 2**weight_exp. A negative
    exponent is Lava's right shift of the projection's summed input per step (an arithmetic shift:
    floor), so it needs one delay for all synapses and scalar events.
    dtype: storage of the weights, "float64" (default) or "float32"; a Graph re-stores them in
    the target population's arithmetic (float32, float64, or the narrowest integer that holds
    fixed-point mantissas), so passing the target's dtype here only saves a transient copy.

    Storage (bytes per synapse): indices int32 (int64 only for >= 2**31 targets), weights 4 or 8
    (integers: 1, 2 or 4), delays 0 when every synapse has the same delay (`uniform_delay`, the
    common case: `delay` is then a zero-stride view) else uint8/uint16/uint32 per synapse.
    Equal weights (bitwise, as CUBA's one excitatory weight) are held once the same way: `data`
    is then a read-only zero-stride view and `uniform_weight` its value.
    After construction `weights` and `delays` are views of the stored arrays (scipy CSC,
    n_target x n_source), so the caller's matrices are not kept alive.
    """

    source: str
    target: str
    weights: object
    delays: object = 1
    channel: int = 0
    weight_exp: int = 0
    dtype: str | None = None
    indptr: np.ndarray = field(init=False, repr=False)
    indices: np.ndarray = field(init=False, repr=False)
    data: np.ndarray = field(init=False, repr=False)
    delay: np.ndarray = field(init=False, repr=False)
    uniform_delay: int | None = field(init=False)
    repeats_targets: bool = field(init=False, repr=False)
    shape: tuple[int, int] = field(init=False)

    def __post_init__(self) -> None:
        label = f"projection {self.source}->{self.target}"
        if self.dtype is not None and self.dtype not in WEIGHT_DTYPES:
            raise AtomsparkError(
                f"{label} dtype: must be one of {list(WEIGHT_DTYPES)} or None, got {self.dtype!r}"
            )
        dt = WEIGHT_DTYPES[self.dtype or "float64"]
        fan_out = _fan_out_csr(label, self.weights, dt)
        n_src, n_tgt = fan_out.shape
        with np.errstate(over="ignore"):  # out-of-range values become inf: reported below
            data = np.ascontiguousarray(fan_out.data, dtype=dt)
        if not np.all(np.isfinite(data)):
            raise AtomsparkError(
                f"{label} weights: contain NaN or Inf (or values beyond the {np.dtype(dt)} range)"
            )
        indptr = np.ascontiguousarray(fan_out.indptr, dtype=np.int64)
        idx_dtype = np.int32 if n_tgt < INDEX_LIMIT else np.int64
        indices = np.ascontiguousarray(fan_out.indices, dtype=idx_dtype)
        del fan_out
        uniform, delay = _read_delays(label, self.delays, (n_tgt, n_src), indptr, indices)
        object.__setattr__(self, "channel", require_int(f"{label} channel", self.channel, 0))
        exp = require_int(f"{label} weight_exp", self.weight_exp)
        if exp < 0 and uniform is None:
            raise AtomsparkError(
                f"{label} weight_exp: a negative exponent (right shift of each step's summed "
                f"input) needs one delay for all synapses, got {exp} with mixed delays"
            )
        object.__setattr__(self, "weight_exp", exp)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "uniform_delay", uniform)
        object.__setattr__(self, "shape", (n_tgt, n_src))
        object.__setattr__(self, "repeats_targets", bool(has_repeated_targets(indptr, indices)))
        self._store(data, delay)

    def _store(self, data: np.ndarray, delay: np.ndarray) -> None:
        """Set the weight and delay arrays and the zero-copy `weights` / `delays` views."""
        data = held_once_if_uniform(data)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "delay", delay)
        object.__setattr__(self, "weights", self._view(data))
        if self.uniform_delay is None:
            object.__setattr__(self, "delays", self._view(delay))
        else:
            object.__setattr__(self, "delays", self.uniform_delay)

    def _view(self, values: np.ndarray) -> sp.csc_matrix:
        """(n_target, n_source) CSC matrix over the stored fan-out arrays (no copy of values)."""
        return sp.csc_matrix((values, self.indices, self.indptr), shape=self.shape)

    def with_weight_dtype(self, dtype) -> Projection:
        """This projection with its weights stored as `dtype` (indices and delays shared)."""
        dtype = np.dtype(dtype)
        if self.data.dtype == dtype:
            return self
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below
            data = astype_held_once(self.data, dtype)
        if dtype.kind == "f" and not np.all(np.isfinite(data)):
            raise AtomsparkError(
                f"projection {self.source}->{self.target} weights: beyond the {dtype} range"
            )
        if dtype.kind in "iu" and not np.array_equal(data, self.data):
            raise AtomsparkError(
                f"projection {self.source}->{self.target} weights: do not fit {dtype} exactly"
            )
        new = copy.copy(self)
        object.__setattr__(new, "dtype", self.dtype if dtype.kind != "f" else dtype.name)
        new._store(data, self.delay)
        return new

    @property
    def n_synapses(self) -> int:
        return int(self.data.size)

    @property
    def uniform_weight(self):
        """The one weight of every synapse when all are equal and held once, else None."""
        if self.data.size > 1 and self.data.strides == (0,):
            return self.data.dtype.type(self.data[0])
        return None

    def out_degree(self) -> np.ndarray:
        """Number of synapses leaving each source unit."""
        return np.diff(self.indptr)

    @property
    def stored_bytes(self) -> dict[str, int]:
        """Bytes actually held per array (a uniform delay is one scalar: 0 bytes)."""
        return {
            "indptr": int(self.indptr.nbytes),
            "indices": int(self.indices.nbytes),
            "data": int(
                self.data.itemsize if self.uniform_weight is not None else self.data.nbytes
            ),
            "delay": 0 if self.uniform_delay is not None else int(self.delay.nbytes),
        }

    @property
    def bytes_per_synapse(self) -> float:
        """All stored bytes (indptr included) divided by the number of synapses."""
        return sum(self.stored_bytes.values()) / max(self.n_synapses, 1)


def held_once_if_uniform(values: np.ndarray, chunk: int = 1 << 22) -> np.ndarray:
    """`values` as a read-only zero-stride view of one entry when all entries are bitwise equal
    (-0.0 and 0.0 differ), else `values` itself. Compared a chunk at a time: no n-sized temporary."""
    if values.ndim != 1 or values.size < 2 or values.strides == (0,):
        return values
    bits = values.view(f"u{values.itemsize}")
    first = bits[0]
    for lo in range(0, bits.size, chunk):
        if not np.all(bits[lo : lo + chunk] == first):
            return values
    return np.broadcast_to(values[:1].copy(), values.shape)


def astype_held_once(values: np.ndarray, dtype) -> np.ndarray:
    """`values` as `dtype`; an array held once (zero stride) stays held once."""
    if values.ndim == 1 and values.size > 1 and values.strides == (0,):
        return np.broadcast_to(values[:1].astype(dtype), values.shape)
    return values.astype(dtype, copy=False)


def _fan_out_csr(label: str, weights, dtype) -> sp.csr_matrix:
    """(n_source, n_target) CSR with sorted indices; a new matrix (never the caller's arrays)."""
    if sp.issparse(weights):
        if weights.ndim != 2:
            raise AtomsparkError(f"{label} weights: expected a 2-D matrix")
        check_sparse_matrix(f"{label} weights", weights)
        fan_out = weights.T.tocsr(copy=True)
        if fan_out.dtype != dtype:
            if fan_out.dtype.kind not in "biuf":
                raise AtomsparkError(f"{label} weights: expected real numbers, got {fan_out.dtype}")
            with np.errstate(over="ignore"):  # out-of-range values become inf: reported later
                fan_out.data = fan_out.data.astype(dtype)
    else:  # the synapses are the nonzero entries at full precision, whatever the storage dtype
        fan_out = sp.csr_matrix(as_finite_array(f"{label} weights", weights, ndim=2).T)
    fan_out.sort_indices()
    return fan_out


def _read_delays(label, delays, shape, indptr, indices) -> tuple[int | None, np.ndarray]:
    """(uniform delay or None, per-synapse delays): a zero-stride view when uniform, else the
    narrowest unsigned array that holds them."""
    n_syn = indices.size
    if np.isscalar(delays):
        vals = None
        uniform = require_int(f"{label} delays", delays)
        low = uniform
    else:
        src = np.repeat(np.arange(shape[1], dtype=np.int64), np.diff(indptr))
        if sp.issparse(delays):
            check_sparse_matrix(f"{label} delays", delays)
            mat = sp.csr_matrix(delays)
            if mat.shape != shape:
                raise AtomsparkError(f"{label} delays: expected shape {shape}, got {mat.shape}")
            vals = np.asarray(mat[indices, src]).ravel()
        else:
            arr = as_finite_array(f"{label} delays", delays, ndim=2)
            if arr.shape != shape:
                raise AtomsparkError(f"{label} delays: expected shape {shape}, got {arr.shape}")
            vals = arr[indices, src]
        if np.any(vals != np.round(vals)):
            raise AtomsparkError(f"{label} delays: must be integers")
        low = int(vals.min()) if n_syn else 1
        uniform = low if n_syn == 0 or np.all(vals == vals[0]) else None
    if low < 1:
        raise AtomsparkError(
            f"{label} delays: must be >= 1 step (events arrive the step after emission at the "
            f"earliest), got minimum {low}"
        )
    high = uniform if uniform is not None else int(vals.max())
    for dt in DELAY_DTYPES:
        if high <= np.iinfo(dt).max:
            break
    else:
        raise AtomsparkError(f"{label} delays: must be < 2**32 steps, got {high}")
    if uniform is not None:
        return uniform, np.broadcast_to(np.array(uniform, dtype=dt), (n_syn,))
    return None, np.ascontiguousarray(vals, dtype=dt)


def weight_storage_dtype(pop: Population, data: np.ndarray) -> np.dtype:
    """The dtype a projection into `pop` stores its weights in: the population's float dtype, or
    for fixed point the narrowest of int8/int16/int32 that holds the integer mantissas."""
    if not pop.is_fixed_point:
        return np.dtype(FLOAT_DTYPES[pop.params.dtype])
    low, high = float(data.min(initial=0)), float(data.max(initial=0))
    for dt in (np.int8, np.int16, np.int32):
        if np.iinfo(dt).min <= low and high <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)  # rejected by Graph (scaled weights must fit 32 bits)


class Graph:
    """Populations plus projections, checked for consistency; ring_length defaults to max delay+1.

    Each projection is re-stored with its weights in the target's arithmetic (see
    `weight_storage_dtype`), so `graph.projections[i]` may be a new Projection sharing the
    given one's index and delay arrays."""

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
        for pop in self.populations:
            if not isinstance(pop, Population):
                raise AtomsparkError(f"populations: expected Population, got {type(pop).__name__}")
        names = [p.name for p in self.populations]
        if len(set(names)) != len(names):
            raise AtomsparkError(f"populations: names must be unique, got {names}")
        self.index = {n: i for i, n in enumerate(names)}
        max_delay = 1
        for j, proj in enumerate(self.projections):
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
            src_shape = src.params.payload_shape
            tgt_shape = tgt.params.payload_shape
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
                if proj.weight_exp < 0 and tgt_shape:
                    raise AtomsparkError(
                        f"{label} weight_exp: a negative exponent needs scalar events, but "
                        f"{tgt.name} receives payloads of shape {tgt_shape}"
                    )
                if np.any(proj.data != np.round(proj.data)):
                    raise AtomsparkError(f"{label} weights: a fixed-point target needs integers")
                if np.abs(proj.data).max(initial=0) * 2.0**proj.weight_exp >= 2**31:
                    raise AtomsparkError(f"{label} weights: scaled weights exceed 32 bits")
                model_of(tgt.params).check_weights(label, proj.data)
            elif proj.weight_exp != 0:
                raise AtomsparkError(f"{label} weight_exp: only for fixed-point targets")
            if proj.uniform_delay is not None:
                max_delay = max(max_delay, proj.uniform_delay)
            elif proj.delay.size:
                max_delay = max(max_delay, int(proj.delay.max()))
            self.projections[j] = proj.with_weight_dtype(weight_storage_dtype(tgt, proj.data))
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
