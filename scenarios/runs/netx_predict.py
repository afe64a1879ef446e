"""Predict a netx network's cost on a neuromorphic chip: inputs -> event engine (Loihi fixed
point, one fresh state per sample) -> placement -> energy and time per inference.

Inputs (`input_spec`):
- ``zero``: the input layer's bias stays 0. This is what lava-dl's PilotNet benchmark notebook
  ran: it assigns the frame with ``net.in_layer.neuron.bias = image``, a plain Python attribute
  that changes no Lava Var (the LIF's bias is ``bias_mant``), so the chip saw no input and the
  activity came from the layers' own biases (checked on Lava in tests/test_netx_import.py).
- ``uniform[:SEED]``: surrogate frames, pixels ~ U[0, 1] per sample.
- ``gray:LEVEL``: every pixel LEVEL in [0, 1].
- ``rate:P[:SEED]``: for networks without an input layer, Bernoulli(P) spikes per step.
Pixels become the input layer's bias_mant as in the netx PilotNet tutorial's data set:
int32(2 w x - w + b) with the layer's transform (w, b), in (x, y, c) order. A sigma-delta
(SDNN) network takes the same integers as graded input of its delta encoder, the frame held for
every step of the sample (the encoder sends it once, then only what changes: nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from atomspark.mapping.energy import EnergyReport, estimate_energy
from atomspark.mapping.hardware import NeuromorphicHardware
from atomspark.mapping.placement import Placement, place
from atomspark.networks.netx_file import NetxNetwork
from atomspark.networks.netx_graph import NETX_BIAS_EXP, NetxGraph
from atomspark.scenarios.runs.engine import concat_profiles
from atomspark.sim.core import AtomsparkError
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph
from atomspark.sim.profile import Profile


@dataclass(frozen=True)
class SampleInput:
    """One sample's drive: input-layer bias_mant (x, y, c order) or relay spikes (steps, n)."""

    bias: np.ndarray | None = None
    spikes: np.ndarray | None = None


def _spec_parts(spec: str) -> tuple[str, list[str]]:
    head, *rest = spec.split(":")
    return head, rest


def _number(spec: str, text: str, kind: type, what: str):
    """`text` as `kind` (int or float), or a one-line error naming --input and what it wants."""
    try:
        value = kind(text)
    except ValueError:
        raise AtomsparkError(f"--input {spec}: {what} must be a number, got {text!r}") from None
    if what == "SEED" and value < 0:
        raise AtomsparkError(f"--input {spec}: SEED must be >= 0, got {value}")
    return value


def sample_inputs(net: NetxNetwork, ng: NetxGraph, spec: str, samples: int, steps: int):
    """The drive of each sample for `spec` (see the module docstring)."""
    head, rest = _spec_parts(spec)
    first = net.layers[0]
    if ng.input_is_bias or ng.input_is_encoder:
        if len(first.shape) != 3:
            raise AtomsparkError(
                f"NET layer 0: an input layer drives image frames and needs a (C, H, W) shape, "
                f"got {first.shape}"
            )
        c, h, w = first.shape
        if head == "zero":
            frames = [np.zeros((w, h, c))] * samples
            wt, b = 0, 0
        elif head == "uniform":
            rng = np.random.default_rng(_number(spec, rest[0], int, "SEED") if rest else 0)
            frames = [rng.uniform(0.0, 1.0, (w, h, c)) for _ in range(samples)]
        elif head == "gray" and len(rest) == 1:
            level = _number(spec, rest[0], float, "LEVEL")
            if not 0.0 <= level <= 1.0:
                raise AtomsparkError(f"--input {spec}: LEVEL must be in [0, 1]")
            frames = [np.full((w, h, c), level)] * samples
        else:
            raise AtomsparkError(
                f"--input {spec!r}: for a network with an input layer use zero, uniform[:SEED] "
                "or gray:LEVEL"
            )
        if head != "zero":
            wt, b = first.input_weight, first.input_bias
        values = [(2 * wt * f - wt + b).astype(np.int32).reshape(-1) for f in frames]
        if ng.input_is_encoder:
            return [SampleInput(spikes=np.tile(v.astype(np.float64), (steps, 1))) for v in values]
        return [SampleInput(bias=v.astype(np.int64)) for v in values]
    n_in = ng.graph.population(ng.input_population).size
    if head == "zero":
        return [SampleInput(spikes=np.zeros((steps, n_in)))] * samples
    if head == "rate" and 1 <= len(rest) <= 2:
        p = _number(spec, rest[0], float, "P")
        if not 0.0 <= p <= 1.0:
            raise AtomsparkError(f"--input {spec}: P must be in [0, 1]")
        rng = np.random.default_rng(_number(spec, rest[1], int, "SEED") if len(rest) > 1 else 0)
        return [SampleInput(spikes=(rng.random((steps, n_in)) < p).astype(np.float64))
                for _ in range(samples)]  # fmt: skip
    raise AtomsparkError(
        f"--input {spec!r}: for a network without an input layer use zero or rate:P[:SEED]"
    )


