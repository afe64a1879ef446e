"""Only what a chip can do: a chip row stops by a rule the chip can evaluate (a step budget
chosen on held-out samples, or the model's fixed steps); the oracle stop, which knows the
converged answer, is a labelled lower bound and is refused as a headline; the GPU pays for its
own convergence test."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from atomspark.mapping.chip_gpu_ratios import Assumptions, ChipRow, GPUVariant, compare_workload
from atomspark.mapping.gpu_pricing import DenseAlgorithm, Phase, price_algorithm
from atomspark.mapping.hardware import load_hardware
from atomspark.scenarios.compare.chip_rows import (
    HEADLINE_STOP,
    ORACLE_STOP,
    heldout_budgets,
    vn_stops,
)
from atomspark.sim.core import AtomsparkError

H100 = load_hardware("h100")


def _chip(stop_rule: str, dynamic=2e-6) -> ChipRow:
    return ChipRow(
        "loihi2", True, "node", cores=4, chips=1, dynamic_j=dynamic,
        static_j={"device": 3e-6, "shared": 1e-7}, latency_s=1e-4, steps=100,
        copies_per_chip=30, stop_rule=stop_rule, stop_detail=stop_rule,
    )  # fmt: skip


def _variants() -> list[GPUVariant]:
    phase = Phase("p", np.array([20.0, 40.0]), 4e6, 4e6, 1e4, 40.0, gemm_fraction=0.9)
    return [GPUVariant("fp32", "dense", DenseAlgorithm("toy", (phase,), "given"), True, "ok")]


def test_each_sample_runs_the_budget_chosen_on_the_other_samples():
    stops = [10, 30, 20, 50]
    # the target met on 99 % of the held-out samples: the largest of the others' stops
    assert heldout_budgets(stops, budget=100) == [50, 50, 50, 30]
    assert heldout_budgets(stops, budget=40) == [40, 40, 40, 30]  # never past the run's budget
    assert heldout_budgets([7], budget=100) == [100]  # no held-out sample: the full budget


def test_vn_stops_never_read_a_samples_own_answer():
    steps, record = 60, [("L0", "g")]
    reference = [np.array([[1.0, 0.0], [2.0, 1.0], [1.0, 1.0]])]
    converge_at = [10, 40, 20]  # sample i jumps to its reference at this step
    traces = []
    for i, s in enumerate(converge_at):
        g = np.zeros((steps, 2))
        g[s - 1 :] = reference[0][i]
        traces.append({("L0", "g"): g})
    oracle = vn_stops(traces, record, reference, 1e-3, ORACLE_STOP)
    budget = vn_stops(traces, record, reference, 1e-3, HEADLINE_STOP)
    assert oracle.steps == converge_at
    assert budget.steps == [40, 20, 40]  # each: the slowest of the others
    # the slowest sample stops before it converges: its codes are what the chip delivers
    assert np.allclose(budget.codes[0][1], 0.0) and np.allclose(budget.codes[0][0], [1, 0])
    assert "held-out" in budget.detail and "lower bound" in oracle.detail
    with pytest.raises(AtomsparkError, match="stop rule"):
        vn_stops(traces, record, reference, 1e-3, "guess")


def test_the_oracle_stop_is_refused_as_headline_and_reported_as_a_lower_bound():
    with pytest.raises(AtomsparkError, match="lower bound, never a headline"):
        compare_workload("w", _chip(ORACLE_STOP), _variants(), H100, Assumptions())
    bound = _chip(ORACLE_STOP, dynamic=1e-6)
    r = compare_workload("w", _chip(HEADLINE_STOP), _variants(), H100, Assumptions(), bound)
    assert r["chip"]["stop_rule"] == HEADLINE_STOP
    lb = r["oracle_lower_bound"]
    assert "not a headline" in lb["label"]
    assert lb["batch_1"] > r["batch_1"]["ratio"]  # a cheaper chip: the ratio's upper end


def test_the_gpu_pays_for_its_convergence_test():
    phase = Phase("p", np.array([100.0]), 1e3, 1e3, 1e2, 10.0)
    plain = DenseAlgorithm("toy", (phase,), "given")
    tested = dataclasses.replace(plain, convergence_test=True)
    for launches in ("graph", "per-iteration", "per-op"):
        a = price_algorithm(plain, H100, 1, launches)
        b = price_algorithm(tested, H100, 1, launches)
        assert b.time_s > a.time_s and b.energy_j > a.energy_j
