"""Energy model: breakdown sums to the total, hand-computed time per step, dense roofline."""

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp
from atomspark.mapping.energy import dense_cost, estimate_energy
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.placement import Placement, place
from atomspark.sim.core import AtomsparkError
from atomspark.sim.profile import COUNTER_FIELDS, Profile


def two_unit_case():
    """Unit 0 (pop a, core 0) -> unit 1 (pop b, core 1); cores on tiles 0 and 1 (1 E-W hop)."""
    hw = load_hardware("loihi1-davies")
    lim = dataclasses.replace(hw.limits, cores_per_tile=1)
    hw = dataclasses.replace(hw, limits=lim)
    adj = sp.csr_matrix(([1.0], ([0], [1])), shape=(2, 2))
    steps = 2
    counters = {k: np.zeros((steps, 2), np.int64) for k in COUNTER_FIELDS}
    counters["events"][:, 0] = [3, 1]
    counters["synops"][:, 0] = [3, 1]
    counters["active"][:] = [[1, 1], [1, 0]]
    prof = Profile(["a", "b"], np.array([1, 1]), steps, unit_events=[[4], [0]], **counters)
    pl = Placement(np.array([0, 1]), n_cores=2, n_chips=1, cores_per_chip=128, strategy="hand")
    return hw, adj, prof, pl


def test_time_per_step_is_slowest_core_plus_barrier():
    hw, adj, prof, pl = two_unit_case()
    t, barrier = hw.time, hw.barrier_time(2)
    # step 0: core 0 updates unit 0 (active) and sends 3 events, 1 message each;
    #         core 1 updates unit 1 (active) and does the 3 synops.
    core0 = t.update_active + 3 * t.spike_out + 3 * t.spike_local
    core1 = t.update_active + 3 * t.synop
    step0 = max(core0, core1) + barrier
    # step 1: unit 1 idle, 1 event.
    step1 = max(t.update_active + t.spike_out + t.spike_local, t.update_idle + t.synop) + barrier
    rep = estimate_energy(prof, pl, adj, hw, n_samples=2)
    assert rep.barrier_s == pytest.approx(barrier)
    assert rep.time_per_step_s == pytest.approx((step0 + step1) / 2)
    assert rep.time_per_sample_s == pytest.approx((step0 + step1) / 2)


def test_energy_breakdown_hand_computed_and_sums_to_total():
    hw, adj, prof, pl = two_unit_case()
    e = hw.energy
    rep = estimate_energy(prof, pl, adj, hw, n_samples=1)
    b = rep.breakdown
    assert b.synaptic_ops == pytest.approx(4 * e.synop)
    assert b.updates_active == pytest.approx(3 * e.update_active)
    assert b.updates_idle == pytest.approx(1 * e.update_idle)
    assert b.spikes == pytest.approx(4 * (e.spike_out + e.spike_local))
    assert b.routing == pytest.approx(4 * e.hop_east_west)
    run_time = 2 * rep.time_per_step_s
    assert b.static == pytest.approx(2 * hw.static_power_per_core_w * run_time)
    parts = dataclasses.asdict(b)
    assert rep.energy_per_sample_j == pytest.approx(sum(parts.values()))
    assert json.loads(rep.to_json())["breakdown"]["total"] == pytest.approx(b.total)
    dynamic = 4 * e.synop + 3 * e.update_active + e.update_idle + 4 * (e.spike_out + e.spike_local)
    by_hand = dynamic + 4 * e.hop_east_west + b.static  # J per sample (one sample of two steps)
    assert rep.edp_js == pytest.approx(by_hand * run_time)  # energy x time of that sample


def test_partitioned_placement_costs_less_routing_energy():
    rng = np.random.default_rng(0)
    n, k = 64, 4
    label = np.arange(n) % k
    dense = rng.random((n, n)) < np.where(label[:, None] == label[None, :], 0.5, 0.01)
    np.fill_diagonal(dense, False)
    adj = sp.csr_matrix(dense.astype(float))
    hw = load_hardware("loihi1-davies")
    lim = dataclasses.replace(hw.limits, units_per_core=16, cores_per_tile=1)
    hw = dataclasses.replace(hw, limits=lim)
    unit_events = rng.integers(1, 5, size=n)
    counters = {c: np.zeros((1, 1), np.int64) for c in COUNTER_FIELDS}
    counters["events"][0, 0] = unit_events.sum()
    counters["synops"][0, 0] = int(unit_events @ np.asarray(dense.sum(axis=1)))
    counters["active"][0, 0] = n
    prof = Profile(["all"], np.array([n]), 1, unit_events=[unit_events], **counters)
    reports = {
        s: estimate_energy(prof, place(adj, hw, s, unit_events=unit_events), adj, hw)
        for s in ("sequential", "partition")
    }
    assert reports["partition"].breakdown.spikes < reports["sequential"].breakdown.spikes
    # synaptic work does not depend on placement
    assert reports["partition"].breakdown.synaptic_ops == pytest.approx(
        reports["sequential"].breakdown.synaptic_ops
    )


def test_dense_cost_roofline():
    hw = load_hardware("a100")
    compute = dense_cost(1e12, 1e6, hw, "fp32", n_launches=0)
    assert compute.bound == "compute"
    assert compute.time_s == pytest.approx(1e12 / 19.5e12)
    # compute-bound at peak the board draws its TDP: energy = power x time (the 1 MB of traffic
    # adds its own energy per byte on top)
    assert compute.energy_j == pytest.approx(
        hw.tdp_w * compute.time_s + 1e6 * hw.energy_per_byte, rel=1e-9
    )
    for name in ("a100", "h100"):  # every precision of every GPU: TDP at its peak rate
        gpu = load_hardware(name)
        for precision in gpu.energy_per_flop:
            peak = dense_cost(1e13, 0.0, gpu, precision, n_launches=0)
            assert peak.energy_j / peak.time_s == pytest.approx(gpu.tdp_w, rel=1e-6)
    memory = dense_cost(1e6, 1e10, hw, "fp32", n_launches=3)
    assert memory.bound == "memory"
    assert memory.time_s == pytest.approx(
        1e10 / hw.bandwidth_bytes_per_s + 3 * hw.launch_overhead_s
    )
    with pytest.raises(AtomsparkError, match="precision 'fp8' unknown"):
        dense_cost(1.0, 1.0, hw, "fp8")


def test_wrong_hardware_kind_is_an_error():
    hw, adj, prof, pl = two_unit_case()
    with pytest.raises(AtomsparkError, match="not neuromorphic"):
        estimate_energy(prof, pl, adj, load_hardware("h100"))
    with pytest.raises(AtomsparkError, match="not a GPU/CPU"):
        dense_cost(1.0, 1.0, hw)
