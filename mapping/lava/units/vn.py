"""VN atoms on Lava: atomspark's VNAtom Process (mapping/lava/procs/vn_atom.py), float and
bit-accurate; both ProcessModels and the reference below call the sim unit's own step."""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.mapping.lava.units.registry import (
    LavaUnit,
    nonzero_outputs,
    one_record,
    register_lava_unit,
)
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units.vn import VNParams, vn_float_reference_step
from atomspark.sim.units.vn_fixed import VNFixedParams, vn_fixed_step


def _describe_float(name: str, size: int, params: VNParams) -> LavaPopulation:
    if params.topk is not None:
        raise AtomsparkError(f"{name}.topk: hard top-k needs a population-wide sort; not exported")
    state = params.init_state(size)
    arrays = {key: state[src].astype(np.float64)
              for key, src in (("drive", "drive"), ("thresh", "thresh"), ("g_init", "g"))}  # fmt: skip
    scalars = {"eta": float(params.eta), "event_threshold": float(params.event_threshold)}
    return LavaPopulation(name, "vn", "float", size, scalars, arrays)


def _describe_fixed(name: str, size: int, params: VNFixedParams) -> LavaPopulation:
    state = params.init_state(size)
    scalars = {
        key: int(getattr(params, key)) for key in ("frac_bits", "eta_mant", "eta_shift", "c_shift")
    }
    arrays = {"drive": state["drive"], "thresh": state["thresh"], "g_init": state["g"]}
    return LavaPopulation(name, "vn", "fixed", size, scalars, arrays)


def _params_float(p: LavaPopulation, n_inputs: int) -> VNParams:
    """Thresholds come back as lam = thresh / eta (equal up to rounding)."""
    k, a = p.scalars, p.arrays
    return VNParams(eta=k["eta"], lam=a["thresh"] / k["eta"], drive=a["drive"],
                    event_threshold=k["event_threshold"], g_init=a["g_init"])  # fmt: skip


def _params_fixed(p: LavaPopulation, n_inputs: int) -> VNFixedParams:
    k, a = p.scalars, p.arrays
    return VNFixedParams(frac_bits=k["frac_bits"], eta_mant=k["eta_mant"],
                         eta_shift=k["eta_shift"], drive=a["drive"], thresh=a["thresh"],
                         c_shift=k["c_shift"], g_init=a["g_init"], n_inputs=max(n_inputs, 1))  # fmt: skip


def _init_state(p: LavaPopulation) -> dict:
    g0 = p.arrays["g_init"].copy()
    return {"g": g0, "g_sent": np.zeros_like(g0), "c": np.zeros_like(g0)}


def _step_float(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    k, a = p.scalars, p.arrays
    s["g"], s["g_sent"], s["c"], dg = vn_float_reference_step(
        s["g"], s["g_sent"], s["c"], a_in, a["drive"], a["thresh"], k["eta"], k["event_threshold"]
    )
    return dg


def _step_fixed(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    k, a = p.scalars, p.arrays
    s["g"], s["g_sent"], s["c"], dg, _, _ = vn_fixed_step(
        s["g"], s["g_sent"], s["c"], a_in, a["drive"], a["thresh"], k["eta_mant"], k["eta_shift"]
    )
    return dg


def _make_process(p: LavaPopulation):
    from atomspark.mapping.lava.procs.vn_atom import VNAtom

    k, a = p.scalars, p.arrays
    return VNAtom(size=p.size, drive=a["drive"], thresh=a["thresh"], g_init=a["g_init"],
                  eta=k.get("eta", 0.0), event_threshold=k.get("event_threshold", 0.0),
                  eta_mant=k.get("eta_mant", 0), eta_shift=k.get("eta_shift", 0), name=p.name)  # fmt: skip


def _errors_float(p: LavaPopulation, lava: dict, traces: dict, count_error: float) -> dict:
    """max |g_lava - g_engine| over all steps (only exact when every change is sent)."""
    if p.scalars.get("event_threshold", 0.0) != 0.0:
        return {}
    g_lava = np.cumsum(lava[p.name], axis=0)
    return {p.name: float(np.abs(g_lava - traces[(p.name, "g")]).max(initial=0.0))}


def _errors_fixed(p: LavaPopulation, lava: dict, traces: dict, count_error: float) -> dict:
    """Integer changes payload for payload (the engine's are the steps of its g_sent trace),
    and the event counts."""
    sent = traces[(p.name, "g_sent")]
    dg = np.diff(sent, axis=0, prepend=np.zeros((1, p.size), sent.dtype))
    return {p.name: float(max(np.abs(lava[p.name] - dg).max(initial=0), count_error))}


_COMMON = dict(process="VNAtom", select_tags=("floating_pt", "fixed_pt"), init_state=_init_state,
               make_process=_make_process, records=one_record, sent=nonzero_outputs,
               engine_trace=("g", "g_sent"))  # fmt: skip
VN_FLOAT = register_lava_unit(
    LavaUnit(
        "vn",
        "vn",
        "float",
        describe=_describe_float,
        to_params=_params_float,
        step=_step_float,
        engine_errors=_errors_float,
        **_COMMON,
    )  # fmt: skip
)
VN_FIXED = register_lava_unit(
    LavaUnit(
        "vn_fixed",
        "vn",
        "fixed",
        describe=_describe_fixed,
        to_params=_params_fixed,
        step=_step_fixed,
        engine_errors=_errors_fixed,
        multi_channel=True,
        **_COMMON,
    )  # fmt: skip
)
