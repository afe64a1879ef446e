"""The RSGN family's side of `compare` (scenarios/compare/chip_vs_gpu.py): the sequences on the
event engine (float, then the integer nodes), agreement of class scores with torch, accuracy, the
GPU's own algorithm and the soft-vs-event cutoff sweep; and its profile's GPU side."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np
from atomspark.mapping.hardware import load_hardware
from atomspark.mapping.quantize import fixed_rsgn_runner
from atomspark.networks.rsgn.dynamics import ignition, initial_state
from atomspark.networks.rsgn.model import RSGNConfig, RSGNParams
from atomspark.networks.rsgn_compile import compile_rsgn
from atomspark.networks.sample_runner import rsgn_runner
from atomspark.networks.torch_path.rsgn_trainer import RSGN_TRAINER
from atomspark.scenarios.compare.chip_rows import chip_row
from atomspark.scenarios.compare.compare_common import (
    CompareRun,
    accuracy,
    engine_costs,
    engine_entry,
    mean_active_fraction,
    torch_backend,
)
from atomspark.scenarios.compare.gpu_side import rsgn_gpu_side
from atomspark.scenarios.compare.gpu_variants import rsgn_gpu_variants
from atomspark.sim.core import AtomsparkError, as_finite_array
from atomspark.sim.graph import Graph, Population


def check_data(x, model) -> np.ndarray:
    """Token sequences (samples, length, d_in) of the model's input dimension."""
    config = model[1]
    x = as_finite_array("data", x, ndim=3)
    if x.shape[2] != config.d_in:
        raise AtomsparkError(
            f"data: shape {x.shape} does not match the RSGN model, which expects "
            f"(samples, length, {config.d_in})"
        )
    return x


def check_labels(labels: np.ndarray, model) -> None:
    """Class labels within the model's classes."""
    if labels.min() < 0 or labels.max() >= model[1].n_classes:
        raise AtomsparkError(f"labels: must lie in [0, {model[1].n_classes})")


def rsgn_event_graph(
    params: RSGNParams, config: RSGNConfig, tokens: np.ndarray, cutoff: float | None = None
) -> Graph:
    """Engine graph for one sequence. cutoff None: the model's own semantics (published: all nodes
    update, cutoff gates sending; sparse: event rule). A number: the event rule at that cutoff
    (a node at or below it is exactly silent), whatever the mode the model was trained in."""
    alpha0 = ignition(params, config, tokens[None])
    h0 = initial_state(params, config, tokens[None], alpha0)
    graph = compile_rsgn(params, config, alpha0[0], h0[0])
    if cutoff is None:
        return graph
    pop = graph.populations[0]
    nodes = dataclasses.replace(pop.params, cutoff=float(cutoff), event_rule=True)
    return Graph([Population(pop.name, pop.size, nodes)], graph.projections)


def _rsgn_engine(
    params, config, tokens: np.ndarray, cutoff: float | None = None, fixed: bool = False
):
    """Scores (B, C), final alpha (B, N), per-sample profiles, the graph, wall s per sample;
    `fixed`: the integer RSGN nodes (fixed_rsgn_runner), states read back in float units."""
    runner = rsgn_runner(params, config, rsgn_event_graph(params, config, tokens[0], cutoff))
    if fixed:
        runner = fixed_rsgn_runner(runner)
    t0 = time.perf_counter()
    runs = runner.run(tokens, config.n_steps + 1)
    wall = (time.perf_counter() - t0) / len(tokens)
    scores = [(a[:, None] * h).sum(axis=0) @ params.cls_w + params.cls_b for a, h in runs.outputs]
    alphas = [a for a, _ in runs.outputs]
    return np.stack(scores), np.stack(alphas), runs.profiles, runner.graph, wall


def rsgn_chip_run(params, config, tokens: np.ndarray):
    """What the chip runs and is priced on: the integer RSGN nodes (the graph `export --to lava
    --fixed` writes) on `tokens`; returns (scores (B, C), graph, profiles)."""
    scores, _, profiles, graph, _ = _rsgn_engine(params, config, tokens, fixed=True)
    return scores, graph, profiles


def rsgn_chip_fit(params, config, tokens: np.ndarray, hw):
    """The fit of the graph rsgn_chip_run prices (fixed point), made without running it: what
    chip_row would fit (the positions make the placement local, so the run's events do not
    enter), for a caller that need not run what does not fit."""
    from atomspark.mapping.layouts import fit_graph

    graph = fixed_rsgn_runner(
        rsgn_runner(params, config, rsgn_event_graph(params, config, tokens[0]))
    ).graph
    return fit_graph(graph, hw, positions=params.positions)


