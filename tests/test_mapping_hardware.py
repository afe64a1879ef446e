"""Hardware descriptions: every shipped number has a source, bad names and files fail clearly."""

import json

import pytest
from atomspark.mapping.hardware import (
    DenseHardware,
    NeuromorphicHardware,
    known_hardware,
    load_hardware,
)
from atomspark.sim.core import AtomsparkError


def test_all_presets_load_and_every_number_is_sourced():
    names = known_hardware()
    assert {"loihi1-davies", "loihi1-sanafe", "loihi2", "a100", "h100", "cpu-core"} <= set(names)
    for name in names:
        hw = load_hardware(name)
        assert hw.sources, name
        for key, src in hw.sources.items():
            assert src["source"], (name, key)
            if src.get("estimate"):
                assert src["derivation"], (name, key)


def test_davies_figures_match_table_2():
    hw = load_hardware("loihi1-davies")
    assert isinstance(hw, NeuromorphicHardware)
    assert hw.energy.synop == pytest.approx(23.6e-12)
    assert hw.energy.update_active == pytest.approx(81e-12)
    assert hw.energy.update_idle == pytest.approx(52e-12)
    assert hw.limits.cores_per_chip == 128 and hw.limits.units_per_core == 1024
    # 1..32 tiles span 113..465 ns, linear in between
    assert hw.barrier_time(1) == pytest.approx(113e-9)
    assert hw.barrier_time(32) == pytest.approx(465e-9)
    assert hw.barrier_time(16) == pytest.approx(113e-9 + 15 / 31 * (465e-9 - 113e-9))


def test_sanafe_barrier_is_a_step_table():
    hw = load_hardware("loihi1-sanafe")
    assert hw.barrier_time(3) == pytest.approx(1.0e-6)  # largest key <= 3 is 2
    assert hw.barrier_time(28) == pytest.approx(1.4e-6)
    assert hw.barrier_time(32) == pytest.approx(1.8e-6)
    assert hw.energy.update_active == pytest.approx(51.2e-12 + 21.6e-12)


def test_loihi2_energies_are_labelled_estimates():
    hw = load_hardware("loihi2")
    assert hw.sources["energy.synop"]["estimate"] is True
    assert hw.limits.units_per_core == 8192
    assert hw.energy.synop < load_hardware("loihi1-davies").energy.synop


def test_gpu_energy_per_flop_is_dynamic_power_over_peak():
    hw = load_hardware("h100")
    assert isinstance(hw, DenseHardware)
    expected = (hw.tdp_w - hw.idle_power_w) / hw.peak_flops["fp32"]
    assert hw.energy_per_flop["fp32"] == pytest.approx(expected)


def test_unknown_name_lists_known_names():
    with pytest.raises(AtomsparkError, match="unknown hardware 'loihi9'.*loihi1-davies"):
        load_hardware("loihi9")


def test_user_file_roundtrip_and_broken_files(tmp_path):
    data = json.loads((load_hardware.__globals__["DATA_DIR"] / "loihi2.json").read_text())
    data["limits"]["units_per_core"]["value"] = 16
    good = tmp_path / "mine.json"
    good.write_text(json.dumps(data))
    assert load_hardware(good).limits.units_per_core == 16

    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(AtomsparkError, match="cannot be read as JSON"):
        load_hardware(broken)

    del data["energy"]["synop"]["source"]
    unsourced = tmp_path / "unsourced.json"
    unsourced.write_text(json.dumps(data))
    with pytest.raises(AtomsparkError, match="energy.synop.*source"):
        load_hardware(unsourced)
