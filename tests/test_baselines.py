"""The RSGN paper's baselines: parameter counts as released, the sparse attention pattern, and
each kind trained end to end by `train`."""

import json

import pytest

torch = pytest.importorskip("torch")  # the Lava environment has no torch

from atomspark.networks.torch_path.baselines import (  # noqa: E402
    KINDS,
    build_baseline,
    local_strided_mask,
    n_parameters,
)
from atomspark.networks.torch_path.training import train  # noqa: E402


@pytest.mark.parametrize(
    "kind, n_classes, length, layers, expected",
    [
        ("transformer", 20, 64, 2, 403_348),
        ("transformer", 10, 128, 3, 600_330),
        ("sparse-transformer", 20, 64, 2, 403_348),
        ("lstm", 20, 64, 2, 566_292),
        ("lstm", 10, 128, 2, 563_722),
        ("mlp", 20, 64, 2, 281_364),
        ("mean-linear", 20, 64, 2, 32 * 20 + 20),
    ],
)
def test_parameter_counts_match_the_paper(kind, n_classes, length, layers, expected):
    model = build_baseline(kind, 32, n_classes, length, d_hidden=128, layers=layers)
    assert n_parameters(model) == expected


def test_sparse_attention_is_a_local_window_plus_every_fourth_position():
    blocked = local_strided_mask(12)
    allowed = {(i, j) for i in range(12) for j in range(12) if not blocked[i, j]}
    assert allowed == {
        (i, j) for i in range(12) for j in range(12) if abs(i - j) <= 2 or j % 4 == 0
    }


def test_sparse_transformer_attention_ignores_blocked_tokens():
    """Position 0 may attend to 0-2, 4 (and every 4th): changing token 5 leaves its attention
    output unchanged, changing token 4 does not."""
    torch.manual_seed(0)
    net = build_baseline("sparse-transformer", 4, 3, 8, d_hidden=8, layers=1).eval()

    def attention_at_0(tokens):
        e = net.embed(tokens)
        return net.attn[0](e, e, e, attn_mask=local_strided_mask(8))[0][0, 0]

    x = torch.randn(1, 8, 4)
    moved = {}
    for pos in (4, 5):
        y = x.clone()
        y[0, pos] += 1.0
        moved[pos] = not torch.allclose(attention_at_0(x), attention_at_0(y))
    assert moved == {4: True, 5: False}


@pytest.mark.parametrize("kind", KINDS)
def test_every_baseline_trains_through_train(kind, tmp_path):
    cfg = {
        "task": "rsgn-sequence",
        "epochs": 2,
        "batch_size": 16,
        "data": {"kind": "hierarchical", "n": 64, "length": 16, "dim": 4, "n_classes": 3},
        "model": {"kind": kind, "d_hidden": 8, "layers": 1},
        "optimizer": {"schedule": "cosine-epoch"},
    }
    result = train(cfg, tmp_path, progress=False)
    final = json.loads((tmp_path / "final_metrics.json").read_text())
    assert 0.0 <= final["best_accuracy"] <= 1.0 and final["best_activity"] is None
    assert (tmp_path / "metrics.png").is_file() and result.model_path.is_file()


def test_transformer_layers_start_from_copies_of_one_layer():
    """As the notebook builds it (nn.TransformerEncoder copies its layer)."""
    net = build_baseline("transformer", 32, 20, 64, d_hidden=128, layers=2)
    first, second = net.encoder.layers
    for a, b in zip(first.parameters(), second.parameters()):
        assert torch.equal(a, b)