ENCODER_NOTE = (
    "the encoder (spark MLP, ball projection, token-node distances, min over tokens, exp: each "
    "sample's ignition) runs on the host, priced on neither side: both rows start from the "
    "ignition and end with {end}"
)
ENDS = {
    True: "the class scores",
    False: "the nodes' final states (the readout, on the host, is priced on neither side)",
}


def encoder_note(readout_on_chip: bool) -> str:
    """ENCODER_NOTE for a row whose readout is on chip (both sides end with the class scores)
    or on the host (both end with the nodes' states)."""
    return ENCODER_NOTE.format(end=ENDS[bool(readout_on_chip)])


def _stored(params, graph) -> tuple[int, ...]:
    """The stored weights per accumulator of the readout `graph`'s split bundle would hold
    (split_readout.classifier_weights: zeros are no synapses)."""
    from atomspark.mapping.split_readout import classifier_weights

    return classifier_weights(params, graph.populations[0].is_fixed_point)


def rsgn_chip_row(graph, profile, hw, n_samples: int, positions, classes: int, fit=None,
                  params=None):  # fmt: skip
    """The RSGN chip row (scenarios/compare/chip_rows.chip_row) with its readout of `classes`
    class scores priced and the encoder's place stated (encoder_note); `params`: the model's,
    whose classifier gives the readout's stored weights (split_readout.classifier_weights;
    None: every weight stored)."""
    stored = None if params is None or not classes else _stored(params, graph)
    row = chip_row(graph, profile, hw, n_samples, positions, fit=fit, classes=classes,
                   readout_weights=stored)  # fmt: skip
    if not row.fits:
        return row
    took = f"{row.took}; {encoder_note(row.readout_on_chip)}"
    others = tuple(dataclasses.replace(p, took=took) for p in row.placements)
    return dataclasses.replace(row, took=took, placements=others)


def rsgn_agreement(reference: np.ndarray, other: np.ndarray) -> dict:
    """Max / mean absolute score error and the fraction of samples with the same predicted class."""
    err = np.abs(reference - other)
    return {
        "max_abs_error": float(err.max()),
        "mean_abs_error": float(err.mean()),
        "max_abs_score": float(np.abs(reference).max()),
        "decision_agreement": float(np.mean(reference.argmax(1) == other.argmax(1))),
        "decision": "same predicted class",
    }


def rsgn_cutoff_sweep(
    params: RSGNParams,
    config: RSGNConfig,
    tokens: np.ndarray,
    labels: np.ndarray | None,
    reference_scores: np.ndarray,
    cutoffs: Sequence[float],
    hardware: str,
    gpu: str,
) -> list[dict]:
    """Event-rule engine runs at each cutoff: accuracy, decision agreement with the soft model,
    activity, synaptic operations and chip energy per sample."""
    rows = []
    for c in cutoffs:
        if not 0.0 <= float(c) < 1.0:
            raise AtomsparkError(f"cutoffs: each must lie in [0, 1), got {c!r}")
        scores, alpha, profiles, graph, _ = _rsgn_engine(params, config, tokens, cutoff=c)
        costs = engine_costs(graph, profiles, hardware, gpu, len(tokens), params.positions,
                             config.n_classes, _stored(params, graph))  # fmt: skip
        rows.append(
            {
                "cutoff": float(c),
                "accuracy": accuracy(scores, labels),
                "decision_agreement_vs_soft": float(
                    np.mean(scores.argmax(1) == reference_scores.argmax(1))
                ),
                "final_active_fraction": float(np.mean(alpha > c)),
                "mean_active_fraction": mean_active_fraction(profiles),
                "synops_per_sample": float(sum(p.synops.sum() for p in profiles) / len(tokens)),
                "energy_per_sample_j": (
                    costs["comparison"].neuromorphic.energy_per_sample_j
                    if costs["comparison"].fits
                    else None
                ),
            }
        )
    return rows