def run_samples(ng: NetxGraph, inputs: list[SampleInput], steps: int) -> Profile:
    """Each sample from a fresh state for `steps` steps; one Profile over all of them."""
    eng = Engine(ng.graph)
    parts = []
    for sample in inputs:
        state = None
        if sample.bias is not None:
            state = {ng.input_population: {"bias": sample.bias.astype(np.int64) << NETX_BIAS_EXP}}
        eng.reset(state)
        ext = None if sample.spikes is None else {ng.input_population: sample.spikes}
        parts.append(eng.run(steps, inputs=ext))
    return concat_profiles(parts)


@dataclass(frozen=True)
class Prediction:
    profile: Profile
    placement: Placement
    energy: EnergyReport
    steps_per_sample: int
    units_per_core_cap: int

    def to_dict(self) -> dict:
        e = self.energy
        return {
            "steps_per_sample": self.steps_per_sample,
            "samples": e.n_samples,
            "cores": e.cores_used,
            "units_per_core_cap": self.units_per_core_cap,
            "time_per_step_s": e.time_per_step_s,
            "inferences_per_s": 1.0 / e.time_per_sample_s if e.time_per_sample_s else None,
            "energy_per_inference_j": e.energy_per_sample_j,
            "static_energy_per_inference_j": e.breakdown.static,
            "dynamic_energy_per_inference_j": e.energy_per_sample_j - e.breakdown.static,
            "static_power_w": e.breakdown.static / e.time_per_sample_s,
            "dynamic_power_w": (e.energy_per_sample_j - e.breakdown.static) / e.time_per_sample_s,
            "breakdown_j": {k: float(v) for k, v in vars(e.breakdown).items()},
            "events_per_inference": float(self.profile.events.sum() / e.n_samples),
            "synops_per_inference": float(self.profile.synops.sum() / e.n_samples),
        }


def predict(
    ng: NetxGraph,
    inputs: list[SampleInput],
    steps: int,
    hw: NeuromorphicHardware,
    strategy: str = "sequential",
) -> Prediction:
    """Run, place (the project's placement) and price one inference per sample."""
    return price_inference(
        ng.graph, run_samples(ng, inputs, steps), len(inputs), hw, strategy, steps
    )


def price_inference(
    graph: Graph,
    prof: Profile,
    n_samples: int,
    hw: NeuromorphicHardware,
    strategy: str,
    steps: int,
) -> Prediction:
    """Place a profiled graph (the project's placement) and price one inference per sample;
    `steps` is what one inference takes on the engine."""
    adj = graph.unit_adjacency()
    events = np.concatenate(prof.unit_events).astype(float)
    placement, cap = place_within_fan_out(adj, hw, strategy, events + 1.0)
    report = estimate_energy(prof, placement, adj, hw, n_samples=n_samples)
    return Prediction(prof, placement, report, steps, cap)


def place_within_fan_out(adj, hw: NeuromorphicHardware, strategy: str, events: np.ndarray):
    """Place with the preset's units-per-core limit, halving it while a core would exceed
    another limit (for conv layers: the output axons of a wide fan-out). Loihi's compiler
    also spreads such layers thinner (lava-dl's notebooks print 2,048-3,168 neurons per conv
    core). Returns (placement, units-per-core cap used)."""
    cap = hw.limits.units_per_core
    while True:
        trial = replace(hw, limits=replace(hw.limits, units_per_core=cap))
        try:
            return place(adj, trial, strategy=strategy, unit_events=events), cap
        except AtomsparkError:
            if cap <= 64:
                raise
            cap //= 2
