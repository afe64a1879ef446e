"""Imported NIR graphs on Lava's Loihi2SimCfg: the recorded producers' cases (a recurrent and a
convolutional snnTorch network, Norse's cells, a Sinabs convolutional network) exported with
their recorded input streamed by RingBuffer spike sources. Float: every spike equals the engine's
and the producer's own run; fixed point: every spike equals the engine's integer graph.

Run with .venv-lava/bin/python -m pytest -m lava tests/test_nir_lava_run.py (Python 3.10).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("lava")
pytest.importorskip("h5py")
pytestmark = [pytest.mark.lava, pytest.mark.slow]

from atomspark.mapping.nir_lava import nir_lava, producer_clock, verify_on_lava  # noqa: E402
from atomspark.scenarios.cli.main import main  # noqa: E402
from test_nir_lava import CASES, DATA, closed_case  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_float_bundle_on_lava_equals_engine_and_producer(name):
    closed, ref = closed_case(name)
    nl = nir_lava(closed, fixed=False)
    check = verify_on_lava(nl)
    assert check["passed"], check["lava_vs_engine_differ"]
    assert check["lava_spikes"]["input"] == int(ref["input"].sum())
    on_producer = producer_clock(nl, check["lava_outputs"])
    compared = 0
    for node, r in on_producer.items():
        if f"s:{node}" in ref:
            np.testing.assert_array_equal(r, ref[f"s:{node}"] != 0, err_msg=node)
            compared += int(r.sum())
    assert compared > 50


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_bundle_on_lava_is_bit_exact(name):
    closed, _ = closed_case(name)
    check = verify_on_lava(nir_lava(closed, fixed=True))
    assert check["passed"], check["lava_vs_engine_differ"]
    assert not any(check["lava_vs_reference_differ"].values())
    assert sum(check["lava_spikes"].values()) > 100


def test_export_verify_and_the_bundles_own_check(tmp_path):
    """`export --fixed --verify` on a producer's file, then the bundle's run_bundle.py --verify
    (the engine fed the bundle's own spike trains)."""
    out = tmp_path / "exp"
    assert main(["export", str(DATA / "snntorch_recurrent.nir"), "--to", "lava", "--producer",
                 "snntorch", "--input", "rate:0.3:1", "--steps", "20", "--fixed", "--verify",
                 "--out", str(out)]) == 0  # fmt: skip
    res = json.loads((out / "export.json").read_text())
    assert res["verify"]["passed"] and res["verify"]["lava_spikes"]["input"] > 0
    run = subprocess.run([sys.executable, str(out / "run_bundle.py"), "--steps", "22",
                          "--verify"], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "input:" in run.stdout


def test_committed_lava_table_is_what_lava_runs():
    """docs/results/nir/lava_agreement.json (docs/nir.md's table, the README's Lava line) is
    what benchmarks/nir_lava_agreement.py measures on Lava now."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "benchmarks"))
    import nir_lava_agreement as nla

    committed = json.loads((root / "docs" / "results" / "nir" / "lava_agreement.json").read_text())
    for name in CASES:
        assert nla.measure_case(name) == committed[name], name
