"""How each unit model runs on Lava: one LavaUnit per model, declared beside its family.

The bundle builder, the NumPy reference of Lava's timing, the exporter and the verifier loop over
these declarations; nothing in mapping/ asks for a model by name. A unit model reaches its
LavaUnit through its sim model's name (registry.register_lava_unit, or serve_lava_unit for a
model another unit describes), and a bundle's population through its (family, arithmetic) pair. A new model adds one module here (its LavaUnit) beside its
Process in mapping/lava/procs/.
"""

from atomspark.mapping.lava.units import lif, rsgn, sigma_delta, source, vn  # noqa: E402, F401  (registration)
from atomspark.mapping.lava.units.registry import (
    LavaUnit,
    lava_unit,
    lava_unit_of_params,
    register_lava_unit,
    registered_lava_units,
    serve_lava_unit,
)

__all__ = [
    "LavaUnit",
    "lava_unit",
    "lava_unit_of_params",
    "register_lava_unit",
    "registered_lava_units",
    "serve_lava_unit",
]
