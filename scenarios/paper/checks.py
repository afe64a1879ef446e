"""Which committed cells the paper tables may use: a cell counts once it is complete (marked so,
with every epoch of its config) and was run under its grid's current config (compared as the
sweep compares them: the identity less options added later at their neutral values). The rest
are listed in the doc as incomplete or stale, never tabulated."""

from __future__ import annotations

from functools import cache

from atomspark.scenarios.paper.grid import GRIDS, cells


@cache
def grid_configs() -> dict[tuple[str, str], dict]:
    """{(grid, cell name): the cell's complete config} for every cell of every grid."""
    return {(grid, name): cell.params for grid in GRIDS for name, _, cell in cells(grid)}


def is_complete(summary: dict) -> bool:
    """Marked complete and holding one validation row per configured epoch."""
    cfg = summary.get("config") or {}
    if not isinstance(cfg.get("epochs"), int):  # deterministic results (the floor): no epochs
        return True
    return summary.get("complete") is True and len(summary.get("epochs", [])) == cfg["epochs"]


def is_stale(key: tuple[str, str], summary: dict) -> bool:
    """A grid cell whose committed config differs from the grid's config of that cell."""
    from atomspark.networks.torch_path.config import identity_settings

    want = grid_configs().get(key)
    if want is None or not isinstance(summary.get("config", {}).get("epochs"), int):
        return False
    return identity_settings(summary["config"]) != identity_settings(want)


def split_results(results: dict) -> tuple[dict, list[str], list[str]]:
    """(usable results, incomplete cells, stale cells), the cells as "grid/name"."""
    usable, incomplete, stale = {}, [], []
    for key, summary in results.items():
        if not is_complete(summary):
            incomplete.append("/".join(key))
        elif is_stale(key, summary):
            stale.append("/".join(key))
        else:
            usable[key] = summary
    return usable, sorted(incomplete), sorted(stale)
