"""The VN benchmark harness: both families end to end in --quick (tables, finite values, plots,
engine vs reference), resume/overwrite rules, one-line errors, and OOD splits disjoint from ID."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mambapy")

from atomspark.scenarios.bench import bumps2d, fn1d  # noqa: E402
from atomspark.scenarios.bench.runner import run_benchmark  # noqa: E402
from atomspark.scenarios.bench.tables import finite_values  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from atomspark.sim.core import AtomsparkError  # noqa: E402

pytestmark = pytest.mark.torch

EXPECTED = {
    "fn1d": (["VN", "Transformer", "Mamba", "Trivial"], []),
    "bumps2d": (["VN", "ConvAE", "VAE", "SlotDecoder", "Trivial"], ["position_heatmap.png"]),
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def quick_run(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    assert main(["bench", request.param, "--quick", "--out", str(out), "--device", "cpu"]) == 0
    return request.param, out


def _readable_png(path) -> None:
    img = mpimg.imread(path)
    assert img.shape[0] >= 300 and img.shape[1] >= 300, path
    assert float(np.std(img[..., :3])) > 0.02, f"{path} looks blank"


def test_quick_run_tables_values_and_plots(quick_run):
    name, out = quick_run
    models, extra_plots = EXPECTED[name]
    results = json.loads((out / "results.json").read_text())
    family_splits = list(fn1d.SPLITS if name == "fn1d" else bumps2d.SPLITS)
    assert results["splits"] == family_splits and results["splits"][0] == "id"
    assert list(results["models"]) == models
    assert results["missing_cells"] == []
    for m in results["models"].values():
        assert set(m["metrics"]) == {"recon", "masked"}
        for task in m["metrics"].values():
            assert list(task) == family_splits
        assert m["params"] >= 0 and m["infer_s_per_sample"]["mean"] > 0
    vals = finite_values(results)
    assert vals.size == len(models) * 2 * len(family_splits) * 2 and np.all(np.isfinite(vals))
    budget = results["models"]["VN"]["params"]
    for m, entry in results["models"].items():
        if entry["config"]["kind"] == "torch":
            assert budget / 2 <= entry["params"] <= 2 * budget, (m, entry["params"], budget)
    table = (out / "results.md").read_text()
    header = "| model | " + " | ".join(family_splits) + " |"
    assert table.count(header) == 2  # one table per task
    for m in models:
        assert f"| {m} | " in table
    for png in ["errors.png", "examples.png", "VN_atoms.png", *extra_plots]:
        _readable_png(out / png)


def test_vn_engine_codes_equal_reference(quick_run):
    """The trained benchmark VN on the event engine gives the NumPy reference ISTA's codes."""
    _, out = quick_run
    cost = json.loads((out / "cells" / "VN-seed0.json").read_text())["cost"]
    assert cost["engine_vs_reference_ista_max_rel_error"] < 1e-9
    assert cost["chip"]["energy_j_per_sample"] > 0 and cost["events_per_sample"] > 0
    nb = cost["neurobench"]  # NeuroBench's metrics of the same engine run
    assert 0 <= nb["activation_sparsity"] < 1
    ops = nb["synaptic_operations"]
    assert 0 < ops["effective_acs"] + ops["effective_macs"] <= cost["synops_per_sample"]
    baseline = json.loads((out / "results.json").read_text())["models"]
    priced = [m for m in baseline.values() if m["config"]["kind"] == "torch"]
    assert all(m["cost"]["gpu_batch1"]["energy_j_per_sample"] > 0 for m in priced)


