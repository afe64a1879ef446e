"""RSGN nodes on Lava: RSGNNodes (float) and RSGNFixedNodes (integer), atomspark's Processes in
mapping/lava/procs/. Vector payloads: every node sends x_j = alpha_j h_j (d wide) and a flag, and
records its activations alpha beside its payloads."""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from atomspark.mapping.lava.net import LavaPopulation, alpha_record
from atomspark.mapping.lava.units.registry import LavaUnit, register_lava_unit, serve_lava_unit
from atomspark.sim.core import AtomsparkError
from atomspark.sim.unit_model import model_named, model_of
from atomspark.sim.units.rsgn import RSGNNodeParams, rsgn_emitted, rsgn_node_step
from atomspark.sim.units.rsgn_fixed import RSGNFixedParams, emitted_payloads, step_nodes

FLOAT_SCALARS = ("temperature", "signal_gain", "cutoff", "layer_norm_eps")


def _pool_members(fan_out_indptr, fan_out_indices, size: int) -> dict[str, np.ndarray]:
    """The pools as member CSR (row i = the nodes of node i's pool) from the kernels' fan-out CSR
    (row i = the pools node i belongs to)."""
    members = sp.csr_matrix(
        (np.ones(fan_out_indices.size), fan_out_indices, fan_out_indptr), shape=(size, size)
    ).T.tocsr()
    members.sort_indices()
    return {
        "pool_indptr": members.indptr.astype(np.int64),
        "pool_indices": members.indices.astype(np.int64),
    }


def _pool_matrix(p: LavaPopulation) -> sp.csr_matrix:
    """An RSGN population's pool matrix (N, N) from its member CSR."""
    a = p.arrays
    return sp.csr_matrix(
        (np.ones(a["pool_indices"].size), a["pool_indices"], a["pool_indptr"]),
        shape=(p.size, p.size),
    )


def _describe_float(name: str, size: int, params: RSGNNodeParams) -> LavaPopulation:
    k = params.kernel_arrays
    if np.any(k.resting != 0):
        raise AtomsparkError(
            f"{name}: threshold_rule 'resting-subtracted': the Lava RSGN process has the released "
            "sigmoid only; run this model on the engine, or train it with model.threshold_rule = "
            '"sigmoid"'
        )
    state = params.init_state(size)
    arrays = {
        "thresholds": k.thresholds.copy(),
        "w_h": k.w_h.copy(),
        "b_h": k.b_h.copy(),
        "ln_gain": k.ln_gain.copy(),
        "ln_bias": k.ln_bias.copy(),
        **_pool_members(k.pool_indptr, k.pool_indices, size),
        "alpha_init": state["alpha"],
        "h_init": state["h"],
    }
    scalars = {"width": params.width, **{f: float(getattr(params, f)) for f in FLOAT_SCALARS}}
    scalars["event_rule"] = bool(params.event_rule)
    return LavaPopulation(name, "rsgn", "float", size, scalars, arrays)


def _describe_fixed(name: str, size: int, params: RSGNFixedParams) -> LavaPopulation:
    """Integer RSGN nodes of any variant (rsgn_fixed, rsgn_fixed_split): the parameters' integer
    fields under their own names (arrays and scalars, as RSGNFixedNodes takes them), thresholds
    per node, the pools as member CSR, and the variant's unit-model name."""
    k = params.kernel_arrays
    state = params.init_state(size)
    fields = {**params.integer_fields(), "thresholds": k["thresholds"].copy()}
    arrays = {key: v for key, v in fields.items() if isinstance(v, np.ndarray)}
    arrays.update(_pool_members(k["pool_indptr"], k["pool_indices"], size))
    arrays.update(alpha_init=state["alpha"], h_init=state["h"])
    scalars = {key: v for key, v in fields.items() if not isinstance(v, np.ndarray)}
    scalars.update(width=params.width, unit_model=model_of(params).name)
    return LavaPopulation(name, "rsgn", "fixed", size, scalars, arrays)


def rsgn_node_params(p: LavaPopulation, n_inputs: int = 1) -> RSGNNodeParams:
    """The engine's RSGN unit parameters of a float RSGN LavaPopulation (validated on use)."""
    k, a = p.scalars, p.arrays
    return RSGNNodeParams(
        thresholds=a["thresholds"], w_h=a["w_h"], b_h=a["b_h"], ln_gain=a["ln_gain"],
        ln_bias=a["ln_bias"], pool=_pool_matrix(p), event_rule=bool(k["event_rule"]),
        alpha_init=a["alpha_init"], h_init=a["h_init"], **{f: k[f] for f in FLOAT_SCALARS},
    )  # fmt: skip


def rsgn_fixed_params(p: LavaPopulation, n_inputs: int = 1) -> RSGNFixedParams:
    """The engine's integer RSGN unit parameters of a fixed-point RSGN LavaPopulation, of the
    variant its scalars name (bundles written before variants existed: rsgn_fixed)."""
    cls = model_named(p.scalars.get("unit_model", "rsgn_fixed")).params_type
    names = {f.name for f in dataclasses.fields(cls)} - {"pool"}
    given = {key: v for key, v in {**p.scalars, **p.arrays}.items() if key in names}
    return cls(pool=_pool_matrix(p), **given)


