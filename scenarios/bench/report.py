"""Regenerate the measured tables of docs/benchmarks_vn.md from committed run folders.

    python -m atomspark.scenarios.bench.report docs/results/bench/fn1d docs/results/bench/bumps2d

For each folder the aggregate is rebuilt from its per-seed cells (cells/*.json and bench.json,
the auditable source), written back as results.json/results.md with the plots, and the doc's
section between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->` is replaced by the
tables, with the date, machine and wall time of the run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from atomspark.scenarios.bench.registry import get_family
from atomspark.scenarios.bench.runner import write_outputs
from atomspark.scenarios.bench.store import MANIFEST, RunStore
from atomspark.scenarios.bench.tables import aggregate, markdown
from atomspark.sim.core import AtomsparkError, atomic_write_text


def rebuild(folder: str | Path) -> dict:
    """Aggregate a run folder's cells again and rewrite its results.json, results.md, plots."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise AtomsparkError(f"{folder}: not a benchmark run folder ({exc})") from exc
    family = get_family(manifest["family"])
    store = RunStore(folder, manifest, resume=True)
    cells = store.load_cells()
    order = _model_order(folder, cells)
    results = aggregate(cells, manifest, order)
    write_outputs(store, results, family)
    return results


def _model_order(folder: Path, cells: list[dict]) -> list[str]:
    """The family's model order as the last results.json recorded it, else VN, baselines,
    trivial in the order they finished."""
    try:
        return list(json.loads((folder / "results.json").read_text())["models"])
    except (OSError, json.JSONDecodeError, KeyError):
        rank = {"vn": 0, "torch": 1}
        ranked = sorted(cells, key=lambda c: (rank.get(c["kind"], 2), c.get("finished_utc", "")))
        return list(dict.fromkeys(c["model"] for c in ranked))


def section(results: dict) -> str:
    """The doc's generated block for one family."""
    n_seeds = len(results["seeds"])
    head = (
        f"Measured {results['finished_utc']} on {results['machine']} (shared with other jobs; "
        f"load average up to {results['loadavg_max']:.1f}), {n_seeds} seed(s), "
        f"{results['wall_s_cells_total'] / 60:.1f} min of wall time over all cells. "
        f"Source: `docs/results/bench/{results['family']}/cells/`."
    )
    body = markdown(results).split("\n", 2)[2].replace("\n## ", "\n#### ").lstrip("# ")
    return head + "\n\n#### " + body.strip() + "\n"


def update_doc(doc: Path, name: str, text: str) -> None:
    src = doc.read_text()
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(src):
        raise AtomsparkError(f"{doc}: no {begin} ... {end} section to fill")
    atomic_write_text(doc, pattern.sub(lambda _: f"{begin}\n{text}{end}", src))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", help="benchmark run folders")
    parser.add_argument("--doc", default="docs/benchmarks_vn.md")
    args = parser.parse_args(argv)
    try:
        for folder in args.folders:
            results = rebuild(folder)
            update_doc(Path(args.doc), results["family"], section(results))
            print(f"[bench report] {results['family']}: {args.doc} updated from {folder}")
    except AtomsparkError as exc:
        print(f"bench report: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
