"""Rerun the probe classes of issue 42 (the tests that craft hostile files and careless runs) and
record each class's outcome beside what the same probes did before round 4.

    python benchmarks/security_probes.py [--out docs/results/security]

Runs pytest once over the probe test files (junit XML), maps every test case to its class and
writes probes.json: per class, the outcome before (as issue 42 recorded it on main before the
fixes) and the test cases run now with their outcome, the commit, the date and the load
average. benchmarks/security_table.py renders the table in docs/security.md from it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import harness

REPO = Path(__file__).resolve().parent.parent
FILES = (
    "tests/test_no_code_from_data.py",
    "tests/test_untrusted_models.py",
    "tests/test_untrusted_netx.py",
    "tests/test_untrusted_bundles.py",
    "tests/test_probe_run_files.py",
    "tests/test_deep_networks.py",
)
# (class, what issue 42 recorded before, [(test file stem, test name prefix)]): first match wins.
CLASSES = (
    ("sweep .partial resumes",
     "a planted cells/<id>.partial/checkpoint.pt ran code on the sweep worker",
     [("test_no_code_from_data", "test_a_sweep_never_resumes")]),
    ("checkpoint pickles",
     "a checkpoint.pt whose pickle calls os.system ran it, with or without a valid digest; a "
     "real checkpoint with a planted object resumed (exit 0)",
     [("test_no_code_from_data", "")]),
    ("bounded .npy/.npz loads",
     "a 329-byte .npy claiming (10^9, 12): 25-line traceback; n_layers 10^9: 46 s and 5.5 GB; a "
     "4 GB deflated extra member read whole",
     [("test_untrusted_models", "test_npy_loader")]),
    ("out-of-range model indices and metadata",
     "a negative graph index: segmentation fault (exit 139); an index equal to n_nodes: "
     "IndexError traceback; dtype \"object\" accepted (18 events instead of 547)",
     [("test_untrusted_models", "")]),
    ("netx external storage, links, huge declarations, malformed fields",
     "external storage read a system file, an ExternalLink was followed, an 8 KB file drove "
     "memory to 7.45 GiB, malformed fields gave tracebacks, a wrong-shape weight was reshaped",
     [("test_untrusted_netx", "")]),
    ("netx import time against depth",
     "a chain of 20 layers imported in 64 s, 40 layers over 250 s, 100 layers not in 100 s",
     [("test_deep_networks", "")]),
    ("Lava bundles",
     "refusals were 24-line tracebacks; a population name climbing out with dot-dot wrote outside the temporary "
     "folder; an out-of-bounds connection index segfaulted the reference run",
     [("test_untrusted_bundles", "")]),
    ("refused --out",
     "a refused --out had already deleted the user's .notes.tmp",
     [("test_probe_run_files", "test_a_refused_out")]),
    ("one writer per run folder",
     "two train runs into one --out both exited 0 with their metrics interleaved; two profile "
     "runs: a FileNotFoundError traceback or a silent overwrite",
     [("test_probe_run_files", "test_a_busy_folder")]),
    ("partial runs, full disk, failed runs",
     "a full disk gave a 30-line ENOSPC traceback and the partial run then looked finished; a "
     "torn metrics.jsonl crashed --resume",
     [("test_probe_run_files", "test_a_killed"), ("test_probe_run_files", "test_resume"),
      ("test_probe_run_files", "test_a_full_disk"), ("test_probe_run_files", "test_after_a_full"),
      ("test_probe_run_files", "test_a_run_that_errors")]),
    ("user-given paths and configs",
     "--hardware naming a FIFO hung; JSON nested 10^5 deep: RecursionError; non-UTF-8 JSON and "
     "compare --data with objects: tracebacks",
     [("test_probe_run_files", "")]),
)  # fmt: skip


def classify(stem: str, name: str) -> str:
    for cls, _, patterns in CLASSES:
        if any(stem == s and name.startswith(prefix) for s, prefix in patterns):
            return cls
    raise KeyError(f"{stem}::{name} is in no probe class")


def outcomes(junit: Path) -> list[dict]:
    """(file stem, test name, outcome) of every test case in a junit XML report."""
    cases = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        stem = case.get("classname", "").split(".")[-1]
        kinds = {child.tag for child in case}
        outcome = ("failed" if kinds & {"failure", "error"} else
                   "skipped" if "skipped" in kinds else "passed")  # fmt: skip
        cases.append({"file": stem, "name": case.get("name"), "outcome": outcome})
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/results/security"))
    args = parser.parse_args()
    load = list(os.getloadavg())
    junit = Path(tempfile.mkdtemp(prefix="atomspark_probes_")) / "probes.xml"
    start = time.time()
    subprocess.run([sys.executable, "-m", "pytest", *FILES, "-q", "-p", "no:cacheprovider",
                    f"--junitxml={junit}"], cwd=REPO, check=False)  # fmt: skip
    cases = outcomes(junit)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    classes = []
    for cls, before, _ in CLASSES:
        mine = [c for c in cases if classify(c["file"], c["name"]) == cls]
        count = {k: sum(c["outcome"] == k for c in mine) for k in ("passed", "failed", "skipped")}
        classes.append({"class": cls, "before": before, **count,
                        "cases": [f"{c['file']}::{c['name']}: {c['outcome']}" for c in mine]})  # fmt: skip
    result = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": commit,
        "load_before": load,
        "seconds": round(time.time() - start),
        "before_source": "issue 42: the probes as run on main before round 4",
        "classes": classes,
    }
    harness.write_result(args.out, "probes", result)


if __name__ == "__main__":
    main()
