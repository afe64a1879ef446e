"""Move parameters between the NumPy reference models and the torch modules, without loss.

The dtype is preserved both ways (float64 stays float64), and arrays are copied, so a round trip
NumPy -> torch -> NumPy returns bit-identical arrays.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams, validate_params
from atomspark.networks.torch_path.rsgn_torch import _DENSE_NAMES, TorchRSGN
from atomspark.networks.torch_path.vn_torch import TorchVN
from atomspark.networks.vn.model import VNModel
from atomspark.sim.core import AtomsparkError


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


def rsgn_to_torch(
    params: RSGNParams, config: RSGNConfig, device: torch.device | str | None = None
) -> TorchRSGN:
    """TorchRSGN holding copies of every learned array (sparse mode: CSR data in CSR order)."""
    validate_params(params, config)
    arrays = {k: _to_tensor(getattr(params, k), device) for k in _DENSE_NAMES}
    rows = cols = None
    if config.mode == "published":
        arrays["affinity_u"] = _to_tensor(params.affinity_u, device)
        arrays["affinity_v"] = _to_tensor(params.affinity_v, device)
    else:
        g = params.edge_affinity
        arrays["edge_data"] = _to_tensor(g.data, device)
        rows = _to_tensor(np.repeat(np.arange(config.n_nodes), np.diff(g.indptr)), device)
        cols = _to_tensor(g.indices.astype(np.int64), device)
    return TorchRSGN(config, arrays, rows, cols)


def rsgn_from_torch(module: TorchRSGN) -> tuple[RSGNParams, RSGNConfig]:
    """(RSGNParams, RSGNConfig) with the module's current parameters, validated; positions as
    the forward pass sees them (projected into the ball), so both compute the same function."""
    if not isinstance(module, TorchRSGN):
        raise AtomsparkError(f"module: expected a TorchRSGN, got {type(module).__name__}")
    config = module.config
    kw = {k: _to_numpy(getattr(module, k)) for k in _DENSE_NAMES}
    # the positions the model uses (the parameter may have left the ball: see node_positions)
    kw["positions"] = _to_numpy(module.node_positions())
    if config.mode == "published":
        kw["affinity_u"] = _to_numpy(module.affinity_u)
        kw["affinity_v"] = _to_numpy(module.affinity_v)
    else:
        n = config.n_nodes
        rows = _to_numpy(module.edge_rows)
        indptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        kw["edge_affinity"] = sp.csr_matrix(
            (_to_numpy(module.edge_data), _to_numpy(module.edge_cols).astype(np.int32), indptr),
            shape=(n, n),
        )
    params = RSGNParams(**kw)
    validate_params(params, config)
    return params, config
