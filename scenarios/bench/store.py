"""A benchmark run folder: a manifest, one JSON file per model x seed cell, written atomically.

Layout: out/bench.json (family, mode, sizes), out/cells/<model>-seed<k>.json, then the
aggregates (results.json, results.md, examples.json, *.png) rebuilt from the cells at the end.
A folder that holds results is refused unless resume (finished cells are kept and skipped; the
manifest must match) or overwrite (the run's own files are deleted first, nothing else).
"""

from __future__ import annotations

import json
from pathlib import Path

from atomspark.sim.core import AtomsparkError, atomic_write_text

MANIFEST = "bench.json"
AGGREGATES = ("results.json", "results.md", "examples.json")


class RunStore:
    """The cells of one benchmark run in `out` (see module docstring)."""

    def __init__(
        self, out: str | Path, manifest: dict, resume: bool = False, overwrite: bool = False
    ):
        if resume and overwrite:
            raise AtomsparkError("--resume and --overwrite exclude each other: choose one")
        self.out = Path(out)
        self.cells = self.out / "cells"
        old = self.out / MANIFEST
        if old.exists() or any(self.cells.glob("*.json")):
            if overwrite:
                self._clear()
            elif resume:
                self._check_manifest(old, manifest)
            else:
                raise AtomsparkError(
                    f"{self.out} already holds benchmark results: pass --resume to finish it "
                    "or --overwrite to replace it (or choose another --out)"
                )
        self.cells.mkdir(parents=True, exist_ok=True)
        atomic_write_text(old, json.dumps(manifest, indent=2))

    def _check_manifest(self, path: Path, manifest: dict) -> None:
        if not path.exists():
            return
        try:
            old = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise AtomsparkError(f"{path}: unreadable ({exc}); use --overwrite") from exc
        for key in ("family", "quick", "sizes"):
            if old.get(key) != manifest.get(key):
                raise AtomsparkError(
                    f"{self.out} holds a run with another {key} ({old.get(key)!r}); --resume "
                    "needs the same benchmark and sizes: use --overwrite or another --out"
                )

    def _clear(self) -> None:
        for path in self.cells.glob("*.json"):
            path.unlink()
        for name in (MANIFEST, *AGGREGATES):
            (self.out / name).unlink(missing_ok=True)
        for path in self.out.glob("*.png"):
            path.unlink()

    def path(self, model: str, seed: int) -> Path:
        return self.cells / f"{model}-seed{seed}.json"

    def has(self, model: str, seed: int) -> bool:
        return self.path(model, seed).exists()

    def write(self, model: str, seed: int, cell: dict) -> None:
        atomic_write_text(self.path(model, seed), json.dumps(cell, indent=1))

    def write_text(self, name: str, text: str) -> Path:
        path = self.out / name
        atomic_write_text(path, text)
        return path

    def load_cells(self) -> list[dict]:
        cells = []
        for path in sorted(self.cells.glob("*.json")):
            try:
                cells.append(json.loads(path.read_text()))
            except (OSError, json.JSONDecodeError) as exc:
                raise AtomsparkError(
                    f"{path}: unreadable cell ({exc}); delete it and --resume"
                ) from exc
        return cells
