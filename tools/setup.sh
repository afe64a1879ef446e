#!/usr/bin/env bash
# Create (or refresh) atomspark's two environments in the repository:
#   .venv       Python 3.11+: atomspark, PyTorch (CPU wheel here, CUDA where present), Brian2, test tools
#   .venv-lava  Python 3.10:  atomspark, lava-nc 0.10.0 (its pins: numpy<2, networkx<=2.8.7)
# Each is rebuilt only when pyproject.toml changes. Set ATOMSPARK_NO_LAVA=1 to skip the Lava env.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp_of() { sha256sum pyproject.toml tools/setup.sh | sha256sum | cut -c1-16; }
want=$(stamp_of)

find_python() {  # find_python 3.11 -> path of an interpreter of that minor version, or nothing
    local ver=$1 cand
    for cand in "python$ver" "$(command -v pyenv >/dev/null && pyenv root)/versions/$ver"*/bin/"python$ver" \
                "/usr/bin/python$ver" "/usr/local/bin/python$ver"; do
        [ -n "$cand" ] || continue
        if "$cand" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$ver'.split('.')))" \
            >/dev/null 2>&1; then command -v "$cand" || echo "$cand"; return 0; fi
    done
    return 1
}

make_env() {  # make_env DIR PYTHON PIP-ARGS...
    local dir=$1 py=$2; shift 2
    if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ]; then return 0; fi
    echo "[setup] creating $dir with $("$py" --version 2>&1)"
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --upgrade pip
    "$dir/bin/python" -m pip install -q "$@"
    echo "$want" > "$dir/.stamp"
}

py311=$(find_python 3.11 || find_python 3.12 || true)
if [ -z "$py311" ]; then echo "[setup] error: Python 3.11 or 3.12 not found; install it (e.g. 'pyenv install 3.11')" >&2; exit 1; fi
# The two environments are built side by side (downloads and unpacking overlap).
# torch==2.13.0 is a local CPU wheel on these machines; elsewhere pip fetches the matching build.
make_env .venv "$py311" "torch==2.13.0" -e ".[dev]" &
main_pid=$!
lava_pid=""
if [ "${ATOMSPARK_NO_LAVA:-0}" != 1 ]; then
    if py310=$(find_python 3.10); then
        make_env .venv-lava "$py310" -e ".[lava,test]" &
        lava_pid=$!
    else
        echo "[setup] Python 3.10 not found: the Lava environment is not built and Lava tests will not run." >&2
        echo "[setup] Install it (e.g. 'pyenv install 3.10') or set ATOMSPARK_NO_LAVA=1 to silence this." >&2
    fi
fi
wait "$main_pid" || { echo "[setup] error: building .venv failed (see above)" >&2; exit 1; }
if [ -n "$lava_pid" ]; then
    wait "$lava_pid" || { echo "[setup] error: building .venv-lava failed (see above)" >&2; exit 1; }
fi
