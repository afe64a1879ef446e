"""Shared test set-up: show which environment runs the suite and what it could not run."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections import Counter

import numpy as np
import pytest

_OPTIONAL = ("torch", "lava", "brian2", "sklearn", "nir")


def _available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def pytest_report_header(config):
    have = ", ".join(f"{m}={'yes' if _available(m) else 'no'}" for m in _OPTIONAL)
    env = os.environ.get("ATOMSPARK_ENV_NAME", os.path.basename(sys.prefix))
    return [
        f"atomspark environment: {env} | Python {sys.version.split()[0]} | numpy {np.__version__}",
        f"optional peers: {have}",
    ]


_outcomes: Counter = Counter()


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        for marker in ("lava", "torch", "slow"):
            if marker in report.keywords:
                _outcomes[(marker, report.outcome)] += 1
        _outcomes[("all", report.outcome)] += 1


def pytest_terminal_summary(terminalreporter):
    env = os.environ.get("ATOMSPARK_ENV_NAME", os.path.basename(sys.prefix))
    tr = terminalreporter
    tr.section(f"what ran in {env} (Python {sys.version.split()[0]})")
    for marker in ("all", "lava", "torch", "slow"):
        counts = {o: _outcomes[(marker, o)] for o in ("passed", "failed", "skipped")}
        tr.write_line(
            f"  {marker:6s} passed={counts['passed']} failed={counts['failed']} "
            f"skipped={counts['skipped']}"
        )


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
