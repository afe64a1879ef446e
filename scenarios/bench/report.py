"""Regenerate docs/benchmarks_vn.md's measured sections from committed benchmark cells.

    python -m atomspark.scenarios.bench.report docs/results/bench/fn1d docs/results/bench/bumps2d
    python -m atomspark.scenarios.bench.report --final-grid docs/results/bench/fn1d

A family folder (docs/results/bench/<family>/) holds the protocol's sweep folders (tune/: every
model's grid on seed 0; seeds/<model>/: the chosen configuration on seeds 1 and 2), each cell's record
in cells/<id>/bench_cell.json. The report gathers every cell under the folder, selects each
model's configuration on the validation split (tables.select), writes results.json, results.md
and the plots into the folder, and replaces the doc's section between
`<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->`. --final-grid writes the second stage's
grids (docs/results/bench/grids/<family>-seeds/<model>.toml) from the tuning cells.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

from atomspark.scenarios.bench.registry import get_family
from atomspark.scenarios.bench.store import MANIFEST
from atomspark.scenarios.bench.summary import summary_lines, verdicts
from atomspark.scenarios.bench.tables import aggregate, markdown, select
from atomspark.sim.core import AtomsparkError, atomic_write_text

PROTOCOL_SEEDS = [0, 1, 2]
PRINCIPAL_FILE = "principal.json"
KIND_WORDS = {"torch": "a network", "classical": "a classical peer", "trivial": "a floor"}
NOT_RUN = "Not run under the protocol yet"
GRIDS = Path("docs/results/bench/grids")
REPO = Path(__file__).resolve().parents[2]


def load_cells(folder: Path) -> list[dict]:
    """Every cell under a family folder: sweep cells (cells/<id>/bench_cell.json, one per model)
    and run-folder cells (cells/<model>-seed<k>.json); cells still running are skipped."""
    cells = []
    for path in sorted(folder.rglob("bench_cell.json")):
        if any(part.endswith((".partial", ".sweep")) for part in path.parts):
            continue  # a cell a sweep is still running
        for cell in json.loads(path.read_text()).values():
            cell["source"] = str(path.parent.relative_to(folder))
            cells.append(cell)
    for path in sorted(folder.glob("cells/*.json")):
        cells.append(json.loads(path.read_text()))
    return cells


def manifest_of(folder: Path) -> dict:
    """The run folder's bench.json, or for a protocol folder the family's full-mode facts."""
    path = folder / MANIFEST
    if path.exists():
        return json.loads(path.read_text())
    family = get_family(folder.name)
    return {
        "family": family.name,
        "description": family.description,
        "quick": False,
        "sizes": asdict(family.sizes(False)),
        "splits": list(family.splits),
        "seeds": PROTOCOL_SEEDS,
        "models": model_names(family),
    }


def model_names(family) -> list[str]:
    """The family's rows, in its order (from its quick-size data: only the names are used)."""
    from atomspark.scenarios.bench.validation import prepare_data

    data = prepare_data(family, family.sizes(True), 0)
    return list(family.models(family.sizes(True), data))


def principal_facts(folder: Path, seeds: list[int], compute: bool = True) -> dict[int, dict]:
    """Per seed, the principal residuals of the family's full-size data
    (validation.principal_facts), kept in <folder>/principal.json; seeds missing from the file
    are computed (the data are deterministic in the seed) unless compute is False."""
    path = Path(folder) / PRINCIPAL_FILE
    facts = {int(k): v for k, v in json.loads(path.read_text()).items()} if path.exists() else {}
    missing = [s for s in seeds if s not in facts]
    if missing and compute:
        from atomspark.scenarios.bench.validation import prepare_data
        from atomspark.scenarios.bench.validation import principal_facts as facts_of

        family = get_family(manifest_of(Path(folder))["family"])
        for seed in missing:
            facts[seed] = facts_of(prepare_data(family, family.sizes(False), seed))
        atomic_write_text(path, json.dumps({str(k): facts[k] for k in sorted(facts)}, indent=1))
    return {s: facts[s] for s in seeds if s in facts}


