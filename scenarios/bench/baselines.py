"""The baselines' networks (torch.nn). Each maps (x, observed), both (B, d) with hidden inputs
zeroed, to a prediction of the clean signal (B, d); the observed mask is an input channel, so one
network serves both tasks. A network may set `self.aux_loss` in forward (the VAE's KL term).

Sequence models (fn1d-like families) cut the signal into d / patch tokens of `patch` consecutive
points, each token carrying its values and observed flags (2 patch features; PatchTST-style
patching keeps attention and scans short enough to train on a CPU); image models (bumps2d-like)
see 2 channels of side x side.
"""

from __future__ import annotations

import torch
from torch import nn


def _patch_tokens(x: torch.Tensor, observed: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, d) values and flags -> (B, d / patch, 2 patch) tokens."""
    B = x.shape[0]
    return torch.cat([x.view(B, -1, patch), observed.view(B, -1, patch)], dim=-1)


class SequenceTransformer(nn.Module):
    """Transformer encoder (torch.nn) over patch tokens, learned position embedding."""

    def __init__(
        self,
        length: int,
        d_model: int = 32,
        heads: int = 4,
        layers: int = 2,
        ff: int = 64,
        patch: int = 8,
    ):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(2 * patch, d_model)
        self.position = nn.Parameter(0.02 * torch.randn(length // patch, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, heads, ff, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, patch)

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        tokens = self.embed(_patch_tokens(x, observed, self.patch)) + self.position
        return self.head(self.encoder(tokens)).flatten(1)


class BidirectionalMamba(nn.Module):
    """Mamba selective state-space stacks (mambapy, pure PyTorch) run forward and backward over
    the sequence, summed: a causal scan alone cannot see the context after a hidden block."""

    def __init__(self, d_model: int = 24, layers: int = 2, d_state: int = 8, patch: int = 8):
        super().__init__()
        from mambapy.mamba import Mamba, MambaConfig

        config = MambaConfig(d_model=d_model, n_layers=layers, d_state=d_state)
        self.patch = patch
        self.embed = nn.Linear(2 * patch, d_model)
        self.forward_scan = Mamba(config)
        self.backward_scan = Mamba(config)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, patch)

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        tokens = self.embed(_patch_tokens(x, observed, self.patch))
        both = self.forward_scan(tokens) + self.backward_scan(tokens.flip(1)).flip(1)
        return self.head(self.norm(both)).flatten(1)


class MaskedMLP(nn.Module):
    """A plain MLP on (values, observed flags): 2d -> hidden -> hidden -> d, GELU. The strongest
    cheap denoiser of small vectors; no structure assumed."""

    def __init__(self, dim: int, hidden: int = 64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2 * dim, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, dim),
        )

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, observed], dim=1))


class ConvAutoencoder(nn.Module):
    """Convolutional autoencoder: three stride-2 convolutions down, three transposed up."""

    def __init__(self, side: int, channels: int = 32):
        super().__init__()
        c = channels
        self.side = side
        self.encoder = nn.Sequential(
            nn.Conv2d(2, c, 4, 2, 1),
            nn.GELU(),
            nn.Conv2d(c, 2 * c, 4, 2, 1),
            nn.GELU(),
            nn.Conv2d(2 * c, 2 * c, 4, 2, 1),
            nn.GELU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(2 * c, 2 * c, 4, 2, 1),
            nn.GELU(),
            nn.ConvTranspose2d(2 * c, c, 4, 2, 1),
            nn.GELU(),
            nn.ConvTranspose2d(c, 1, 4, 2, 1),
        )

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        img = torch.stack([x, observed], dim=1).view(-1, 2, self.side, self.side)
        return self.decoder(self.encoder(img)).flatten(1)


class MLPVAE(nn.Module):
    """Variational autoencoder with MLP encoder/decoder; predicts with the posterior mean. The KL
    term (weight beta, per input entry) is its aux_loss."""

    def __init__(self, dim: int, hidden: int = 128, latent: int = 16, beta: float = 1e-5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(2 * dim, hidden), nn.GELU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.beta = beta
        self.aux_loss = torch.zeros(())

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        h = self.encoder(torch.cat([x, observed], dim=1))
        mu, logvar = self.mu(h), self.logvar(h).clamp(-8, 8)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu**2 - logvar.exp(), dim=1))
        self.aux_loss = self.beta * kl
        return self.decoder(z)


class SlotDecoder(nn.Module):
    """The hand-separated decoder: an encoder emits one small latent per slot (one slot per bump
    the ID data can hold), each slot has its own small decoder, and the slot images are summed.
    The structure says "an image is a sum of independent parts"; it cannot add more parts."""

    def __init__(
        self, dim: int, slots: int = 3, latent: int = 8, hidden: int = 128, decoder_hidden: int = 32
    ):
        super().__init__()
        self.slots, self.latent = slots, latent
        self.encoder = nn.Sequential(
            nn.Linear(2 * dim, hidden), nn.GELU(), nn.Linear(hidden, slots * latent)
        )
        self.decoders = nn.ModuleList(
            nn.Sequential(
                nn.Linear(latent, decoder_hidden), nn.GELU(), nn.Linear(decoder_hidden, dim)
            )
            for _ in range(slots)
        )

    def forward(self, x: torch.Tensor, observed: torch.Tensor) -> torch.Tensor:
        z = self.encoder(torch.cat([x, observed], dim=1)).view(-1, self.slots, self.latent)
        return sum(dec(z[:, k]) for k, dec in enumerate(self.decoders))


def n_params(net: nn.Module) -> int:
    return int(sum(p.numel() for p in net.parameters()))
