"""atomspark.mapping.lava.procs: the Lava Processes and ProcessModels atomspark adds.

Every module here imports Lava, and Lava fixes multiprocessing's start method to "fork" when it is
first imported, which raises once anything else in the process has fixed the default context
(Numba's parallel threading layer does, when the threaded engine has run). On Linux that context
is "fork" already, so it is released here, before any Lava import, for Lava to set again: the
process ends up exactly as Lava wants it."""

from __future__ import annotations

import multiprocessing
import sys

_LAVA_MP = "lava.magma.runtime.message_infrastructure.multiprocessing"


def _release_fork_context_for_lava() -> None:
    default = multiprocessing.context._default_context
    chosen = default._actual_context
    if _LAVA_MP not in sys.modules and chosen is not None and chosen.get_start_method() == "fork":
        default._actual_context = None


_release_fork_context_for_lava()
