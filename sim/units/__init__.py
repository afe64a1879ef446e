"""The built-in unit models, one module each: parameters, NumPy reference, kernel adapter, declaration.

Importing this package registers them all with the unit-model registry (sim/unit_model.py). A new
model is one module that registers itself when imported, plus its tests.
"""

from atomspark.sim.units import (  # noqa: F401  (registration)
    lif,
    rsgn,
    rsgn_fixed,
    rsgn_fixed_split,
    sigma_delta,
    vn,
    vn_fixed,
)
