"""The benchmark families by name; each module is imported only when its family is used.

To add a family, write scenarios/bench/<module>.py defining FAMILY = Family(...) (family.py) and
add one line here.
"""

from __future__ import annotations

import importlib

from atomspark.scenarios.bench.family import Family
from atomspark.sim.core import AtomsparkError

FAMILY_MODULES = {
    "fn1d": "atomspark.scenarios.bench.fn1d",
    "bumps2d": "atomspark.scenarios.bench.bumps2d",
    "nbody": "atomspark.scenarios.bench.nbody",
    "mnist-comp": "atomspark.scenarios.bench.mnist_comp",
}


def family_names() -> list[str]:
    return list(FAMILY_MODULES)


def get_family(name: str) -> Family:
    """The family called `name`; an unknown name is a one-line error listing the valid ones."""
    if name not in FAMILY_MODULES:
        raise AtomsparkError(f"benchmark {name!r}: unknown (valid: {', '.join(family_names())})")
    return importlib.import_module(FAMILY_MODULES[name]).FAMILY