def rebuild(folder: str | Path) -> dict:
    """Aggregate a folder's cells and rewrite its results.json, results.md and plots."""
    from atomspark.scenarios.bench.runner import write_outputs

    folder = Path(folder)
    if not folder.is_dir():
        raise AtomsparkError(f"{folder}: no such benchmark folder")
    manifest = manifest_of(folder)
    cells = load_cells(folder)
    if not cells:
        raise AtomsparkError(f"{folder}: holds no benchmark cells")
    principal = principal_facts(folder, sorted({c["seed"] for c in cells}))
    results = aggregate(cells, manifest, manifest.get("models") or [], principal)
    write_outputs(folder, results, get_family(manifest["family"]), cells)
    return results


def section(results: dict) -> str:
    """The doc's generated block for one family."""
    head = (
        f"Measured up to {results['finished_utc']} on this project's shared 2-core CPU machine "
        f"(load average up to {results['loadavg_max']:.1f}): {results['n_cells']} cells, "
        f"{results['wall_s_cells_total'] / 60:.1f} min of wall time over all of them. Source: "
        f"`docs/results/bench/{results['family']}/` (every cell of the grid, chosen or not)."
    )
    body = markdown(results).split("\n", 2)[2].replace("\n## ", "\n#### ").lstrip("# ")
    summary = "\n".join(summary_lines(results))
    todo_lines = "\n".join(completion_commands(results))
    unrun = unrun_grid_cells(REPO / "docs" / "results" / "bench" / results["family"])
    listed = "; ".join(f"{sub}: {', '.join(map(_short, ids))}" for sub, ids in unrun.items())
    todo = f"\n\nGrid cells not run: {listed}." if listed else ""
    todo += f"\n\nTo run the missing cells:\n\n```bash\n{todo_lines}\n```" if todo_lines else ""
    return f"{head}\n\n{summary}\n\n#### {body.strip()}{todo}\n"


def _short(cell_id: str) -> str:
    """A sweep cell's id without its hash and the 'variant=' prefix."""
    return cell_id.rsplit("_", 1)[0].replace("variant=", "")


def unrun_grid_cells(folder: Path) -> dict[str, list[str]]:
    """Per sweep folder under a family folder (relative path): the ids of its grid's cells that
    have not finished (a grid that was only partly run, e.g. with --only)."""
    from atomspark.scenarios.sweep.run import plan_grid

    out = {}
    for grid in sorted(Path(folder).rglob("grid.toml")):
        done = {p.parent.name for p in grid.parent.glob("cells/*/bench_cell.json")}
        left = [c.id for c in plan_grid(grid).cells if c.id not in done]
        if left:
            out[str(grid.parent.relative_to(folder))] = left
    return out


def completion_commands(results: dict) -> list[str]:
    """The commands that run a family's missing cells: the tune grid for models without cells,
    the seeds stage (grid written from the tuning cells, then swept) for the others."""
    name = results["family"]
    folder, grids = f"docs/results/bench/{name}", str(GRIDS)
    lines = []
    unrun = unrun_grid_cells(REPO / folder)
    for m in results.get("missing_models", []):
        own = f"{name}-{m.lower()}.toml"  # a model with a grid of its own (fn1d's Mamba)
        if (REPO / GRIDS / own).exists() and f"{m.lower()}" not in unrun:
            lines.append(f"atomspark sweep {grids}/{own} --out {folder}/{m.lower()} --workers 1")
    for sub in unrun:  # partly run sweep folders (the seeds stages are written below)
        if not sub.startswith("seeds"):
            lines.append(
                f"atomspark sweep {folder}/{sub}/grid.toml --out {folder}/{sub} --workers 1"
            )
    stages: dict[str, list[str]] = {}  # the seeds stage a model's chosen cells are in
    for m, e in results["models"].items():
        if len(e["seeds"]) < len(PROTOCOL_SEEDS):
            stage = next((f for f in e.get("folders", []) if f.startswith("seeds")), "seeds")
            stages.setdefault(stage, []).append(m)
    for stage, models in stages.items():
        flag = "" if stage == "seeds" else f" --stage {stage}"
        lines += [
            f"python -m atomspark.scenarios.bench.report --final-grid {folder} "
            f"--models {','.join(models)}{flag}",
            f"for m in {' '.join(models)}; do atomspark sweep {grids}/{name}-{stage}/$m.toml "
            f"--out {folder}/{stage}/$m --workers 1; done",
        ]
    return lines


