"""Optional dependencies of the command line, named in one line when missing."""

from __future__ import annotations

import importlib.util

from atomspark.sim.core import AtomsparkError


def require_torch(command: str) -> None:
    """Name the missing dependency instead of failing on an import deep inside."""
    if importlib.util.find_spec("torch") is None:
        raise AtomsparkError(
            f"{command} needs PyTorch, which this environment lacks: use .venv/bin/atomspark "
            "(created by tools/setup.sh)"
        )
