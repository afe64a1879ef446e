"""The one-layer bench VN on the event engine: a correctness check and its activity counters,
recorded in VN-1 cells (no energy or latency: chip against GPU is docs/chip_vs_gpu.md).

A few ID samples settle on the engine for a fixed number of Jacobi-ISTA steps, as a chip runs
them; the codes are compared with the NumPy reference ISTA of the same steps (equal up to float
rounding) and with the converged settle; events, synaptic operations and NeuroBench's metrics
come from the same run.
"""

from __future__ import annotations

from atomspark.sim.neurobench import neurobench_metrics

ENGINE_SAMPLES = 2
ENGINE_STEPS = 1000


def engine_section(model, data) -> dict:
    """Run ENGINE_SAMPLES ID samples of a one-layer VNBench on the engine; its record."""
    x, observed = data.splits["id"].head(ENGINE_SAMPLES).task_input("recon")
    run = model.engine_run(x, observed, ENGINE_STEPS)
    summary = run["profile"].summary()
    return {
        "samples": ENGINE_SAMPLES,
        "steps": ENGINE_STEPS,
        "engine_vs_reference_ista_max_rel_error": run["max_rel_error"],
        "engine_vs_converged_settle_max_rel_error": run["max_rel_error_vs_converged"],
        "events_per_sample": summary["total_events"] / ENGINE_SAMPLES,
        "synops_per_sample": summary["total_synops"] / ENGINE_SAMPLES,
        "neurobench": neurobench_metrics(run["graph"], run["profile"], ENGINE_SAMPLES),
    }
