"""docs/nir.md's agreement table and the README's NIR example are generated from the committed
results (benchmarks/nir_agreement.py --write), and the results are what the code measures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("h5py")
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "nir"
sys.path.insert(0, str(ROOT / "benchmarks"))
import nir_agreement as na  # noqa: E402

STALE = "stale: rerun python benchmarks/nir_agreement.py --write"


def test_agreement_results_are_measured_and_in_the_doc():
    committed = json.loads((RESULTS / "agreement.json").read_text())
    assert na.measure() == committed, STALE
    assert all(r["spike_entries_differing"] == 0 for r in committed.values())
    assert na.block_of(ROOT / "docs" / "nir.md", na.DOC_MARK) + "\n" == na.render(committed), STALE


def test_readme_example_is_the_committed_import(tmp_path):
    from atomspark.scenarios.runs.nir_import import import_nir

    committed = json.loads((RESULTS / "import_sinabs_conv.json").read_text())
    a = dict(zip(na.EXAMPLE_ARGS[::2], na.EXAMPLE_ARGS[1::2]))
    fresh = import_nir(na.DATA / "sinabs_conv.nir", a["--input"], int(a["--samples"]),
                       int(a["--steps"]), out=tmp_path / "imp", producer=a["--producer"],
                       log=lambda _: None)  # fmt: skip
    fresh["network"] = committed["network"]
    assert json.loads(json.dumps(fresh)) == committed, STALE
    cmp = json.loads((RESULTS / "compare_sinabs_conv.json").read_text())
    lava = json.loads((RESULTS / "lava_agreement.json").read_text())["sinabs_conv"]
    block = na.render_example(committed) + na.render_compare(cmp, lava)
    assert na.block_of(ROOT / "README.md", na.README_MARK) + "\n" == block, STALE


def test_readme_chip_vs_gpu_row_is_the_committed_compare(tmp_path):
    pytest.importorskip("torch")
    committed = json.loads((RESULTS / "compare_sinabs_conv.json").read_text())
    assert na.compare_example(tmp_path / "cmp") == committed, STALE
    assert committed["chip_vs_gpu"]["batch_1"]["ratio"] > 0


def test_lava_table_is_the_committed_lava_run():
    """The Lava runs themselves are checked in tests/test_nir_lava_run.py (-m lava)."""
    import nir_lava_agreement as nla

    committed = json.loads((RESULTS / "lava_agreement.json").read_text())
    assert set(committed) == set(na.CASES)
    for r in committed.values():
        assert r["float"]["differ_vs_engine"] == r["fixed"]["differ_vs_engine"] == 0
        assert r["float"]["differ_vs_producer"] == 0
    block = na.block_of(ROOT / "docs" / "nir.md", nla.DOC_MARK) + "\n"
    assert block == nla.render(committed), "stale: rerun benchmarks/nir_lava_agreement.py --write"
