"""Joint FISTA over all VN layers: the dense (GPU) user's best algorithm for the settle.

The settle minimises the joint energy J (vn_torch.py), a quadratic plus l1 in the stacked codes
g = (g_1, ..., g_L): J = 1/2 g^T H g - c^T g + const + sum_l lam_l ||g_l||_1 with a block
tridiagonal Hessian H (H_ll = S_l^T S_l + U_l^T U_l where layer l has a target, H_l,l+1 =
-U_l^T S_{l+1}) and c = (S_1^T x, 0, ..., U_L^T h_top). Without top-k J is convex, so FISTA on all
codes at once reaches the minimiser that the block-coordinate settle (the reference) reaches,
in one loop: the iteration a GPU user would run. It is the torch path's `proximal_descent`
(FISTA with function-value restart) applied to (H, c) with a per-code lam; H and its step size
depend on the model only and are built once.
"""

from __future__ import annotations

import torch
from atomspark.networks.torch_path.vn_torch import TorchVN, proximal_descent
from atomspark.sim.core import AtomsparkError


def joint_hessian(model: TorchVN, has_top_target: bool = False) -> torch.Tensor:
    """H of the joint energy, (K_total, K_total)."""
    sizes = [int(s.shape[1]) for s in model.S]
    offsets = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    S0 = model.S[0]
    H = torch.zeros(offsets[-1], offsets[-1], dtype=S0.dtype, device=S0.device)
    L = model.n_layers
    for l in range(L):
        a, b = offsets[l], offsets[l + 1]
        block = model.S[l].T @ model.S[l]
        if l < L - 1 or has_top_target:
            block = block + model.U[l].T @ model.U[l]
        H[a:b, a:b] = block
        if l < L - 1:
            c, d = offsets[l + 1], offsets[l + 2]
            cross = -model.U[l].T @ model.S[l + 1]
            H[a:b, c:d] = cross
            H[c:d, a:b] = cross.T
    return H


def joint_settle(
    model: TorchVN,
    x: torch.Tensor,
    h_top: torch.Tensor | None = None,
    tol: float = 1e-6,
    max_iter: int = 5000,
) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """Joint FISTA settle of x (B, d): (codes per layer, iterations per sample, converged)."""
    if model.topk is not None:
        raise AtomsparkError("joint_settle: top-k makes J non-convex; use settle (block descent)")
    H = joint_hessian(model, h_top is not None)
    B = x.shape[0]
    sizes = [int(s.shape[1]) for s in model.S]
    c = torch.zeros(B, sum(sizes), dtype=H.dtype, device=H.device)
    c[:, : sizes[0]] = x.to(H.dtype) @ model.S[0]
    if h_top is not None:
        c[:, -sizes[-1] :] += h_top.to(H.dtype) @ model.U[-1]
    lam = torch.cat(
        [torch.full((k,), v, dtype=H.dtype, device=H.device) for k, v in zip(sizes, model.lam)]
    )
    g0 = torch.zeros_like(c)
    g, converged, iterations = proximal_descent(H, c, lam, g0, "fista", tol, max_iter)
    return list(torch.split(g, sizes, dim=1)), iterations, converged
