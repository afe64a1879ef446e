"""Checks of an untrusted Lava bundle (metadata.json + weights.npz) before anything runs it.

Every field is type-checked (sizes positive integers within bounds, scalars plain finite
numbers, arithmetic consistent across the bundle), every connection's sparse index arrays are
checked against the populations they join (sim/csr_check), names used as file names are plain
names, and the network is then built once as an engine Graph: the unit models' own checks
(array lengths per unit, integer fields of fixed-point units, Loihi weight ranges) run on it, so
no bundle reaches the NumPy reference, the engine or Lava with an inconsistent array.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError
from atomspark.sim.csr_check import check_csr_structure

ARITHMETIC = ("float", "fixed")
MAX_UNITS = 2**31 - 1  # int32 unit indices (sim/graph.INDEX_LIMIT); larger is no bundle we write
MAX_NAME = 200
BUNDLE_ARRAY = re.compile(r"pop(0|[1-9][0-9]{0,5})_[A-Za-z_][A-Za-z0-9_]{0,63}|"
                          r"conn(0|[1-9][0-9]{0,5})_(data|indices|indptr)")  # fmt: skip


def is_bundle_array(name: str) -> bool:
    """Whether `name` is an array a bundle's weights.npz may hold."""
    return BUNDLE_ARRAY.fullmatch(name) is not None


def check_file_name(label: str, name) -> str:
    """`name` when it can be used as one file name inside a folder: a non-empty string of at
    most MAX_NAME characters, no path separator, no NUL, not '.' or '..' (so neither an absolute
    path nor a climbing name can place a file outside the folder)."""
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise AtomsparkError(
            f"{label}: must be a name of 1 to {MAX_NAME} characters, got {name!r:.60}"
        )
    if "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        raise AtomsparkError(
            f"{label}: {name!r:.60} cannot be used as a file name (no '/', '\\', NUL, '.' or '..')"
        )
    return name


def _where(out: Path, what: str) -> str:
    return f"bundle {out}: {what}"


def _int(out: Path, what: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AtomsparkError(
            _where(out, f"{what} must be an integer in [{low}, {high}], got {value!r:.40}")
        )
    return value


def _mapping(out: Path, what: str, value) -> dict:
    if not isinstance(value, dict):
        raise AtomsparkError(_where(out, f"{what} must be a mapping, got {type(value).__name__}"))
    return value


def _list(out: Path, what: str, value) -> list:
    if not isinstance(value, list):
        raise AtomsparkError(_where(out, f"{what} must be a list, got {type(value).__name__}"))
    return value


def check_population_fields(out: Path, i: int, p, arithmetic: str) -> dict:
    """Type and range of one population entry of metadata.json; returns it."""
    p = _mapping(out, f"populations[{i}]", p)
    missing = [
        k for k in ("name", "model", "arithmetic", "size", "scalars", "arrays") if k not in p
    ]
    if missing:
        raise AtomsparkError(_where(out, f"populations[{i}] lacks {missing}"))
    name = check_file_name(_where(out, f"populations[{i}] name"), p["name"])
    if not isinstance(p["model"], str):
        raise AtomsparkError(_where(out, f"population {name} model must be a string"))
    if p["arithmetic"] != arithmetic:
        raise AtomsparkError(
            _where(
                out,
                f"population {name} arithmetic {p['arithmetic']!r:.20} differs from the "
                f"bundle's {arithmetic!r}",
            )  # fmt: skip
        )
    _int(out, f"population {name} size", p["size"], 1, MAX_UNITS)
    for key, value in _mapping(out, f"population {name} scalars", p["scalars"]).items():
        ok = isinstance(value, (bool, int, str)) or (
            isinstance(value, float) and math.isfinite(value)
        )
        if not ok:
            raise AtomsparkError(
                _where(
                    out,
                    f"population {name} scalar {key!r:.40} must be a finite number, "
                    f"got {value!r:.40}",
                )  # fmt: skip
            )
        if arithmetic == "fixed" and isinstance(value, float):
            raise AtomsparkError(
                _where(
                    out,
                    f"population {name} scalar {key!r:.40} is {value!r}, but a fixed-point "
                    "population holds integers only",
                )  # fmt: skip
            )
    for key in _list(out, f"population {name} arrays", p["arrays"]):
        if not isinstance(key, str) or not is_bundle_array(f"pop{i}_{key}"):
            raise AtomsparkError(
                _where(out, f"population {name} array name {key!r:.40} is not valid")
            )
    return p


def check_array_values(out: Path, key: str, arr: np.ndarray, arithmetic: str) -> np.ndarray:
    """Finite values; integers only in a fixed-point bundle."""
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise AtomsparkError(_where(out, f"array {key} holds NaN or Inf"))
    if arithmetic == "fixed" and arr.dtype.kind == "f" and np.any(arr != np.round(arr)):
        raise AtomsparkError(
            _where(out, f"array {key} holds fractions, but the bundle is fixed point")
        )
    return arr


def checked_weights(
    out: Path, i: int, c, sizes: dict[str, int], arrays: dict, arithmetic: str
) -> sp.csr_matrix:
    """Connection i's (n_target, n_source) CSR weights, its index arrays checked first."""
    c = _mapping(out, f"projections[{i}]", c)
    missing = [k for k in ("source", "target", "shape", "weight_exp", "graded") if k not in c]
    if missing:
        raise AtomsparkError(_where(out, f"projections[{i}] lacks {missing}"))
    src, tgt = c["source"], c["target"]
    if not isinstance(src, str) or not isinstance(tgt, str) or src not in sizes or tgt not in sizes:
        raise AtomsparkError(
            _where(out, f"projection {src!r:.40}->{tgt!r:.40} names no population")
        )
    label = f"projection {src}->{tgt}"
    want = [sizes[tgt], sizes[src]]
    if c["shape"] != want:
        raise AtomsparkError(
            _where(out, f"{label} shape {c['shape']!r:.40} must be {want} (target, source sizes)")
        )
    _int(out, f"{label} weight_exp", c["weight_exp"], -(2**31), 2**31 - 1)
    if not isinstance(c["graded"], bool):
        raise AtomsparkError(_where(out, f"{label} graded must be true or false"))
    parts = {}
    for part in ("data", "indices", "indptr"):
        key = f"conn{i}_{part}"
        if key not in arrays:
            raise AtomsparkError(_where(out, f"weights.npz lacks array {key!r}"))
        parts[part] = arrays[key]
    data = check_array_values(out, f"conn{i}_data", np.asarray(parts["data"]), arithmetic)
    if data.ndim != 1 or data.dtype.kind not in "biuf":
        raise AtomsparkError(_where(out, f"{label} weights must be a 1-D numeric array"))
    indptr, indices = check_csr_structure(
        _where(out, label), parts["indptr"], parts["indices"], want[0], want[1], data.size
    )
    return sp.csr_matrix((data, indices, indptr), shape=tuple(want))


def check_bundle_graph(out: Path, net) -> None:
    """Build the engine Graph of `net` once: every unit model's own checks (array lengths per
    unit, fixed-point integer fields and ranges, Loihi weight ranges) run on the bundle."""
    from atomspark.mapping.lava.bundle import to_graph

    try:
        to_graph(net)
    except AtomsparkError as exc:
        raise AtomsparkError(_where(out, str(exc))) from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise AtomsparkError(
            _where(out, f"a population's fields are inconsistent ({type(exc).__name__}: {exc})")
        ) from None
