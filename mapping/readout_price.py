"""The split bundle's readout (mapping/split_readout.py) in a chip row's price: what chip_cost
adds to the network's compartment profile, placement and adjacency so that the readout's cores
are priced as the bundle holds them (mapping/split_cores.place_readout, the placement export_split
writes: on the layout's own cores where their limits allow, else on added cores): static power
for the cores in use over the whole run, their spikes, synaptic events,
routes and updates. No chip step is added: a sample's readout runs while the next sample loads
(mapping/lava/rsgn_split.stream_steps drains only after the stream's last sample).

Per sample, at the profile step of its last emit: every transform compartment sends its product
r (an output port of the transform compartments: spikes and routes, no update of its own; its
microcode is the node cores', mapping/costs.split_schedule) to its feature partial, one synapse
each; each partial compartment updates and sends its sum to the accumulators (one synapse per
stored, nonzero, weight of each part); each accumulator compartment updates. Float (the bundle
holds no partial: one Sparse of cls_w per node core into one accumulator, which may exceed a
core's input axons; the row says so): each product reaches the accumulator through cls_w's
stored weights. Every chip step the
bias source (a host process) sends b through a Sparse of ones into the first accumulator: C
synaptic events per chip step on the first accumulator's core. Otherwise the readout's compartments
are serviced every step as idle updates, as every placed compartment is.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.energy import ProgramLoad
from atomspark.mapping.placement import Placement
from atomspark.mapping.split_cores import ReadoutPlacement
from atomspark.mapping.split_readout import PARTIAL_BITS, feature_matrix
from atomspark.sim.profile import COUNTER_FIELDS, Profile

PRODUCTS, PARTIALS, SCORES = "readout products", "readout partials", "readout scores"
PORTS = (PRODUCTS,)  # estimate_energy's ports: the products leave the transform compartments


def readout_steps(steps: int, n_samples: int) -> np.ndarray:
    """The profile steps at which a sample's readout runs: each sample's last (the whole run's
    last when the steps do not divide into samples)."""
    per_sample = steps // n_samples if steps % n_samples == 0 else 0
    return np.arange(per_sample - 1, steps, per_sample) if per_sample else np.array([steps - 1])


def readout_profile(
    n: int, d: int, ro: ReadoutPlacement, steps: int, n_samples: int, barriers: np.ndarray
) -> Profile:
    """The readout's counters (module docstring): products, partials and accumulators; a
    partial's sum reaches each accumulator through its stored weights (ro.stored)."""
    p, classes, parts = len(ro.groups), ro.classes, len(ro.stored)
    sizes = np.array([n * d, p * d, parts * classes], np.int64)
    c = {k: np.zeros((steps, 3), np.int64) for k in COUNTER_FIELDS}
    last = readout_steps(steps, n_samples)
    c["events"][last, 0] = n * d
    # a product reaches its partial, or (float, composed) every class through cls_w
    c["synops"][last, 0] = n * ro.stored[0] if ro.composed else n * d
    c["events"][last, 1] = p * d
    c["synops"][last, 1] = p * sum(ro.stored)
    c["synops"][:, 2] = classes * np.asarray(barriers, np.int64)  # the bias, every chip step
    c["updates"][:, 1:] = sizes[1:]
    c["active"][last, 1:] = sizes[1:]
    c["payload_bits"][:] = c["events"] * PARTIAL_BITS
    units = [np.full(n * d, last.size), np.full(p * d, last.size), np.zeros(parts * classes)]
    return Profile([PRODUCTS, PARTIALS, SCORES], sizes, steps, unit_events=units, **c)


def with_readout(
    scalar: Profile,
    placement: Placement,
    adjacency: sp.csr_matrix,
    programs: ProgramLoad,
    ro: ReadoutPlacement,
    n: int,
    d: int,
    n_samples: int,
    barriers: np.ndarray,
) -> tuple[Profile, Placement, sp.csr_matrix, ProgramLoad]:
    """The split layout's compartment profile, placement, adjacency and microcode with the
    readout added on the cores mapping/split_cores.place_readout gives it (the bundle's): its
    compartments after the network's (A, B, R as mapping/layouts.split_placement orders them:
    the transform compartments B are n d .. 2 n d)."""
    extra = readout_profile(n, d, ro, scalar.steps, n_samples, barriers)
    profile = Profile(
        [*scalar.population_names, *extra.population_names],
        np.concatenate([scalar.population_sizes, extra.population_sizes]),
        scalar.steps,
        unit_events=[*scalar.unit_events, *extra.unit_events],
        **{k: np.hstack([getattr(scalar, k), getattr(extra, k)]) for k in COUNTER_FIELDS},
    )
    p, classes = len(ro.groups), ro.classes
    unit_core = np.concatenate([
        placement.unit_core,
        placement.unit_core[n * d : 2 * n * d],  # the products leave the transform compartments
        np.repeat(np.asarray(ro.partial_cores, np.int64), d),
        np.repeat(np.asarray(ro.score_cores, np.int64), classes),
    ])  # fmt: skip
    n_cores = max(int(unit_core.max()) + 1, placement.n_cores)
    cpc = placement.cores_per_chip
    placed = Placement(unit_core, n_cores, -(-n_cores // cpc), cpc, placement.strategy)
    base, pd, sc = placement.unit_core.size, p * d, len(ro.stored) * classes
    if ro.composed:  # float: every product straight to every accumulator compartment
        products = sp.coo_matrix(np.ones((n * d, sc)))
        products.col += pd
    else:  # (n d, P d): product -> partial
        products = sp.coo_matrix(feature_matrix(n, d, ro.groups).T)
    src = [base + products.row, np.repeat(base + n * d + np.arange(pd), sc)]
    dst = [base + n * d + products.col, np.tile(base + n * d + pd + np.arange(sc), pd)]
    edges = sp.csr_matrix(
        (np.ones(products.nnz + pd * sc), (np.concatenate(src), np.concatenate(dst))),
        shape=(unit_core.size, unit_core.size),
    )
    adj = sp.block_diag([adjacency, sp.csr_matrix((unit_core.size - base,) * 2)], "csr") + edges
    ins = np.asarray(programs.instructions, float)
    ins = np.hstack([ins, np.zeros((ins.shape[0], n_cores - ins.shape[1]))])
    return profile, placed, adj, ProgramLoad(ins, programs.energy_j, programs.time_s)
