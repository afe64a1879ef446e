"""`compare GRAPH.nir`: an imported graph stepped in torch (the GPU's side) against the engine,
the GPU's algorithm as priced, and the command with its refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("h5py")
pytestmark = pytest.mark.torch

from atomspark.networks.torch_path.nir_torch import NirTorch  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.scenarios.compare.gpu_precision import PrecisionMode  # noqa: E402
from atomspark.scenarios.compare.nir_compare import (  # noqa: E402
    LIF_ELEMENTWISE_FLOPS,
    nir_algorithm,
)
from test_nir_lava import CASES, DATA, closed_case  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_steps_the_graph_as_the_engine_does(name):
    """fp32 torch, batched (the recorded input and its time reverse), spikes equal to the
    engine's closed graph on every population; bf16 products are the GPU's own rounding."""
    closed, _ = closed_case(name)
    module = NirTorch.build(closed.graph, closed.sources)
    rev = {k: v[::-1].copy() for k, v in closed.sources.items()}
    trains = {k: np.stack([closed.sources[k], rev[k]]) for k in closed.sources}
    with torch.no_grad(), PrecisionMode("fp32"):
        out = module.run(trains, closed.total)
    engine = closed.run()
    for pop, raster in engine.items():
        np.testing.assert_array_equal(out[pop][:, 0].numpy(), raster, err_msg=pop)
    assert out["input"][:, 1].sum() == closed.sources["input"].sum()


def test_algorithm_counts_the_products_it_runs():
    closed, _ = closed_case("snntorch_recurrent")
    g = closed.graph
    lif = sum(p.size for p in g.populations if p.name not in closed.sources)
    dense = nir_algorithm(closed, 3, ops=10, kernel="dense").phases[0]
    products = sum(2 * p.shape[0] * p.shape[1] for p in g.projections)
    assert dense.flops == products + LIF_ELEMENTWISE_FLOPS * lif
    assert list(dense.iterations) == [closed.total] * 3
    sparse = nir_algorithm(closed, 3, ops=10, kernel="sparse").phases[0]
    assert sparse.flops == 2 * sum(p.n_synapses for p in g.projections) + 8 * lif
    assert sparse.gemm_fraction == 0 and sparse.index_bytes > 0


def test_compare_command_prices_chip_against_gpu(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", str(DATA / "snntorch_recurrent.nir"), "--producer", "snntorch",
                 "--input", "rate:0.3:1", "--samples", "2", "--steps", "20", "--device", "cpu",
                 "--out", str(out)]) == 0  # fmt: skip
    rep = json.loads((out / "comparison.json").read_text())
    assert rep["model"]["kind"] == "nir" and not rep["torch"]["measured_on_gpu"]
    ratios = rep["chip_vs_gpu"]
    assert ratios["fits"] and ratios["batch_1"]["ratio"] > 0
    assert 0 < ratios["batch_1"]["ratio_min"] <= ratios["batch_1"]["ratio"]
    variants = {(v["precision"], v["kernel"]): v for v in ratios["gpu_variants"]}
    assert len(variants) == 8 and variants[("fp32", "dense")]["reaches_accuracy"]
    assert 0 < rep["chip_fixed_point_spike_agreement"] <= 1
    assert rep["chip_prediction"]["energy_per_inference_j"] > 0
    text = capsys.readouterr().out
    assert "not a GPU: the GPU is priced from its description" in text and "energy ratio" in text


@pytest.mark.parametrize(
    "extra, match",
    [(["--data", "x.npz"], "--data: not for a NIR graph"),
     (["--input", "uniform"], "use zero or rate:P"),
     (["--samples", "0"], "--samples")],
)  # fmt: skip
def test_compare_refusals_leave_nothing(tmp_path, capsys, extra, match):
    out = tmp_path / "cmp"
    assert main(["compare", str(DATA / "norse_cells.nir"), "--producer", "norse",
                 "--out", str(out), *extra]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert match in err and len(err.strip().splitlines()) == 1 and not out.exists()
