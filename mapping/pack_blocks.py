"""The core packer: the units of each group, in order, onto cores within the per-core limits, a
run of blocks at a time.

The rule (mapping/pack_reference.py applies it unit by unit; tests hold the two to the same
placements): a group stays whole on the current core if it fits there, else on a fresh core if
it fits an empty one; otherwise it is cut at its block boundaries into pieces (the units of a
block never part) and the pieces fill cores in order, a fresh core opening when the next piece
does not fit (a piece too big for an empty core gets a core of its own, which core_fit then
refuses).

Every limit a core is checked against grows with the pieces it takes: units, synapses, input
axons (distinct source units) and memory (synapses, state and axon table). So a core takes the
longest run of pieces that fits, found at once: units and synapses by cumulative sums over the
pieces, input axons as the sources first met in each piece of the run (one unique over the
run's distinct sources, those already on the core left out), the run grown by doubling so that
the work per core follows what the core holds. Synapse counts are whole numbers, so the sums
are exact and the decisions equal the unit-by-unit packer's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.core_fit import core_memory_array

FIRST_RUN = 64  # pieces looked at first for a core (doubled while all of them fit)


@dataclass(frozen=True)
class Pieces:
    """A network cut into the packer's pieces, in packing order (built once, packed under any
    limits). Piece p holds units order[unit_ptr[p]:unit_ptr[p + 1]] and has distinct sources
    src[src_ptr[p]:src_ptr[p + 1]]; group g holds pieces group_ptr[g]:group_ptr[g + 1] with
    distinct sources group_src[group_src_ptr[g]:group_src_ptr[g + 1]]."""

    n: int
    order: np.ndarray
    unit_ptr: np.ndarray
    group_ptr: np.ndarray
    units_cum: np.ndarray  # int64 (pieces + 1,): units in pieces before p
    synapses_cum: np.ndarray  # float (pieces + 1,): synapses in pieces before p
    src_ptr: np.ndarray
    src: np.ndarray
    src_piece: np.ndarray  # piece of each entry of src
    group_src_ptr: np.ndarray
    group_src: np.ndarray


def _csr_ptr(owner: np.ndarray, n_owners: int) -> np.ndarray:
    """Row pointer of entries sorted by owner."""
    return np.searchsorted(owner, np.arange(n_owners + 1), side="left").astype(np.int64)


def cut_pieces(
    groups: list[np.ndarray], adj: sp.csr_matrix, synapses: np.ndarray, block_of: np.ndarray
) -> Pieces:
    """Cut `groups` at their block boundaries and sum each piece's units, synapses and distinct
    sources (vectorised: one sort over the graph's synapses)."""
    n = adj.shape[0]
    gs = [np.asarray(g, dtype=np.int64).ravel() for g in groups]
    order = np.concatenate(gs) if gs else np.zeros(0, np.int64)
    group_of_pos = np.repeat(np.arange(len(gs)), [g.size for g in gs])
    block = np.asarray(block_of, dtype=np.int64)[order]
    starts_piece = np.ones(order.size, dtype=bool)
    starts_piece[1:] = (block[1:] != block[:-1]) | (group_of_pos[1:] != group_of_pos[:-1])
    starts = np.flatnonzero(starts_piece)
    n_pieces = starts.size
    unit_ptr = np.r_[starts, order.size].astype(np.int64)
    piece_of_pos = np.cumsum(starts_piece) - 1
    group_of_piece = group_of_pos[starts]
    syn = np.asarray(synapses, dtype=float)[order]
    piece_syn = np.add.reduceat(syn, starts) if n_pieces else np.zeros(0)

    csc = sp.csc_matrix(adj)
    csc.sum_duplicates()
    lens = (csc.indptr[order + 1] - csc.indptr[order]).astype(np.int64)
    total = int(lens.sum())
    first = np.cumsum(lens) - lens
    offsets = np.repeat(csc.indptr[order].astype(np.int64) - first, lens) + np.arange(total)
    key = np.unique(np.repeat(piece_of_pos, lens) * n + csc.indices[offsets].astype(np.int64))
    src_piece, src = key // max(n, 1), key % max(n, 1)
    gkey = np.unique(group_of_piece[src_piece] * n + src) if key.size else key
    return Pieces(
        n=n,
        order=order,
        unit_ptr=unit_ptr,
        group_ptr=_csr_ptr(group_of_piece, len(gs)),
        units_cum=np.r_[0, np.cumsum(np.diff(unit_ptr))].astype(np.int64),
        synapses_cum=np.r_[0.0, np.cumsum(piece_syn)],
        src_ptr=_csr_ptr(src_piece, n_pieces),
        src=src,
        src_piece=src_piece,
        group_src_ptr=_csr_ptr(gkey // max(n, 1), len(gs)),
        group_src=gkey % max(n, 1),
    )


@dataclass(frozen=True)
class CoreBudget:
    """What the packer may fill a core with (pack's squeeze applied to units, memory, axons)."""

    units: int
    synapses: int
    axons: float
    memory: float
    bytes_per_synapse: float

    def fits(self, units, synapses, axons):
        """Elementwise: do (units, synapses, input axons) fit one core? (output axons are
        checked after packing: they depend on where the targets land)"""
        memory = core_memory_array(synapses * self.bytes_per_synapse, units, axons, 0)
        return (
            (units <= self.units)
            & (synapses <= self.synapses)
            & (axons <= self.axons)
            & (memory <= self.memory)
        )


class _Packer:
    """The cores filled so far: the current core's contents and which sources it has axons for
    (mark[s] == core)."""

    def __init__(self, pc: Pieces, budget: CoreBudget):
        self.pc, self.budget = pc, budget
        self.unit_core = np.full(pc.n, -1, dtype=np.int64)
        self.mark = np.full(pc.n, -1, dtype=np.int64)
        self.core, self.units, self.synapses, self.axons = 0, 0, 0.0, 0

    def open_core(self) -> None:
        self.core += 1
        self.units, self.synapses, self.axons = 0, 0.0, 0

    def put(self, i: int, j: int, fresh: np.ndarray) -> None:
        """Pieces i..j-1 on the current core; `fresh`: their sources new to it."""
        pc = self.pc
        self.unit_core[pc.order[pc.unit_ptr[i] : pc.unit_ptr[j]]] = self.core
        self.units += int(pc.units_cum[j] - pc.units_cum[i])
        self.synapses += float(pc.synapses_cum[j] - pc.synapses_cum[i])
        self.axons += fresh.size
        self.mark[fresh] = self.core

    def group(self, g: int) -> None:
        pc, b = self.pc, self.budget
        p0, p1 = int(pc.group_ptr[g]), int(pc.group_ptr[g + 1])
        if p0 == p1:
            return
        gsrc = pc.group_src[pc.group_src_ptr[g] : pc.group_src_ptr[g + 1]]
        units = int(pc.units_cum[p1] - pc.units_cum[p0])
        syn = float(pc.synapses_cum[p1] - pc.synapses_cum[p0])
        fresh = gsrc[self.mark[gsrc] != self.core]
        if b.fits(self.units + units, self.synapses + syn, self.axons + fresh.size):
            self.put(p0, p1, fresh)
            return
        if b.fits(units, syn, gsrc.size):
            self.open_core()
            self.put(p0, p1, gsrc)
            return
        i = p0
        while i < p1:  # too big for any core: runs of its pieces
            j, fresh = self.run(i, p1)
            if j == i:
                self.open_core()
                j, fresh = self.run(i, p1)
                if j == i:  # a piece too big for an empty core: a core of its own
                    j, fresh = i + 1, self.pc.src[pc.src_ptr[i] : pc.src_ptr[i + 1]]
            self.put(i, j, fresh)
            i = j

    def run(self, i: int, end: int) -> tuple[int, np.ndarray]:
        """The longest run of pieces i..j-1 (j <= end) that fits the current core, and its
        sources new to the core."""
        pc, b = self.pc, self.budget
        u_cum = pc.units_cum[i + 1 : end + 1] - pc.units_cum[i]
        by_units = int(np.searchsorted(u_cum, b.units - self.units, side="right"))
        size = max(1, min(by_units + 1, FIRST_RUN))
        while True:
            w = min(end, i + size)
            units = self.units + (pc.units_cum[i + 1 : w + 1] - pc.units_cum[i])
            syn = self.synapses + (pc.synapses_cum[i + 1 : w + 1] - pc.synapses_cum[i])
            lo, hi = pc.src_ptr[i], pc.src_ptr[w]
            seg, piece = pc.src[lo:hi], pc.src_piece[lo:hi]
            new = self.mark[seg] != self.core
            seg, piece = seg[new], piece[new]
            uniq, first = np.unique(seg, return_index=True)
            first_piece = piece[first] - i
            axons = self.axons + np.cumsum(np.bincount(first_piece, minlength=w - i))
            bad = np.flatnonzero(~b.fits(units, syn, axons))
            if bad.size or w == end:
                j = int(bad[0]) if bad.size else w - i
                return i + j, uniq[first_piece < j]
            size *= 2


def pack_pieces(pc: Pieces, budget: CoreBudget) -> np.ndarray:
    """unit_core of the rule in the module docstring."""
    packer = _Packer(pc, budget)
    for g in range(pc.group_ptr.size - 1):
        packer.group(g)
    return packer.unit_core