def _rsgn_fixed_entry(params, config, x, labels, scores_t, scores_float, hardware, gpu) -> dict:
    """The integer RSGN nodes (alpha Q.12, h Q.10, 8-bit weights) on the same samples: accuracy,
    agreement with torch and with the float engine, wraps and clips, chip costs."""
    scores, _, profiles, graph, wall = _rsgn_engine(params, config, x, fixed=True)
    costs = engine_costs(graph, profiles, hardware, gpu, len(x), params.positions,
                         config.n_classes, _stored(params, graph))  # fmt: skip
    entry = engine_entry(
        costs, wall, mean_active_fraction(profiles), rsgn_agreement(scores_t, scores)
    )
    entry["_costs"] = costs  # the chip row's run (taken out before the report is written)
    entry["accuracy"] = accuracy(scores, labels)
    entry["agreement_vs_engine_float"] = rsgn_agreement(scores_float, scores)
    entry["semantics"] = f"{config.mode} (cutoff {config.cutoff})"
    entry["formats"] = "alpha Q.12, h Q.10, 8-bit weights (mapping/quantize.quantize_rsgn_graph)"
    entry["wraps"] = int(sum(p.wraps.sum() for p in profiles))
    entry["clips"] = int(sum(p.clips.sum() for p in profiles))
    return entry


def compare_rsgn(run: CompareRun, model, cutoffs) -> tuple:
    """RSGN on the engine (float, then fixed point), in torch, the GPU's own algorithm and the
    event-cutoff sweep; returns (chip row, GPU variants, chip backend name, "K + 1")."""
    x, stage, report, backends = run.x, run.stage, run.report, run.report["backends"]
    labels, fixed_point = run.labels, run.fixed_point
    params, config = model
    scores_e, _, prof_e, graph_e, wall_e = _rsgn_engine(params, config, x)
    costs_e = engine_costs(graph_e, prof_e, run.hardware, run.gpu, len(x), params.positions,
                           config.n_classes, _stored(params, graph_e))  # fmt: skip
    stage(f"{len(x)} sample(s) in torch on {run.device}")
    entry_t, (scores_t, _) = torch_backend(
        RSGN_TRAINER.forward, model, x, run.device, run.dtype, run.gpu,
        costs_e["comparison"].dense,
    )  # fmt: skip
    entry_t["accuracy"] = accuracy(scores_t, labels)
    backends["torch"] = entry_t
    entry = engine_entry(
        costs_e, wall_e, mean_active_fraction(prof_e), rsgn_agreement(scores_t, scores_e)
    )
    entry["accuracy"] = accuracy(scores_e, labels)
    entry["semantics"] = f"{config.mode} (cutoff {config.cutoff})"
    backends["engine_float"] = entry
    if fixed_point:
        stage(f"{len(x)} sample(s) on the fixed-point engine")
        backends["engine_fixed"] = _rsgn_fixed_entry(
            params, config, x, labels, scores_t, scores_e, run.hardware, run.gpu
        )
    chip_name = "engine_fixed" if fixed_point else "engine_float"  # the chip runs fixed point
    chip = backends[chip_name]
    chip_costs = chip.pop("_costs", None) or costs_e
    row = rsgn_chip_row(
        chip_costs["graph"], chip_costs["profile"], load_hardware(run.hardware), len(x),
        params.positions, config.n_classes, params=params,
    )  # fmt: skip
    stage("the GPU's own algorithm on the same samples")
    if chip["fits"]:
        report["gpu_fair"] = rsgn_gpu_side(
            params, config, graph_e, x, run.gpu, chip["energy_per_sample_j"],
            chip["latency_per_sample_s"], run.device, row.readout_on_chip,
        )  # fmt: skip
        report["gpu_fair"]["chip_backend"] = chip_name
        report["gpu_fair"]["accuracy"] = {  # the two sides need not agree: say both
            "chip": chip["accuracy"],
            "gpu": entry_t["accuracy"],
            "note": "the GPU runs the float forward; the chip side is "
            + chip_name
            + " (fixed point can differ: docs/lava.md)",
        }
    agreement = chip["agreement_vs_torch"]["decision_agreement"]
    variants = rsgn_gpu_variants(params, config, graph_e, x, agreement,
                                 readout=row.readout_on_chip)  # fmt: skip
    if cutoffs:
        stage(f"event-cutoff sweep ({len(cutoffs)} cutoffs)")
        report["cutoff_sweep"] = rsgn_cutoff_sweep(
            params, config, x, labels, scores_t, cutoffs, run.hardware, run.gpu
        )
    return row, variants, chip_name, "K + 1"
