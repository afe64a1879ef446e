"""RSGN as a differentiable torch module, equal to the NumPy reference forward pass
(atomspark.networks.rsgn.dynamics) in both configurations.

Parameter names follow RSGNParams. Weight matrices act on row vectors (y = x @ w + b).
published: dense N x N weights with low-rank affinity sigmoid(u v^T), Euclidean ignition.
sparse: one learned affinity per stored edge (`edge_data`, the CSR data in CSR order; the
pattern is a fixed buffer); the weight matrix is scattered densely on the device (N is small,
and dense matmuls are what a GPU does well), hyperbolic ignition and the exact-zero event cutoff.

Positions are projected into the ball in the forward pass (`node_positions`), as in the released
code, whose parameter may leave the ball: a node past norm 1 is seen at norm 0.95.
`project_()` can also rewrite the parameters after an optimiser step (positions rescaled in
place, thresholds clamped): atomspark's earlier rule, kept as a training option. Gradients never see the arccosh singularity: the diagonal of the distance
matrix is excluded before arccosh. Under bfloat16 autocast (train's mixed_precision) the matmuls
run in bfloat16 while the state, the inhibition normaliser and the read-out stay in the
parameters' dtype.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from atomspark.networks.rsgn.model import RSGNConfig
from torch import nn

_INHIBITION_EPS = 1e-6
_DENSE_NAMES = (
    "positions",
    "levels",
    "thresholds",
    "embed_w1",
    "embed_b1",
    "embed_w2",
    "embed_b2",
    "spark_scale",
    "w_h",
    "b_h",
    "ln_gain",
    "ln_bias",
    "init_w",
    "init_b",
    "cls_w",
    "cls_b",
)


class TorchRSGN(nn.Module):
    """Learned RSGN arrays as Parameters; `forward(tokens)` -> (scores, alpha_final)."""

    def __init__(
        self,
        config: RSGNConfig,
        arrays: dict[str, torch.Tensor],
        edge_rows: torch.Tensor | None = None,
        edge_cols: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.project_in_forward = True  # training's model.position_projection = "forward"
        for name in _DENSE_NAMES:
            setattr(self, name, nn.Parameter(arrays[name].clone()))
        if config.mode == "published":
            self.affinity_u = nn.Parameter(arrays["affinity_u"].clone())
            self.affinity_v = nn.Parameter(arrays["affinity_v"].clone())
        else:
            self.edge_data = nn.Parameter(arrays["edge_data"].clone())
            self.register_buffer("edge_rows", edge_rows.clone())
            self.register_buffer("edge_cols", edge_cols.clone())

    # ----- weights and neighbourhoods -------------------------------------------------------
    def node_positions(self) -> torch.Tensor:
        """The positions the model uses. With `project_in_forward` (the released code's
        get_positions, the default) the parameter is rescaled to norm 0.95 where it reached the
        ball's edge (norm >= 1); without it, the parameter itself (kept inside by project_)."""
        if not self.project_in_forward:
            return self.positions
        cfg = self.config
        return _project(self.positions, cfg.position_max_norm, cfg.curvature, 1.0)

    def _geodesic(self, p: torch.Tensor, q: torch.Tensor, off_diagonal: torch.Tensor | None):
        """arccosh(1 + 2c|p-q|^2 / ((1-c|p|^2)(1-c|q|^2))) / sqrt(c), elementwise over broadcast."""
        c = self.config.curvature
        diff2 = ((p - q) ** 2).sum(-1)
        den = (1.0 - c * (p * p).sum(-1)) * (1.0 - c * (q * q).sum(-1))
        # arccosh'(1) is infinite: a spark point on a node (which training toward a narrow
        # ignition produces) would give 0 * inf = NaN gradients. One ulp above 1 keeps them
        # finite and moves such distances by at most sqrt(2 eps) (5e-4 in float32).
        arg = torch.clamp(1.0 + 2.0 * c * diff2 / den, min=1.0 + torch.finfo(diff2.dtype).eps)
        if off_diagonal is not None:
            arg = torch.where(off_diagonal, arg, torch.full_like(arg, 2.0))
        return torch.arccosh(arg) / c**0.5

    def _level_factor(self, li: torch.Tensor, lj: torch.Tensor) -> torch.Tensor:
        z = li - lj + 1.0
        return torch.logaddexp(torch.zeros_like(z), z)

    def connection_weights(self) -> torch.Tensor:
        """Dense (N, N) W with the sender on the row (zero where no edge, zero diagonal)."""
        cfg, p = self.config, self.node_positions()
        n = cfg.n_nodes
        if cfg.mode == "published":
            off = ~torch.eye(n, dtype=torch.bool, device=p.device)
            d = self._geodesic(p[:, None, :], p[None, :, :], off)
            aff = torch.sigmoid(self.affinity_u @ self.affinity_v.T)
            level = self._level_factor(self.levels[:, None], self.levels[None, :])
            return torch.where(off, aff * torch.exp(-d / cfg.tau) * level, torch.zeros_like(d))
        r, c = self.edge_rows, self.edge_cols
        d = self._geodesic(p[r], p[c], None)
        data = (
            self.edge_data
            * torch.exp(-d / cfg.tau)
            * self._level_factor(self.levels[r], self.levels[c])
        )
        W = torch.zeros(n, n, dtype=p.dtype, device=p.device)
        return W.index_put((r, c), data)

    def edge_pattern(self) -> torch.Tensor:
        """0/1 (N, N) matrix of stored edges (sparse mode)."""
        n = self.config.n_nodes
        P = torch.zeros(n, n, dtype=self.positions.dtype, device=self.positions.device)
        return P.index_put((self.edge_rows, self.edge_cols), torch.ones_like(self.edge_data))

    def inhibition_neighbourhood(self) -> torch.Tensor:
        """0/1 neighbourhoods, self included (no gradient: a fixed structure per step)."""
        cfg = self.config
        with torch.no_grad():
            if cfg.mode == "published":
                p = self.node_positions()
                d = torch.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
                return (d < cfg.inhibition_radius).to(p.dtype)
            P = self.edge_pattern()
            eye = torch.eye(cfg.n_nodes, dtype=P.dtype, device=P.device)
            return ((P + P.T + eye) > 0).to(P.dtype)

    # ----- dynamics ---------------------------------------------------------------------------
    def spark_points(self, tokens: torch.Tensor) -> torch.Tensor:
        """MLP(d_in -> 4 dim, GELU -> dim, tanh) * spark_scale, projected into the ball."""
        cfg = self.config
        dt = self.positions.dtype
        z = torch.tanh(
            (F.gelu(tokens @ self.embed_w1 + self.embed_b1) @ self.embed_w2 + self.embed_b2).to(dt)
        )
        z = z * self.spark_scale
        trigger = 1.0 if cfg.mode == "published" else cfg.spark_max_norm
        return _project(z, cfg.spark_max_norm, cfg.curvature, trigger)

    def ignition(self, tokens: torch.Tensor) -> torch.Tensor:
        """alpha_i = exp(-min_t dist(spark_t, p_i)^2 / (2 sigma^2)), (B, N)."""
        cfg = self.config
        sparks = self.spark_points(tokens)[:, :, None, :]
        p = self.node_positions()[None, None, :, :]
        if cfg.mode == "published":
            d2 = ((sparks - p) ** 2).sum(-1)
        else:
            d2 = self._geodesic(sparks, p, None) ** 2
        alpha = torch.exp(-d2.amin(1) / (2.0 * cfg.ignition_sigma**2))
        if cfg.mode == "sparse":
            alpha = torch.where(alpha > cfg.cutoff, alpha, torch.zeros_like(alpha))
        return alpha

    def forward(
        self, tokens: torch.Tensor, n_steps: int | None = None, trace: bool = False
    ) -> tuple[torch.Tensor, ...]:
        """Tokens (B, L, d_in) -> (class scores (B, C), final activations alpha (B, N)).

        trace=True adds a third output, (K + 1, B): each sequence's fraction of nodes above the
        cutoff after ignition and after each of the K steps (the activity of every step)."""
        cfg = self.config
        tokens = tokens.to(device=self.positions.device, dtype=self.positions.dtype)
        alpha, h = self.initial_state(tokens)
        prepared = self.prepare()
        steps = [(alpha > cfg.cutoff).to(alpha.dtype).mean(1).detach()] if trace else None
        alpha, h = self.propagate(alpha, h, prepared, n_steps, steps)
        scores = self.readout(alpha, h)
        return (scores, alpha, torch.stack(steps)) if trace else (scores, alpha)

    def initial_state(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The encoder: the ignition alpha (B, N) and the initial states h (B, N, d) of tokens
        already in the parameters' device and dtype."""
        alpha = self.ignition(tokens)
        h0 = (tokens.mean(1) @ self.init_w + self.init_b).to(self.positions.dtype)
        return alpha, h0[:, None, :] * alpha[:, :, None]

    def prepare(self) -> tuple:
        """What every step reads and the parameters alone fix: W, the inhibition neighbourhoods
        and their sizes, the edge pattern (sparse; else None) and a zero."""
        nb = self.inhibition_neighbourhood()
        pattern = self.edge_pattern() if self.config.mode == "sparse" else None
        p = self.positions
        zero = torch.zeros((), dtype=p.dtype, device=p.device)
        return self.connection_weights(), nb, nb.sum(1), pattern, zero

    def from_ignition(
        self, alpha: torch.Tensor, h: torch.Tensor, prepared: tuple, readout: bool = True
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The K steps from a given ignition (initial_state) with `prepared` (prepare), then
        the class scores (`readout`) or the final (alpha, h): exactly the ops the GPU side
        prices (scenarios/compare/gpu_side.rsgn_algorithm)."""
        alpha, h = self.propagate(alpha, h, prepared)
        return self.readout(alpha, h) if readout else (alpha, h)

    def propagate(
        self,
        alpha: torch.Tensor,
        h: torch.Tensor,
        prepared: tuple,
        n_steps: int | None = None,
        trace: list | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """K steps (n_steps; default the config's) from (alpha, h) with `prepared` (prepare);
        `trace`: a list each step's fraction of nodes above the cutoff is appended to."""
        cfg = self.config
        sparse = cfg.mode == "sparse"
        W, nb, nb_size, pattern, zero = prepared
        dt = self.positions.dtype
        for _ in range(cfg.n_steps if n_steps is None else int(n_steps)):
            gate = alpha > cfg.cutoff
            x = h * (alpha * gate)[:, :, None]
            m = torch.einsum("ij,bid->bjd", W, x)
            h_new = (m @ self.w_h + self.b_h).to(dt)
            drive = alpha + cfg.signal_gain * torch.linalg.vector_norm(h_new, dim=-1)
            alpha_new = self._soft_threshold(drive)
            if sparse:
                received = (gate.to(alpha.dtype) @ pattern) > 0
                alpha_new = torch.where(
                    (gate | received) & (alpha_new > cfg.cutoff), alpha_new, zero
                )
            h = F.layer_norm(
                h_new + h, (cfg.d_hidden,), self.ln_gain, self.ln_bias, cfg.layer_norm_eps
            )
            h = h * alpha_new[:, :, None]
            with _full_precision(alpha):
                total = alpha_new @ nb.T + _INHIBITION_EPS
            alpha = torch.clamp(alpha_new * nb_size / total, 0.0, 1.0)
            if sparse:
                alpha = torch.where(alpha > cfg.cutoff, alpha, zero)
                h = h * (alpha > 0)[:, :, None]
            if trace is not None:
                trace.append((alpha > cfg.cutoff).to(alpha.dtype).mean(1).detach())
        return alpha, h

    def readout(self, alpha: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """Class scores (B, C) = (sum_j alpha_j h_j) @ cls_w + cls_b."""
        with _full_precision(alpha):
            features = torch.einsum("bn,bnd->bd", alpha, h)
            return features @ self.cls_w + self.cls_b

    def _soft_threshold(self, drive: torch.Tensor) -> torch.Tensor:
        """sigma((drive - theta) / T); "resting-subtracted": less its resting value r (the
        NumPy reference's resting_activation, here with gradients), rescaled to [0, 1)."""
        cfg = self.config
        a = torch.sigmoid((drive - self.thresholds) / cfg.temperature)
        if cfg.threshold_rule == "sigmoid":
            return a
        rest = cfg.signal_gain * torch.linalg.vector_norm(self.b_h) - self.thresholds
        r = torch.sigmoid(rest / cfg.temperature)
        return torch.clamp(a - r, min=0.0) / (1.0 - r)

    @torch.no_grad()
    def project_(self, positions: bool = True, thresholds: bool = True) -> None:
        """After an optimiser step: positions rescaled into the ball in place (positions=True)
        and thresholds clamped to their bounds (thresholds=True): atomspark's earlier rule. The
        released code does neither (training's defaults): its forward pass projects the
        positions and only its homeostat clamps the thresholds. Sparse edge affinities are
        always kept in [0, 1] (a CSR graph's validity)."""
        cfg = self.config
        if positions:  # published: rows that left the ball; sparse: rows past 0.95
            trigger = 1.0 if cfg.mode == "published" else cfg.position_max_norm
            self.positions.copy_(
                _project(self.positions, cfg.position_max_norm, cfg.curvature, trigger)
            )
        if thresholds:
            lo, hi = cfg.threshold_bounds
            self.thresholds.clamp_(lo, hi)
        if cfg.mode == "sparse":
            self.edge_data.clamp_(0.0, 1.0)


def _full_precision(like: torch.Tensor):
    """Autocast off: the inhibition normaliser and the read-out sum over all N nodes, which
    bfloat16 (8-bit mantissa) would round; under mixed precision only the per-node matmuls
    (spark MLP, messages, state update) run in bfloat16 and the state stays in float32."""
    if not torch.is_autocast_enabled(like.device.type):
        return contextlib.nullcontext()
    return torch.autocast(like.device.type, enabled=False)


def _project(x: torch.Tensor, max_norm: float, c: float, trigger: float) -> torch.Tensor:
    """Rescale rows with norm (in units of the ball radius) >= trigger to norm max_norm."""
    n = torch.linalg.vector_norm(x, dim=-1, keepdim=True) * c**0.5
    safe = torch.where(n > 0, n, torch.ones_like(n))
    return x * torch.where(n >= trigger, max_norm / safe, torch.ones_like(n))
