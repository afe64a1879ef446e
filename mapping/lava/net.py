"""LavaNet: the network as Lava will run it, as plain data (what a bundle stores).

A population is one Lava neuron Process described by its family ("lif", "vn", "rsgn"), its
arithmetic ("float" or "fixed"), and named scalars and per-unit arrays; which unit model that is,
and how it is built, run and checked, is its LavaUnit (mapping/lava/units/).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import scipy.sparse as sp
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError


def alpha_record(name: str) -> str:
    """Name of the record holding an RSGN population's activations alpha per step."""
    return f"{name}.alpha"


@dataclass(frozen=True)
class LavaPopulation:
    """One Lava neuron Process: `family` and `arithmetic` name its LavaUnit; `scalars` and
    `arrays` (per unit) are the parameters that unit's `describe` wrote (see its module)."""

    name: str
    model: str
    arithmetic: str
    size: int
    scalars: dict
    arrays: dict

    @property
    def output_size(self) -> int:
        """Length of one step's output: N * d vector payloads (RSGN nodes), else one per unit."""
        return self.size * int(self.scalars.get("width", 1))


@dataclass(frozen=True)
class LavaConnection:
    """Sparse connection source -> target; weights (n_target, n_source) CSR; graded payloads when
    the source's events carry values. Fixed point: weights are Lava's 8-bit integers. Vector
    payloads (RSGN): weights are per node (W^T, stored zeros kept: each stored entry is a
    synapse); build_lava expands them to the per-component kron(W^T, I_d)."""

    source: str
    target: str
    weights: sp.csr_matrix
    weight_exp: int = 0
    graded: bool = False

    def __post_init__(self) -> None:
        label = f"projection {self.source}->{self.target}"
        object.__setattr__(self, "weight_exp", fx.check_weight_exp(label, self.weight_exp))


@dataclass(frozen=True)
class LavaNet:
    populations: list[LavaPopulation]
    connections: list[LavaConnection] = field(default_factory=list)

    @property
    def arithmetic(self) -> str:
        modes = {p.arithmetic for p in self.populations}
        if len(modes) != 1:
            raise AtomsparkError(f"populations mix arithmetic modes {sorted(modes)}")
        return modes.pop()

    def population(self, name: str) -> LavaPopulation:
        for p in self.populations:
            if p.name == name:
                return p
        raise AtomsparkError(f"population {name!r}: not in the network")
