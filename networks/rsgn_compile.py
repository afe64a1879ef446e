"""Compile an RSGN into an event-driven simulator Graph of RSGN nodes and run it step by step.

Mapping (one sequence per graph; networks/rsgn/dynamics.py is the reference):
- every node is one RSGN unit (sim/units/rsgn.py) holding alpha_j and its state vector h_j; the
  shared transform W_h, the LayerNorm and the soft threshold run inside the node update, because
  h_new = (sum_i W_ij x_i) W_h + b_h needs the whole summed vector before the nonlinearity;
- the distance-decayed connections W (sparse mode: the CSR of connection_weights, row = sender;
  published: the dense W without its zero diagonal) become one projection of delay 1 whose
  events are vectors x_i = alpha_i h_i (one synaptic operation = one d-wide multiply-add);
- the divisive-inhibition neighbourhood becomes the node population's pools;
- ignition is the initial state (alpha0, h0). Engine step 0 only emits the ignited nodes'
  outputs; engine step t >= 1 performs RSGN step t-1. So K RSGN steps take K + 1 engine steps,
  and engine step t's synaptic operations are the reference's messages of RSGN step t.
Cost of one RSGN step on the engine: sum over emitting nodes of their out-degree synaptic
operations (d multiply-adds each), d^2 + O(d) per updated node (W_h, norm, LayerNorm), and one
add per pool message of each node whose pre-pool activation is nonzero.
"""

from __future__ import annotations

import numpy as np
from atomspark.networks.rsgn.dynamics import (
    check_state,
    connection_weights,
    ignition,
    inhibition_neighbourhood,
    initial_state,
    resting_activation,
)
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams, validate_params
from atomspark.sim.core import as_finite_array
from atomspark.sim.graph import Graph, Population, Projection
from atomspark.sim.units.rsgn import RSGNNodeParams

NODE_POPULATION = "rsgn_nodes"


def node_params(
    params: RSGNParams, config: RSGNConfig, alpha0: np.ndarray, h0: np.ndarray
) -> RSGNNodeParams:
    """RSGN unit parameters of the model's nodes with one sequence's ignition (alpha0 (N,),
    h0 (N, d)) as initial state. Sparse mode uses the exact-silence event rule; published mode
    updates every node every step and gates sending with alpha > cutoff (the released code)."""
    validate_params(params, config)
    a = as_finite_array("alpha0", alpha0, ndim=1)
    hh = as_finite_array("h0", h0, ndim=2)
    a, hh = check_state(params, config, a[None, :], hh[None, :, :])
    return RSGNNodeParams(
        thresholds=params.thresholds,
        w_h=params.w_h,
        b_h=params.b_h,
        ln_gain=params.ln_gain,
        ln_bias=params.ln_bias,
        pool=inhibition_neighbourhood(params, config),
        temperature=config.temperature,
        signal_gain=config.signal_gain,
        cutoff=config.cutoff,
        layer_norm_eps=config.layer_norm_eps,
        event_rule=config.mode == "sparse",
        resting=resting_activation(params, config),
        alpha_init=a[0],
        h_init=hh[0],
    )


def compile_rsgn(
    params: RSGNParams, config: RSGNConfig, alpha0: np.ndarray, h0: np.ndarray
) -> Graph:
    """Graph of one population (NODE_POPULATION) of RSGN nodes and the projection W (delay 1).

    The projection takes W^T (target x source), so its fan-out CSR is W itself and every stored
    edge of the sparse graph (zero affinity included) is a synapse that counts as a message."""
    nodes = node_params(params, config, alpha0, h0)
    w = connection_weights(params, config)
    weights = w.T if config.mode == "sparse" else np.ascontiguousarray(w.T)
    pop = Population(NODE_POPULATION, config.n_nodes, nodes)
    return Graph([pop], [Projection(NODE_POPULATION, NODE_POPULATION, weights)])


def compile_rsgn_tokens(params: RSGNParams, config: RSGNConfig, tokens: np.ndarray) -> Graph:
    """Graph for one token sequence (L, d_in): ignition and initial state from the reference."""
    x = as_finite_array("tokens", tokens, ndim=2)
    alpha0 = ignition(params, config, x[None])
    h0 = initial_state(params, config, x[None], alpha0)
    return compile_rsgn(params, config, alpha0[0], h0[0])
