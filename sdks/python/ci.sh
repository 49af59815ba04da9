#!/usr/bin/env bash
# The Python SDK's checks, as CI runs them: a virtual environment with the pinned dev
# dependencies (requirements-dev.txt, which include websockets, the package's `terminal`
# extra), the package, then the generated-models drift check,
# ruff (lint and format), mypy --strict, and pytest against the real daemon binary.
#
# Usage: SANDBOX_DAEMON_BIN=<path to sandbox-daemon> sdks/python/ci.sh
# The virtual environment is sdks/python/.venv (reused when present), or $SANDBOX_SDK_VENV;
# $PYTHON picks the interpreter that creates it (default python3, 3.10 or newer).
set -euo pipefail

if [ -z "${SANDBOX_DAEMON_BIN:-}" ]; then
  echo "ci.sh: set SANDBOX_DAEMON_BIN to the sandbox-daemon binary (build the daemon first)" >&2
  exit 1
fi
if [ ! -f "$SANDBOX_DAEMON_BIN" ] || [ ! -x "$SANDBOX_DAEMON_BIN" ]; then
  echo "ci.sh: SANDBOX_DAEMON_BIN=$SANDBOX_DAEMON_BIN is not an executable file" >&2
  exit 1
fi
# Absolute, before moving to the SDK's directory.
SANDBOX_DAEMON_BIN="$(cd "$(dirname "$SANDBOX_DAEMON_BIN")" && pwd)/$(basename "$SANDBOX_DAEMON_BIN")"
export SANDBOX_DAEMON_BIN

cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
VENV="${SANDBOX_SDK_VENV:-.venv}"

started=$(date +%s)
timings=()
step() {
  local name="$1"; shift
  printf '\n== %s\n' "$name"
  local t0; t0=$(date +%s)
  "$@"
  timings+=("$(printf '%5ss  %s' "$(( $(date +%s) - t0 ))" "$name")")
}

make_venv() {
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "ci.sh: $PYTHON is older than Python 3.10" >&2
    return 1
  }
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
    echo "reusing $VENV"
  else
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
  fi
}

PY="$VENV/bin/python"
step "virtual environment ($VENV)" make_venv
step "pinned dev dependencies (requirements-dev.txt)" \
  "$PY" -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
# A real (not editable) install: the tests import the built wheel, py.typed and all.
step "the package (wheel, pinned build backend)" \
  "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --force-reinstall .
step "drift check (generated models = spec/openapi.json)" "$PY" scripts/generate.py --check
step "ruff check" "$PY" -m ruff check .
step "ruff format --check" "$PY" -m ruff format --check .
step "mypy --strict (package, tests, scripts)" "$PY" -m mypy
step "pytest (against $SANDBOX_DAEMON_BIN)" "$PY" -m pytest -q

printf '\ntimings:\n'
printf '%s\n' "${timings[@]}"
printf 'python sdk: all checks passed in %ss\n' "$(( $(date +%s) - started ))"
