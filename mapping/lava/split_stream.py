"""A stream of samples through a split RSGN bundle: each token sequence's ignition is encoded on
the host (the model's ignition, rounded to the integer formats as quantize_rsgn_graph rounds
it), loaded as the programs' initial state, run for the model's K steps on the split schedule
(Lava, or its NumPy reference, which equals it bit for bit), and read out on the host (class
scores from sum_j alpha_j h_j); decisions are compared with the float engine's.

The encoding and readout are host steps, not chip processes: the bundle holds the network, the
model file holds the encoder and the readout weights.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from atomspark.mapping.lava.rsgn_split import reference_run
from atomspark.sim.core import AtomsparkError, as_finite_array


@dataclass(frozen=True)
class StreamResult:
    """Per sample: class scores of the split bundle and of the float engine, and decisions."""

    scores: np.ndarray  # (B, C)
    float_scores: np.ndarray  # (B, C)

    @property
    def decision_agreement(self) -> float:
        return float(np.mean(self.scores.argmax(1) == self.float_scores.argmax(1)))


def run_stream(bundle, params, config, tokens, lava: bool = False) -> StreamResult:
    """Run token sequences `tokens` (B, L, d_in) through the split bundle `bundle`
    (split_bundle.SplitBundle) of the model (params, config)."""
    from atomspark.mapping.quantize import fixed_rsgn_state
    from atomspark.networks.sample_runner import rsgn_runner, rsgn_scores
    from atomspark.sim.units import rsgn_fixed as rf

    tokens = as_finite_array("tokens", tokens, ndim=3)
    model = bundle.model
    if (config.n_nodes, config.d_hidden) != (model.n, model.d):
        raise AtomsparkError(
            f"model: {config.n_nodes} nodes of width {config.d_hidden}, the bundle has "
            f"{model.n} of width {model.d}"
        )
    runner = rsgn_runner(params, config)
    steps = config.n_steps + 1
    float_out = runner.run(tokens, steps).outputs
    name = runner.graph.populations[0].name
    fixed = model.arithmetic == "fixed"
    outputs = []
    for seq in tokens:
        st = runner.to_state(seq)[name]
        state = fixed_rsgn_state(st["alpha"], st["h"]) if fixed else st
        m = replace(model, node={**model.node, "alpha0": state["alpha"], "h0": state["h"]})
        if lava:
            from atomspark.mapping.lava.split_run import run_split_lava

            run = run_split_lava(m, bundle.cores(), steps, merged=True)
        else:
            run = reference_run(m, steps)
        alpha, h = run.alpha[-1], run.h[-1]
        if fixed:
            alpha, h = alpha * 2.0**-rf.ALPHA_FRAC, h * 2.0**-rf.H_FRAC
        outputs.append((alpha, h))
    return StreamResult(rsgn_scores(params, outputs), rsgn_scores(params, float_out))
