"""Tables of the follow-up grids in docs/paper_reproduction.md, from the committed JSON:
- released: the seed-42 RSGN cells under the released code's constraints beside the same cells
  as the main grid ran them (positions and thresholds rewritten after every step), compared at
  the epochs both have run, with the main grid's seed spread;
- sparse-threshold: K = 5 with the resting-subtracted soft threshold against its K = 0 control
  at the 2 % target, per seed, and the verdict on the goal once all three seeds of both ran.
A cell still running is shown from its progress (docs/results/rsgn/partial/), marked as such."""

from __future__ import annotations

import re
import statistics

from atomspark.scenarios.paper.grid import cells
from atomspark.scenarios.paper.layout import SEEDS, SHARED_CELLS


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _pick(results: dict, partial: dict, key: tuple[str, str]) -> tuple[dict | None, str]:
    if key in results:
        return results[key], "complete"
    if key in partial:
        return partial[key], "running"
    return None, "not started"


def _upto(run: dict, n: int) -> tuple[float, float]:
    """Best validation accuracy over the first n epochs, and the accuracy at epoch n."""
    rows = [r for r in run["epochs"] if r["epoch"] <= n]
    return max(r["accuracy"] for r in rows), rows[-1]["accuracy"]


def released_table(results: dict, partial: dict) -> tuple[str, list[str]]:
    """One row per seed-42 RSGN cell: released constraints against the main grid's rule."""
    head = (
        "| cell | state | epochs | released: best / last-epoch acc. % | main grid (in place, "
        "clamped), same epochs: best / acc. % | difference of the best, points | main grid's "
        "seed spread of the best (3 seeds), points |\n|---|---|---|---|---|---|---|\n"
    )
    rows, missing = [], []
    for name, _, _ in cells("released"):
        run, state = _pick(results, partial, ("released", name))
        base = results.get(("main", name))
        spread = [results.get(("main", _seed(name, s))) for s in SEEDS]
        sd = (
            f"{100 * statistics.pstdev(r['best']['accuracy'] for r in spread):.1f}"
            if all(spread)
            else "-"
        )
        if state != "complete":
            missing.append(f"released/{name}")
        if run is None or base is None:
            rows.append(f"| {name} | {state} | 0 | - | - | - | {sd} |")
            continue
        n = run["last"]["epoch"]
        ours, ours_last = _upto(run, n)
        theirs, theirs_last = _upto(base, n)
        rows.append(
            f"| {name} | {state} | {n} of {run['config']['epochs']} | {_pct(ours)} / "
            f"{_pct(ours_last)} | {_pct(theirs)} / {_pct(theirs_last)} "
            f"| {100 * (ours - theirs):+.1f} | {sd} |"
        )
    return head + "\n".join(rows) + "\n", missing


EARLY = 10  # epochs of the slow start compared in released_start


def released_start(results: dict, n: int = EARLY) -> str:
    """One generated sentence per finished released cell: its first `n` epochs beside the main
    grid's same cell (earlier rules), accuracy and validation loss ranges, and the first step's
    loss: whether a slow start is the model's or the rule's."""
    out = []
    for name, _, _ in cells("released"):
        run, base = results.get(("released", name)), results.get(("main", name))
        if run is None or base is None:
            continue
        ranges = []
        for r in (run, base):
            rows = [e for e in r["epochs"] if e["epoch"] <= n]
            acc = [100 * e["accuracy"] for e in rows]
            loss = [e["loss"] for e in rows]
            ranges.append(
                f"{min(acc):.1f}-{max(acc):.1f} % (validation loss {min(loss):.1f}-{max(loss):.1f})"
            )
        out.append(
            f"{name}, epochs 1-{n}: released rules {ranges[0]}, earlier rules {ranges[1]}; "
            f"first training step's loss {run['first_step_loss']:.0f} and "
            f"{base['first_step_loss']:.0f}."
        )
    return " ".join(out)


def _sparse_run(results: dict, partial: dict, name: str) -> tuple[dict | None, str]:
    run, state = _pick(results, partial, ("sparse-threshold", name))
    shared = SHARED_CELLS.get(("sparse-threshold", name))
    if run is None and shared:
        # the same config as the activity grid's 50-epoch control (checks.py: not stale there)
        run = results.get(shared)
        state = f"complete ({shared[0]} grid)" if run else state
    return run, state


