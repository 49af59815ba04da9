#!/usr/bin/env bash
# CI of the TypeScript SDK: install from the lockfile, check the generated files against
# the spec, type-check (strict), build, check the inline entry (no import, size), and run
# the tests against the daemon binary named by SANDBOX_DAEMON_BIN. Prints each step's time.
#
#   SANDBOX_DAEMON_BIN=target/debug/sandbox-daemon sdks/typescript/ci.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

if [[ -z "${SANDBOX_DAEMON_BIN:-}" ]]; then
  echo "ci.sh: SANDBOX_DAEMON_BIN is not set; build the daemon and point it at the binary" >&2
  echo "       (e.g. SANDBOX_DAEMON_BIN=target/debug/sandbox-daemon sdks/typescript/ci.sh)" >&2
  exit 2
fi
# A relative path is taken from where ci.sh was called.
SANDBOX_DAEMON_BIN="$(cd "$OLDPWD" && realpath -- "$SANDBOX_DAEMON_BIN" 2>/dev/null || true)"
if [[ -z "$SANDBOX_DAEMON_BIN" || ! -f "$SANDBOX_DAEMON_BIN" || ! -x "$SANDBOX_DAEMON_BIN" ]]; then
  echo "ci.sh: SANDBOX_DAEMON_BIN does not name an executable file" >&2
  exit 2
fi
export SANDBOX_DAEMON_BIN

started=$(date +%s%N)
step() {
  local name=$1
  shift
  local t0
  t0=$(date +%s%N)
  echo "==> ${name}"
  "$@"
  echo "<== ${name}: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}

step "npm ci" npm ci --no-audit --no-fund
step "generated files match spec/openapi.json" npm run --silent check:generated
step "tsc --noEmit (strict)" npm run --silent typecheck
step "build" npm run --silent build
step "inline entry: no imports, size" npm run --silent size
step "tests ($("$SANDBOX_DAEMON_BIN" --version))" npm run --silent test:only
echo "sdks/typescript: all steps passed in $(( ($(date +%s%N) - started) / 1000000 )) ms"
