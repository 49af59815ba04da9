#!/usr/bin/env bash
# The project's test command: formatting, lints, spec drift, every test, and the SDKs'
# checks (Node 20 + npm and Python 3.10+ needed; they install their own pinned packages).
# Usage: scripts/test.sh
# Real-agent tests run when the agents are installed (scripts/install-test-agents.sh) and
# skip loudly otherwise; SANDBOX_REQUIRE_AGENTS=1 SANDBOX_REQUIRE_NETNS=1 make them mandatory.
# The store tests run on SQLite, then again on PostgreSQL when a server is installed here
# (scripts/test-postgres.sh starts a throw-away cluster); without one they skip loudly, and
# SANDBOX_REQUIRE_POSTGRES=1 makes them mandatory. The Schemathesis conformance run
# (scripts/conformance.sh) skips loudly when it cannot install Schemathesis, unless
# SANDBOX_REQUIRE_CONFORMANCE=1.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
timings=()
step() {
  local name="$1"; shift
  printf '\n== %s\n' "$name"
  local t0; t0=$(date +%s)
  "$@"
  timings+=("$(printf '%5ss  %s' "$(( $(date +%s) - t0 ))" "$name")")
}

step "cargo fmt --check" cargo fmt --all -- --check
step "cargo clippy -D warnings" cargo clippy --workspace --all-targets -- -D warnings
step "spec drift (spec/ must match the code)" \
  cargo run --quiet -p sandbox-daemon -- spec --out spec --check
step "tests: daemon, agents, client, universal" \
  cargo test --workspace --exclude sandbox-testkit
step "tests: test kit (fake provider, real-agent smoke tests)" \
  cargo test -p sandbox-testkit

step "API conformance (Schemathesis, all checks and phases, token and --no-token)" \
  scripts/conformance.sh

# The SDKs, against the daemon binary built from this tree.
step "build the daemon binary for the SDKs" cargo build --quiet -p sandbox-daemon
export SANDBOX_DAEMON_BIN="$PWD/target/debug/sandbox-daemon"
step "TypeScript SDK (sdks/typescript/ci.sh)" sdks/typescript/ci.sh
step "Python SDK (sdks/python/ci.sh)" sdks/python/ci.sh

# The daemon's API and store tests once more, on a PostgreSQL store.
postgres_tests() {
  if [ -z "${SANDBOX_TEST_POSTGRES_URL:-}" ]; then
    local pg_env
    if pg_env=$(scripts/test-postgres.sh); then
      eval "$pg_env"
    else
      if [ "${SANDBOX_REQUIRE_POSTGRES:-}" = 1 ]; then
        echo "PostgreSQL is required (SANDBOX_REQUIRE_POSTGRES=1) but could not be started" >&2
        return 1
      fi
      printf '\n!! SKIPPED: the PostgreSQL store tests (no PostgreSQL server here;\n'
      printf '!! install Debian'"'"'s postgresql package, or set SANDBOX_TEST_POSTGRES_URL)\n'
      return 0
    fi
  fi
  SANDBOX_TEST_STORE=postgres cargo test -p sandbox-daemon --test all -- \
    mock_sessions:: mock_hitl:: sse:: restart:: concurrency:: api_errors:: store:: faults:: \
    connections::
}
step "tests: the daemon on a PostgreSQL store" postgres_tests

printf '\ntimings:\n'
printf '%s\n' "${timings[@]}"
printf 'all checks passed in %ss\n' "$(( $(date +%s) - started ))"