def sparse_threshold_table(results: dict, partial: dict) -> tuple[str, list[str]]:
    """Per seed: K = 5 with the resting-subtracted threshold and its K = 0 control."""
    head = (
        "| seed | K | threshold rule | state | epochs | best / last-epoch acc. % | activity "
        "all steps, best epoch / last epoch % |\n|---|---|---|---|---|---|---|\n"
    )
    rows, missing = [], []
    for name, _, cell in cells("sparse-threshold"):
        m = cell.params["model"]
        run, state = _sparse_run(results, partial, name)
        if not state.startswith("complete"):
            missing.append(f"sparse-threshold/{name}")
        lead = f"| {cell.labels['seed']} | {m['n_steps']} | {m['threshold_rule']} | {state} |"
        if run is None:
            rows.append(f"{lead} 0 | - | - |")
            continue
        act = [run[w].get("activity_steps") for w in ("best", "last")]
        rows.append(
            f"{lead} {run['last']['epoch']} of {run['config']['epochs']} "
            f"| {_pct(run['best']['accuracy'])} / {_pct(run['last']['accuracy'])} "
            f"| {_pct(act[0])} / {_pct(act[1])} |"
        )
    return head + "\n".join(rows) + "\n", missing


SPARSE_GOAL_POINTS = 1.0  # K = 5 must beat its K = 0 control by this many points (best accuracy)
SPARSE_GOAL_ACTIVITY = 0.02  # at no more than this activity, averaged over ignition and every step


def sparse_threshold_verdict(results: dict, partial: dict) -> str:
    """One generated paragraph once K = 5 and K = 0 are complete on every seed: per seed the
    difference of the best accuracies, the means over seeds with their spread, both rows'
    activity over all steps at their best epochs, and whether the goal is met (mean difference at least
    SPARSE_GOAL_POINTS at a mean activity of at most SPARSE_GOAL_ACTIVITY); "" before."""
    pairs = {}
    for name, _, cell in cells("sparse-threshold"):
        run, state = _sparse_run(results, partial, name)
        if not state.startswith("complete"):
            return ""
        pairs.setdefault(cell.labels["seed"], {})[cell.params["model"]["n_steps"]] = run
    seeds = sorted(pairs)
    best = {k: [pairs[s][k]["best"]["accuracy"] for s in seeds] for k in (5, 0)}
    diffs = [100 * (a - b) for a, b in zip(best[5], best[0])]
    activity, control = (
        statistics.mean(pairs[s][k]["best"]["activity_steps"] for s in seeds) for k in (5, 0)
    )
    mean_diff = round(statistics.mean(diffs), 1)  # judged as printed
    met = mean_diff >= SPARSE_GOAL_POINTS and activity <= SPARSE_GOAL_ACTIVITY
    above = sum(d > 0 for d in diffs)
    per_seed = ", ".join(f"{d:+.1f} (seed {s})" for s, d in zip(seeds, diffs))

    def mean_sd(v: list[float]) -> str:
        return f"{100 * statistics.mean(v):.1f} ± {100 * statistics.stdev(v):.1f} %"

    return (
        f"Over seeds {seeds[0]}-{seeds[-1]}, K = 5 minus K = 0 in best accuracy: {per_seed}; "
        f"mean {mean_diff:+.1f} points (K = 5 {mean_sd(best[5])}, K = 0 {mean_sd(best[0])}, "
        f"mean ± sample standard deviation), with K = 5 at {100 * activity:.1f} % and K = 0 at "
        f"{100 * control:.1f} % activity over all steps at their best epochs (means over seeds). "
        f"Propagation is above its control in {above} of "
        f"{len(seeds)} seeds; the goal ({SPARSE_GOAL_POINTS:+.0f} point at no more than "
        f"{100 * SPARSE_GOAL_ACTIVITY:.0f} % activity) is {'met' if met else 'not met'}.\n"
    )


def _seed(name: str, seed: int) -> str:
    """The same cell name at another seed (names end in "-seed<N>")."""
    return re.sub(r"seed\d+$", f"seed{seed}", name)
