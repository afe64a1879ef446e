#!/usr/bin/env bash
# Run the RSGN paper grids (docs/paper_reproduction.md) in order of value, resumably: each sweep
# skips its finished cells and resumes an interrupted one from its checkpoint, so running this
# again after any stop continues where it was (in the same checkout: results/sweeps/ is not
# committed, so a fresh clone recomputes every cell, about half a day on 2 cores). Logs go to
# results/logs/. Afterwards:
#   python -m atomspark.scenarios.paper.grid collect && python -m atomspark.scenarios.paper.tables
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null || exit 1
. .venv/bin/activate
export OMP_NUM_THREADS=1  # one thread per cell; the sweep runs one cell per core (WORKERS=N to change)
mkdir -p results/logs
G=scenarios/configs/grids
run() {  # grid [--only GLOB]
    local grid=$1
    shift
    nice -n 10 atomspark sweep "$G/$grid.toml" ${WORKERS:+--workers "$WORKERS"} "$@" >>"results/logs/$grid.log" 2>&1
}
run rsgn-paper-released-constraints  # the released code's constraints (seed 42); keeps model.npz
run rsgn-paper-released-constraints-seeds43-44  # seeds 43-44 of a released cell that moved
run rsgn-paper-sparse-threshold --only '*k5*'  # resting-subtracted soft threshold, 3 seeds
run rsgn-paper-sparse-threshold --only '*k0*seed=4[34]*'  # its K = 0 control (seed 42's: the activity grid's)
run rsgn-paper-notebook-hebbian      # the notebook's Hebbian reward and step size (seed 42)
run rsgn-paper-notebook-hebbian-seeds43-44  # ... seeds 43-44 of the long-range cell
run rsgn-paper-notebook-hebbian-hierarchical-seeds43-44  # ... and of the hierarchical cell
run rsgn-paper-activity
run rsgn-paper-activity-50-epochs
run rsgn-paper-main-seed42 --only '*hierarchical-transformer*'
run rsgn-paper-main-seed42 --only '*hierarchical-rsgn-hebbian*'
run rsgn-paper-main-seed42 --only '*rsgn*'
run rsgn-paper-notebook-data
run rsgn-paper-ablation
run rsgn-paper-main-seed42 --only '*hierarchical*'
run rsgn-paper-main-seeds43-44 --only '*rsgn*'
run rsgn-paper-main-seeds43-44 --only '*hierarchical*'  # completes the hierarchical table
run rsgn-paper-main-seeds43-44 --only '*long-range-mlp*'
run rsgn-paper-main-seed42  # the long-range baselines: a 3-layer Transformer epoch takes 45-140 s
run rsgn-paper-main-seeds43-44