def _state(p: LavaPopulation, params) -> dict:
    return {
        "alpha": p.arrays["alpha_init"].copy(),
        "h": p.arrays["h_init"].copy(),
        "kernel": params.kernel_arrays,
        "ignited": False,
        "sent": np.zeros(p.size),
    }


def _step_float(p: LavaPopulation, s: dict, a_in: np.ndarray, received: np.ndarray) -> np.ndarray:
    """RSGNNodes: ignition on the first step, then rsgn_node_step on the summed messages;
    returns the sent payloads flattened and keeps the sender flags in s["sent"]."""
    cutoff = p.scalars["cutoff"]
    if s["ignited"]:
        m = a_in.reshape(p.size, -1)
        s["alpha"], s["h"], _ = rsgn_node_step(
            s["alpha"], s["h"], m, received > 0, s["kernel"], p.scalars["event_rule"]
        )
    s["ignited"] = True
    s["sent"] = (s["alpha"] > cutoff).astype(np.float64)
    return rsgn_emitted(s["alpha"], s["h"], cutoff).ravel()


def _step_fixed(p: LavaPopulation, s: dict, a_in: np.ndarray, received: np.ndarray) -> np.ndarray:
    """RSGNFixedNodes: ignition on the first step, then the integer step_nodes on the raw
    summed messages (the node wraps and shifts them itself)."""
    cutoff = p.scalars["cutoff"]
    if s["ignited"]:
        m = a_in.reshape(p.size, -1)
        step_nodes(s["alpha"], s["h"], m, received > 0, s["kernel"], p.scalars["event_rule"])
    s["ignited"] = True
    s["sent"] = (s["alpha"] > cutoff).astype(np.float64)
    return emitted_payloads(s["alpha"], s["h"], cutoff).ravel()


def _make_float(p: LavaPopulation):
    from atomspark.mapping.lava.procs.rsgn_nodes import RSGNNodes

    kwargs = {key: p.scalars[key] for key in ("width", *FLOAT_SCALARS, "event_rule")}
    return RSGNNodes(size=p.size, name=p.name, **kwargs, **p.arrays)


def _make_fixed(p: LavaPopulation):
    from atomspark.mapping.lava.procs.rsgn_fixed_nodes import RSGNFixedNodes

    return RSGNFixedNodes(size=p.size, name=p.name, **p.scalars, **p.arrays)


def _records(p: LavaPopulation) -> dict[str, tuple[int, str, str | None]]:
    """Sent payloads (the step's output) and the activations alpha (state, on alpha_out)."""
    return {
        p.name: (p.output_size, "s_out", None),
        alpha_record(p.name): (p.size, "alpha_out", "alpha"),
    }


def _sent(p: LavaPopulation, outputs: dict) -> np.ndarray:
    """A node sent one vector event when its alpha was above the cutoff, whatever its payload."""
    return outputs[alpha_record(p.name)] > p.scalars["cutoff"]


def sent_payloads(p: LavaPopulation, alpha: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Sent payloads per step, (steps, N * d), from alpha (steps, N) and h (steps, N, d) traces:
    alpha h (float) or the integer unit's (h alpha) >> 12 (fixed); zero rows for silent nodes."""
    emit = emitted_payloads if p.arithmetic == "fixed" else rsgn_emitted
    cut = p.scalars["cutoff"]
    return np.stack([emit(a, hh, cut) for a, hh in zip(alpha, h)]).reshape(len(alpha), -1)


def _errors(p: LavaPopulation, lava: dict, traces: dict, count_error: float) -> dict:
    """Sent payloads, activations and event counts against the engine's traces."""
    alpha = traces[(p.name, "alpha")]
    x = sent_payloads(p, alpha, traces[(p.name, "h")])
    key = alpha_record(p.name)
    return {
        p.name: float(np.abs(lava[p.name] - x).max(initial=0.0)),
        key: float(np.abs(lava[key] - alpha).max(initial=0.0)),
        f"{p.name}.events": float(count_error),
    }


_COMMON = dict(records=_records, sent=_sent, engine_trace=("alpha", "h"), engine_errors=_errors,
               vector_payload=True)  # fmt: skip
RSGN_FLOAT = register_lava_unit(
    LavaUnit(
        "rsgn",
        "rsgn",
        "float",
        process="RSGNNodes",
        select_tags=("floating_pt",),
        describe=_describe_float,
        to_params=rsgn_node_params,
        init_state=lambda p: _state(p, rsgn_node_params(p)),
        step=_step_float,
        make_process=_make_float,
        **_COMMON,
    )  # fmt: skip
)
RSGN_FIXED = register_lava_unit(
    LavaUnit(
        "rsgn_fixed",
        "rsgn",
        "fixed",
        process="RSGNFixedNodes",
        select_tags=("fixed_pt",),
        describe=_describe_fixed,
        to_params=rsgn_fixed_params,
        init_state=lambda p: _state(p, rsgn_fixed_params(p)),
        step=_step_fixed,
        make_process=_make_fixed,
        **_COMMON,
    )  # fmt: skip
)
# The split-W_h unit differs from rsgn_fixed only in its parameters (same ProcessModel, same
# reference step): the same Lava description serves it.
serve_lava_unit("rsgn_fixed_split", RSGN_FIXED)
