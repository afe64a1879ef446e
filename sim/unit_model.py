"""The unit-model interface: what the engine, graph checks and exports need to know of a model.

A unit model is declared once, as a `UnitModel`, and registered by its parameter class. Every
part of atomspark that treats populations differently by model asks the registry (`model_of`)
instead of testing types, so an unknown parameter class is one clear error everywhere, and a new
model is one module (parameters, kernel, declaration) that registers itself when imported (sim/units/).

Kernel convention (what the compiled run loop calls once per population and step):

    update(slot, buf, args) -> (updates, events, active, wraps, clips)

buf: the population's engine buffers, a `Buffers` named tuple (read them by name: buf.ring,
buf.pcount, buf.emit_idx; `bookkeeping(buf)` is the seven list buffers in the order the general
kernels take them), args: the tuple (or named tuple) `kernel_args` builds once per run from the
parameters and state. The kernel updates the units listed in this ring slot's touched list
and the pending list, writes the emitted events into emit_idx/emit_val in a fixed order, and
leaves the pending list for the next step. Both update and kernel_args must be Numba-compatible
(update an @njit function; args plain arrays and scalars).

Layers above sim/ keep their own tables keyed by a model's name, filled by explicit
registrations beside the functions they hold (mapping/lava/units/registry.register_lava_unit,
mapping/nir_export.register_nir_node): nothing is attached to a declaration from outside.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from atomspark.sim.core import AtomsparkError
from numba import njit


class Buffers(NamedTuple):
    """One population's engine buffers, as every update kernel receives them (by name)."""

    ring: np.ndarray  # (channels, ring_length, size [, payload]): input per delivery slot
    tflag: np.ndarray  # (ring_length, size) uint8: unit already listed in this slot
    tidx: np.ndarray  # (ring_length, size): units touched per slot
    tcount: np.ndarray  # (ring_length,): length of each slot's touched list
    pend: np.ndarray  # (size,): units to update next step regardless of input
    pcount: np.ndarray  # (2,): pending count; [1] is 1 when the list is stale (dense sweep)
    work: np.ndarray  # (size,): scratch list of the units updated this step
    emit_idx: np.ndarray  # (size,): units that emitted this step, in a fixed order
    emit_val: np.ndarray  # (size [, payload]): the payload of each emitted event


@njit(cache=True)
def bookkeeping(buf):
    """The ring and list buffers in the order the general kernels take them, before their own
    arguments (and the two emit buffers after them)."""
    return buf.ring, buf.tflag, buf.tidx, buf.tcount, buf.pend, buf.pcount, buf.work


class UnitParams:
    """Base of every unit model's parameter dataclass: the facts the engine, the graph checks and
    the cost models read, with the defaults of a unit that sends scalar events. A model overrides
    what differs (RSGN nodes: d-wide vector events and a d x d transform per update).

    Each subclass also provides check_size(name, size), init_state(size), n_channels,
    payload_bits, is_fixed_point and dtype (see the built-ins in sim/units/)."""

    payload_shape: tuple[int, ...] = ()  # shape of one event's payload beyond the unit axis
    macs_per_update: int = 0  # multiply-accumulates of one unit update beyond the fan-in sum


def _no_weight_check(label: str, data: np.ndarray) -> None:
    """Default projection check: any weights the target's arithmetic holds are fine."""


@dataclass(frozen=True)
class DirectKernel:
    """A lean kernel's variant for samples whose every input arrives one step later: the
    fan-outs add each weight, divided by its channel's one-step decay, straight into the
    channel's state, and `update` (same convention) reads no ring slot. channels(args): per
    channel (state array, decay) in channel order, or [] when this sample cannot (a zero decay).
    Results equal the lean kernel's only up to rounding."""

    update: Callable
    channels: Callable[[tuple], list[tuple[np.ndarray, float]]]


@dataclass(frozen=True)
class LeanKernel:
    """A model's bookkeeping-free kernel for samples where every unit is busy at every step.

    update: same convention as UnitModel.update; kernel_args(params, state, flags): its argument
    tuple (flags: a zeroed uint8 scratch array of the population's size rounded up to 8);
    applies(params, state): whether this sample qualifies. The engine uses it only when every
    projection into the population has one delay for all its synapses and scalar events, and
    the results must be bit-identical to the general kernel's. direct: an optional DirectKernel
    (same arguments) for delay-1 input, used unless the engine is asked for exact results."""

    update: Callable
    kernel_args: Callable[..., tuple]
    applies: Callable[[object, dict], bool]
    direct: DirectKernel | None = None


@dataclass(frozen=True, eq=False)
class UnitModel:
    """Declaration of one unit model.

    name: short id ("lif", "vn_fixed", ...); params_type: its frozen parameter dataclass (which
    provides check_size, init_state, n_channels, payload_bits, is_fixed_point, dtype);
    update / kernel_args: the kernel and its argument tuple (module docstring);
    initially_pending(params, state): units the first step must visit; initial_counter(state):
    start value of the population's one-element counter array (VN: nonzero codes);
    accepts_input: external input may be added to channel 0; sample_state: state entries a
    sample may set (drives, initial states) between runs; graded: events carry a value (binary
    spikes otherwise); check_weights(label, data): extra checks of projections into this model
    (e.g. Lava's 8-bit mantissas); lean: an optional LeanKernel for always-busy samples."""

    name: str
    params_type: type
    update: Callable
    kernel_args: Callable[..., tuple]
    initially_pending: Callable[[object, dict], np.ndarray]
    sample_state: tuple[str, ...]
    graded: bool
    accepts_input: bool = True
    initial_counter: Callable[[dict], int] = lambda state: 0
    check_weights: Callable[[str, np.ndarray], None] = _no_weight_check
    lean: LeanKernel | None = None


_REGISTRY: dict[type, UnitModel] = {}


def register(model: UnitModel) -> UnitModel:
    """Make `model` known to the engine, graph checks and exports (one model per params type)."""
    if not isinstance(model, UnitModel):
        raise AtomsparkError(f"register: expected a UnitModel, got {type(model).__name__}")
    if not (isinstance(model.params_type, type) and issubclass(model.params_type, UnitParams)):
        raise AtomsparkError(
            f"register: {model.name!r}: its params_type must subclass "
            "atomspark.sim.unit_model.UnitParams"
        )
    known = _REGISTRY.get(model.params_type)
    if known is not None and known is not model:
        raise AtomsparkError(
            f"register: {model.params_type.__name__} is already the parameters of {known.name!r}"
        )
    if any(m.name == model.name and m is not model for m in _REGISTRY.values()):
        raise AtomsparkError(f"register: a unit model named {model.name!r} exists already")
    _REGISTRY[model.params_type] = model
    return model


def model_of(params) -> UnitModel:
    """The registered model of a parameter object; an unknown type is an AtomsparkError."""
    model = _REGISTRY.get(type(params))
    if model is None:
        known = ", ".join(sorted(t.__name__ for t in _REGISTRY))
        raise AtomsparkError(
            f"unit model {type(params).__name__}: not a registered unit model (known: {known}); "
            f"declare it with atomspark.sim.unit_model.register"
        )
    return model


def registered_models() -> list[UnitModel]:
    """Every registered model, in registration order."""
    return list(_REGISTRY.values())


def model_named(name: str) -> UnitModel:
    """The registered model called `name` (e.g. read back from an exported bundle)."""
    for model in _REGISTRY.values():
        if model.name == name:
            return model
    known = ", ".join(sorted(m.name for m in _REGISTRY.values()))
    raise AtomsparkError(f"unit model {name!r}: not registered (known: {known})")
