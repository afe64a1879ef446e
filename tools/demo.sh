#!/usr/bin/env bash
# The main job on built-in defaults, after setting up the environments: builds a small VN and a
# small RSGN, runs the NumPy references and the event engine, prints sparsity, events and
# energy (Loihi 2 vs GPU), and writes results/demo/summary.json with PNG figures.
set -euo pipefail
cd "$(dirname "$0")/.."
ATOMSPARK_NO_LAVA="${ATOMSPARK_NO_LAVA:-1}" bash tools/setup.sh
exec .venv/bin/atomspark demo --overwrite "$@"  # the main job: rerunning it replaces its results
