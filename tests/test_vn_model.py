"""VN model parameters: validation, random construction, one-file storage."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from atomspark.networks.model_io import save_arrays
from atomspark.networks.vn import VNLayer, VNModel
from atomspark.sim.core import AtomsparkError


def test_random_model_has_unit_norm_atoms_and_chained_sizes():
    model = VNModel.random(12, [(10, 6), (8, 4)], lam=[0.1, 0.2], seed=3, topk=3)
    assert model.n_layers == 2
    assert [layer.S.shape for layer in model.layers] == [(12, 10), (6, 8)]
    assert [layer.U.shape for layer in model.layers] == [(6, 10), (4, 8)]
    for layer in model.layers:
        np.testing.assert_allclose(np.linalg.norm(layer.S, axis=0), 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(layer.U, axis=0), 1.0, rtol=1e-12)
        assert layer.S.dtype == np.float64
    assert [layer.lam for layer in model.layers] == [0.1, 0.2]
    assert model.layers[0].topk is None and model.layers[1].topk == 3


def test_random_model_is_deterministic_in_seed():
    a = VNModel.random(5, [(4, 3)], seed=7)
    b = VNModel.random(5, [(4, 3)], seed=7)
    c = VNModel.random(5, [(4, 3)], seed=8)
    np.testing.assert_array_equal(a.layers[0].S, b.layers[0].S)
    assert not np.array_equal(a.layers[0].S, c.layers[0].S)


def test_save_load_round_trip(tmp_path):
    model = VNModel.random(9, [(7, 5), (6, 3)], lam=[0.05, 0.3], seed=1, topk=2)
    path = tmp_path / "m.npz"
    model.save(path)
    back = VNModel.load(path)
    assert back.n_layers == 2
    for a, b in zip(model.layers, back.layers):
        np.testing.assert_array_equal(a.S, b.S)
        np.testing.assert_array_equal(a.U, b.U)
        assert (a.lam, a.topk) == (b.lam, b.topk)


def test_load_rejects_wrong_kind(tmp_path):
    path = tmp_path / "other.npz"
    save_arrays(path, "rsgn", {"a": np.zeros(2)}, {})
    with pytest.raises(AtomsparkError, match="expected 'vn'"):
        VNModel.load(path)


def test_load_rejects_wrong_version(tmp_path):
    model = VNModel.random(4, [(3, 2)], seed=0)
    path = tmp_path / "m.npz"
    model.save(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(arrays["__atomspark_meta__"].tobytes())
    meta["format_version"] = 999
    arrays["__atomspark_meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    with pytest.raises(AtomsparkError, match="format version 999"):
        VNModel.load(path)


def test_load_rejects_corrupt_and_missing_files(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"this is not a zip file at all")
    with pytest.raises(AtomsparkError, match="not an .npz archive"):
        VNModel.load(path)
    with pytest.raises(AtomsparkError, match="does not exist"):
        VNModel.load(tmp_path / "missing.npz")


def test_load_rejects_missing_arrays(tmp_path):
    model = VNModel.random(4, [(3, 2), (2, 2)], seed=0)
    path = tmp_path / "m.npz"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        names = [n for n in zf.namelist() if n != "U_1.npy"]
        content = {n: zf.read(n) for n in names}
    with zipfile.ZipFile(path, "w") as zf:
        for n, blob in content.items():
            zf.writestr(n, blob)
    with pytest.raises(AtomsparkError, match="missing arrays.*U_1"):
        VNModel.load(path)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"S": np.ones((3, 2)), "U": np.ones((2, 3)), "lam": 0.1}, "one column per atom"),
        ({"S": np.ones((3, 0)), "U": np.ones((2, 0)), "lam": 0.1}, "K >= 1"),
        ({"S": np.ones((3, 2)), "U": np.ones((2, 2)), "lam": -0.1}, "lam"),
        ({"S": [[np.nan, 1.0]], "U": np.ones((2, 2)), "lam": 0.1}, "S: contains 1 NaN"),
        ({"S": np.ones((3, 2)), "U": [[np.inf, 1.0]], "lam": 0.1}, "U: contains 1 NaN or Inf"),
        ({"S": np.ones(3), "U": np.ones((2, 2)), "lam": 0.1}, "S: expected 2"),
        ({"S": np.ones((3, 2)), "U": np.ones((2, 2)), "lam": 0.1, "topk": 3}, "topk"),
        ({"S": np.ones((3, 2)), "U": np.ones((2, 2)), "lam": 0.1, "topk": 0}, "topk"),
    ],
)
def test_layer_rejects_bad_inputs(kwargs, message):
    with pytest.raises(AtomsparkError, match=message):
        VNLayer(**kwargs)


def test_model_rejects_inconsistent_layers():
    a = VNLayer(np.ones((4, 3)), np.ones((5, 3)), 0.1)
    b = VNLayer(np.ones((6, 2)), np.ones((2, 2)), 0.1)
    with pytest.raises(AtomsparkError, match="needs them equal"):
        VNModel((a, b))
    top_k_low = VNLayer(np.ones((4, 3)), np.ones((6, 3)), 0.1, topk=1)
    with pytest.raises(AtomsparkError, match="only allowed on the top layer"):
        VNModel((top_k_low, b))
    with pytest.raises(AtomsparkError, match="at least one layer"):
        VNModel(())
    with pytest.raises(AtomsparkError, match="one value per layer"):
        VNModel.from_arrays([np.ones((4, 3))], [np.ones((2, 3))], lam=[0.1, 0.2])
    with pytest.raises(AtomsparkError, match="layer_sizes"):
        VNModel.random(4, [(0, 2)])
