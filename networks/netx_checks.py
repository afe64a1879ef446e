"""Checks on an untrusted netx HDF5 file, made before any of its data is read.

`check_file_contents` walks the whole file once through its link table: external links, soft
links, datasets with external storage and virtual datasets are refused (a netx file is one
self-contained file, so none of them is needed, and each could make a read reach another file),
and every dataset's declared size is summed against the memory guard. The typed readers below
check a field's shape on its metadata before reading it, and its values' type and range after:
integers stay within what Loihi's fixed point (32-bit at the widest) holds, text is short ASCII.
"""

from __future__ import annotations

import numpy as np
from atomspark.sim.core import AtomsparkError
from atomspark.sim.memory import require_memory

MAX_DEPTH = 8  # a netx file nests /layer/<i>/neuron/<field>: four levels
MAX_OBJECTS = 1_000_000
MAX_TEXT = 64
INT_LIMIT = 2**31 - 1  # the widest Loihi fixed-point field (32-bit accumulators)


def check_file_contents(h5py, f, path) -> None:
    """Refuse links of any kind other than hard links inside the file, external storage and
    virtual datasets; bound the sum of every dataset's declared size."""
    declared, seen = 0, 0
    stack = [(f, "/", 0)]
    while stack:
        group, name, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise AtomsparkError(f"NET: {path} nests groups deeper than {MAX_DEPTH} at {name}")
        for key in group:
            seen += 1
            if seen > MAX_OBJECTS:
                raise AtomsparkError(f"NET: {path} holds more than {MAX_OBJECTS} objects")
            where = f"{name.rstrip('/')}/{key}"
            link = group.get(key, getlink=True)
            if isinstance(link, h5py.ExternalLink):
                raise AtomsparkError(
                    f"NET: {path} {where} is a link to another file ({link.filename}); a netx "
                    "file must hold its data itself"
                )
            if not isinstance(link, h5py.HardLink):
                raise AtomsparkError(
                    f"NET: {path} {where} is a {type(link).__name__}; netx files hold no links"
                )
            obj = group[key]
            if isinstance(obj, h5py.Group):
                stack.append((obj, where, depth + 1))
                continue
            if obj.external:
                raise AtomsparkError(
                    f"NET: {path} {where} stores its data in another file; refused (a netx "
                    "file must hold its data itself)"
                )
            if obj.is_virtual:
                raise AtomsparkError(f"NET: {path} {where} is a virtual dataset; refused")
            declared += int(obj.size or 0) * max(obj.dtype.itemsize, 8)
    require_memory(f"NET: {path} (declared dataset sizes)", declared, "give a smaller network")


def require_group(h5py, obj, where: str):
    """`obj` when it is an HDF5 group (a dataset where a group belongs is one line)."""
    if not isinstance(obj, h5py.Group):
        raise AtomsparkError(f"NET {where}: must be a group, found a {type(obj).__name__}")
    return obj


def read_text(g, key: str, where: str) -> str:
    """A short ASCII string stored as bytes, str or a one-element array of either."""
    if key not in g:
        raise AtomsparkError(f"NET {where}: missing '{key}'")
    ds = g[key]
    if not hasattr(ds, "shape") or int(np.prod(ds.shape)) != 1:
        raise AtomsparkError(f"NET {where}: '{key}' must be one string")
    v = np.asarray(ds[()]).reshape(-1)[0]
    if isinstance(v, np.ndarray | np.generic) and not isinstance(v, np.bytes_ | np.str_):
        raise AtomsparkError(f"NET {where}: '{key}' must be a string, got {v!r:.40}")
    try:
        text = v.decode("ascii") if isinstance(v, bytes) else str(v)
        text.encode("ascii")
    except UnicodeError:
        raise AtomsparkError(f"NET {where}: '{key}' must be ASCII text") from None
    if not text or len(text) > MAX_TEXT or not text.isprintable():
        raise AtomsparkError(f"NET {where}: '{key}' must be 1 to {MAX_TEXT} printable characters")
    return text


