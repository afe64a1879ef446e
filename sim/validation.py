"""Input checks and the error type (kept at this path; they live in atomspark.sim.core)."""

from atomspark.sim.core import (
    AtomsparkError,
    as_finite_array,
    require_int,
    require_positive,
    require_shape,
)

__all__ = ["AtomsparkError", "as_finite_array", "require_int", "require_positive", "require_shape"]
