"""Brian2's twin without the per-step clock() read (benchmarks/peer_brian2.py): the read moves
after the loop, nothing else changes, and a template without it is refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from peer_brian2 import LOOP_END, STEP_CLOCK, drop_step_clock  # noqa: E402

LOOP = (
    "    while(clock && clock->running() && !Network::_globally_stopped)\n    {\n"
    "        t = clock->t[0];\n        step();\n\n" + STEP_CLOCK + "\n    }\n" + LOOP_END
    + "    _last_run_time = elapsed_realtime;\n"
)  # fmt: skip


def test_the_clock_read_moves_after_the_loop():
    out = drop_step_clock(LOOP)
    body_end = out.index("    }\n")
    assert "std::clock" not in out[:body_end]  # the loop body reads no clock
    assert out[body_end:].index(STEP_CLOCK) < out[body_end:].index(LOOP_END)  # read once after
    assert out.replace(STEP_CLOCK, "") == LOOP.replace(STEP_CLOCK, "")  # nothing else changed


def test_a_template_without_the_per_step_read_is_refused():
    with pytest.raises(RuntimeError, match="per-step std::clock"):
        drop_step_clock(LOOP.replace(STEP_CLOCK, ""))
