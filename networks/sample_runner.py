"""The one runner of samples through the event engine: compile once, run many.

A model's graph (projections, Grams, eta, ring buffers) and its compiled run loop are built once;
each sample only sets its own state between runs (a VN drive, an RSGN ignition) through
Engine.reset. Demo, compare, profile and the benchmarks all run samples through `SampleRunner`.

The graph is built from the model with a zero sample, and each sample's state is computed by the
same expressions as the per-sample graph compilers (vn_compile.layer_drives, rsgn ignition), so a
run equals compiling a graph per sample, bit for bit (tests/test_sample_runner.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from atomspark.networks.rsgn.dynamics import check_state, check_tokens, ignition, initial_state
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams
from atomspark.networks.rsgn_compile import NODE_POPULATION, compile_rsgn
from atomspark.networks.vn_compile import compile_vn_model, layer_drives, layer_name
from atomspark.sim.core import AtomsparkError, as_finite_array, require_int
from atomspark.sim.engine import Engine
from atomspark.sim.graph import Graph
from atomspark.sim.memory import require_memory, run_record_bytes
from atomspark.sim.profile import Profile

SampleState = dict[str, dict[str, np.ndarray]]


@dataclass
class SampleRuns:
    """Per sample: its profile, what `read` took from the final engine state, its traces."""

    profiles: list[Profile]
    outputs: list
    traces: list[dict]


class SampleRunner:
    """One compiled engine for a graph; samples enter as state set by `to_state(sample)`."""

    def __init__(
        self,
        graph: Graph,
        to_state: Callable[[np.ndarray], SampleState],
        read: Callable[[Engine], object] | None = None,
        to_inputs: Callable[[np.ndarray, int], dict[str, np.ndarray]] | None = None,
    ) -> None:
        self.graph = graph
        self.engine = Engine(graph)
        self.to_state = to_state
        self.read = read or (lambda eng: None)
        # a sample's external input, {population: (steps, size)} (None: samples enter as state)
        self.to_inputs = to_inputs
        self.engine.run(0)  # compiles the run loop now, not inside the first sample's timing

    def run(self, samples: Sequence, steps: int, record: tuple = ()) -> SampleRuns:
        """Run every sample from step 0 for `steps` steps (samples independent of each other)."""
        steps = require_int("steps", steps, minimum=1)
        require_memory(
            f"steps {steps} x {len(samples)} samples",
            run_record_bytes(steps, len(self.graph.populations), len(samples)),
            "use fewer steps or samples",
        )
        profiles, outputs, traces = [], [], []
        for sample in samples:
            self.engine.reset(self.to_state(sample))
            inputs = None if self.to_inputs is None else self.to_inputs(sample, steps)
            profiles.append(self.engine.run(steps, record=record, inputs=inputs))
            outputs.append(self.read(self.engine))
            traces.append(self.engine.traces)
        return SampleRuns(profiles, outputs, traces)

    def engine_for(self, sample) -> Engine:
        """The engine reset to one sample (e.g. to record an event raster of it)."""
        self.engine.reset(self.to_state(sample))
        return self.engine


def vn_runner(
    model, mask=None, h_top=None, event_threshold: float = 0.0, eta: float | None = None
) -> SampleRunner:
    """Runner of a VNModel's settle: graph built once, each sample x (d,) sets layer 0's drive
    (and the top layer's when h_top is given); outputs are the final codes per layer. mask,
    h_top and eta are shared by the samples (as compile_vn_model takes them)."""
    layers = getattr(model, "layers", None)
    if not layers:
        raise AtomsparkError(f"model: expected a VNModel with layers, got {type(model).__name__}")
    d = layers[0].S.shape[0]
    graph = compile_vn_model(
        model, np.zeros(d), mask=mask, h_top=h_top, eta=eta, event_threshold=event_threshold
    )
    S = [as_finite_array("S", ly.S, ndim=2) for ly in layers]
    U = [as_finite_array("U", ly.U, ndim=2) for ly in layers]
    mask = None if mask is None else as_finite_array("mask", mask, ndim=1)
    h_top = None if h_top is None else as_finite_array("h_top", h_top, ndim=1)

    def to_state(x) -> SampleState:
        x = as_finite_array("x", x, ndim=1)
        if x.shape != (d,):
            raise AtomsparkError(f"x: model expects {d} features, got {x.shape}")
        drives = layer_drives(S, U, x, mask, h_top)
        return {layer_name(l): {"drive": b} for l, b in enumerate(drives)}

    def read(eng: Engine) -> list[np.ndarray]:
        return [eng.state[p.name]["g"].copy() for p in eng.graph.populations]

    return SampleRunner(graph, to_state, read)


def rsgn_runner(params, config, graph: Graph | None = None) -> SampleRunner:
    """Runner of an RSGN: graph built once (or given, e.g. with another cutoff), each token
    sequence (L, d_in) sets the ignition (alpha, h); outputs are (alpha, h) after the last step."""
    n, d = config.n_nodes, config.d_hidden
    graph = graph or compile_rsgn(params, config, np.zeros(n), np.zeros((n, d)))

    def to_state(tokens) -> SampleState:
        x = check_tokens(np.asarray(tokens)[None], config)
        alpha0 = ignition(params, config, x)
        h0 = initial_state(params, config, x, alpha0)
        return {NODE_POPULATION: {"alpha": alpha0[0], "h": h0[0]}}

    def read(eng: Engine) -> tuple[np.ndarray, np.ndarray]:
        st = eng.state[NODE_POPULATION]
        return st["alpha"].copy(), st["h"].copy()

    return SampleRunner(graph, to_state, read)


def rsgn_scores(params, outputs: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Class scores (B, C) from the runner's final (alpha, h): readout of sum_j alpha_j h_j."""
    features = np.stack([(alpha[:, None] * h).sum(axis=0) for alpha, h in outputs])
    return features @ params.cls_w + params.cls_b


@dataclass
class EnginePropagation:
    """Per-step record of an engine run of K RSGN steps for a batch of B sequences.

    alpha (K, B, N) and h (K, B, N, d): state after each RSGN step; messages (K, B): synaptic
    operations of each RSGN step (= the reference's message count); events (K, B): vector events
    sent in each step; updates (K, B): node updates; active (K, B): nodes above the cutoff after
    each step; pool_messages (K, B): divisive-normalisation messages; profiles: one engine
    Profile per sequence (K + 1 engine steps, the first being ignition)."""

    alpha: np.ndarray
    h: np.ndarray
    messages: np.ndarray
    events: np.ndarray
    updates: np.ndarray
    active: np.ndarray
    pool_messages: np.ndarray
    profiles: list[Profile]


def propagate_on_engine(
    params: RSGNParams, config: RSGNConfig, alpha, h, n_steps: int | None = None
) -> EnginePropagation:
    """Run K (default config.n_steps) RSGN steps on the engine for each sequence of a batch
    (alpha (B, N), h (B, N, d), as dynamics.propagate takes them), recording every step."""
    alpha, h = check_state(params, config, alpha, h)
    k_steps = require_int("n_steps (K)", config.n_steps if n_steps is None else n_steps, 1)
    b, n, d = h.shape
    out = {
        "alpha": np.zeros((k_steps, b, n)),
        "h": np.zeros((k_steps, b, n, d)),
        "pool_messages": np.zeros((k_steps, b), np.int64),
    }
    counts = {key: np.zeros((k_steps, b), np.int64) for key in ("messages", "events", "updates")}
    active = np.zeros((k_steps, b), np.int64)
    runner = SampleRunner(
        compile_rsgn(params, config, alpha[0], h[0]),
        lambda s: {NODE_POPULATION: {"alpha": alpha[s], "h": h[s]}},
    )
    record = tuple((NODE_POPULATION, var) for var in ("alpha", "h", "pool_messages"))
    runs = runner.run(range(b), k_steps + 1, record=record)
    for s, (prof, rec) in enumerate(zip(runs.profiles, runs.traces)):
        traces = {var: rec[(NODE_POPULATION, var)] for _, var in record}
        out["alpha"][:, s] = traces["alpha"][1:]
        out["h"][:, s] = traces["h"][1:]
        out["pool_messages"][:, s] = traces["pool_messages"][1:, 0]
        counts["messages"][:, s] = prof.synops[:k_steps, 0]
        counts["events"][:, s] = prof.events[:k_steps, 0]
        counts["updates"][:, s] = prof.updates[1:, 0]
        active[:, s] = prof.active[1:, 0]
    profiles = runs.profiles
    return EnginePropagation(active=active, profiles=profiles, **out, **counts)
