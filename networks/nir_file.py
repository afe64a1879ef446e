"""Read a NIR graph file (HDF5, as `nir.write` stores it) into plain node records, bounded.

The file is untrusted: it is opened with h5py only (nothing is unpickled, `nir.read` is not
used), links to other files and datasets stored outside the file are refused, every dataset's
shape and type are checked against the limits below before it is read, and the node count and
nesting depth are bounded. Layout: a group `node` with `type` = "NIRGraph", a group `nodes`
holding one group per node (each with `type` and its parameters) and `edges`, an (n, 2) array of
node names; a node of type "NIRGraph" nests a subgraph the same way.
networks/nir_graph.py turns the records into an engine Graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from atomspark.networks.hdf5_open import open_hdf5
from atomspark.sim.core import AtomsparkError

MAX_ELEMENTS = 2**26  # one parameter array (a 8192 x 8192 weight matrix)
MAX_TOTAL_ELEMENTS = 2**28  # all parameter arrays of the file together (2 GiB in float64)
MAX_NODES = 10_000
MAX_DEPTH = 8
MAX_TEXT = 256  # bytes of a node type or node name


@dataclass(frozen=True)
class NirNode:
    """One node: its NIR type name, numeric parameters, and the subgraph of a NIRGraph node."""

    name: str
    kind: str
    params: dict[str, np.ndarray] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)  # string parameters, e.g. padding="same"
    graph: NirRecord | None = None


@dataclass(frozen=True)
class NirRecord:
    """A graph as stored: nodes by name and edges (source, target) in file order."""

    nodes: dict[str, NirNode]
    edges: list[tuple[str, str]]
    version: str = ""


def is_nir_file(path: str | Path) -> bool:
    """True when `path` is an HDF5 file holding a NIR graph (a `node` group with a `type`)."""
    try:
        import h5py
    except ImportError:
        return False
    p = Path(path)
    if not p.is_file() or not h5py.is_hdf5(p):
        return False
    with h5py.File(p, "r") as f:
        return isinstance(f.get("node", getlink=True), h5py.HardLink) and "type" in f["node"]


def read_nir(path: str | Path) -> NirRecord:
    """Parse a NIR file; any problem raises AtomsparkError with one line naming it."""
    _, f, p = open_hdf5(path, "GRAPH", "NIR", "NIR .nir")
    with f:
        if "node" not in f:
            raise AtomsparkError(f"GRAPH: {p} has no 'node' group: not a NIR graph")
        budget = _Budget()
        version = _text(f, "version", "file") if "version" in f else ""
        record = _graph(f["node"], "graph", 0, budget)
    return NirRecord(record.nodes, record.edges, version)


@dataclass
class _Budget:
    nodes: int = 0
    elements: int = 0


def _child(group, key: str, where: str):
    """group[key] when it is a plain member of this file (no soft or external link)."""
    import h5py

    link = group.get(key, getlink=True)
    if link is None:
        raise AtomsparkError(f"NIR {where}: missing '{key}'")
    if not isinstance(link, h5py.HardLink):
        raise AtomsparkError(f"NIR {where}: '{key}' is a link ({type(link).__name__}); refused")
    return group[key]


def _text(group, key: str, where: str) -> str:
    import h5py

    d = _child(group, key, where)
    if not isinstance(d, h5py.Dataset) or d.shape not in ((), (1,)):
        raise AtomsparkError(f"NIR {where}: '{key}' must be one string")
    if d.dtype.kind not in "OSU" or (d.dtype.kind == "S" and d.dtype.itemsize > MAX_TEXT):
        raise AtomsparkError(f"NIR {where}: '{key}' must be a string")
    v = d[()]
    v = v.reshape(-1)[0] if isinstance(v, np.ndarray) else v
    v = v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
    if len(v) > MAX_TEXT:
        raise AtomsparkError(f"NIR {where}: '{key}' is longer than {MAX_TEXT} characters")
    return v


def _array(d, key: str, where: str, budget: _Budget) -> np.ndarray:
    """A numeric dataset, its size checked before it is read."""
    if d.external is not None or d.is_virtual:
        raise AtomsparkError(f"NIR {where}: '{key}' is stored outside the file; refused")
    if d.dtype.kind not in "biuf":
        raise AtomsparkError(f"NIR {where}: '{key}' must be numeric, got {d.dtype}")
    n = int(np.prod(d.shape, dtype=np.int64))
    if n > MAX_ELEMENTS:
        raise AtomsparkError(
            f"NIR {where}: '{key}' has {n} elements, above the limit of {MAX_ELEMENTS}"
        )
    budget.elements += n
    if budget.elements > MAX_TOTAL_ELEMENTS:
        raise AtomsparkError(f"NIR {where}: the file's arrays exceed {MAX_TOTAL_ELEMENTS} elements")
    v = np.asarray(d[()])
    if v.dtype.kind == "f" and not np.all(np.isfinite(v)):
        raise AtomsparkError(f"NIR {where}: '{key}' holds a non-finite value")
    return v


def _edges(g, where: str) -> list[tuple[str, str]]:
    import h5py

    if "edges" not in g:
        return []
    d = _child(g, "edges", where)
    if not isinstance(d, h5py.Dataset) or d.dtype.kind not in "OSU":
        raise AtomsparkError(f"NIR {where}: 'edges' must be an array of node-name pairs")
    if d.size == 0:
        return []
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] > 4 * MAX_NODES:
        raise AtomsparkError(f"NIR {where}: 'edges' must be (n, 2) with n <= {4 * MAX_NODES}")
    out = []
    for a, b in d[()]:
        a, b = (x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in (a, b))
        if len(a) > MAX_TEXT or len(b) > MAX_TEXT:
            raise AtomsparkError(f"NIR {where}: an edge names a node longer than {MAX_TEXT}")
        out.append((a, b))
    return out


def _graph(g, where: str, depth: int, budget: _Budget) -> NirRecord:
    import h5py

    if depth > MAX_DEPTH:
        raise AtomsparkError(f"NIR {where}: subgraphs nested deeper than {MAX_DEPTH}")
    kind = _text(g, "type", where)
    if kind != "NIRGraph":
        raise AtomsparkError(f"NIR {where}: expected a NIRGraph, got type {kind!r}")
    group = _child(g, "nodes", where)
    if not isinstance(group, h5py.Group):
        raise AtomsparkError(f"NIR {where}: 'nodes' must be a group")
    nodes = {}
    for name in group:
        budget.nodes += 1
        if budget.nodes > MAX_NODES:
            raise AtomsparkError(f"NIR {where}: more than {MAX_NODES} nodes")
        sub = _child(group, name, where)
        if not isinstance(sub, h5py.Group):
            raise AtomsparkError(f"NIR node {name!r}: must be a group")
        nodes[name] = _node(sub, name, depth, budget)
    return NirRecord(nodes, _edges(g, where))


def _node(g, name: str, depth: int, budget: _Budget) -> NirNode:
    import h5py

    where = f"node {name!r}"
    kind = _text(g, "type", where)
    if kind == "NIRGraph":
        return NirNode(name, kind, graph=_graph(g, where, depth + 1, budget))
    params, texts = {}, {}
    for key in g:
        if key == "type":
            continue
        d = _child(g, key, where)
        if isinstance(d, h5py.Group):  # input_type / output_type dictionaries: shapes
            for sub in d:
                dd = _child(d, sub, where)
                if isinstance(dd, h5py.Dataset):
                    params[f"{key}.{sub}"] = _array(dd, f"{key}.{sub}", where, budget)
            continue
        if d.dtype.kind in "OSU":
            texts[key] = _text(g, key, where)
            continue
        params[key] = _array(d, key, where, budget)
    return NirNode(name, kind, params, texts)
