#!/usr/bin/env bash
# CI of the inspector (the daemon's web UI): install from the lockfile, check that the
# committed ui/dist is what the sources build (the daemon embeds it), type-check, unit-test
# the transcript model, then drive the real daemon binary (SANDBOX_DAEMON_BIN) in Debian's
# Chromium (CHROMIUM_BIN, default /usr/bin/chromium), with agent installs from the test
# kit's loopback mirror (SANDBOX_TESTKIT_BIN). Without Chromium the browser step skips
# loudly, unless SANDBOX_REQUIRE_BROWSER=1. Screenshots land in UI_SCREENSHOTS (default
# ui/test-results/screenshots). Prints each step's time.
#
#   SANDBOX_DAEMON_BIN=target/debug/sandbox-daemon SANDBOX_TESTKIT_BIN=target/debug/testkit ui/ci.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

for var in SANDBOX_DAEMON_BIN SANDBOX_TESTKIT_BIN; do
  if [[ -z "${!var:-}" ]]; then
    echo "ui/ci.sh: $var is not set (build the workspace and point it at the binary)" >&2
    exit 2
  fi
  # A relative path is taken from where ci.sh was called.
  resolved="$(cd "$OLDPWD" && realpath -- "${!var}" 2>/dev/null || true)"
  if [[ -z "$resolved" || ! -x "$resolved" ]]; then
    echo "ui/ci.sh: $var does not name an executable file" >&2
    exit 2
  fi
  export "$var=$resolved"
done
CHROMIUM_BIN="${CHROMIUM_BIN:-/usr/bin/chromium}"
browser=1
if [[ ! -x "$CHROMIUM_BIN" ]]; then
  if [[ "${SANDBOX_REQUIRE_BROWSER:-}" == 1 ]]; then
    echo "ui/ci.sh: no Chromium at $CHROMIUM_BIN (apt-get install chromium), and SANDBOX_REQUIRE_BROWSER=1" >&2
    exit 2
  fi
  browser=0
fi
export CHROMIUM_BIN

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

unit_tests() {
  npx esbuild test/transcript.test.ts --bundle --platform=node --format=esm --log-level=warning \
    --outfile=test-results/transcript.test.mjs
  node --test test-results/transcript.test.mjs
}

step "npm ci" npm ci --no-audit --no-fund
step "ui/dist matches the sources (and what it weighs)" npm run --silent check:built
step "tsc --noEmit (strict)" npm run --silent typecheck
step "transcript unit tests" unit_tests
if [[ "$browser" == 1 ]]; then
  step "browser tests ($("$CHROMIUM_BIN" --version 2>/dev/null | head -1))" \
    node --test --test-concurrency=1 test/inspector.test.mjs
  echo "ui: screenshots in ${UI_SCREENSHOTS:-$PWD/test-results/screenshots}:"
  ls "${UI_SCREENSHOTS:-$PWD/test-results/screenshots}"
else
  printf '\n!! SKIPPED: the browser tests (no Chromium at %s; apt-get install chromium)\n' "$CHROMIUM_BIN"
fi
echo "ui: all steps passed in $(( ($(date +%s%N) - started) / 1000000 )) ms"
