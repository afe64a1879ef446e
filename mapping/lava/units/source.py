"""A spike source on Lava: lava.proc.io.source's RingBuffer, float and fixed point.

A source population streams a recorded spike train (steps, size) of 0/1 into its connections,
one row per step, and starts again from its first row after its last (a ring buffer): the way a
bundle takes time-varying input spikes rather than a constant bias. RingBuffer is lava-nc's own
Process with lava-nc's own ProcessModels; on a chip it runs on the host, which streams the spikes
to the neurocores. On the engine the same population is a relay LIF that spikes at exactly the
steps its external input is 1 (`engine_input`), float or fixed point.
"""

from __future__ import annotations

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.mapping.lava.units.registry import (
    LavaUnit,
    count_errors,
    nonzero_outputs,
    one_record,
    register_bundle_unit,
)
from atomspark.sim.core import AtomsparkError
from atomspark.sim.units.lif import LIFFixedParams, LIFParams

FAMILY = "spike_source"
# relays: float u = in, v = u, spike when v > 0.5; fixed point du + 1 = dv = 4096 (full decay),
# v = in << 6, spike when v > 0
FLOAT_RELAY = LIFParams(du=1.0, dv=1.0, vth=0.5)
FIXED_RELAY = LIFFixedParams(du=4095, dv=4095, vth=0)


def source_population(name: str, spikes: np.ndarray, arithmetic: str) -> LavaPopulation:
    """A source population streaming `spikes` ((steps, size), 0 or 1)."""
    s = np.asarray(spikes)
    if s.ndim != 2 or s.shape[0] < 1 or np.any((s != 0) & (s != 1)):
        raise AtomsparkError(f"source {name!r}: spikes must be a (steps, size) array of 0 and 1")
    dtype = np.int64 if arithmetic == "fixed" else np.float64
    return LavaPopulation(name, FAMILY, arithmetic, int(s.shape[1]), {},
                          {"spikes": s.astype(dtype)})  # fmt: skip


def _train(p: LavaPopulation, steps: int) -> np.ndarray:
    s = p.arrays["spikes"]
    if s.ndim != 2 or s.shape[1] != p.size:
        raise AtomsparkError(f"source {p.name!r}: spikes must be (steps, {p.size})")
    return s[np.arange(steps) % s.shape[0]]


def _describe(name: str, size: int, params) -> LavaPopulation:
    raise AtomsparkError(f"{name}: a spike source is made from its spikes (source_population)")


def _init_state(p: LavaPopulation) -> dict:
    return {"t": 0}


def _step(p: LavaPopulation, s: dict, a_in: np.ndarray, received) -> np.ndarray:
    row = _train(p, s["t"] + 1)[s["t"]]
    s["t"] += 1
    return row.copy()


def _make_process(p: LavaPopulation):
    from lava.proc.io.source import RingBuffer

    dtype = np.int32 if p.arithmetic == "fixed" else np.float64
    return RingBuffer(data=np.ascontiguousarray(_train(p, len(p.arrays["spikes"])).T, dtype))


def _engine_input(p: LavaPopulation, steps: int) -> np.ndarray:
    return _train(p, steps).astype(np.int64 if p.arithmetic == "fixed" else np.float64)


_COMMON = dict(sim_model="", family=FAMILY, process="RingBuffer",
               select_tags=("floating_pt", "fixed_pt"), describe=_describe,
               init_state=_init_state, step=_step, make_process=_make_process,
               records=one_record, sent=nonzero_outputs, engine_trace=(),
               engine_errors=count_errors, standard=True, engine_input=_engine_input)  # fmt: skip


def _relay(p: LavaPopulation, n_inputs: int) -> LIFParams | LIFFixedParams:
    """The engine's relay for `p` (its spikes checked: a bundle's source is untrusted input)."""
    source_population(p.name, p.arrays["spikes"], p.arithmetic)
    if p.arrays["spikes"].shape[1] != p.size:
        raise AtomsparkError(f"source {p.name!r}: spikes must be (steps, {p.size})")
    if n_inputs:
        raise AtomsparkError(f"source {p.name!r}: a spike source takes no connection")
    return FIXED_RELAY if p.arithmetic == "fixed" else FLOAT_RELAY


SOURCE_FLOAT = register_bundle_unit(LavaUnit(arithmetic="float", to_params=_relay, **_COMMON))
SOURCE_FIXED = register_bundle_unit(LavaUnit(arithmetic="fixed", to_params=_relay, **_COMMON))