def read_ints(
    g, key: str, where: str, shape=None, max_size: int | None = None
) -> np.ndarray | None:
    """An integer-valued numeric array (stored as float or int) as int64, or None when absent.
    shape: the exact shape required (checked on the metadata, before reading); max_size: most
    elements. Values must be finite, whole and within +-INT_LIMIT (the error names `where`)."""
    if key not in g:
        return None
    ds = g[key]
    if not hasattr(ds, "shape") or ds.shape is None:
        raise AtomsparkError(f"NET {where}: '{key}' must be a numeric dataset")
    if shape is not None and tuple(ds.shape) != tuple(shape):
        raise AtomsparkError(
            f"NET {where}: '{key}' has shape {tuple(ds.shape)}, the layer needs {tuple(shape)}"
        )
    if max_size is not None and int(np.prod(ds.shape)) > max_size:
        raise AtomsparkError(
            f"NET {where}: '{key}' has {int(np.prod(ds.shape))} values, at most {max_size} allowed"
        )
    if ds.dtype.kind not in "biuf":
        raise AtomsparkError(f"NET {where}: '{key}' must hold numbers, got {ds.dtype}")
    v = np.asarray(ds[()], dtype=np.float64)
    if not np.all(np.isfinite(v)) or np.any(v != np.round(v)):
        raise AtomsparkError(f"NET {where}: '{key}' must hold integers (Loihi fixed point)")
    if v.size and np.abs(v).max() > INT_LIMIT:
        raise AtomsparkError(
            f"NET {where}: '{key}' holds {np.abs(v).max():.3g}, beyond the {INT_LIMIT} a Loihi "
            "fixed-point field holds"
        )
    return v.astype(np.int64)


def read_int(g, key: str, where: str, default=None, low: int = -INT_LIMIT, high: int = INT_LIMIT):
    """One integer in [low, high] (a scalar or one-element dataset), or `default` when absent."""
    if key not in g:
        if default is None:
            raise AtomsparkError(f"NET {where}: missing '{key}'")
        return default
    v = read_ints(g, key, where, max_size=1)
    if v.size != 1:
        raise AtomsparkError(f"NET {where}: '{key}' must be one integer")
    value = int(v.reshape(-1)[0])
    if not low <= value <= high:
        raise AtomsparkError(f"NET {where}: '{key}' must lie in [{low}, {high}], got {value}")
    return value


def check_conv_geometry(where: str, stride, padding, dilation, groups: int) -> None:
    """Stride and dilation >= 1, padding >= 0, groups >= 1 (output size is checked against the
    input when the graph is built)."""
    for name, pair, low in (
        ("stride", stride, 1),
        ("dilation", dilation, 1),
        ("padding", padding, 0),
    ):
        if min(pair) < low:
            raise AtomsparkError(f"NET {where}: '{name}' must be >= {low}, got {pair}")
    if groups < 1:
        raise AtomsparkError(f"NET {where}: 'groups' must be >= 1, got {groups}")


def weight_shape(
    g, kind: str, where: str, shape: tuple[int, ...], prev: tuple[int, ...] | None
) -> tuple:
    """The weight shape a layer needs, from its own 'shape' and the layer before (checked on the
    dataset's metadata before the weight is read): conv (C_out, C_in / groups, kH, kW) with 4
    axes exactly; dense (n_out, n_in), n_in the previous layer's size when there is one."""
    if "weight" not in g or not hasattr(g["weight"], "shape"):
        raise AtomsparkError(f"NET {where}: {kind} layer has no 'weight' dataset")
    stored = tuple(g["weight"].shape)
    if kind == "conv":
        if len(stored) != 4 or stored[0] != shape[0]:
            raise AtomsparkError(
                f"NET {where}: conv weight has shape {stored}; it needs 4 axes (C_out = "
                f"{shape[0]}, C_in / groups, kH, kW)"
            )
        return stored
    n_out = int(np.prod(shape))
    n_in = None if prev is None else int(np.prod(prev))
    # lava-dl stores weights squeezed (a (1, 10) matrix as (10,)): compare without size-1 axes
    fits = stored and stored[0] == n_out or (n_out == 1 and len(stored) == 1)
    if n_in is not None:
        fits = _squeezed(stored) == _squeezed((n_out, n_in))
    if not fits or len(stored) > 2:
        want = f"({n_out}, {n_in if n_in is not None else 'n_in'})"
        raise AtomsparkError(
            f"NET {where}: weight of shape {stored} does not fit the layer's {n_out} outputs "
            f"('shape') and its input; it needs {want}"
        )
    return stored


def _squeezed(shape) -> tuple[int, ...]:
    return tuple(int(s) for s in shape if s != 1)
