"""One size guard (sim/memory.require_memory) on every entry point that allocates from a size the
user gives: steps, samples, nodes, hidden width, layers. A size far beyond any machine is refused
in one line with the memory estimate, before anything is allocated or written."""

from __future__ import annotations

import numpy as np
import pytest
from atomspark.networks import datasets, rsgn
from atomspark.networks.vn import VNModel
from atomspark.networks.vn_compile import compile_vn_model
from atomspark.scenarios.cli.main import main
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.memory import require_memory

HUGE = 10**13
ESTIMATE = r"needs about [0-9.e+]+ [KMGTPE]iB of memory but [0-9.]+ [KMGTPE]iB is available"


@pytest.fixture(scope="module")
def vn_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "vn.npz"
    VNModel.random(6, [(5, 4)], seed=0).save(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["profile", "{m}", "--input", "builtin:2", "--steps", str(HUGE)],
        ["export", "{m}", "--to", "lava", "--fixed", "--steps", str(HUGE)],
        ["compare", "{m}", "--data", "{d}", "--steps", str(HUGE), "--no-fixed"],
    ],
)
def test_verbs_refuse_steps_beyond_memory_in_one_line(vn_file, tmp_path, capsys, argv):
    if argv[0] == "compare":
        pytest.importorskip("torch")
    np.savez(tmp_path / "data.npz", x=np.zeros((2, 6)))
    out = tmp_path / "out"
    argv = [a.replace("{m}", str(vn_file)).replace("{d}", str(tmp_path / "data.npz")) for a in argv]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert f"--steps {HUGE}" in err and "use a smaller --steps" in err
    assert __import__("re").search(ESTIMATE, err), err
    assert not out.exists()


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda: Engine(compile_vn_model(VNModel.random(6, [(5, 4)]), np.ones(6))).run(HUGE), "steps"),
        (lambda: rsgn.init_params(rsgn.RSGNConfig(n_nodes=10**6, d_hidden=10**6, d_in=3, n_classes=2)), "d_hidden 1000000"),
        (lambda: rsgn.init_params(rsgn.RSGNConfig(n_nodes=10**7, d_hidden=8, d_in=3, n_classes=2, mode="sparse", k_nearest=4)), "n_nodes 10000000"),
        (lambda: VNModel.random(10**7, [(10**6, 4)]), "layer_sizes"),
        (lambda: datasets.hierarchical_sequences(n=10**9), "n 1000000000"),
        (lambda: datasets.long_range_sequences(n=10**9), "n 1000000000"),
        (lambda: datasets.sparse_dictionary_data(n=10**11), "n 100000000000"),
    ],
)  # fmt: skip
def test_python_entry_points_refuse_sizes_beyond_memory(make, names):
    with pytest.raises(AtomsparkError, match=ESTIMATE) as refused:
        make()
    assert names in str(refused.value)


def test_the_guard_passes_what_fits_and_names_what_to_reduce():
    require_memory("small", 1024, "never shown")
    with pytest.raises(AtomsparkError, match=r"^big thing: needs about 8\.88 PiB.*; shrink it$"):
        require_memory("big thing", 1e16, "shrink it")