def status_text(results: dict) -> str:
    """How complete a family's protocol is: rows on every seed, rows not run."""
    models = results["models"]
    done = sum(len(m["seeds"]) >= len(PROTOCOL_SEEDS) for m in models.values())
    if done == 0:
        text = "tuning stage only: every row on seed 0"
    else:
        text = f"{done} of {len(models)} rows on {len(PROTOCOL_SEEDS)} seeds"
        text += ", the others on fewer" if done < len(models) else ""
    if results.get("missing_models"):
        text += "; not run: " + ", ".join(results["missing_models"])
    return text


def verdict_section(all_results: dict[str, dict | None]) -> str:
    """The doc's overall verdict: each family's generated summary (summary.summary_lines) with
    how complete its protocol is; families without cells are named as not run."""
    every = [v for r in all_results.values() if r is not None for v in verdicts(r)]
    counts = {k: sum(v[2] == k for v in every) for k in ("win", "tie", "lose")}
    kinds = {}
    for r in all_results.values():
        for _, _, verdict, peer in verdicts(r) if r is not None else []:
            if verdict != "win":
                kinds.setdefault(verdict, set()).add(r["models"][peer]["kind"])
    lines = [
        f"Over {len(every)} comparisons (family × task × split, both tasks, the families with "
        f"results): layered VN beats every other row in {counts['win']}, ties the best one in "
        f"{counts['tie']} and loses in {counts['lose']}."
        + "".join(
            f" The best row where it {'ties' if k == 'tie' else 'loses'} is "
            f"{_either(sorted(KIND_WORDS[x] for x in kinds[k]))}."
            for k in ("tie", "lose")
            if kinds.get(k)
        ),
        "",
    ]
    for name, results in all_results.items():
        if results is None:
            lines.append(f"- **{name}**: not run under the protocol yet.")
            continue
        lines.append(f"- **{name}** ({status_text(results)}):")
        lines += ["  " + line for line in summary_lines(results) if "Rows not run" not in line]
    return "\n".join(lines) + "\n"


def verdict_headline(all_results: dict[str, dict | None]) -> str:
    """The verdict's count sentence, which the README quotes (between its bench:verdict markers)."""
    return verdict_section(all_results).split("\n", 1)[0] + "\n"


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def family_results(root: Path, compute: bool = False) -> dict[str, dict | None]:
    """Every family's aggregate from its committed cells under root (None: no cells)."""
    from atomspark.scenarios.bench.registry import family_names

    out: dict[str, dict | None] = {}
    for name in family_names():
        folder = Path(root) / name
        cells = load_cells(folder) if folder.is_dir() else []
        if not cells:
            out[name] = None
            continue
        manifest = manifest_of(folder)
        principal = principal_facts(folder, sorted({c["seed"] for c in cells}), compute)
        out[name] = aggregate(cells, manifest, manifest["models"], principal)
    return out


def not_run_section(name: str) -> str:
    """The doc's block for a family with no committed cells: what to run."""
    return (
        f"{NOT_RUN}: no cells are committed for {name}. The grids are "
        f"`docs/results/bench/grids/{name}-tune.toml` and then the generated "
        f"`grids/{name}-seeds/<model>.toml` (see Protocol above).\n"
    )


def update_doc(doc: Path, name: str, text: str) -> None:
    src = doc.read_text()
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(src):
        raise AtomsparkError(f"{doc}: no {begin} ... {end} section to fill")
    atomic_write_text(doc, pattern.sub(lambda _: f"{begin}\n{text}{end}", src))