def test_run_folder_refuses_then_resumes(quick_run, capsys):
    name, out = quick_run
    assert main(["bench", name, "--quick", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--resume" in err and "--overwrite" in err
    logs = []
    run_benchmark(name, quick=True, out=out, resume=True, log=logs.append)
    assert sum("skipped" in line for line in logs) == len(EXPECTED[name][0])
    with pytest.raises(AtomsparkError, match="another sizes"):
        run_benchmark(name, quick=True, out=out, resume=True, sizes={"n_test": "3"})


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["bench", "nosuch"], "valid: fn1d, bumps2d"),
        (["bench", "fn1d", "--quick", "--set", "nosuch=3"], "valid:"),
        (["bench", "fn1d", "--quick", "--set", "n_train=x"], "expected a int"),
        (["bench", "fn1d", "--quick", "--models", "VN,GPT"], "valid: VN, Transformer"),
        (["bench", "fn1d", "--quick", "--set", "n_train=4000000000"], "GiB"),
    ],
)
def test_bad_input_is_one_line(argv, needle, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert not list(tmp_path.rglob("*-seed*.json"))  # refused before any work


def test_resume_and_overwrite_exclude_each_other(tmp_path):
    with pytest.raises(AtomsparkError, match="exclude each other"):
        run_benchmark("fn1d", quick=True, out=tmp_path, resume=True, overwrite=True)


def test_list_names_every_family(capsys):
    assert main(["bench", "--list"]) == 0
    text = capsys.readouterr().out
    assert "fn1d" in text and "bumps2d" in text and "heldout" in text


@pytest.mark.parametrize("seed", [0, 1])
def test_fn1d_ood_disjoint_from_id(seed):
    train_pairs, held = fn1d.pair_partition(seed)
    assert not set(train_pairs) & set(held) and len(train_pairs) + len(held) == 171
    s = fn1d.sizes(True)
    data = fn1d.make_data(s, seed)
    _, train_meta = fn1d.generate("id", s.n_train, seed, stream=0)
    allowed = set(train_pairs)
    for meta in (train_meta, data.splits["id"].meta, data.splits["amplitude"].meta):
        comps = meta["components"]
        pairs = comps[comps[:, 1] >= 0, :2]
        assert all(tuple(p) in allowed for p in pairs) and (comps[:, 2] < 0).all()
    ood_pairs = data.splits["pairs"].meta["components"][:, :2]
    assert not any(tuple(p) in allowed for p in ood_pairs)
    assert (data.splits["triples"].meta["components"] >= 0).all()
    assert data.splits["nested"].meta["nested"].all() and not data.splits["id"].meta["nested"].any()
    amp_id = np.abs(train_meta["amplitudes"][train_meta["components"] >= 0])
    amp_ood = np.abs(data.splits["amplitude"].meta["amplitudes"])
    amp_ood = amp_ood[data.splits["amplitude"].meta["components"] >= 0]
    assert amp_id.max() <= fn1d.ID_AMPLITUDE[1] < fn1d.OOD_AMPLITUDE[0] <= amp_ood.min()
    hidden = data.splits["id"].hidden
    assert (hidden.sum(axis=1) == fn1d.BLOCK).all()
    assert (np.diff(hidden.astype(int), axis=1) == 1).sum(axis=1).max() <= 1  # one block


def test_bumps2d_ood_disjoint_from_id():
    s = bumps2d.sizes(True)
    data = bumps2d.make_data(s, 3)
    _, train_meta = bumps2d.generate("id", s.n_train, 3, stream=0)

    def id_flags(meta):
        c = meta["centres"]
        present = ~np.isnan(c[..., 0])
        row, col = bumps2d.cell_of(np.nan_to_num(c))
        return present, bumps2d.is_id_cell(row, col)

    for meta in (train_meta, data.splits["id"].meta, data.splits["more"].meta):
        present, in_id = id_flags(meta)
        assert in_id[present].all()
    present, in_id = id_flags(data.splits["heldout"].meta)
    assert not in_id[present].any()
    present, in_id = id_flags(data.splits["mixed"].meta)
    assert ((present & in_id).any(axis=1) & (present & ~in_id).any(axis=1)).all()
    assert train_meta["counts"].max() <= 3 < data.splits["more"].meta["counts"].min()
    assert (data.splits["id"].hidden.sum(axis=1) == 256).all()


def test_mamba_baseline_sees_both_directions():
    """A causal scan cannot fill a block from the context after it; the baseline must."""
    from atomspark.scenarios.bench.baselines import BidirectionalMamba

    torch.manual_seed(0)
    net = BidirectionalMamba(d_model=8, layers=1, d_state=4, patch=8).eval()
    x, obs = torch.zeros(1, 64), torch.ones(1, 64)
    base = net(x, obs)
    x2 = x.clone()
    x2[0, -8:] = 1.0
    assert (net(x2, obs)[0, :8] - base[0, :8]).abs().max() > 1e-6
