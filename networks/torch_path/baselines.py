"""The RSGN paper's baselines for its sequence tasks, sized as its authors released them, and a
logistic-regression floor.

Every model maps tokens (B, L, d_in) to class scores (B, C). Sizes as in the released notebook
(HasiHays/RSGN), restated from its facts: hidden 128, 4 attention heads, feed-forward 4 x hidden.
- "transformer": linear embedding, post-norm encoder layers (ReLU, dropout 0.1), no positional
  encoding, mean pooling, linear head.
- "sparse-transformer": linear embedding, blocks of 4-head attention restricted to a local
  window of +-2 plus every 4th position, post-norm, GELU feed-forward; mean pooling.
- "lstm": bidirectional LSTM; the last layer's final forward and backward states -> linear head.
- "mlp": flattened sequence -> hidden -> hidden -> classes (ReLU).
- "mean-linear": logistic regression on the mean token (the floor: no sequence model at all).
"""

from __future__ import annotations

import torch
from torch import nn

KINDS = ("transformer", "sparse-transformer", "lstm", "mlp", "mean-linear")


class TransformerClassifier(nn.Module):
    """Embedding -> `layers` post-norm TransformerEncoderLayers -> mean over time -> linear."""

    def __init__(self, d_in: int, d_hidden: int, n_classes: int, layers: int, heads: int = 4):
        super().__init__()
        self.embed = nn.Linear(d_in, d_hidden)
        layer = nn.TransformerEncoderLayer(
            d_hidden, heads, dim_feedforward=4 * d_hidden, dropout=0.1, batch_first=True
        )
        # nn.TransformerEncoder copies `layer`: every layer starts from the same weights, as in
        # the released notebook (which builds its encoder the same way)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_hidden, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(tokens)).mean(1))


def local_strided_mask(length: int, window: int = 2, stride: int = 4, device=None) -> torch.Tensor:
    """Boolean (L, L) attention mask, True where attention is *blocked*: query i may attend key j
    when |i - j| <= window or j is a multiple of `stride`."""
    i = torch.arange(length, device=device)
    allowed = ((i[:, None] - i[None, :]).abs() <= window) | (i[None, :] % stride == 0)
    return ~allowed


class SparseTransformerClassifier(nn.Module):
    """Embedding -> blocks of masked attention + GELU feed-forward (post-norm) -> mean -> linear."""

    def __init__(self, d_in: int, d_hidden: int, n_classes: int, layers: int, heads: int = 4):
        super().__init__()
        self.embed = nn.Linear(d_in, d_hidden)
        self.attn = nn.ModuleList(
            nn.MultiheadAttention(d_hidden, heads, batch_first=True) for _ in range(layers)
        )
        self.ffn = nn.ModuleList(
            nn.Sequential(
                nn.Linear(d_hidden, 4 * d_hidden), nn.GELU(), nn.Linear(4 * d_hidden, d_hidden)
            )
            for _ in range(layers)
        )
        self.norm_attn = nn.ModuleList(nn.LayerNorm(d_hidden) for _ in range(layers))
        self.norm_ffn = nn.ModuleList(nn.LayerNorm(d_hidden) for _ in range(layers))
        self.head = nn.Linear(d_hidden, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        mask = local_strided_mask(x.shape[1], device=x.device)
        for attn, ffn, n1, n2 in zip(self.attn, self.ffn, self.norm_attn, self.norm_ffn):
            x = n1(x + attn(x, x, x, attn_mask=mask, need_weights=False)[0])
            x = n2(x + ffn(x))
        return self.head(x.mean(1))


class LSTMClassifier(nn.Module):
    """Bidirectional LSTM; [last forward state, last backward state] -> linear."""

    def __init__(self, d_in: int, d_hidden: int, n_classes: int, layers: int):
        super().__init__()
        self.lstm = nn.LSTM(d_in, d_hidden, layers, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * d_hidden, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        _, (h, _) = self.lstm(tokens)
        return self.head(torch.cat([h[-2], h[-1]], dim=-1))


class MLPClassifier(nn.Module):
    """Flattened (L x d_in) sequence -> hidden -> hidden -> classes, ReLU."""

    def __init__(self, d_in: int, d_hidden: int, n_classes: int, length: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(length * d_in, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, d_hidden),
            nn.ReLU(),
            nn.Linear(d_hidden, n_classes),
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.net(tokens)


class MeanLinearClassifier(nn.Module):
    """Logistic regression on the mean token: the floor any sequence model must clear."""

    def __init__(self, d_in: int, n_classes: int):
        super().__init__()
        self.head = nn.Linear(d_in, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(tokens.mean(1))


def build_baseline(
    kind: str, d_in: int, n_classes: int, length: int, d_hidden: int = 128, layers: int = 2
) -> nn.Module:
    """The baseline `kind` (one of KINDS) for tokens of shape (B, length, d_in)."""
    if kind not in _BUILDERS:
        raise ValueError(f"unknown baseline kind {kind!r} (one of {KINDS})")
    return _BUILDERS[kind](d_in, n_classes, length, d_hidden, layers)


# each baseline from (d_in, n_classes, length, d_hidden, layers)
_BUILDERS = {
    "transformer": lambda d, c, n, h, k: TransformerClassifier(d, h, c, k),
    "sparse-transformer": lambda d, c, n, h, k: SparseTransformerClassifier(d, h, c, k),
    "lstm": lambda d, c, n, h, k: LSTMClassifier(d, h, c, k),
    "mlp": lambda d, c, n, h, k: MLPClassifier(d, h, c, n),
    "mean-linear": lambda d, c, n, h, k: MeanLinearClassifier(d, c),
}


def n_parameters(module: nn.Module) -> int:
    """Trainable parameters, counted as the paper counts them."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
