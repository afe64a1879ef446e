"""N-body baselines in PyTorch: an MLP padded to MAX_BODIES, a message-passing GNN and a
Transformer over bodies. Each maps (body tokens, force strengths, presence) to every body's
state change over one step dt; padded bodies are masked out of inputs, messages and losses.

Body token: [x, y, vx, vy, m, q] standardised with the training set's statistics; the four force
strengths are a per-system context given to every model.
"""

from __future__ import annotations

import torch
from torch import nn

TOKEN = 6  # x, y, vx, vy, m, q
CONTEXT = 4  # gravity, drag, magnetic, spring strengths
OUT = 4  # change of x, y, vx, vy


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.SiLU()]
    return nn.Sequential(*layers[:-1])


class PaddedMLP(nn.Module):
    """All bodies' tokens and presence flags, padded to n_max, flattened with the context."""

    def __init__(self, n_max: int, hidden: int = 256, depth: int = 3):
        super().__init__()
        self.n_max = n_max
        self.net = _mlp([CONTEXT + n_max * (TOKEN + 1)] + [hidden] * depth + [n_max * OUT])

    def forward(self, tokens, context, present):
        x = torch.cat([tokens * present[..., None], present[..., None]], dim=-1)
        out = self.net(torch.cat([context, x.flatten(1)], dim=1))
        return out.view(-1, self.n_max, OUT) * present[..., None]


class BodyGNN(nn.Module):
    """Interaction network (message passing over all pairs of present bodies): node encoder,
    `rounds` rounds of edge messages phi(h_i, h_j, r_j - r_i, v_j - v_i) summed over j != i
    and node updates, and a decoder to each body's change."""

    def __init__(self, hidden: int = 64, rounds: int = 2):
        super().__init__()
        self.encode = _mlp([TOKEN + CONTEXT, hidden, hidden])
        self.messages = nn.ModuleList(_mlp([2 * hidden + 4, hidden, hidden]) for _ in range(rounds))
        self.updates = nn.ModuleList(_mlp([2 * hidden, hidden, hidden]) for _ in range(rounds))
        self.decode = _mlp([hidden, hidden, OUT])

    def forward(self, tokens, context, present):
        n = tokens.shape[1]
        ctx = context[:, None, :].expand(-1, n, -1)
        h = self.encode(torch.cat([tokens, ctx], dim=-1))
        rel = tokens[:, None, :, :4] - tokens[:, :, None, :4]  # rel[b, i, j] = token_j - token_i
        eye = torch.eye(n, dtype=torch.bool, device=tokens.device)
        edge = (present[:, :, None] & present[:, None, :] & ~eye).to(tokens.dtype)[..., None]
        for message, update in zip(self.messages, self.updates):
            pair = torch.cat(
                [h[:, :, None].expand(-1, -1, n, -1), h[:, None].expand(-1, n, -1, -1), rel], dim=-1
            )
            incoming = (message(pair) * edge).sum(dim=2)
            h = h + update(torch.cat([h, incoming], dim=-1))
        return self.decode(h) * present[..., None]


class BodyTransformer(nn.Module):
    """Transformer encoder over the set of bodies (no positional encoding: permutation
    equivariant), padded bodies excluded by the key padding mask."""

    def __init__(self, d_model: int = 64, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = nn.Linear(TOKEN + CONTEXT, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=2 * d_model, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.decode = nn.Linear(d_model, OUT)

    def forward(self, tokens, context, present):
        ctx = context[:, None, :].expand(-1, tokens.shape[1], -1)
        h = self.encoder(
            self.embed(torch.cat([tokens, ctx], dim=-1)), src_key_padding_mask=~present
        )
        return self.decode(h) * present[..., None]
