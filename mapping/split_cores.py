"""Which core holds which compartments of a split RSGN (mapping/lava/rsgn_split.py), what each
core then needs, and the search for block sizes that fit a chip's cores.

Blocks: node cores hold `nodes_per_core` nodes (their d transform compartments and their norm
compartment each); message-sum cores hold `sum_features` features of `sum_nodes` nodes. Nodes
are ordered so that pools and W's neighbours sit close (reverse Cuthill-McKee of their union),
so a pool's exchange stays on few cores.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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


# ------------------------------------------------------------------ what each core needs

STATE_WORD_BYTES = 3  # ESTIMATE: one 24-bit word per state variable or input accumulator
AXON_ENTRY_BYTES = 4  # ESTIMATE: one routing-table entry per input axon and per output axon
# state variables per compartment (plus one accumulator per input channel): sum: m_shift, m;
# transform: h, z, b_h, LayerNorm gain and bias; norm: alpha, a (two words), mu, 1/std,
# received, theta, |P|
STATE_WORDS = {"sum": 2, "transform": 5, "norm": 8}
MEMORY_NOTE = (
    "a core's 192 KB hold synapses (1 B each), neuron state (ESTIMATE: 3 B per 24-bit word, one "
    "per state variable and input accumulator of each compartment) and axon tables (ESTIMATE: "
    "4 B per input and per output axon)"
)


@dataclass(frozen=True)
class SplitCoreCost:
    """One core of a split layout: what it holds and needs (per model step for instructions)."""

    core: int
    kind: str  # "node" (transform + norm processes) or "sum"
    nodes: int
    compartments: int
    synapses: int
    state_words: int
    fan_in_axons: int
    fan_out_axons: int
    memory_bytes: float
    microcode_instructions: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _blocks_of(order: np.ndarray, size: int, n: int) -> np.ndarray:
    """Block number of each node when `order` is cut into blocks of `size`."""
    block = np.empty(n, np.int64)
    block[order] = np.arange(n) // size
    return block


def _hits(pattern_t: sp.csr_matrix, block: np.ndarray, n_blocks: int) -> np.ndarray:
    """Per source node: how many blocks hold at least one of its targets (pattern_t: (target,
    source) pattern)."""
    coo = sp.csr_matrix(pattern_t).tocoo()
    pairs = np.unique(coo.col * n_blocks + block[coo.row])
    return np.bincount(pairs // n_blocks, minlength=pattern_t.shape[1])


def _rows(pattern: sp.csr_matrix, nodes: np.ndarray) -> tuple[int, int]:
    """(stored entries, distinct columns) of the rows `nodes`."""
    sub = pattern[nodes]
    return int(sub.nnz), int(np.unique(sub.indices).size)


def split_core_costs(model, blocks: SplitBlocks, order: np.ndarray, hw) -> list[SplitCoreCost]:
    """Every core's use of each resource for `model` (a mapping/lava/rsgn_split.SplitModel) in
    `blocks` with node order `order`: exact counts of the channels of rsgn_split.channels (each
    stored weight of every copy is a synapse; an input axon per (source compartment, source
    port); an output axon per (source compartment, source port, destination core))."""
    from atomspark.mapping.lava.rsgn_split import CONTROL, part_channels
    from atomspark.mapping.split_microcode import instructions_per_step

    n, d = model.n, model.d
    order = np.asarray(order, np.int64)
    w = sp.csr_matrix(model.w_t, copy=True)
    w.data = np.ones_like(w.data, dtype=np.int8)
    pool = sp.csr_matrix(model.pool)
    parts = part_channels(model)
    c_wh, c_pool = len(parts["wh"]), len(parts["pool"])
    c_gather = len(parts["hn2"]) + len(parts["z"]) + len(parts["z2"])
    c_ctl = len(CONTROL)
    nb, kf, sn = blocks.nodes_per_core, blocks.sum_features, blocks.sum_nodes
    node_block, sum_block = _blocks_of(order, nb, n), _blocks_of(order, sn, n)
    n_node, n_sum_nodes = -(-n // nb), -(-n // sn)
    hit_sum = _hits(w, sum_block, n_sum_nodes)
    hit_flag = _hits(w, node_block, n_node)
    hit_pool = _hits(pool, node_block, n_node)
    two = model.two_part_w_h
    ins = {kind: instructions_per_step(kind, two) for kind in ("sum", "transform", "norm")}
    bps = hw.limits.bytes_per_synapse
    out = []
    for b in range(n_node):
        nodes = order[b * nb : (b + 1) * nb]
        m = nodes.size
        w_nnz, w_cols = _rows(w, nodes)
        p_nnz, p_cols = _rows(pool, nodes)
        synapses = c_wh * m * d * d + (c_gather + c_ctl) * m * d + c_pool * p_nnz + w_nnz
        state = m * d * (STATE_WORDS["transform"] + c_wh + c_ctl) + m * (
            STATE_WORDS["norm"] + 1 + c_gather + c_pool
        )
        fan_in = m * d + c_gather * m * d + c_ctl * m + c_pool * p_cols + w_cols
        fan_out = (
            d * int(hit_sum[nodes].sum()) + c_gather * m * d + c_ctl * m
            + c_pool * int(hit_pool[nodes].sum()) + int(hit_flag[nodes].sum())
        )  # fmt: skip
        out.append(_cost(b, "node", m, m * (d + 1), synapses, state, fan_in, fan_out, bps,
                         m * d * ins["transform"] + m * ins["norm"]))  # fmt: skip
    core = n_node
    sum_rows = [_rows(w, order[b * sn : (b + 1) * sn]) for b in range(n_sum_nodes)]
    for k0 in range(0, d, kf):
        k = min(kf, d - k0)
        for b in range(n_sum_nodes):
            nodes = order[b * sn : (b + 1) * sn]
            w_nnz, w_cols = sum_rows[b]  # the same nodes' rows for every feature block
            comps = k * nodes.size
            out.append(_cost(core, "sum", nodes.size, comps, k * w_nnz,
                             comps * (STATE_WORDS["sum"] + 1), k * w_cols, comps, bps,
                             comps * ins["sum"]))  # fmt: skip
            core += 1
    return out


def _cost(core, kind, nodes, comps, synapses, state, fan_in, fan_out, bps, instr) -> SplitCoreCost:
    memory = synapses * bps + state * STATE_WORD_BYTES + (fan_in + fan_out) * AXON_ENTRY_BYTES
    return SplitCoreCost(core, kind, int(nodes), int(comps), int(synapses), int(state),
                         int(fan_in), int(fan_out), float(memory), int(instr))  # fmt: skip


def readout_pieces(
    d: int, classes: int, stored: tuple[int, ...], groups: list[np.ndarray], hw,
    score_cores: int = 1,
) -> tuple[list[SplitCoreCost], list[SplitCoreCost]]:  # fmt: skip
    """The processes of a readout (mapping/split_readout.py) as core loads, not yet placed
    (core -1): one feature partial per group (d compartments, a synapse and an input axon per
    product it sums, d output axons per core holding an accumulator: `score_cores` of them),
    and one accumulator per weight part (C compartments, `stored[k]` synapses, W_k's stored
    weights, from every partial, an input axon per partial compartment; the first also the
    bias's C). Standard processes: no microcode (the product's is the node cores', per sample)."""
    bps = hw.limits.bytes_per_synapse
    p, c = len(groups), classes
    partials = [_cost(-1, "readout", idx.size // d, d, idx.size, 2 * d, idx.size,
                      d * score_cores, bps, 0) for idx in groups]  # fmt: skip
    scores = [_cost(-1, "score", 0, c, p * w + (c if k == 0 else 0), 2 * c,
                    p * d + (c if k == 0 else 0), c, bps, 0)
              for k, w in enumerate(stored)]  # fmt: skip
    return partials, scores


def readout_group_size(nodes_per_core: int, d: int, hw) -> int:
    """Node cores whose products one feature partial sums: as many as its input axons take."""
    from atomspark.mapping.split_readout import node_cores_per_group

    return node_cores_per_group(nodes_per_core, d, hw.limits.max_fan_in_axons_per_core)


@dataclass(frozen=True)
class ReadoutPlacement:
    """Where a split bundle's readout sits (place_readout): the node cores per partial, each
    partial's compartments (node-major j d + c), the cores of the partials and of the
    accumulators (one per weight part), every placed piece, every core's total use (the
    network's cores with what they took on, then the added cores) and their problems."""

    group: int
    groups: list[np.ndarray]
    partial_cores: list[int]
    score_cores: list[int]
    stored: tuple[int, ...]
    classes: int
    pieces: list[SplitCoreCost]
    cores: list[SplitCoreCost]
    added: int
    problems: list[str]
    composed: bool = False  # float: one Sparse of cls_w per node core into the accumulator

    def note(self) -> str:
        """Where the readout sits, in words."""
        p, k = len(self.groups), len(self.score_cores)
        shared = sum(c.core < len(self.cores) - self.added for c in self.pieces)
        if not self.added:
            where = "all on the layout's own cores (shared, no core added)"
        elif shared:
            where = (f"{shared} of {len(self.pieces)} on the layout's own cores (shared), "
                     f"{self.added} core(s) added")  # fmt: skip
        else:
            where = f"on {self.added} added core(s)"
        if self.composed:
            return (f"every product through cls_w into one accumulator (float: no partial), "
                    f"{where}")  # fmt: skip
        return (f"{p} feature partial(s) of {self.group} node core(s) each and {k} "
                f"accumulator(s), {where}")  # fmt: skip


def _merge(a: SplitCoreCost, b: SplitCoreCost) -> SplitCoreCost:
    """Core `a` holding `b` too: every resource summed."""
    add = ("compartments", "synapses", "state_words", "fan_in_axons", "fan_out_axons",
           "memory_bytes", "microcode_instructions")  # fmt: skip
    return replace(a, **{f: getattr(a, f) + getattr(b, f) for f in add})


def _fits_with(c: SplitCoreCost, piece: SplitCoreCost, limits: dict) -> bool:
    """Whether core `c` still fits every limit holding `piece` too."""
    return all(getattr(c, f) + getattr(piece, f) <= limits[key] for f, key in LIMITED.items())


def _put(totals: list[SplitCoreCost], piece: SplitCoreCost, limits: dict) -> int:
    """Place `piece` on the core with the least memory in use that still fits it (a core of
    `totals`, updated), else on a new core after them; returns its core."""
    fitting = [i for i, t in enumerate(totals) if _fits_with(t, piece, limits)]
    if fitting:
        i = min(fitting, key=lambda i: (totals[i].memory_bytes, i))
        totals[i] = _merge(totals[i], piece)
        return totals[i].core
    core = 1 + max((t.core for t in totals), default=-1)
    totals.append(replace(piece, core=core))
    return core


def _place(cores: list[dict], d: int, group: int, network: list[SplitCoreCost], classes: int,
           stored: tuple[int, ...], hw, composed: bool = False) -> ReadoutPlacement:  # fmt: skip
    from atomspark.mapping.core_fit import core_limits
    from atomspark.mapping.split_readout import readout_groups

    limits = core_limits(hw)
    groups = readout_groups(cores, d, group)
    # the products leave every transform compartment: an output axon each to its partial's core
    totals = [replace(c, fan_out_axons=c.fan_out_axons + c.nodes * d,
                      memory_bytes=c.memory_bytes + c.nodes * d * AXON_ENTRY_BYTES)
              if c.kind == "node" else c for c in network]  # fmt: skip
    if composed:  # float: the products straight into one accumulator, no partial
        n = sum(c.nodes for c in network if c.kind == "node")
        score = _cost(-1, "score", 0, classes, n * stored[0] + classes, 2 * classes,
                      n * d + classes, classes, hw.limits.bytes_per_synapse, 0)  # fmt: skip
        core = _put(totals, score, limits)
        return ReadoutPlacement(group, [], [], [core], tuple(stored), classes,
                                [replace(score, core=core)], totals,
                                len(totals) - len(network), split_problems(totals, hw), True)  # fmt: skip
    _, scores = readout_pieces(d, classes, stored, groups, hw)
    score_cores = [_put(totals, s, limits) for s in scores]
    partials, _ = readout_pieces(d, classes, stored, groups, hw, len(set(score_cores)))
    partial_cores = [_put(totals, p, limits) for p in partials]
    pieces = [replace(p, core=c) for p, c in zip(partials + scores, partial_cores + score_cores)]
    return ReadoutPlacement(group, groups, partial_cores, score_cores, tuple(stored), classes,
                            pieces, totals, len(totals) - len(network),
                            split_problems(totals, hw))  # fmt: skip


def place_readout(
    n: int, d: int, blocks: SplitBlocks, order: np.ndarray, network: list[SplitCoreCost],
    classes: int, stored: tuple[int, ...], hw, group: int | None = None, composed: bool = False,
) -> ReadoutPlacement:  # fmt: skip
    """Where the readout of a split layout goes (the one placement export_split writes and
    chip_cost prices): for each group size (node cores per feature partial, from as many as a
    core's input axons take down to one; `group`: that one only), the accumulators and then the
    partials each on the network's core with the least memory in use whose limits (every
    resource: split_problems) still hold with it, else on a new core; the placement that fits
    with the fewest added cores, then the fewest partials. `network`: the layout's core costs
    (split_core_costs); `stored`: the synapses each accumulator holds per partial (the weight
    part's stored weights, split_readout.stored_weights). `composed` (the float bundle): no
    partial, every transform compartment's product into the one accumulator through cls_w, as
    mapping/lava/split_run.py wires it: `stored` holds cls_w's stored weights per node."""
    cores = assign_cores(n, d, blocks, order)
    node_cores = sum(c["kind"] == "transform" for c in cores)
    top = min(readout_group_size(blocks.nodes_per_core, d, hw), max(node_cores, 1))
    sizes = [require_int("group", group, 1)] if group is not None else range(top, 0, -1)
    if composed:
        return _place(cores, d, sizes[0], network, classes, stored, hw, True)
    best = None
    for g in sizes:
        cand = _place(cores, d, g, network, classes, stored, hw)
        key = (bool(cand.problems), cand.added, len(cand.groups))
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


LIMITED = {  # cost field -> core_fit.core_limits key
    "compartments": "compartments",
    "memory_bytes": "synaptic_memory_bytes",
    "fan_in_axons": "fan_in_axons",
    "fan_out_axons": "fan_out_axons",
}


def split_problems(costs: list[SplitCoreCost], hw) -> list[str]:
    """One line per resource some core exceeds (empty: every core fits)."""
    from atomspark.mapping.core_fit import core_limits

    limits = core_limits(hw)
    out = []
    for field_name, key in LIMITED.items():
        over = [c for c in costs if getattr(c, field_name) > limits[key]]
        if over:
            worst = max(over, key=lambda c: getattr(c, field_name))
            out.append(
                f"{field_name}: {len(over)} of {len(costs)} cores over the limit (worst: "
                f"{worst.kind} core {worst.core} needs {getattr(worst, field_name):.0f} > "
                f"{limits[key]:.0f})"
            )
    return out


def split_margins(costs: list[SplitCoreCost], hw) -> dict[str, float]:
    """Per limited resource: 1 - (the busiest core's use / the limit); negative: over."""
    from atomspark.mapping.core_fit import core_limits

    limits = core_limits(hw)
    return {
        f: 1.0 - max((getattr(c, f) for c in costs), default=0) / limits[key]
        for f, key in LIMITED.items()
    }


@dataclass(frozen=True)
class SplitSearch:
    """The block sizes the search chose (the fewest cores that fit), or why none fits."""

    fits: bool
    blocks: SplitBlocks | None
    order: np.ndarray
    costs: list[SplitCoreCost]
    problems: list[str]
    tried: int


def _halvings(top: int) -> list[int]:
    out, v = [], top
    while v >= 1:
        out.append(v)
        v = v // 2 if v > 1 else 0
    return out


def search_blocks(model, hw) -> SplitSearch:
    """Message-sum blocks with the fewest cores that fit (features halved, then nodes), then the
    largest node block that fits; or, when even one node or one feature per core does not fit,
    the problems of the smallest blocks."""
    from atomspark.mapping.core_fit import core_limits

    n, d = model.n, model.d
    order = node_order(model.w_t, model.pool)
    units = core_limits(hw)["compartments"]
    tried = 0
    sum_choice = None
    candidates = sorted(
        ((kf, sn) for kf in _halvings(d) for sn in _halvings(n) if kf * sn <= units),
        key=lambda c: (-(-d // c[0]) * -(-n // c[1]), -c[1]),
    )
    for kf, sn in candidates:
        tried += 1
        costs = split_core_costs(model, SplitBlocks(n, kf, sn), order, hw)
        if not split_problems([c for c in costs if c.kind == "sum"], hw):
            sum_choice = (kf, sn)
            break
    if sum_choice is None:
        smallest = SplitBlocks(1, 1, 1)
        costs = split_core_costs(model, smallest, order, hw)
        return SplitSearch(False, None, order, costs, split_problems(costs, hw), tried)
    top = max(1, min(n, units // (d + 1)))
    kf, sn = sum_choice
    fewest = -(-d // kf) * -(-n // sn) + -(-n // top)  # the sum cores and the fewest node cores
    board = hw.limits.cores_per_chip * hw.limits.chips_per_board
    if fewest > board:  # no node block can bring the cores within the board: say so at once
        costs = split_core_costs(model, SplitBlocks(top, kf, sn), order, hw)
        problems = [f"needs at least {fewest} cores ({-(-d // kf) * -(-n // sn)} message-sum "
                    f"cores of {kf} feature(s) x {sn} nodes, the fewest that fit, and "
                    f"{-(-n // top)} node cores), more than the board's {board} cores "
                    f"({hw.limits.chips_per_board} chip(s) of {hw.limits.cores_per_chip})"]  # fmt: skip
        return SplitSearch(False, None, order, costs, problems, tried)
    for nb in range(top, 0, -1):
        tried += 1
        blocks = SplitBlocks(nb, *sum_choice)
        costs = split_core_costs(model, blocks, order, hw)
        if not split_problems(costs, hw):
            return SplitSearch(True, blocks, order, costs, [], tried)
    blocks = SplitBlocks(1, *sum_choice)
    costs = split_core_costs(model, blocks, order, hw)
    problems = ["no node block fits, not even one node per core: " + p
                for p in split_problems(costs, hw)]  # fmt: skip
    return SplitSearch(False, None, order, costs, problems, tried)
