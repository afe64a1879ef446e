"""The shipped configs (TOML files in this folder) and how a name finds one."""

from __future__ import annotations

import os
from pathlib import Path

from atomspark.sim.core import AtomsparkError
from atomspark.sim.user_files import require_regular_file

CONFIG_DIR = Path(__file__).parent


def builtin_config(name_or_path: str) -> str:
    """A TOML path, or the name of a built-in config (scenarios/configs/<name>.toml)."""
    if Path(name_or_path).is_file():
        return name_or_path
    if Path(name_or_path).is_dir():
        raise AtomsparkError(f"config {name_or_path}: is a folder; give a TOML file")
    if os.path.lexists(name_or_path):  # a pipe, device or dangling link: say so, never open it
        require_regular_file(name_or_path, "config")
    builtin = CONFIG_DIR / f"{name_or_path}.toml"
    if builtin.is_file():
        return str(builtin)
    names = sorted(p.stem for p in builtin.parent.glob("*.toml"))
    raise AtomsparkError(
        f"config {name_or_path!r}: no such file and not a built-in ({', '.join(names)})"
    )


def builtin_config_names() -> list[str]:
    """Names of the shipped training configs (scenarios/configs/*.toml)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))
