"""The networks under each training schedule they ran with: a check that the tables' networks
are trained to convergence. Cells of the earlier plateau schedule (rate halved after 4 epochs
without improvement) and of the cosine schedule both stay in a family's folders; per network and
schedule, this takes the configuration with the best validation score at the tuning seed and
reports its validation score, ID test errors and epochs, so a reader sees what the schedule
changed."""

from __future__ import annotations

from atomspark.scenarios.bench.metrics import validation_score


def schedule_of(config: dict) -> str:
    """'plateau' for cells of the earlier schedule, 'cosine' otherwise."""
    return "plateau" if "plateau" in config.get("train", {}) else "cosine"


def schedule_summary(cells: list[dict]) -> dict[str, dict[str, dict]]:
    """{network: {schedule: facts of its best configuration at the tuning seed}} for networks
    with cells under more than one schedule."""
    nets: dict[str, dict[str, list[dict]]] = {}
    for cell in cells:
        if cell.get("kind") == "torch" and "val" in cell:
            nets.setdefault(cell["model"], {}).setdefault(schedule_of(cell["config"]), [])
            nets[cell["model"]][schedule_of(cell["config"])].append(cell)
    out = {}
    for model, by_schedule in nets.items():
        if len(by_schedule) < 2:
            continue
        seed = min(c["seed"] for group in by_schedule.values() for c in group)
        out[model] = {}
        for schedule, group in sorted(by_schedule.items()):
            at_seed = [c for c in group if c["seed"] == seed]
            if not at_seed:
                continue
            best = min(at_seed, key=lambda c: validation_score(c["val"]))
            out[model][schedule] = {
                "seed": seed,
                "configs": len(at_seed),
                "val_score": validation_score(best["val"]),
                "masked_id": best["metrics"]["masked"]["id"],
                "recon_id": best["metrics"]["recon"]["id"],
                "best_epoch": best["curves"]["best_epoch"],
                "epochs_run": len(best["curves"]["train_loss"]),
                "cap": best["config"]["train"]["epochs"],
            }
    return out


def schedule_lines(summary: dict[str, dict[str, dict]]) -> list[str]:
    """The table of schedule_summary (empty when no network ran under two schedules)."""
    if not summary:
        return []
    lines = [
        "## Networks under both training schedules (best configuration of each, tuning seed)",
        "",
        "| network | schedule | configs | val score | masked NMSE, id | recon NMSE, id | "
        "epochs: best / run / cap |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for model, by_schedule in summary.items():
        for schedule, f in by_schedule.items():
            lines.append(
                f"| {model} | {schedule} | {f['configs']} | {f['val_score']:.4f} | "
                f"{f['masked_id']:.4f} | {f['recon_id']:.4f} | "
                f"{f['best_epoch']} / {f['epochs_run']} / {f['cap']} |"
            )
    return [*lines, ""]
