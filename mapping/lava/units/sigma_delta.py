"""Sigma-delta units on Lava: lava.proc.sdn's Sigma, Delta and SigmaDelta Processes with Lava's
own float and fixed-point ProcessModels (standard processes: no atomspark neuron code)."""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.mapping.lava.units.registry import (
    LavaUnit,
    nonzero_outputs,
    one_record,
    register_lava_unit,
)
from atomspark.sim.fixed_point import ACCUMULATOR_BITS, wrap_signed
from atomspark.sim.units.sigma_delta import (
    SigmaDeltaFixedParams,
    SigmaDeltaParams,
    sigma_delta_reference_step,
)

PROCESS = {"sigma": "Sigma", "delta": "Delta", "sigma_delta": "SigmaDelta"}
_SCALARS = ("kind", "act", "cum_error", "spike_exp", "state_exp")


def _describe(arithmetic: str):
    def describe(name: str, size: int, params) -> LavaPopulation:
        scalars = {key: getattr(params, key) for key in _SCALARS}
        scalars.update(cum_error=bool(params.cum_error), spike_exp=int(params.spike_exp),
                       state_exp=int(params.state_exp))  # fmt: skip
        if arithmetic == "fixed":
            scalars["vth"] = int(params.vth)
            bias = np.broadcast_to(np.asarray(params.bias, np.int64), (size,)).copy()
        else:
            scalars["vth"] = float(params.vth)
            bias = np.broadcast_to(np.asarray(params.bias, np.float64), (size,)).copy()
        return LavaPopulation(name, "sigma_delta", arithmetic, size, scalars, {"bias": bias})

    return describe


def _params(p: LavaPopulation, n_inputs: int = 1):
    cls = SigmaDeltaFixedParams if p.arithmetic == "fixed" else SigmaDeltaParams
    return cls(**{key: p.scalars[key] for key in _SCALARS + ("vth",)}, bias=p.arrays["bias"])


def _init_state(p: LavaPopulation) -> dict:
    return _params(p).init_state(p.size)


def _step(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    return sigma_delta_reference_step(_params(p), s, a_in).out


def _make_process(p: LavaPopulation):
    from lava.proc.sdn.process import ActivationMode, Delta, Sigma, SigmaDelta

    k = p.scalars
    if k["kind"] == "sigma":
        return Sigma(shape=(p.size,), name=p.name)
    exps = dict(cum_error=k["cum_error"], spike_exp=k["spike_exp"], state_exp=k["state_exp"])
    if k["kind"] == "delta":
        return Delta(shape=(p.size,), vth=k["vth"], name=p.name, **exps)
    mode = ActivationMode.RELU if k["act"] == "relu" else ActivationMode.UNIT
    bias = p.arrays["bias"].astype(np.int32 if p.arithmetic == "fixed" else np.float64)
    return SigmaDelta(shape=(p.size,), vth=k["vth"], bias=bias, act_mode=mode, name=p.name, **exps)


def sent_values(p: LavaPopulation, traces: dict) -> np.ndarray:
    """The values the engine's units sent at each step, from its sigma, act and residue traces
    (send = act - act_before + residue_before - residue; fixed point: int32 words, >> state_exp)."""
    k = p.scalars
    if k["kind"] == "sigma":
        return traces[(p.name, "sigma")]
    act, res = traces[(p.name, "act")], traces[(p.name, "residue")]
    zero = np.zeros((1, p.size), act.dtype)
    send = act - np.vstack([zero, act[:-1]]) + np.vstack([zero, res[:-1]]) - res
    if p.arithmetic != "fixed":
        return send
    return wrap_signed(send.astype(np.int64), ACCUMULATOR_BITS) >> k["state_exp"]


def _errors(p: LavaPopulation, lava: dict, traces: dict, count_error: float) -> dict:
    """Sent values, value for value (fixed point exactly, float to rounding), and event counts."""
    diff = np.abs(lava[p.name].astype(np.float64) - sent_values(p, traces)).max(initial=0.0)
    return {p.name: float(diff), f"{p.name}.events": float(count_error)}


_COMMON = dict(process="SigmaDelta", select_tags=("floating_pt", "fixed_pt"),
               init_state=_init_state, to_params=_params, step=_step, make_process=_make_process,
               records=one_record, sent=nonzero_outputs, engine_trace=("sigma", "act", "residue"),
               engine_errors=_errors, standard=True,
               process_of=lambda p: PROCESS[p.scalars["kind"]])  # fmt: skip
SIGMA_DELTA_FLOAT = register_lava_unit(
    LavaUnit("sigma_delta", "sigma_delta", "float", describe=_describe("float"), **_COMMON)
)
SIGMA_DELTA_FIXED = register_lava_unit(
    LavaUnit("sigma_delta_fixed", "sigma_delta", "fixed", describe=_describe("fixed"), **_COMMON)
)
