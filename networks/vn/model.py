"""Vector Network parameters: layers of rank-1 atoms (S, U columns), validated, saved to one file.

Layer l holds K_l atoms; atom i is the pair (s_i, u_i), column i of S_l (d_l x K_l) and of
U_l (m_l x K_l). Layers stack by x_{l+1} = U_l g_l, so m_l must equal d_{l+1}.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from atomspark.networks.model_io import check_representable, load_arrays, save_arrays
from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
)
from atomspark.sim.memory import require_memory

MODEL_KIND = "vn"


@dataclass(frozen=True)
class VNLayer:
    """One VN layer: dictionaries S (d x K) and U (m x K), l1 weight lam, optional hard top-k.

    Arrays keep a float32/float64 dtype of S (U follows S); anything else becomes float64.
    """

    S: np.ndarray
    U: np.ndarray
    lam: float
    topk: int | None = None

    def __post_init__(self) -> None:
        given = np.asarray(self.S).dtype
        dtype = given if given in (np.float32, np.float64) else np.float64
        S = as_finite_array("S", self.S, ndim=2, dtype=dtype)
        U = as_finite_array("U", self.U, ndim=2, dtype=S.dtype)
        if S.shape[1] < 1:
            raise AtomsparkError(
                f"S: a layer needs at least one atom (K >= 1), got K = {S.shape[1]}"
            )
        if S.shape[0] < 1 or U.shape[0] < 1:
            raise AtomsparkError(f"S, U: need at least one row, got {S.shape} and {U.shape}")
        if U.shape[1] != S.shape[1]:
            raise AtomsparkError(
                f"U: must have one column per atom like S ({S.shape[1]}), got {U.shape[1]}"
            )
        lam = require_positive("lam", self.lam, allow_zero=True)
        topk = self.topk
        if topk is not None:
            topk = require_int("topk", topk, minimum=1)
            if topk > S.shape[1]:
                raise AtomsparkError(f"topk: must be <= number of atoms {S.shape[1]}, got {topk}")
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "U", U)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "topk", topk)

    @property
    def input_dim(self) -> int:
        """d_l: size of the layer's input x_l."""
        return self.S.shape[0]

    @property
    def output_dim(self) -> int:
        """m_l: size of the layer's interface message U_l g_l."""
        return self.U.shape[0]

    @property
    def n_atoms(self) -> int:
        """K_l: number of atoms."""
        return self.S.shape[1]


