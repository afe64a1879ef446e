"""A stream of samples through a split RSGN bundle: each token sequence's ignition is encoded on
the host (the model's ignition, rounded to the integer formats as quantize_rsgn_graph rounds
it), loaded as the programs' initial state, run for the model's K steps on the split schedule
(Lava, or its NumPy reference, which equals it bit for bit), and read out by the bundle's readout
processes (mapping/split_readout.py; a bundle written without one is read out on the host from
sum_j alpha_j h_j); decisions are compared with the float engine's.

The encoding is a host step, not a chip process: the model file holds the encoder. `encoder
"fixed"` encodes with the integer reference instead (mapping/fixed_encoder.py), to measure what
an integer encoder would keep; it is not on the chip either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from atomspark.mapping.lava.rsgn_split import reference_run, with_readout
from atomspark.sim.core import AtomsparkError, as_finite_array


@dataclass(frozen=True)
class StreamResult:
    """Per sample: class scores of the split bundle (float units) and of the float engine;
    accumulator: the readout's integer scores (fixed point; None without a chip readout)."""

    scores: np.ndarray  # (B, C)
    float_scores: np.ndarray  # (B, C)
    accumulator: np.ndarray | None = None  # (B, C)
    overflows: int = 0  # readout sums that left their format (split_readout.readout_reference)
    lava_runs: int = 0  # Lava runs it took (one for a stream through a bundle with a readout)

    @property
    def decisions(self) -> np.ndarray:
        """Per sample the class the bundle decides: the chip readout's integer scores' argmax
        where it has one (the same as its float units'), else the host readout's."""
        return (self.scores if self.accumulator is None else self.accumulator).argmax(1)

    @property
    def decision_agreement(self) -> float:
        """The share of samples on which the bundle decides as the float engine does."""
        return float(np.mean(self.decisions == self.float_scores.argmax(1)))


ENCODERS = ("host", "fixed")


def encoded_states(
    model, params, config, tokens, encoder: str = "host"
) -> tuple[list[dict], np.ndarray, int]:
    """Each sequence's ignition {alpha, h} in the formats of `model` (a SplitModel), the float
    engine's scores, and the engine steps (K + 1). encoder "host": the float encoder's ignition
    rounded to the integer formats; "fixed": the integer encoder's (mapping/fixed_encoder.py,
    a reference not on chip; fixed point only)."""
    if encoder not in ENCODERS:
        raise AtomsparkError(f"encoder: choose one of {', '.join(ENCODERS)}, got {encoder!r}")
    from atomspark.mapping.quantize import fixed_rsgn_state
    from atomspark.networks.sample_runner import rsgn_runner, rsgn_scores

    tokens = as_finite_array("tokens", tokens, ndim=3)
    if (config.n_nodes, config.d_hidden) != (model.n, model.d):
        raise AtomsparkError(
            f"model: {config.n_nodes} nodes of width {config.d_hidden}, the bundle has "
            f"{model.n} of width {model.d}"
        )
    runner = rsgn_runner(params, config)
    steps = config.n_steps + 1
    float_scores = rsgn_scores(params, runner.run(tokens, steps).outputs)
    name = runner.graph.populations[0].name
    fixed = model.arithmetic == "fixed"
    if encoder == "fixed":
        from atomspark.mapping.fixed_encoder import fixed_encoder

        if not fixed:
            raise AtomsparkError("encoder 'fixed': only for a fixed-point bundle")
        enc = fixed_encoder(params, config)
        return [enc.encode(seq) for seq in tokens], float_scores, steps
    states = []
    for seq in tokens:
        st = runner.to_state(seq)[name]
        states.append(fixed_rsgn_state(st["alpha"], st["h"]) if fixed else st)
    return states, float_scores, steps


def run_stream(
    bundle, params, config, tokens, lava: bool = False, encoder: str = "host"
) -> StreamResult:
    """Run token sequences `tokens` (B, L, d_in) through the split bundle `bundle`
    (split_bundle.SplitBundle) of the model (params, config): on Lava in one run when the bundle
    has a readout (split_run.run_split_stream_lava: each sample loaded in the programs' reset
    phase), else one run per sample; without Lava, the reference of each sample. encoder:
    encoded_states'."""
    from atomspark.mapping.split_readout import readout_reference
    from atomspark.networks.sample_runner import rsgn_scores
    from atomspark.sim.units import rsgn_fixed as rf

    states, float_scores, steps = encoded_states(bundle.model, params, config, tokens, encoder)
    model, readout = bundle.model, bundle.readout
    fixed = model.arithmetic == "fixed"
    groups = bundle.readout_groups()
    if lava and readout is not None:
        from atomspark.mapping.lava.split_run import MAX_PROCESSES, run_split_stream_lava

        cores = bundle.cores()
        acc = run_split_stream_lava(model, cores, states, steps, readout,
                                    merged=len(cores) > MAX_PROCESSES)  # fmt: skip
        return StreamResult(readout.float_scores(acc), float_scores, acc, 0, 1)
    host, chip, overflows = [], [], 0
    for state in states:
        m = replace(model, node={**model.node, "alpha0": state["alpha"], "h0": state["h"]})
        if readout is not None:
            m = with_readout(m, readout.shift, steps)
        if lava:
            from atomspark.mapping.lava.split_run import run_split_lava

            run = run_split_lava(m, bundle.cores(), steps, merged=True, readout=readout)
        else:
            run = reference_run(m, steps)
        if readout is not None:
            raw, over = readout_reference(readout, run.r, groups)  # lava: one run, above
            chip.append(raw)
            overflows += over
            continue
        alpha, h = run.alpha[-1], run.h[-1]
        if fixed:
            alpha, h = alpha * 2.0**-rf.ALPHA_FRAC, h * 2.0**-rf.H_FRAC
        host.append((alpha, h))
    if readout is None:
        return StreamResult(rsgn_scores(params, host), float_scores, lava_runs=lava * len(states))
    acc = np.stack(chip)
    return StreamResult(readout.float_scores(acc), float_scores, acc, overflows, lava * len(states))
