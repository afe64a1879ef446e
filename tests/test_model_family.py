"""The model-family registry (networks/model_family.py): every layer above it asks the registry,
so no code branches on a family's name, and an unknown family is one clear error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from atomspark.networks.families import family_named, family_of_config, registered_families
from atomspark.networks.model_family import ModelFamily, register_family
from atomspark.sim.core import AtomsparkError

ROOT = Path(__file__).resolve().parents[1]
# where families are declared (their names appear there as declarations, not as branches)
DECLARATIONS = {"networks/model_family.py"}
DECLARATION_DIRS = ("networks/families/",)
# the training config's schema modules: which keys each task's sections take and what they cost
# (the task is a schema name there, not a model family)
SCHEMA = ("networks/torch_path/config",)


def family_names() -> set[str]:
    """Every registered family's name and task."""
    return {f.name for f in registered_families()} | {f.task for f in registered_families()}


def branches_on_family_names(text: str, names: set[str]) -> list[str]:
    """Lines that compare with a family's name or task (==, !=, `in (...)`), or that dispatch on
    `hasattr(module, "config")` (how baselines used to be told from the RSGN)."""
    quoted = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    literal = rf"[\"'](?:{quoted})[\"']"
    patterns = [
        rf"(?:==|!=)\s*{literal}",
        rf"{literal}\s*(?:==|!=)",
        rf"\bin\s*[\(\[\{{][^\)\]\}}]*{literal}",
        r"hasattr\(\s*\w+\s*,\s*[\"']config[\"']\s*\)",
    ]
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0]
        if any(re.search(p, code) for p in patterns):
            found.append(f"{number}: {line.strip()}")
    return found


def test_no_branch_on_a_family_name_above_the_registry():
    names = family_names()
    offenders = []
    # mapping/ works on unit models, whose names ("rsgn", "vn") are another namespace; the
    # unit-model registry holds it (docs/architecture.md)
    for layer in ("networks", "scenarios"):
        for path in sorted((ROOT / layer).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in DECLARATIONS or rel.startswith(DECLARATION_DIRS + SCHEMA):
                continue
            offenders += [
                f"{rel}:{hit}" for hit in branches_on_family_names(path.read_text(), names)
            ]
    assert offenders == [], "ask the family registry instead:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    "line",
    [
        'if kind == "rsgn":',
        "    if loaded.kind != 'vn':",
        'x = 1 if "vn" == kind else 2',
        'if task in ("rsgn-sequence", "other"):',
        'if not hasattr(module, "config"):',
    ],
)
def test_the_guard_sees_a_branch(line):
    assert branches_on_family_names(line, family_names()) != []


def test_the_guard_passes_registrations_and_other_kinds():
    text = 'register_compare_side("vn", side)\nif layer.kind == "conv":\nname = "rsgn"  # a label'
    assert branches_on_family_names(text, family_names()) == []


def test_builtin_families_are_registered():
    names = {f.name for f in registered_families()}
    assert {"vn", "rsgn", "transformer", "mean-linear"} <= names
    assert family_named("vn").metric == "dictionary recovery"
    assert family_named("rsgn").compare_metric == ("accuracy", "accuracy")


def test_baseline_family_names_are_the_torch_baselines():
    pytest.importorskip("torch")
    from atomspark.networks.families.baselines import NAMES
    from atomspark.networks.torch_path.baselines import KINDS

    assert NAMES == KINDS


def test_a_config_finds_its_family():
    assert family_of_config({"task": "vn-dictionary", "model": {"kind": "rsgn"}}).name == "vn"
    assert family_of_config({"task": "rsgn-sequence", "model": {"kind": "lstm"}}).name == "lstm"
    with pytest.raises(AtomsparkError, match="model.kind"):
        family_of_config({"task": "rsgn-sequence", "model": {"kind": "nope"}})


def test_unknown_family_and_duplicate_are_one_line_errors():
    with pytest.raises(AtomsparkError, match="not a registered model family"):
        family_named("nope")
    with pytest.raises(AtomsparkError, match="exists"):
        register_family(ModelFamily("vn", "VN", "vn-dictionary", "x"))
    with pytest.raises(AtomsparkError, match="no trainer"):
        ModelFamily("t", "T", "t", "x").torch_trainer()


def test_torch_path_modules_have_one_job_each():
    """The torch path stays split by job (training loop, one Trainer per family, checkpoints,
    optimiser, metrics log, config schema parts): no module grows past 400 lines."""
    long = {
        p.name: n
        for p in sorted((ROOT / "networks" / "torch_path").glob("*.py"))
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}
