"""The paper's figures and our committed results, as the tables (tables.py) and the README block
(readme.py) read them."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from atomspark.scenarios.paper.layout import RESULTS

# The paper's figures (Hays, arXiv:2601.18064, tables and ablation): mean +- std over 3 seeds.
PAPER = {
    "hierarchical": {
        "transformer": ("30.1 ± 0.2", "403,348"),
        "rsgn-hebbian": ("23.8 ± 0.2", "41,672"),
        "rsgn": ("23.8 ± 0.1", "41,672"),
        "lstm": ("18.1 ± 0.4", "566,292"),
        "mlp": ("16.0 ± 0.8", "281,364"),
        "sparse-transformer": ("15.9 ± 0.2", "403,348"),
    },
    "long-range": {
        "transformer": ("100", "600,330"),
        "lstm": ("100", "563,722"),
        "rsgn-hebbian": ("96.5 ± 0.5", "40,382"),
        "rsgn": ("96.1 ± 0.2", "40,382"),
    },
}
# The paper's seed-42 runs (all_accuracies[0] of the released analysis/results/*_results.json):
# the figures our runs on the notebook's own sequences sit beside.
PAPER_SEED42 = {
    "hierarchical": {
        "transformer": "29.9",
        "rsgn-hebbian": "24.1",
        "rsgn": "23.7",
        "lstm": "18.6",
        "mlp": "15.2",
        "sparse-transformer": "15.6",
    },
    "long-range": {"transformer": "100", "lstm": "100", "rsgn-hebbian": "97.2", "rsgn": "95.8"},
}
PAPER_ABLATION = {
    "full": ("24.1", "41,672"),
    "no-hebbian": ("23.7", "41,672"),
    "k3": ("24.1", "41,672"),
    "k1": ("24.1", "41,672"),
    "nodes128": ("24.4", "32,840"),
    "nodes512": ("23.6", "59,336"),
}
MODELS = (
    "mean-linear",
    "mlp",
    "transformer",
    "sparse-transformer",
    "lstm",
    "rsgn-hebbian",
    "rsgn",
)
LABELS = {
    "floor-sklearn": "logistic regression on the mean token (floor, scikit-learn)",
    "mean-linear": "logistic regression on the mean token, trained by the protocol",
    "mlp": "MLP",
    "transformer": "Transformer",
    "sparse-transformer": "Sparse Transformer",
    "lstm": "LSTM (bidirectional)",
    "rsgn-hebbian": "RSGN + Hebbian",
    "rsgn": "RSGN (no Hebbian)",
}


def load_results(results: Path = RESULTS) -> dict[tuple[str, str], dict]:
    """{(grid, cell): summary} for every committed JSON."""
    out = {}
    for path in sorted(results.glob("*/*.json")):
        data = json.loads(path.read_text())
        out[(data["grid"], data["cell"])] = data
    return out


def load_partial(results: Path = RESULTS) -> dict[tuple[str, str], dict]:
    """{(grid, cell): summary} of cells still running (results/partial/<grid>/<cell>.json)."""
    return load_results(results / "partial")


def percent(values: list[float]) -> str:
    """Accuracies as a percentage: one run as is, several as mean ± population std, none as -."""
    if not values:
        return "-"
    mean = 100 * statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.1f}"
    return f"{mean:.1f} ± {100 * statistics.pstdev(values):.1f}"
