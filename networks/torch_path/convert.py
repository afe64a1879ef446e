"""Move parameters between the NumPy reference models and the torch modules, without loss.

The dtype is preserved both ways (float64 stays float64), and arrays are copied, so a round trip
NumPy -> torch -> NumPy returns bit-identical arrays.
"""

from __future__ import annotations

import numpy as np
import torch
from atomspark.networks.torch_path.vn_torch import TorchVN
from atomspark.networks.vn.model import VNModel
from atomspark.sim.validation import AtomsparkError


def _to_tensor(a: np.ndarray, device: torch.device | str | None) -> torch.Tensor:
    return torch.from_numpy(np.array(a, copy=True)).to(device or "cpu")


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu").numpy().copy()


def vn_to_torch(model: VNModel, device: torch.device | str | None = None) -> TorchVN:
    """TorchVN holding copies of the model's S, U (same dtype), lam and top-k."""
    if not isinstance(model, VNModel):
        raise AtomsparkError(f"model: expected a VNModel, got {type(model).__name__}")
    return TorchVN(
        [_to_tensor(layer.S, device) for layer in model.layers],
        [_to_tensor(layer.U, device) for layer in model.layers],
        [layer.lam for layer in model.layers],
        topk=model.layers[-1].topk,
    )


def vn_from_torch(module: TorchVN) -> VNModel:
    """VNModel (NumPy) with the module's current parameters."""
    if not isinstance(module, TorchVN):
        raise AtomsparkError(f"module: expected a TorchVN, got {type(module).__name__}")
    return VNModel.from_arrays(
        [_to_numpy(s) for s in module.S],
        [_to_numpy(u) for u in module.U],
        list(module.lam),
        topk=module.topk,
        dtype=_to_numpy(module.S[0]).dtype,
    )
