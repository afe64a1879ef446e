"""Which core holds which compartments of a split RSGN (mapping/lava/rsgn_split.py), what each
core then needs, and the search for block sizes that fit a chip's cores.

Blocks: node cores hold `nodes_per_core` nodes (their d transform compartments and their norm
compartment each); message-sum cores hold `sum_features` features of `sum_nodes` nodes. Nodes
are ordered so that pools and W's neighbours sit close (reverse Cuthill-McKee of their union),
so a pool's exchange stays on few cores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.sim.core import AtomsparkError, require_int


@dataclass(frozen=True)
class SplitBlocks:
    """Block sizes of a split layout (module docstring)."""

    nodes_per_core: int
    sum_features: int
    sum_nodes: int

    def to_dict(self) -> dict:
        return {"nodes_per_core": self.nodes_per_core, "sum_features": self.sum_features,
                "sum_nodes": self.sum_nodes}  # fmt: skip


def node_order(w_t: sp.spmatrix, pool: sp.spmatrix) -> np.ndarray:
    """Nodes ordered so that neighbours (by W and by pool) are close: reverse Cuthill-McKee."""
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    pattern = (abs(sp.csr_matrix(w_t)) + abs(sp.csr_matrix(pool))).tocsr()
    pattern.data[:] = 1
    pattern = (pattern + pattern.T).tocsr()
    return np.asarray(reverse_cuthill_mckee(pattern, symmetric_mode=True), np.int64)


def assign_cores(n: int, d: int, blocks: SplitBlocks, order: np.ndarray) -> list[dict]:
    """[{core, kind, index}] with kind-level compartment indices (mapping/lava/rsgn_split.py):
    node cores first (transform and norm processes share a core), then message-sum cores."""
    nb = require_int("nodes_per_core", blocks.nodes_per_core, 1)
    kf = require_int("sum_features", blocks.sum_features, 1)
    sn = require_int("sum_nodes", blocks.sum_nodes, 1)
    order = np.asarray(order, np.int64)
    if sorted(order.tolist()) != list(range(n)):
        raise AtomsparkError("node order: must be a permutation of the nodes")
    cores, core = [], 0
    c = np.arange(d)
    for start in range(0, n, nb):
        nodes = order[start : start + nb]
        cores.append({"core": core, "kind": "transform", "index": (nodes[:, None] * d + c).ravel()})
        cores.append({"core": core, "kind": "norm", "index": nodes.copy()})
        core += 1
    for k0 in range(0, d, kf):
        feats = np.arange(k0, min(k0 + kf, d))
        for start in range(0, n, sn):
            nodes = order[start : start + sn]
            index = (feats[:, None] * n + nodes[None, :]).ravel()
            cores.append({"core": core, "kind": "sum", "index": index})
            core += 1
    return cores
