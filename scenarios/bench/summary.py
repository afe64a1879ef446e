"""The generated summary under each family's tables: where layered VN beats every peer, where it
ties the best one, where it loses, and what the second layer changes against VN-1.

Rule (stated in the doc): per task and split, VN's mean NMSE is compared with the best mean of
every other row except VN-1. It "ties" when the two differ by no more than the sum of their
standard deviations over seeds or by 5 % of the smaller, "wins" when lower beyond that, and
"loses" otherwise.
"""

from __future__ import annotations

TIE_FRACTION = 0.05
ABLATION = "VN-1"
TASK_NAMES = {"masked": "Masked prediction", "recon": "Reconstruction"}


def compare(a: dict, b: dict) -> str:
    """'win', 'tie' or 'lose' of stat a (mean/std) against stat b, lower is better."""
    gap = b["mean"] - a["mean"]
    tolerance = max(a["std"] + b["std"], TIE_FRACTION * min(a["mean"], b["mean"]))
    if abs(gap) <= tolerance:
        return "tie"
    return "win" if gap > 0 else "lose"


def _best_peer(models: dict, task: str, split: str) -> tuple[str, dict]:
    peers = {n: m for n, m in models.items() if n not in ("VN", ABLATION)}
    name = min(peers, key=lambda n: peers[n]["metrics"][task][split]["mean"])
    return name, peers[name]["metrics"][task][split]


def verdicts(results: dict) -> list[tuple[str, str, str, str]]:
    """(task, split, verdict, best peer) for every task and split of a family with a VN row."""
    models = results["models"]
    if "VN" not in models or len(models) < 2:
        return []
    out = []
    for task in ("masked", "recon"):
        for split in results["splits"]:
            peer, stat = _best_peer(models, task, split)
            out.append((task, split, compare(models["VN"]["metrics"][task][split], stat), peer))
    return out


def summary_lines(results: dict) -> list[str]:
    models, splits = results["models"], results["splits"]
    if "VN" not in models or len(models) < 2:
        return []
    lines = []
    for task in ("masked", "recon"):
        verdicts: dict[str, list[str]] = {"win": [], "tie": [], "lose": []}
        for split in splits:
            vn = models["VN"]["metrics"][task][split]
            peer, stat = _best_peer(models, task, split)
            verdict = compare(vn, stat)
            detail = (
                f"`{split}`"
                if verdict == "win"
                else (f"`{split}` ({peer} {stat['mean']:.3g} vs VN {vn['mean']:.3g})")
            )
            verdicts[verdict].append(detail)
        parts = []
        if verdicts["win"]:
            parts.append("beats every peer on " + ", ".join(verdicts["win"]))
        if verdicts["tie"]:
            parts.append("ties the best peer on " + ", ".join(verdicts["tie"]))
        if verdicts["lose"]:
            parts.append("loses on " + ", ".join(verdicts["lose"]))
        lines.append(f"- **{TASK_NAMES[task]}**: layered VN " + "; ".join(parts) + ".")
    if results.get("missing_models"):
        lines.append(
            "- **Rows not run yet**: "
            + ", ".join(results["missing_models"])
            + "; the verdicts above compare only the rows present."
        )
    if ABLATION in models:
        lines.append(
            "- **Second layer (VN against VN-1), masked prediction**: "
            + _ablation(models, splits)
            + "."
        )
    return lines


def _ablation(models: dict, splits: list[str]) -> str:
    out = {"win": [], "tie": [], "lose": []}
    for split in splits:
        out[
            compare(
                models["VN"]["metrics"]["masked"][split],
                models[ABLATION]["metrics"]["masked"][split],
            )
        ].append(f"`{split}`")
    words = {"win": "lower on", "tie": "equal within noise on", "lose": "higher on"}
    return "; ".join(f"{words[k]} {', '.join(v)}" for k, v in out.items() if v)
