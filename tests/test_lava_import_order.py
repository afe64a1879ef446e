"""Lava imports after something else in the process fixed multiprocessing's start method (Numba's
parallel threading layer asks for it when the threaded engine first runs); before the fix every
Lava export in such a process failed with "context has already been set"."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("lava")
pytestmark = pytest.mark.lava


def test_lava_processes_import_after_the_start_method_was_fixed():
    code = (
        "import multiprocessing as mp; mp.get_start_method();"  # what Numba's threads do first
        "from atomspark.mapping.lava.procs.recorder import Recorder;"
        "print(mp.get_start_method())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert proc.stdout.strip() == "fork"
