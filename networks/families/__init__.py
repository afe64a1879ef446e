"""The built-in model families (each module declares and registers one or more), and the
registry's lookups: import from here to find a family with the built-ins registered."""

from atomspark.networks.families import baselines, rsgn, vn  # noqa: F401 (registers them)
from atomspark.networks.model_family import (  # noqa: F401 (the registry's lookups)
    family_named,
    family_of_config,
    registered_families,
    task_loss_title,
    task_metric,
)
