"""NIR's stateless nodes as sparse matrices on C-order (row-major) unit indices.

Every tensor is indexed as NumPy's C order of the node's shape ((C, H, W) for images, (C, L)
for 1-D signals), so a Flatten is the identity on indices. `linear_op` gives, for one node and
its input shape, the output shape, the (n_out, n_in) matrix and the constant bias (or None).
Convolutions follow PyTorch's cross-correlation (weight (out, in/groups, k...), zero padding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from atomspark.networks.nir_file import NirNode
from atomspark.sim.core import AtomsparkError

LINEAR_KINDS = (
    "Affine", "Linear", "Conv1d", "Conv2d", "Flatten", "SumPool2d", "AvgPool2d", "Scale",
)  # fmt: skip


@dataclass(frozen=True)
class LinearOp:
    shape: tuple[int, ...]
    matrix: sp.csr_matrix  # (n_out, n_in)
    bias: np.ndarray | None  # (n_out,) or None


def param(node: NirNode, key: str, required: bool = True) -> np.ndarray | None:
    if key not in node.params:
        if required:
            raise AtomsparkError(f"NIR node {node.name!r} ({node.kind}): missing '{key}'")
        return None
    return np.asarray(node.params[key], dtype=np.float64)


def _ints(node: NirNode, key: str, n: int, default: int) -> tuple[int, ...]:
    if key in node.texts:
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' = {node.texts[key]!r} is not "
            "supported; give integers"
        )
    v = param(node, key, required=False)
    if v is None:
        return (default,) * n
    v = v.reshape(-1)
    if v.size == 1:
        v = np.repeat(v, n)
    if v.size != n or np.any(v != np.round(v)) or np.any(v < 0):
        raise AtomsparkError(
            f"NIR node {node.name!r} ({node.kind}): '{key}' must be {n} integers >= 0"
        )
    return tuple(int(x) for x in v)


def linear_op(node: NirNode, in_shape: tuple[int, ...]) -> LinearOp:
    """The node as a matrix on its input (refused in one line when the shapes do not fit)."""
    n_in = int(np.prod(in_shape))
    where = f"NIR node {node.name!r} ({node.kind})"
    if node.kind in ("Affine", "Linear"):
        w = param(node, "weight")
        if w.ndim != 2 or w.shape[1] != n_in:
            raise AtomsparkError(
                f"{where}: weight {w.shape} does not take the {n_in} inputs of shape {in_shape}"
            )
        bias = param(node, "bias") if node.kind == "Affine" else None
        if bias is not None and bias.size != w.shape[0]:
            raise AtomsparkError(f"{where}: bias of size {bias.size} for {w.shape[0]} outputs")
        return LinearOp((w.shape[0],), sp.csr_matrix(w), _bias(bias))
    if node.kind == "Scale":
        s = param(node, "scale").reshape(-1)
        if s.size not in (1, n_in):
            raise AtomsparkError(f"{where}: scale of size {s.size} for {n_in} inputs")
        return LinearOp(in_shape, sp.diags(np.broadcast_to(s, (n_in,))).tocsr(), None)
    if node.kind == "Flatten":
        return LinearOp(_flatten_shape(node, in_shape), sp.identity(n_in, format="csr"), None)
    if node.kind in ("Conv1d", "Conv2d"):
        nd = 1 if node.kind == "Conv1d" else 2
        w = param(node, "weight")
        bias = param(node, "bias", required=False)
        return _conv(node, in_shape, w, nd, _ints(node, "stride", nd, 1),
                     _ints(node, "padding", nd, 0), _ints(node, "dilation", nd, 1),
                     _ints(node, "groups", 1, 1)[0], bias)  # fmt: skip
    if node.kind in ("SumPool2d", "AvgPool2d"):
        if len(in_shape) != 3:
            raise AtomsparkError(f"{where}: needs a (C, H, W) input, got {in_shape}")
        k = _ints(node, "kernel_size", 2, 1)
        stride = _ints(node, "stride", 2, 1)
        c = in_shape[0]
        value = 1.0 if node.kind == "SumPool2d" else 1.0 / (k[0] * k[1])
        w = np.full((c, 1, k[0], k[1]), value)
        return _conv(node, in_shape, w, 2, stride, _ints(node, "padding", 2, 0), (1, 1), c, None)
    raise AtomsparkError(f"{where}: not a linear node")


def _bias(b: np.ndarray | None) -> np.ndarray | None:
    return None if b is None or not np.any(b) else b.reshape(-1)


def _flatten_shape(node: NirNode, in_shape: tuple[int, ...]) -> tuple[int, ...]:
    start = int(param(node, "start_dim", required=False) or 0)
    end_raw = param(node, "end_dim", required=False)
    end = -1 if end_raw is None else int(end_raw)
    nd = len(in_shape)
    s, e = start % nd if nd else 0, end % nd if nd else 0
    if s > e:
        raise AtomsparkError(f"NIR node {node.name!r} (Flatten): start_dim after end_dim")
    return (*in_shape[:s], int(np.prod(in_shape[s : e + 1])), *in_shape[e + 1 :])


def _conv(node, in_shape, w, nd, stride, pad, dil, groups, bias) -> LinearOp:
    """Cross-correlation as a sparse matrix, C order on both sides."""
    where = f"NIR node {node.name!r} ({node.kind})"
    if len(in_shape) != nd + 1 or w.ndim != nd + 2:
        raise AtomsparkError(
            f"{where}: needs a {nd + 1}-D input and a {nd + 2}-D weight, got input {in_shape} "
            f"and weight {w.shape}"
        )
    co, cig = w.shape[:2]
    ci, space = in_shape[0], in_shape[1:]
    if groups < 1 or ci % groups or co % groups or cig != ci // groups:
        raise AtomsparkError(f"{where}: weight {w.shape} does not fit {ci} input channels")
    k = w.shape[2:]
    out = tuple((space[i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1
                for i in range(nd))  # fmt: skip
    if min(out) < 1:
        raise AtomsparkError(f"{where}: kernel {k} does not fit the input {in_shape}")
    grids = np.meshgrid(*(np.arange(o) for o in out), *(np.arange(kk) for kk in k), indexing="ij")
    pos = [g.ravel() for g in grids[:nd]]
    tap = [g.ravel() for g in grids[nd:]]
    src = [pos[i] * stride[i] - pad[i] + tap[i] * dil[i] for i in range(nd)]
    ok = np.all([(src[i] >= 0) & (src[i] < space[i]) for i in range(nd)], axis=0)
    pos, tap, src = ([a[ok] for a in arrs] for arrs in (pos, tap, src))
    out_flat = np.ravel_multi_index(pos, out) if nd > 1 else pos[0]
    in_flat = np.ravel_multi_index(src, space) if nd > 1 else src[0]
    cog = co // groups
    oc = np.arange(co)[None, :, None]
    lc = np.arange(cig)[None, None, :]
    ic = (oc // cog) * cig + lc
    n_out_sp, n_in_sp = int(np.prod(out)), int(np.prod(space))
    rows = oc * n_out_sp + out_flat[:, None, None] + 0 * lc
    cols = ic * n_in_sp + in_flat[:, None, None]
    data = w[(oc, lc, *(t[:, None, None] for t in tap))]
    mat = sp.coo_matrix(
        (data.ravel(), (rows.ravel(), cols.ravel())), shape=(co * n_out_sp, ci * n_in_sp)
    ).tocsr()
    b = None
    if bias is not None:
        if bias.size != co:
            raise AtomsparkError(f"{where}: bias of size {bias.size} for {co} channels")
        b = _bias(np.repeat(bias.reshape(-1), n_out_sp))
    return LinearOp((co, *out), mat, b)
