"""Where the RSGN paper's results live and what they were run on: shared by the grid runner,
the tables and the diagnosis, so none of them has to import another for it."""

from __future__ import annotations

import os
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results" / "rsgn"
SEEDS = (42, 43, 44)
TASKS = {"hierarchical": "rsgn-paper-hierarchical", "long-range": "rsgn-paper-long-range"}


def machine_description() -> str:
    """The machine line recorded beside each collected result."""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
        "(shared with other jobs), torch on CPU, one thread"
    )
