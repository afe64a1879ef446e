"""One answer per model, demo against compare: the demo's rows (scenarios/runs/demo.py: its VN
settle workload and rsgn_workload) and `compare` on the same model, samples and flags give the
same headline ratios, ranges, time ratios and energies."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from atomspark.mapping.chip_gpu_ratios import Assumptions, compare_workload  # noqa: E402
from atomspark.mapping.hardware import DEFAULT_CHIP, load_hardware  # noqa: E402
from atomspark.networks import rsgn  # noqa: E402
from atomspark.networks.datasets import (  # noqa: E402
    hierarchical_sequences,
    sparse_dictionary_data,
)
from atomspark.networks.torch_path.training import train  # noqa: E402
from atomspark.networks.vn import settle  # noqa: E402
from atomspark.scenarios.compare.chip_vs_gpu import compare, load_trained_model  # noqa: E402
from atomspark.scenarios.compare.vn_compare import vn_engine_run  # noqa: E402
from atomspark.scenarios.runs.demo import VN_STEPS, _vn_workloads, rsgn_workload  # noqa: E402
from atomspark.scenarios.runs.engine import run_rsgn  # noqa: E402

KEYS = ("ratio", "ratio_min", "ratio_max", "time_ratio", "time_ratio_min", "time_ratio_max",
        "chip_cores", "chip_energy_uJ", "gpu_energy_uJ")  # fmt: skip
VN_CFG = {
    "task": "vn-dictionary",
    "dtype": "float64",
    "epochs": 2,
    "batch_size": 16,
    "data": {"n": 40, "dim": 6, "n_atoms": 5},
    "model": {"layer_sizes": [[6, 4]], "lam": 0.1},
}


def _same(demo: dict, cmp: dict) -> None:
    assert demo["fits"] and cmp["fits"]
    for regime in ("batch_1", "throughput"):
        for k in KEYS:
            assert demo[regime][k] == pytest.approx(cmp[regime][k], rel=1e-9), (regime, k)
    assert demo["chip"]["stop_rule"] == cmp["chip"]["stop_rule"]
    assert demo["headline"]["precision"] == cmp["headline"]["precision"]


def test_demo_vn_settle_row_equals_compare_on_the_same_model(tmp_path):
    path = train(VN_CFG, tmp_path / "train", progress=False).model_path
    _, model = load_trained_model(path)
    x = sparse_dictionary_data(n=4, dim=6, n_atoms=5, active=2, seed=3).signals
    # the demo's VN settle workload, as vn_section hands it over
    ref = settle(model, x, tol=1e-10, max_iter=5000, sweeps=200)
    fixed = vn_engine_run(model, x, VN_STEPS, fixed=True)
    vn_gpu = {"model": model, "x": x, "reference": ref.codes,
              "runs": {"VN settle": (fixed[1], fixed[4], fixed[2], True)}}  # fmt: skip
    chip, variants, bound = _vn_workloads(vn_gpu, load_hardware(DEFAULT_CHIP), {}, lambda m: None)[
        "VN settle"
    ]
    demo = compare_workload("VN", chip, variants, load_hardware("h100"), Assumptions(), bound)
    cmp = compare(path, x, tmp_path / "cmp", steps=VN_STEPS, cutoffs=None, log=lambda m: None)
    _same(demo, cmp["chip_vs_gpu"])


@pytest.mark.parametrize("mode", ["published", "sparse"])
def test_demo_rsgn_row_equals_compare_on_the_same_model(tmp_path, mode):
    extra = {"k_nearest": 8, "cutoff": 0.3, "temperature": 0.1} if mode == "sparse" else {}
    cfg = rsgn.RSGNConfig(mode=mode, n_nodes=48, d_hidden=16, n_classes=20, n_steps=5, **extra)
    params = rsgn.init_params(cfg, seed=0)
    tokens = hierarchical_sequences(n=4, seed=0).tokens
    path = tmp_path / "model.npz"
    rsgn.save_model(path, params, cfg)
    chip, variants = rsgn_workload(params, cfg, tokens, run_rsgn(params, cfg, tokens),
                                   load_hardware(DEFAULT_CHIP))  # fmt: skip
    demo = compare_workload("RSGN", chip, variants, load_hardware("h100"), Assumptions())
    cmp = compare(path, tokens, tmp_path / "cmp", cutoffs=None, log=lambda m: None)
    _same(demo, cmp["chip_vs_gpu"])
    assert np.isfinite(demo["batch_1"]["ratio"])
