"""The command line starts fast: `--help` of every verb imports none of the heavy libraries
(PyTorch, Numba, Matplotlib, SciPy, Dask), which each command imports only when it runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "numba", "matplotlib", "scipy", "distributed", "networkx")
VERBS = ["", "demo", "profile", "export", "import", "train", "compare", "map", "sweep", "bench",
         "hardware", "convert-checkpoint"]  # fmt: skip

PROBE = """
import sys
from atomspark.scenarios.cli.main import main
try:
    main([a for a in sys.argv[1:] if a])
except SystemExit:
    pass
print("HEAVY:" + ",".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("verb", VERBS)
def test_help_imports_no_heavy_library(verb):
    code = PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, verb, "--help"], capture_output=True, text=True, timeout=120
    )
    assert "usage: atomspark" in done.stdout, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    assert loaded == "HEAVY:", f"`atomspark {verb} --help` imported {loaded[6:]}"


def test_every_verb_is_probed():
    """A new verb joins VERBS, so its --help is held to the same budget."""
    from atomspark.scenarios.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if getattr(a, "choices", None))
    assert set(sub.choices) == set(VERBS) - {""}


def test_version_is_the_package_version(capsys):
    import re
    from importlib.metadata import version

    from atomspark.scenarios.cli.main import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"atomspark {version('atomspark')}" and re.fullmatch(
        r"atomspark \d+\.\d+\S*", out
    )
