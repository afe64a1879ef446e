#!/usr/bin/env bash
# The whole test suite, in both environments, after setting them up:
#   .venv       (Python 3.11, torch, Brian2): every test except those that need Lava, on two
#               pytest-xdist workers (one test file per worker at a time)
#   .venv-lava  (Python 3.10, lava-nc 0.10.0): the Lava tests, then a few of the simulator's
#               tests (storage, LIF, engine runs) again under Lava's pins (numpy 1.26, networkx 2.8)
# The two runs go side by side; ruff first.
# Extra arguments go to both pytest runs (e.g. -k settle, -x).
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$PWD/.numba_cache}"
status=0

echo "== lint (ruff) =="
.venv/bin/ruff check . && .venv/bin/ruff format --check . || status=1

run_pytest() {  # run_pytest ENV-DIR NAME ARGS...
    local dir=$1 name=$2; shift 2
    echo "== tests in $name ($("$dir/bin/python" --version)) =="
    ATOMSPARK_ENV_NAME=$name "$dir/bin/python" -m pytest "$@"
    local rc=$?
    if [ $rc -eq 5 ]; then echo "error: no tests were collected in $name" >&2; rc=1; fi
    [ $rc -eq 0 ] || status=1
}

# The two environments run side by side (the Lava run beside the two workers); the Lava run's output
# is kept in a file and printed after the first run's, so the two do not interleave.
lava_log=""
if [ -x .venv-lava/bin/python ]; then
    lava_log=$(mktemp)
    (run_pytest .venv-lava "py310-lava" -m "lava and not slow" "$@"
     run_pytest .venv-lava "py310-lava, the simulator under Lava's pins" \
        -m "not torch and not slow and not lava" tests/test_sim_storage.py tests/test_sim_lif.py \
        tests/test_engine_runs.py "$@"
     echo "status=$status") >"$lava_log" 2>&1 &
    lava_pid=$!
else
    echo "warning: .venv-lava missing (no Python 3.10): Lava tests did NOT run" >&2
    [ "${ATOMSPARK_NO_LAVA:-0}" = 1 ] || status=1
fi
run_pytest .venv "py311-torch" -m "not lava" -n 2 --dist loadfile "$@"
if [ -n "$lava_log" ]; then
    wait "$lava_pid"
    cat "$lava_log"
    grep -q "^status=0$" "$lava_log" || status=1
    rm -f "$lava_log"
fi
[ $status -eq 0 ] && echo "ALL TEST RUNS PASSED" || echo "SOME TEST RUNS FAILED"
exit $status
