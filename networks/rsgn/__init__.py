"""atomspark.networks.rsgn: the NumPy reference of Resonant Sparse Geometry Networks.

Published configuration (as released by the authors) and a sparse, event-driven configuration of
one model; see model.py for the parameter breakdown and dynamics.py for the step equations.
"""

from atomspark.networks.rsgn.dynamics import (
    ForwardResult,
    PropagationResult,
    connection_weights,
    divisive_inhibition,
    forward,
    ignition,
    inhibition_neighbourhood,
    initial_state,
    out_degrees,
    propagate,
    readout,
    spark_points,
)
from atomspark.networks.rsgn.geometry import (
    check_in_ball,
    exp_map0,
    log_map0,
    mobius_add,
    pairwise_distances,
    poincare_distance,
    project_to_ball,
)
from atomspark.networks.rsgn.model import (
    RSGNConfig,
    RSGNParams,
    build_connectivity,
    init_params,
    load_model,
    parameter_count,
    save_model,
    validate_graph,
    validate_params,
)
from atomspark.networks.rsgn.plasticity import (
    PlasticityConfig,
    RewardBaseline,
    StructuralReport,
    activity_correlation,
    hebbian_affinity_update,
    homeostatic_thresholds,
    prune_and_sprout,
)

__all__ = [
    "ForwardResult",
    "PlasticityConfig",
    "PropagationResult",
    "RSGNConfig",
    "RSGNParams",
    "RewardBaseline",
    "StructuralReport",
    "activity_correlation",
    "build_connectivity",
    "check_in_ball",
    "connection_weights",
    "divisive_inhibition",
    "exp_map0",
    "forward",
    "hebbian_affinity_update",
    "homeostatic_thresholds",
    "ignition",
    "inhibition_neighbourhood",
    "init_params",
    "initial_state",
    "load_model",
    "log_map0",
    "mobius_add",
    "out_degrees",
    "pairwise_distances",
    "parameter_count",
    "poincare_distance",
    "project_to_ball",
    "propagate",
    "prune_and_sprout",
    "readout",
    "save_model",
    "spark_points",
    "validate_graph",
    "validate_params",
]
