"""One answer per model: `profile` and `compare` price a trained model by one path
(scenarios/compare/chip_vs_gpu.price_model), so the same model and inputs give the same headline,
range and time ratio from both verbs; flags the user fixes are fixed in profile's range too."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.networks.datasets import sparse_dictionary_data  # noqa: E402
from atomspark.networks.torch_path.training import train  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.scenarios.compare.chip_vs_gpu import compare  # noqa: E402

VN_CFG = {
    "task": "vn-dictionary",
    "dtype": "float64",
    "epochs": 2,
    "batch_size": 16,
    "data": {"n": 40, "dim": 6, "n_atoms": 5},
    "model": {"layer_sizes": [[6, 4]], "lam": 0.1},
}
KEYS = ("ratio", "ratio_min", "ratio_max", "time_ratio", "time_ratio_min", "time_ratio_max",
        "chip_cores", "chip_energy_uJ", "gpu_energy_uJ")  # fmt: skip


@pytest.fixture(scope="module")
def vn_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("one_answer")
    model = train(VN_CFG, root / "train", progress=False).model_path
    x = sparse_dictionary_data(n=4, dim=6, n_atoms=5, active=2, seed=3).signals
    np.save(root / "x.npy", x)
    return model, x, root


def _same(a: dict, b: dict) -> None:
    assert a["fits"] and b["fits"]
    for regime in ("batch_1", "throughput"):
        for k in KEYS:
            assert a[regime][k] == pytest.approx(b[regime][k], rel=1e-9), (regime, k)
    assert a["chip"]["stop_rule"] == b["chip"]["stop_rule"] == "held-out budget"
    assert "fixed point" in a["chip"]["stop_detail"]  # the arithmetic the chip deploys
    assert a["bias"] == b["bias"] and a["bias"]


def test_profile_and_compare_give_one_answer(vn_setup, capsys):
    model, x, root = vn_setup
    assert main(["profile", str(model), "--input", str(root / "x.npy"),
                 "--out", str(root / "prof")]) == 0  # fmt: skip
    prof = json.loads((root / "prof" / "costs.json").read_text())["chip_vs_gpu"]
    cmp = compare(model, x, root / "cmp", log=lambda m: None)["chip_vs_gpu"]
    _same(prof, cmp)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "GPU/chip at" in ln]
    assert len(lines) == 2 and all(ln.startswith("[profile] VN") for ln in lines)
    assert all("remaining bias" in ln for ln in lines)


def test_profile_fixes_the_flags_the_user_gives(vn_setup):
    model, _, root = vn_setup
    argv = ["profile", str(model), "--input", str(root / "x.npy"), "--launch-model", "graph",
            "--static-scope", "device", "--out", str(root / "fixed")]  # fmt: skip
    assert main(argv) == 0
    r = json.loads((root / "fixed" / "costs.json").read_text())["chip_vs_gpu"]
    assert set(r["headline"]["fixed"]) == {"launch_model", "static_scope"}
    for regime in ("batch_1", "throughput"):
        moved = {b["assumption"] for b in r[regime]["tornado"]}
        assert not moved & {"launch_model", "static_scope"}
