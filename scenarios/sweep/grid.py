"""Sweep grid files: parse a GRID.toml, check it, expand it into cells.

A grid names the command kind, a base and the axes to vary; the cells are the Cartesian product
of the variants, the axes and the seeds. Format (every table optional except what the kind
needs; dotted keys such as "optimizer.lr" and nested tables such as [set.optimizer] are the same):

    kind = "train"                 # train | bench | profile | compare | import
    base = "rsgn-sequence"         # train: a built-in config or a TOML file (relative to the grid)
                                   # bench: the benchmark family; profile/compare/import: not used
    seeds = [0, 1, 2]              # an axis over the kind's seed (train: the config's `seed`)

    [set]                          # fixed settings for every cell
    epochs = 1
    "data.n" = 120

    [axes]                         # each key a non-empty list of values; one axis each
    "optimizer.lr" = [1e-3, 3e-3]
    "model.mode" = ["published", "sparse"]

    [[variants]]                   # named alternatives (model kinds, configurations), one more
    name = "published"             # axis: each may bring its own base and settings
    base = "rsgn-sequence"
    [variants.set]
    "model.mode" = "published"

Keys are checked against the kind's options before anything runs (unknown keys and wrong
types are named with where they appear). Each cell's identity is a hash of its complete
settings (less the keys a kind declares identity-neutral: options added later, at the value that
behaves as before), so a folder's finished cells are recognised on a rerun. A grid's canonical form (the
file as parsed plus the contents of every base config it names) is stored in the sweep folder;
a different grid in the same folder is refused with a list of what differs.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from atomspark.sim.core import AtomsparkError

GRID_KEYS = ("kind", "base", "seeds", "set", "axes", "variants")
VARIANT_KEYS = ("name", "base", "set")
SEED_AXIS = "seed"


@dataclass(frozen=True)
class Cell:
    """One run of the grid: `labels` are the values that vary (variant, axes, seed), `params`
    the kind's complete settings, `id` a readable folder name ending in a hash of `params`."""

    id: str
    labels: dict
    params: dict

    @property
    def group(self) -> str:
        """The cell's group in the report: its labels without the seed."""
        rest = {k: v for k, v in self.labels.items() if k != SEED_AXIS}
        return ", ".join(f"{k}={_show(v)}" for k, v in rest.items()) or "all"


@dataclass
class Grid:
    """A parsed grid: kind, named variants (each base + settings), axes and seeds."""

    kind: str
    variants: list[dict]  # each {"name", "base", "base_content", "set"}
    axes: dict[str, list]
    seeds: list[int] | None
    source: Path | None = None
    canonical: dict = field(default_factory=dict)

    def cells(
        self,
        build: Callable[[dict, dict], dict],
        identity: Callable[[dict], dict] = lambda settings: settings,
    ) -> list[Cell]:
        """Expand the product variants x axes x seeds; `build(variant, overrides)` returns a
        cell's complete, checked settings, `identity(settings)` what the cell's id hashes."""
        axis_names = list(self.axes)
        seeds = self.seeds if self.seeds is not None else [None]
        cells: list[Cell] = []
        for variant in self.variants:
            for values in itertools.product(*(self.axes[k] for k in axis_names)):
                for seed in seeds:
                    labels: dict = {}
                    if len(self.variants) > 1 or variant["name"] != "base":
                        labels["variant"] = variant["name"]
                    labels.update(zip(axis_names, values))
                    overrides = {**variant["set"], **dict(zip(axis_names, values))}
                    if seed is not None:
                        labels[SEED_AXIS] = seed
                        overrides[SEED_AXIS] = seed
                    try:
                        params = build(variant, overrides)
                    except AtomsparkError as exc:
                        where = ", ".join(f"{k}={_show(v)}" for k, v in labels.items())
                        raise AtomsparkError(f"grid cell ({where or 'base'}): {exc}") from None
                    cells.append(Cell(cell_id(labels, identity(params)), labels, params))
        ids = [c.id for c in cells]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise AtomsparkError(
                f"grid: two cells have the same settings ({dup}); remove the repeat"
            )
        return cells


