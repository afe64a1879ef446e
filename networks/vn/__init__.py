"""Vector Networks: NumPy reference model, energy, hierarchical settle and Atomic-Hebb learning.

This package is the oracle that the event engine, the fixed-point mapping and the PyTorch path
are tested against. Modules: model (parameters, storage), energy (layer energy, drive, Gram,
step size, prox), hierarchy (inter-layer messages, joint energy), settle (ISTA/FISTA block
solves, hierarchical settle, masked prediction), hebb (Atomic-Hebb, dictionary learning).
"""

from atomspark.networks.vn.energy import (
    drive,
    gram,
    keep_top_k,
    layer_energy,
    lipschitz_constant,
    prox,
    soft_threshold,
    step_size,
)
from atomspark.networks.vn.hebb import LearnResult, atomic_hebb, hebb_layer_update, learn_dictionary
from atomspark.networks.vn.hierarchy import (
    layer_energies,
    layer_input,
    layer_inputs,
    layer_target,
    layer_targets,
    total_energy,
)
from atomspark.networks.vn.model import MODEL_KIND, VNLayer, VNModel, unit_columns
from atomspark.networks.vn.settle import (
    LayerSolution,
    SettleResult,
    predict_masked,
    proximal_descent,
    settle,
    solve_layer,
)

__all__ = [
    "MODEL_KIND",
    "LayerSolution",
    "LearnResult",
    "SettleResult",
    "VNLayer",
    "VNModel",
    "atomic_hebb",
    "drive",
    "gram",
    "hebb_layer_update",
    "keep_top_k",
    "layer_energies",
    "layer_energy",
    "layer_input",
    "layer_inputs",
    "layer_target",
    "layer_targets",
    "learn_dictionary",
    "lipschitz_constant",
    "predict_masked",
    "prox",
    "proximal_descent",
    "settle",
    "soft_threshold",
    "solve_layer",
    "step_size",
    "total_energy",
    "unit_columns",
]