@dataclass(frozen=True)
class VNModel:
    """A stack of VN layers with consistent sizes (m_l = d_{l+1}); top-k only on the top layer."""

    layers: tuple[VNLayer, ...]

    def __post_init__(self) -> None:
        layers = tuple(self.layers)
        if not layers:
            raise AtomsparkError("layers: a VN model needs at least one layer")
        for i, layer in enumerate(layers):
            if not isinstance(layer, VNLayer):
                raise AtomsparkError(f"layers[{i}]: expected a VNLayer, got {type(layer).__name__}")
        for i in range(len(layers) - 1):
            if layers[i].topk is not None:
                raise AtomsparkError(f"layers[{i}].topk: top-k is only allowed on the top layer")
            if layers[i].output_dim != layers[i + 1].input_dim:
                raise AtomsparkError(
                    f"layers[{i}].U has {layers[i].output_dim} rows but layers[{i + 1}].S has "
                    f"{layers[i + 1].input_dim}: x_(l+1) = U_l g_l needs them equal"
                )
        dtypes = {layer.S.dtype for layer in layers}
        if len(dtypes) != 1:
            raise AtomsparkError(
                f"layers: all layers must share one dtype, got {sorted(map(str, dtypes))}"
            )
        object.__setattr__(self, "layers", layers)

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def input_dim(self) -> int:
        return self.layers[0].input_dim

    @property
    def dtype(self) -> np.dtype:
        return self.layers[0].S.dtype

    @classmethod
    def from_arrays(
        cls,
        S: Sequence[np.ndarray],
        U: Sequence[np.ndarray],
        lam: float | Sequence[float],
        topk: int | None = None,
        dtype=np.float64,
    ) -> VNModel:
        """Build a model from per-layer S and U arrays; `lam` is one value or one per layer."""
        for name, seq in (("S", S), ("U", U)):
            if not hasattr(seq, "__len__"):
                raise AtomsparkError(f"{name}: expected one 2-D array per layer, got {seq!r}")
        if len(S) != len(U):
            raise AtomsparkError(f"S, U: need one array per layer each, got {len(S)} and {len(U)}")
        lams = _per_layer("lam", lam, len(S))
        layers = [
            VNLayer(
                S=as_finite_array(f"S[{i}]", s, ndim=2, dtype=dtype),
                U=as_finite_array(f"U[{i}]", u, ndim=2, dtype=dtype),
                lam=lams[i],
                topk=topk if i == len(S) - 1 else None,
            )
            for i, (s, u) in enumerate(zip(S, U))
        ]
        return cls(tuple(layers))

    @classmethod
    def random(
        cls,
        input_dim: int,
        layer_sizes: Sequence[tuple[int, int]],
        lam: float | Sequence[float] = 0.1,
        seed: int = 0,
        topk: int | None = None,
        dtype=np.float64,
    ) -> VNModel:
        """Random model with unit-norm atoms; layer_sizes = [(K_1, m_1), (K_2, m_2), ...]."""
        d = require_int("input_dim", input_dim, minimum=1)
        if len(layer_sizes) < 1:
            raise AtomsparkError("layer_sizes: need at least one (K, m) pair")
        rng = np.random.default_rng(require_int("seed", seed, minimum=0))
        S_list, U_list, below, need = [], [], d, 0.0
        for i, size in enumerate(layer_sizes):
            if np.ndim(size) != 1 or len(size) != 2:
                raise AtomsparkError(f"layer_sizes[{i}]: expected a (K, m) pair, got {size!r}")
            K = require_int(f"layer_sizes[{i}] K", size[0], minimum=1)
            m = require_int(f"layer_sizes[{i}] m", size[1], minimum=1)
            need += 8.0 * (2 * (below * K + m * K) + K * K)  # S, U, their draws, Gram (float64)
            below = m
        require_memory(
            f"input_dim {d}, layer_sizes {list(layer_sizes)}", need, "use smaller layers"
        )
        for size in layer_sizes:
            K, m = int(size[0]), int(size[1])
            S_list.append(unit_columns(rng.standard_normal((d, K))))
            U_list.append(unit_columns(rng.standard_normal((m, K))))
            d = m
        return cls.from_arrays(S_list, U_list, lam, topk=topk, dtype=dtype)

    def replace_dictionaries(self, S: Sequence[np.ndarray], U: Sequence[np.ndarray]) -> VNModel:
        """Same model with new S and U arrays (lam and top-k kept)."""
        layers = tuple(
            VNLayer(S=s, U=u, lam=layer.lam, topk=layer.topk)
            for layer, s, u in zip(self.layers, S, U, strict=True)
        )
        return VNModel(layers)

    def save(self, path: str | os.PathLike, task: dict | None = None) -> None:
        """Write the model to one versioned file (kind "vn"); `task`: the training config it
        was trained on (read back by model_io.read_task)."""
        arrays = {}
        for i, layer in enumerate(self.layers):
            arrays[f"S_{i}"] = layer.S
            arrays[f"U_{i}"] = layer.U
        meta = {
            "n_layers": self.n_layers,
            "lam": [layer.lam for layer in self.layers],
            "topk": self.layers[-1].topk,
            "dtype": str(self.dtype),
        }
        if task is not None:
            meta["task"] = task
        save_arrays(path, MODEL_KIND, arrays, meta)

    @classmethod
    def load(cls, path: str | os.PathLike) -> VNModel:
        """Read a model written by `save`; unknown or missing arrays, metadata of the wrong type
        and values beyond float32 are errors (checked before the model is built)."""
        arrays, meta = load_arrays(path, MODEL_KIND, accept=_is_layer_array)
        n, lams, topk, dtype = _layer_meta(path, meta, arrays)
        for key, arr in arrays.items():
            check_representable(f"model file {path}: {key}", arr)
        return cls.from_arrays(
            [arrays[f"S_{i}"] for i in range(n)],
            [arrays[f"U_{i}"] for i in range(n)],
            lams,
            topk=topk,
            dtype=dtype,
        )


