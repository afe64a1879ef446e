"""The LavaUnit declaration and its registry (by sim unit model and by bundle family)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from atomspark.mapping.lava.net import LavaPopulation
from atomspark.sim.core import AtomsparkError
from atomspark.sim.unit_model import model_named, model_of


@dataclass(frozen=True, eq=False)
class LavaUnit:
    """How one unit model runs on Lava, and how atomspark checks that it does.

    sim_model: the unit model's name in sim/ (its "lava" hook is this declaration);
    family / arithmetic: the population's kind in a bundle ("lif" | "vn" | "rsgn", "float" |
    "fixed"); process: the Lava Process class that runs it; select_tags: the tags its
    ProcessModels carry (a run with another tag cannot use it);
    describe(name, size, params) -> LavaPopulation; to_params(population, n_inputs) -> the sim
    parameters again (the inverse, for checking a bundle on the engine);
    init_state(population) -> state dict and step(population, state, a_in, received) -> one
    step's output: the NumPy reference of the ProcessModel with Lava's timing (received: events
    arrived per unit, for vector-payload units);
    make_process(population) -> the Lava Process (imports lava lazily);
    records(population) -> {record name: (size, output port, state key)}: what a run records per
    step (state key None: the step's output, else that entry of the reference state);
    sent(population, outputs) -> (steps, size) bool: which units sent an event at each step;
    engine_trace: engine state recorded for verification;
    engine_errors(population, lava outputs, engine traces, event-count error) -> {key: max error};
    vector_payload: events carry a d-wide vector (per-node weights, kept zero weights and a flag
    connection telling a node that an event arrived); multi_channel: every connection into it
    may be a separate accumulator (channel); standard: its Process and ProcessModels are lava-nc's
    own (lava.proc), with no atomspark neuron code, so a Loihi toolchain can compile it;
    process_of(population): the Process class name when it depends on the population (else
    `process`); engine_input(population, steps) -> the (steps, size) external input that makes
    its engine population do what its Process does (a spike source's relay), or None."""

    sim_model: str
    family: str
    arithmetic: str
    process: str
    select_tags: tuple[str, ...]
    describe: Callable[[str, int, object], LavaPopulation]
    to_params: Callable[[LavaPopulation, int], object]
    init_state: Callable[[LavaPopulation], dict]
    step: Callable[[LavaPopulation, dict, np.ndarray, np.ndarray], np.ndarray]
    make_process: Callable[[LavaPopulation], object]
    records: Callable[[LavaPopulation], dict[str, tuple[int, str, str | None]]]
    sent: Callable[[LavaPopulation, dict[str, np.ndarray]], np.ndarray]
    engine_trace: tuple[str, ...]
    engine_errors: Callable[..., dict[str, float]]
    vector_payload: bool = False
    multi_channel: bool = False
    standard: bool = False
    process_of: Callable[[LavaPopulation], str] | None = None
    engine_input: Callable[[LavaPopulation, int], np.ndarray] | None = None

    def process_name(self, population: LavaPopulation) -> str:
        """The Lava Process class that runs `population`."""
        return self.process_of(population) if self.process_of else self.process


# Defaults for units that send one value per unit per step (LIF, VN, the worked example).
def one_record(p: LavaPopulation) -> dict[str, tuple[int, str, str | None]]:
    """One output per unit per step (spikes or graded changes): the step's output, on s_out."""
    return {p.name: (p.size, "s_out", None)}


def nonzero_outputs(p: LavaPopulation, outputs: dict) -> np.ndarray:
    """A unit sent an event when its output is nonzero (a spike, a code change)."""
    return outputs[p.name] != 0


def count_errors(p: LavaPopulation, lava: dict, traces: dict, count_error: float) -> dict:
    """Spikes carry no value: the per-step and per-unit event counts are the whole check."""
    return {p.name: float(count_error)}


_BY_KIND: dict[tuple[str, str], LavaUnit] = {}
_BY_SIM_MODEL: dict[str, LavaUnit] = {}  # sim unit model name -> its Lava description


def register_lava_unit(unit: LavaUnit) -> LavaUnit:
    """Make `unit` the Lava description of its sim model and of its (family, arithmetic)."""
    kind = (unit.family, unit.arithmetic)
    if kind in _BY_KIND and _BY_KIND[kind] is not unit:
        raise AtomsparkError(f"register_lava_unit: {kind} is already {_BY_KIND[kind].sim_model!r}")
    _BY_KIND[kind] = unit
    serve_lava_unit(unit.sim_model, unit)
    return unit


def register_bundle_unit(unit: LavaUnit) -> LavaUnit:
    """Make `unit` the Lava description of its (family, arithmetic) only: a bundle population
    with no sim unit model of its own (a spike source, whose engine form is a relay LIF)."""
    kind = (unit.family, unit.arithmetic)
    if kind in _BY_KIND and _BY_KIND[kind] is not unit:
        raise AtomsparkError(f"register_bundle_unit: {kind} is already registered")
    _BY_KIND[kind] = unit
    return unit


def serve_lava_unit(sim_model: str, unit: LavaUnit) -> None:
    """Let `unit` describe the sim unit model `sim_model` too (e.g. a model that differs from
    the unit's own only in its parameters); the model must be registered."""
    model_named(sim_model)  # one-line error for an unknown model
    _BY_SIM_MODEL[sim_model] = unit


def lava_unit(population: LavaPopulation) -> LavaUnit:
    """The LavaUnit of a bundle population; an unknown kind is one clear error."""
    unit = _BY_KIND.get((population.model, population.arithmetic))
    if unit is None:
        known = ", ".join(f"{f}/{a}" for f, a in sorted(_BY_KIND))
        raise AtomsparkError(
            f"{population.name}: model/arithmetic {population.model!r}/{population.arithmetic!r} "
            f"has no Lava description (known: {known})"
        )
    return unit


def lava_unit_of_params(params) -> LavaUnit:
    """The LavaUnit of a population's unit parameters; a model without one cannot be exported."""
    model = model_of(params)
    unit = _BY_SIM_MODEL.get(model.name)
    if unit is None:
        raise AtomsparkError(
            f"unit model {model.name!r} ({model.params_type.__name__}) has no Lava export"
        )
    return unit


def registered_lava_units() -> list[LavaUnit]:
    return list(_BY_KIND.values())
