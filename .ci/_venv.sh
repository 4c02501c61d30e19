# Sourced by .ci/kit and .ci/test: make ./.venv with the kit, its dev tools and the example plugins.
# Idempotent: a second run does no pip work unless a pyproject.toml (or Python) changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "rdq-compliance needs Python >= 3.11 (found: $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
    exit 2
fi
VENV="${RDQ_VENV:-$ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV"
    "$PY" -m venv "$VENV"
fi
# The installs are skipped when nothing they depend on changed since the last one: a stamp in the
# venv holds a hash of the clone's path, every pyproject.toml installed, this script and the Python version
# (pip's own "already satisfied" check costs ~10 s here before every run). Editable installs pick
# up source changes by themselves; a new dependency changes a pyproject.toml and so the hash.
STAMP="$VENV/.rdq-install-stamp"
stamp_inputs=("$ROOT/pyproject.toml" "$ROOT"/plugins_example/*/pyproject.toml "${BASH_SOURCE[0]}")
want="$( { echo "$ROOT"; "$VENV/bin/python" -VV; cat "${stamp_inputs[@]}"; } | "$VENV/bin/python" -c \
    'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"
if [ "${RDQ_REINSTALL:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
        && "$VENV/bin/python" -c 'import rdq_compliance' 2>/dev/null; then
    :  # up to date: no pip work (RDQ_REINSTALL=1 forces the installs)
else
    rm -f "$STAMP"
    echo "==> installing rdq-compliance and the example plugins into $VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
    install_args=(-e "$ROOT[dev]")
    for plugin in "$ROOT"/plugins_example/*/pyproject.toml; do
        install_args+=(-e "$(dirname "$plugin")")
    done
    "$VENV/bin/python" -m pip install -q "${install_args[@]}" 2>&1 | grep -v '^WARNING: Location' || true
    "$VENV/bin/python" -c 'import rdq_compliance' || { echo "install failed" >&2; exit 1; }
    echo "$want" > "$STAMP"
fi
# Keep Python's bytecode caches (in .venv and __pycache__/, both ignored by git) even where the
# machine sets PYTHONDONTWRITEBYTECODE: the test suite starts well over a hundred Python
# processes (xdist workers, full kit runs, the mutant zoo's 111 runs), and without caches each
# one compiles and assertion-rewrites the kit and Hypothesis again (~1 s of CPU each here;
# docs/performance.md).
unset PYTHONDONTWRITEBYTECODE