LOADABLE_DTYPES = ("float32", "float64")  # the dtypes a VN model is stored and run in
_LAYER_ARRAY = re.compile(r"[SU]_(0|[1-9][0-9]{0,5})")


def _is_layer_array(name: str) -> bool:
    return _LAYER_ARRAY.fullmatch(name) is not None


def _layer_meta(path, meta: dict, arrays: dict) -> tuple[int, list, int | None, np.dtype]:
    """(n_layers, lam per layer, topk, dtype) from a model file's metadata, each type-checked and
    n_layers bounded by the arrays the file holds (exactly S_i and U_i for i < n_layers)."""
    where = f"model file {path}"
    missing_keys = [k for k in ("n_layers", "lam", "topk", "dtype") if k not in meta]
    if missing_keys:
        raise AtomsparkError(f"{where}: metadata incomplete (missing {missing_keys})")
    n = require_int(f"{where}: n_layers", meta["n_layers"], minimum=1)
    if n > len(arrays):
        raise AtomsparkError(
            f"{where}: metadata says n_layers = {n} but the file holds {len(arrays)} arrays; "
            f"a VN model stores S_i and U_i for each layer i"
        )
    expected = {f"{a}_{i}" for i in range(n) for a in "SU"}
    missing, unknown = sorted(expected - set(arrays)), sorted(set(arrays) - expected)
    if missing or unknown:
        raise AtomsparkError(
            f"{where}: n_layers = {n} but "
            + (f"missing arrays {missing}" if missing else f"unknown arrays {unknown}")
        )
    lams = meta["lam"]
    if not isinstance(lams, list) or len(lams) != n:
        raise AtomsparkError(f"{where}: lam must be a list of {n} numbers, got {lams!r:.60}")
    for i, lam in enumerate(lams):
        if isinstance(lam, bool) or not isinstance(lam, (int, float)):
            raise AtomsparkError(f"{where}: lam[{i}] must be a number, got {lam!r:.40}")
    topk = meta["topk"]
    if topk is not None and (isinstance(topk, bool) or not isinstance(topk, int)):
        raise AtomsparkError(f"{where}: topk must be an integer or null, got {topk!r:.40}")
    if meta["dtype"] not in LOADABLE_DTYPES:
        raise AtomsparkError(
            f"{where}: dtype must be one of {list(LOADABLE_DTYPES)}, got {meta['dtype']!r:.40}"
        )
    return n, lams, topk, np.dtype(meta["dtype"])


def unit_columns(A: np.ndarray) -> np.ndarray:
    """Scale each column of A to unit Euclidean norm (all-zero columns are left at zero)."""
    norms = np.linalg.norm(A, axis=0)
    return A / np.where(norms > 0, norms, 1.0)


def _per_layer(name: str, value: float | Sequence[float], n: int) -> list[float]:
    """Expand a scalar to n values, or check a sequence has n values."""
    if np.ndim(value) == 0:
        return [require_positive(name, value, allow_zero=True)] * n
    values = list(value)
    if len(values) != n:
        raise AtomsparkError(f"{name}: need one value per layer ({n}), got {len(values)}")
    return [require_positive(f"{name}[{i}]", v, allow_zero=True) for i, v in enumerate(values)]
