# Sourced by .ci/kit and .ci/test: make ./.venv with the kit, its dev tools and the example plugins.
# Idempotent: a second run only re-checks the installs.
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
echo "==> installing rdq-compliance and the example plugins into $VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v '^WARNING: Location' || true
install_args=(-e "$ROOT[dev]")
for plugin in "$ROOT"/plugins_example/*/pyproject.toml; do
    install_args+=(-e "$(dirname "$plugin")")
done
"$VENV/bin/python" -m pip install -q "${install_args[@]}" 2>&1 | grep -v '^WARNING: Location' || true
"$VENV/bin/python" -c 'import rdq_compliance' || { echo "install failed" >&2; exit 1; }
# Keep Python's bytecode caches (in .venv and __pycache__/, both ignored by git) even where the
# machine sets PYTHONDONTWRITEBYTECODE: the test suite starts well over a hundred Python
# processes (xdist workers, full kit runs, the mutant zoo's 111 runs), and without caches each
# one compiles and assertion-rewrites the kit and Hypothesis again (~1 s of CPU each here;
# docs/performance.md).
unset PYTHONDONTWRITEBYTECODE