def _show(value) -> str:
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def cell_id(labels: dict, params: dict) -> str:
    """A folder name: the varying values (sanitised, shortened) and 10 hex digits of a hash of the
    complete settings (so two different cells never share a folder)."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
    text = "_".join(f"{k.rsplit('.', 1)[-1]}={_show(v)}" for k, v in labels.items())
    text = re.sub(r"[^A-Za-z0-9.=+-]+", "-", text).strip("-")[:80]
    return f"{text}_{digest}" if text else digest


def flatten(table: dict, prefix: str = "") -> dict:
    """{"a": {"b": 1}, "c.d": 2} -> {"a.b": 1, "c.d": 2} (lists are values, not tables)."""
    flat: dict = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def set_dotted(table: dict, key: str, value, what: str = "grid key") -> None:
    """table["a"]["b"] = value for key "a.b" (creating the inner tables); `what` names the key's
    origin in the error."""
    *path, last = key.split(".")
    for part in path:
        inner = table.setdefault(part, {})
        if not isinstance(inner, dict):
            raise AtomsparkError(f"{what} {key!r}: {part!r} is a value, not a table")
        table = inner
    table[last] = value


def apply_overrides(base: dict, overrides: dict, what: str = "grid key") -> dict:
    """A deep copy of `base` with the dotted-key `overrides` set."""
    out = copy.deepcopy(base)
    for key, value in overrides.items():
        set_dotted(out, key, value, what)
    return out


def read_toml(path: Path, what: str) -> dict:
    """Parse a TOML file, naming it in the one-line error."""
    from atomspark.networks.torch_path.config import read_toml_file

    return read_toml_file(path, what)


def _require_table(where: str, value) -> dict:
    if not isinstance(value, dict):
        raise AtomsparkError(f"grid {where}: expected a table, got {type(value).__name__}")
    return value


def parse_grid(
    raw: dict,
    kinds: tuple[str, ...],
    resolve_base: Callable[[str | None, str], tuple[str | None, dict]],
    source: Path | None = None,
) -> Grid:
    """Check a grid table's shape (not yet the kind's keys) and resolve its bases.

    `resolve_base(base, kind)` returns (a canonical base name, the base's settings table)."""
    unknown = sorted(set(raw) - set(GRID_KEYS))
    if unknown:
        raise AtomsparkError(f"grid key {unknown[0]!r}: unknown (allowed: {', '.join(GRID_KEYS)})")
    kind = raw.get("kind")
    if kind not in kinds:
        raise AtomsparkError(f"grid key 'kind': must be one of {', '.join(kinds)}, got {kind!r}")
    seeds = _checked_seeds(raw.get("seeds"))
    fixed = flatten(_require_table("[set]", raw.get("set", {})))
    axes = _checked_axes(flatten(_require_table("[axes]", raw.get("axes", {}))))
    both = sorted(set(fixed) & set(axes))
    if both:
        raise AtomsparkError(f"grid key {both[0]!r}: both in [set] and in [axes]; keep one")
    variants = _checked_variants(raw, kind, fixed, axes, resolve_base)
    empty = [k for k, vals in axes.items() if not vals]
    if empty or seeds == []:
        what = f"axis {empty[0]!r}" if empty else "`seeds`"
        raise AtomsparkError(f"grid has 0 cells: {what} is an empty list")
    canonical = {"kind": kind, "seeds": seeds, "axes": axes, "variants": variants}
    canonical = json.loads(json.dumps(canonical, sort_keys=True))
    return Grid(kind, variants, axes, seeds, source, canonical)


def _checked_seeds(seeds) -> list[int] | None:
    """The top-level seed list: distinct integers, or None (the kind's default)."""
    if seeds is None:
        return None
    if not isinstance(seeds, list) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in seeds
    ):
        raise AtomsparkError(f"grid key 'seeds': expected a list of integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise AtomsparkError(f"grid key 'seeds': repeats a seed ({seeds})")
    return seeds


def _checked_axes(axes: dict) -> dict:
    """Each axis a list of distinct values; the seed is not an axis."""
    for key, values in axes.items():
        if not isinstance(values, list):
            raise AtomsparkError(
                f"grid axis {key!r}: expected a list of values, got {type(values).__name__} "
                f"{values!r} (a single value belongs in [set])"
            )
        canon = [json.dumps(v, sort_keys=True) for v in values]
        if len(set(canon)) != len(canon):
            raise AtomsparkError(f"grid axis {key!r}: repeats a value ({values})")
        if key == SEED_AXIS:
            raise AtomsparkError("grid axis 'seed': use the top-level `seeds = [...]` list")
    return axes


def _checked_variants(raw: dict, kind: str, fixed: dict, axes: dict, resolve_base) -> list[dict]:
    """The variants (one named 'base' when none is given), each with its base resolved and
    the grid's [set] under its own."""
    raw_variants = raw.get("variants")
    if raw_variants is None:
        raw_variants = [{"name": "base"}]
    if not isinstance(raw_variants, list) or not raw_variants:
        raise AtomsparkError("grid key 'variants': expected a non-empty array of tables")
    variants = []
    for i, v in enumerate(raw_variants):
        v = _require_table(f"variants[{i}]", v)
        bad = sorted(set(v) - set(VARIANT_KEYS))
        if bad:
            raise AtomsparkError(
                f"grid variants[{i}] key {bad[0]!r}: unknown (allowed: {', '.join(VARIANT_KEYS)})"
            )
        name = v.get("name")
        if not isinstance(name, str) or not name:
            raise AtomsparkError(f"grid variants[{i}]: needs a `name` (a non-empty string)")
        vset = flatten(_require_table(f"variants[{name}].set", v.get("set", {})))
        clash = sorted(set(vset) & set(axes))
        if clash:
            raise AtomsparkError(
                f"grid variants[{name}].set key {clash[0]!r}: also an axis; keep one"
            )
        base_name, base_content = resolve_base(v.get("base", raw.get("base")), kind)
        variants.append(
            {"name": name, "base": base_name, "base_content": base_content,
             "set": {**fixed, **vset}}
        )  # fmt: skip
    names = [v["name"] for v in variants]
    if len(set(names)) != len(names):
        raise AtomsparkError(f"grid key 'variants': repeats a name ({names})")
    return variants


def grid_differences(old: dict, new: dict, limit: int = 4) -> list[str]:
    """What differs between two canonical grids, one short phrase per differing key."""
    a, b = _flat_any(old), _flat_any(new)
    lines = []
    for key in sorted(set(a) | set(b)):
        if a.get(key, "<absent>") != b.get(key, "<absent>"):
            lines.append(
                f"{key}: {_clip(b.get(key, '<absent>'))} here, {_clip(a.get(key, '<absent>'))} "
                "in the folder"
            )
    if len(lines) > limit:
        lines = lines[:limit] + [f"and {len(lines) - limit} more"]
    return lines


def _flat_any(value, prefix: str = "") -> dict:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(_flat_any(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = {}
        for i, v in enumerate(value):
            tag = v.get("name", i) if isinstance(v, dict) else i
            out.update(_flat_any(v, f"{prefix}[{tag}]"))
        return out
    return {prefix: json.dumps(value, sort_keys=True)}


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
