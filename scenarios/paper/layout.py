"""Where the RSGN paper's results live and what they were run on: shared by the grid runner,
the tables and the diagnosis, so none of them has to import another for it."""

from __future__ import annotations

import os
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results" / "rsgn"
SEEDS = (42, 43, 44)
# Cells of one grid that are another grid's cell (the same settings, run once): (grid, name) ->
# where its result is committed.
SHARED_CELLS = {
    ("sparse-threshold", "target0.02-sigma0.05-k0-e50-seed42"): (
        "activity",
        "target0.02-sigma0.05-k0-e50",
    ),
}
TASKS = {"hierarchical": "rsgn-paper-hierarchical", "long-range": "rsgn-paper-long-range"}


def machine_description() -> str:
    """The machine line recorded beside each collected result."""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        "(shared with other jobs), torch on CPU, one thread"
    )