def final_grid(
    folder: Path, models: list[str] | None = None, grids: Path = GRIDS, stage: str = "seeds"
) -> list[Path]:
    """The second stage: each model's chosen configuration on the seeds it has not run, one grid
    per model (grids/<family>-<stage>/<model>.toml, run into <family>/<stage>/<model>), so a
    model whose tuning is finished can go on while others are still being tuned. A new stage
    name keeps an earlier stage's grid and folder (a sweep folder holds one grid)."""
    folder = Path(folder)
    cells = load_cells(folder)
    if not cells:
        raise AtomsparkError(f"{folder}: holds no tuning cells; run the tune grid first")
    chosen = select(cells)
    unknown = [m for m in models or [] if m not in chosen]
    if unknown:
        raise AtomsparkError(f"model {unknown[0]!r}: no tuning cells (have: {', '.join(chosen)})")
    paths = []
    for model in models or list(chosen):
        settings = _settings_of(folder, chosen[model]["cells"][0])
        path = grids / f"{folder.name}-{stage}" / f"{model}.toml"
        flag = "" if stage == "seeds" else f" --stage {stage}"
        lines = [
            f"# {folder.name}, second stage of the protocol: {model}'s configuration chosen on the",
            "# validation split of seed 0 (written by `python -m atomspark.scenarios.bench.report",
            f"# --final-grid {folder} --models {model}{flag}`), on the remaining seeds. Run:",
            f"#   atomspark sweep {path} --out {folder}/{stage}/{model}",
            'kind = "bench"',
            f'base = "{folder.name}"',
            f"seeds = {PROTOCOL_SEEDS[1:]}",
            "",
            "[set]",
            'device = "cpu"',
            f'model = "{model}"',
            *[f'"sizes.{k}" = {json.dumps(v)}' for k, v in settings.items()],
            "",
        ]
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, "\n".join(lines))
        paths.append(path)
    return paths


def _settings_of(folder: Path, cell: dict) -> dict:
    """The sizes a sweep cell ran with (its cell.json), so the chosen cell can be rerun."""
    path = folder / cell["source"] / "cell.json"
    return json.loads(path.read_text())["params"]["sizes"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", help="benchmark family folders")
    parser.add_argument("--doc", default="docs/benchmarks_vn.md")
    parser.add_argument(
        "--readme", default="README.md", help="also quote the verdict here ('' to skip)"
    )
    parser.add_argument("--final-grid", action="store_true", help="write the seeds stage's grids")
    parser.add_argument("--models", default=None, help="--final-grid: only these models (a,b)")
    parser.add_argument(
        "--stage", default="seeds", help="--final-grid: the stage's name (grid and folder)"
    )
    args = parser.parse_args(argv)
    try:
        for folder in args.folders:
            if args.final_grid:
                models = args.models.split(",") if args.models else None
                for path in final_grid(Path(folder), models, stage=args.stage):
                    print(f"[bench report] wrote {path}")
                continue
            folder = Path(folder)
            if not (folder.is_dir() and load_cells(folder)):
                update_doc(Path(args.doc), folder.name, not_run_section(folder.name))
                print(f"[bench report] {folder.name}: no cells; {args.doc} says so")
                continue
            results = rebuild(folder)
            update_doc(Path(args.doc), results["family"], section(results))
            print(f"[bench report] {results['family']}: {args.doc} updated from {folder}")
        if not args.final_grid:
            root = Path(args.folders[0]).parent
            every = family_results(root)
            update_doc(Path(args.doc), "verdict", verdict_section(every))
            print(f"[bench report] {args.doc}: verdict updated from {root}")
            if args.readme:
                update_doc(Path(args.readme), "verdict", verdict_headline(every))
                print(f"[bench report] {args.readme}: verdict sentence updated")
    except AtomsparkError as exc:
        print(f"bench report: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
