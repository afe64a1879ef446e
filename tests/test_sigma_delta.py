"""Sigma-delta units (sim/units/sigma_delta.py) against Lava's own lava.proc.sdn ProcessModels:
the engine and the NumPy reference replay the committed Lava recording
(benchmarks/sigma_delta_lava_reference.py) bit for bit in fixed point and to rounding in float;
a lava-marked test records again and compares; bad parameters are one line."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from atomspark.mapping.lava.units import lava_unit_of_params
from atomspark.mapping.lava.units.sigma_delta import sent_values
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.sigma_delta import (
    SigmaDeltaFixedParams,
    SigmaDeltaParams,
    sigma_delta_reference_step,
)
from atomspark.sim.units.vn_fixed import lava_sparse_accumulate

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "tests" / "data" / "sigma_delta" / "lava_reference.npz"
FLOAT_TOLERANCE = 1e-9  # summation order of the float Dense/Sparse only


def _script():
    spec = importlib.util.spec_from_file_location(
        "sigma_delta_lava_reference", ROOT / "benchmarks" / "sigma_delta_lava_reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
CASES = {c["name"]: c for c in SCRIPT.cases()}


def _params(case: dict):
    fixed = case["arithmetic"] == "fixed"
    return (SigmaDeltaFixedParams if fixed else SigmaDeltaParams)(**case["params"])


def _drive(case: dict, steps: int) -> np.ndarray:
    """What the units receive from the input Dense at each step (Lava: one step late)."""
    drive = np.zeros((steps, case["n"]), np.int64 if case["arithmetic"] == "fixed" else float)
    for t in range(1, steps):
        x = case["data"][:, t - 1]
        if case["arithmetic"] == "fixed":
            drive[t] = lava_sparse_accumulate(case["w_in"], x, case["exp_in"])[0]
        else:
            drive[t] = case["w_in"] @ x
    return drive


def _engine_run(case: dict, steps: int) -> dict[str, np.ndarray]:
    par = _params(case)
    projs = []
    if np.any(case["w_rec"]):
        projs.append(
            Projection("sd", "sd", case["w_rec"].astype(float), weight_exp=case["exp_rec"])
        )
    eng = Engine(Graph([Population("sd", case["n"], par)], projs))
    record = tuple(("sd", v) for v in SCRIPT.VARS)
    prof = eng.run(steps, inputs={"sd": _drive(case, steps).astype(float)}, record=record)
    out = {v: eng.traces[("sd", v)] for v in SCRIPT.VARS}
    pop = lava_unit_of_params(par).describe("sd", case["n"], par)
    out["s_out"] = sent_values(pop, {("sd", v): out[v] for v in SCRIPT.VARS})
    out["events"] = prof.events[:, 0]
    out["wraps"] = int(prof.wraps.sum())
    return out


def _reference_run(case: dict, steps: int) -> dict[str, np.ndarray]:
    par = _params(case)
    st = par.init_state(case["n"])
    fixed = case["arithmetic"] == "fixed"
    prev = np.zeros(case["n"], np.int64 if fixed else float)
    drive = _drive(case, steps)
    out = {k: [] for k in ("s_out",) + SCRIPT.VARS}
    for t in range(steps):
        if fixed:
            rec = lava_sparse_accumulate(case["w_rec"], prev, case["exp_rec"])[0]
        else:
            rec = case["w_rec"] @ prev
        prev = sigma_delta_reference_step(par, st, drive[t] + rec).out
        out["s_out"].append(prev)
        for v in SCRIPT.VARS:
            out[v].append(st[v].copy())
    return {k: np.array(v) for k, v in out.items()}


def _assert_same(case: dict, got: dict, lava: dict, what: str) -> None:
    tol = 0 if case["arithmetic"] == "fixed" else FLOAT_TOLERANCE
    for key in lava:  # Lava's Sigma has no act, residue or error
        err = np.abs(np.asarray(got[key], float) - lava[key]).max()
        assert err <= tol, f"{case['name']}: {what} {key} differs from Lava by {err}"


def _recorded(name: str) -> dict[str, np.ndarray]:
    with np.load(RECORDING) as data:
        return {k.split(".", 1)[1]: data[k] for k in data.files if k.startswith(name + ".")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_and_reference_replay_lavas_sigma_delta_recording(name):
    case = CASES[name]
    lava = _recorded(name)
    steps = lava["s_out"].shape[0]
    assert np.count_nonzero(lava["s_out"]) > 20  # the case sends events
    engine = _engine_run(case, steps)
    _assert_same(case, engine, lava, "engine")
    _assert_same(case, _reference_run(case, steps), lava, "NumPy reference")
    assert np.array_equal(engine["events"], np.count_nonzero(lava["s_out"], axis=1))


def test_recording_covers_every_option_and_a_wrap():
    params = [c["params"] for c in CASES.values()]
    assert {p["kind"] for p in params} == {"sigma", "delta", "sigma_delta"}
    assert {p.get("act") for p in params} >= {"relu", "unit"}
    assert any(p.get("cum_error") for p in params) and any(p.get("state_exp") for p in params)
    assert any(p.get("spike_exp") for p in params) and any(np.any(p.get("bias", 0)) for p in params)
    assert {c["arithmetic"] for c in CASES.values()} == {"fixed", "float"}
    assert _engine_run(CASES["fixed_sigma_wraps"], 24)["wraps"] > 0  # int32 words wrapped


@pytest.mark.lava
def test_lava_records_the_committed_sigma_delta_traces_again():
    pytest.importorskip("lava")
    for name, case in CASES.items():
        got = SCRIPT.run_case(case)
        _assert_same(case, got, _recorded(name), "a new Lava run")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(kind="sigmoid"), "kind: must be one of"),
        (dict(act="tanh"), "act: must be one of"),
        (dict(vth=-1), "vth: must be one integer >= 0"),
        (dict(vth=1.5), "vth: must be one integer >= 0"),
        (dict(spike_exp=8), "spike_exp: must lie in [0, 7]"),
        (dict(kind="delta", bias=3), "bias and act belong to kind 'sigma_delta'"),
        (dict(vth=2**20, spike_exp=4), "vth * 2**(spike_exp + state_exp) must fit 24 bits"),
        (dict(bias=np.array([0.5, 1.0])), "bias: must be integer(s)"),
    ],
)
def test_bad_fixed_parameters_are_one_line(kwargs, message):
    with pytest.raises(AtomsparkError, match=re.escape(message)) as err:
        Graph([Population("sd", 2, SigmaDeltaFixedParams(**kwargs))])
    assert "\n" not in str(err.value)


def test_float_units_refuse_a_negative_threshold():
    with pytest.raises(AtomsparkError, match="sd.vth: must be >= 0"):
        Graph([Population("sd", 2, SigmaDeltaParams(vth=-0.5))])


def _bias_driven_graph(fixed: bool) -> Graph:
    """Two sigma-delta populations driven by their biases, wired recurrently (graded spikes)."""
    rng = np.random.default_rng(3)
    if fixed:
        a = SigmaDeltaFixedParams(vth=4, bias=rng.integers(-200, 400, 8), spike_exp=1, state_exp=2)
        b = SigmaDeltaFixedParams(act="unit", vth=2, bias=rng.integers(-50, 50, 5), cum_error=True)
        w_ab, w_ba = 2 * rng.integers(-40, 40, (5, 8)), 2 * rng.integers(-20, 20, (8, 5))
        exps = (-6, -6)
    else:
        a = SigmaDeltaParams(vth=0.1, bias=rng.normal(0.5, 1.0, 8), spike_exp=1)
        b = SigmaDeltaParams(act="unit", vth=0.05, bias=rng.normal(0.0, 0.2, 5), cum_error=True)
        w_ab, w_ba = rng.normal(0, 0.3, (5, 8)), rng.normal(0, 0.1, (8, 5))
        exps = (0, 0)
    pops = [Population("a", 8, a), Population("b", 5, b)]
    projs = [Projection("a", "b", w_ab.astype(float), weight_exp=exps[0]),
             Projection("b", "a", w_ba.astype(float), weight_exp=exps[1])]  # fmt: skip
    return Graph(pops, projs)


def test_sigma_delta_graphs_report_standard_processes_only():
    from atomspark.mapping.deployment import deployment_report
    from atomspark.mapping.lava.bundle import from_graph
    from atomspark.mapping.lava.export import deployable_on_chip, hardware_run_config

    fixed = _bias_driven_graph(True)
    rep = deployment_report(fixed, "loihi2")
    assert rep.fits and rep.deployable_on_chip
    assert [r["lava_process"] for r in rep.processes] == ["SigmaDelta"] * 2 + ["Sparse"] * 2
    assert all(r["standard_lava_process"] for r in rep.processes)
    hw = hardware_run_config(from_graph(fixed))
    assert hw["deployable_on_chip"] and hw["host_processes"] == []
    assert not deployable_on_chip(from_graph(_bias_driven_graph(False)))  # float: not on a chip
    assert not deployment_report(_bias_driven_graph(False), "loihi2").deployable_on_chip


@pytest.mark.lava
@pytest.mark.parametrize("fixed", [True, False])
def test_sigma_delta_bundle_verifies_on_lava(tmp_path, fixed):
    pytest.importorskip("lava")
    from atomspark.mapping.lava.export import export_lava, verify_lava

    bundle = export_lava(_bias_driven_graph(fixed), tmp_path / "sd")
    report = verify_lava(bundle, 30)
    assert report.passed, report
    assert min(report.lava_events.values()) >= 5
    assert report.tolerance == (0.0 if fixed else 1e-9)
