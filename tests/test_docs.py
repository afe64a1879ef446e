"""The docs stand alone and cannot drift: configs.md is the schema's own rendering, every key is
described, --help lists every built-in config, and nothing points outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from atomspark.networks.torch_path import config as schema
from atomspark.networks.torch_path.config_doc import builtin_configs, render
from atomspark.scenarios.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]


def test_configs_md_is_generated_from_the_schema():
    committed = (ROOT / "docs" / "configs.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/configs.md is stale: run "
        "`python -m atomspark.networks.torch_path.config_doc > docs/configs.md`"
    )


def test_every_config_key_is_described():
    keys = list(schema._TOP) + [
        f"{s}.{k}" for s, fields in schema._SECTIONS.items() for k in fields
    ]
    assert [k for k in keys if k not in schema.HELP] == []
    assert [k for k in schema.HELP if k not in keys] == []


def _subparser(name: str):
    parser = build_parser()
    action = next(a for a in parser._actions if getattr(a, "choices", None) and name in a.choices)
    return action.choices[name]


def test_help_lists_builtins_and_shows_defaults():
    text = "".join(_subparser("train").format_help().split())  # help may wrap at a hyphen
    for name, _ in builtin_configs():
        assert name in text
    for command in ("demo", "profile", "export", "compare", "train"):
        sub = _subparser(command)
        shown = " ".join(sub.format_help().split())
        for action in sub._actions:
            if action.option_strings and action.default not in (None, False, "==SUPPRESS=="):
                assert f"(default: {action.default})" in shown, (command, action.option_strings)


def test_no_reference_outside_the_repository():
    """Docs and code stand alone: no relative path or Markdown link leaves the repository."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    climbing = re.compile(r"(?:\.\./)+[\w.-]+")
    link = re.compile(r"\]\(([^)#\s]+)")
    offenders = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (".md", ".py", ".toml", ".sh", ".json", ".txt", ".cfg", ""):
            continue
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        targets = climbing.findall(text)
        if path.suffix == ".md":
            targets += [t for t in link.findall(text) if "://" not in t]
        for target in targets:
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(ROOT.resolve()):
                offenders.append(f"{name}: {target}")
    assert offenders == []


REPO_PATH = re.compile(r"`((?:sim|networks|mapping|scenarios|benchmarks|tests|docs)/[^`\s<]*)`")


def _names(path: str) -> bool:
    """`path` names something in the repository: a file, a folder, a glob, or module.attr."""
    if list(ROOT.glob(path)):
        return True
    head, _, _ = path.rpartition(".")  # scenarios/x/y.attr -> scenarios/x/y.py
    return bool(head) and ((ROOT / f"{head}.py").is_file() or (ROOT / head).is_dir())


def test_every_repository_path_in_the_docs_exists():
    """Files move (sim/units/, mapping/lava/, scenarios/{cli,runs,...}/): a backticked repository
    path in README.md or docs/*.md must still name something, unless git ignores it (run output)."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = []
    for doc in docs:
        for path in REPO_PATH.findall(doc.read_text(encoding="utf-8")):
            path = path.rstrip(".,:;)")
            if _names(path):
                continue
            ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0
            if not ignored:
                missing.append(f"{doc.name}: {path}")
    assert missing == []
