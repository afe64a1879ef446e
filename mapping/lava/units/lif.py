"""LIF on Lava: lava.proc.lif's LIF Process, float and bit-accurate (Lava's own ProcessModels)."""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.mapping.lava.units.registry import (
    LavaUnit,
    count_errors,
    nonzero_outputs,
    one_record,
    register_lava_unit,
)
from atomspark.sim import fixed_point as fx
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units.lif import LIFFixedParams, LIFParams, lif_float_reference_step
from atomspark.sim.units.per_unit import per_unit


def _describe_float(name: str, size: int, params: LIFParams) -> LavaPopulation:
    if params.refractory != 0 or params.v_reset != 0 or params.du2 is not None:
        raise AtomsparkError(
            f"{name}: Lava's LIF has no refractory period, resets v to 0 and has one current; "
            f"got refractory={params.refractory}, v_reset={params.v_reset}, du2={params.du2}"
        )
    state = params.init_state(size)
    arrays = {"bias": state["bias"], "u_init": state["u"], "v_init": state["v"]}
    scalars = {"du": float(params.du), "dv": float(params.dv), "vth": float(params.vth)}
    return LavaPopulation(name, "lif", "float", size, scalars, arrays)


def _describe_fixed(name: str, size: int, params: LIFFixedParams) -> LavaPopulation:
    state = params.init_state(size)
    arrays = {
        "bias_mant": per_unit("bias_mant", params.bias_mant, size, np.int64),
        "bias_exp": per_unit("bias_exp", params.bias_exp, size, np.int64),
        "u_init": state["u"],
        "v_init": state["v"],
    }
    scalars = {"du": int(params.du), "dv": int(params.dv), "vth": int(params.vth)}
    return LavaPopulation(name, "lif", "fixed", size, scalars, arrays)


def _params_float(p: LavaPopulation, n_inputs: int) -> LIFParams:
    k, a = p.scalars, p.arrays
    return LIFParams(du=k["du"], dv=k["dv"], vth=k["vth"], bias=a["bias"], v_init=a["v_init"],
                     u_init=a["u_init"])  # fmt: skip


def _params_fixed(p: LavaPopulation, n_inputs: int) -> LIFFixedParams:
    k, a = p.scalars, p.arrays
    return LIFFixedParams(du=k["du"], dv=k["dv"], vth=k["vth"], bias_mant=a["bias_mant"],
                          bias_exp=a["bias_exp"], v_init=a["v_init"], u_init=a["u_init"])  # fmt: skip


def _init_state(p: LavaPopulation) -> dict:
    return {"u": p.arrays["u_init"].copy(), "v": p.arrays["v_init"].copy()}


def _step_float(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    k = p.scalars
    s["u"], s["v"], spikes = lif_float_reference_step(
        s["u"], s["v"], a_in, k["du"], k["dv"], k["vth"], p.arrays["bias"]
    )
    return spikes.astype(np.float64)


def _step_fixed(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    k, a = p.scalars, p.arrays
    s["u"], s["v"], spikes, _, _ = fx.lif_fixed_reference_step(
        s["u"], s["v"], a_in, k["du"], k["dv"], k["vth"], a["bias_mant"] << a["bias_exp"]
    )
    return spikes.astype(np.int64)


def _make_process(p: LavaPopulation):
    from lava.proc.lif.process import LIF

    k, a = p.scalars, p.arrays
    bias = (a["bias_mant"], a["bias_exp"]) if p.arithmetic == "fixed" else (a["bias"], 0)
    return LIF(shape=(p.size,), u=a["u_init"], v=a["v_init"], du=k["du"], dv=k["dv"],
               vth=k["vth"], bias_mant=bias[0], bias_exp=bias[1], name=p.name)  # fmt: skip


_COMMON = dict(process="LIF", select_tags=("floating_pt", "fixed_pt"), init_state=_init_state,
               make_process=_make_process, records=one_record, sent=nonzero_outputs,
               engine_trace=(), engine_errors=count_errors, standard=True)  # fmt: skip
LIF_FLOAT = register_lava_unit(
    LavaUnit(
        "lif",
        "lif",
        "float",
        describe=_describe_float,
        to_params=_params_float,
        step=_step_float,
        **_COMMON,
    )  # fmt: skip
)
LIF_FIXED = register_lava_unit(
    LavaUnit(
        "lif_fixed",
        "lif",
        "fixed",
        describe=_describe_fixed,
        to_params=_params_fixed,
        step=_step_fixed,
        **_COMMON,
    )  # fmt: skip
)
