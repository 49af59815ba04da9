#!/usr/bin/env bash
# The project's test command: formatting, lints, spec drift, and every test.
# Usage: scripts/test.sh
# Real-agent tests run when the agents are installed (scripts/install-test-agents.sh) and
# skip loudly otherwise; SANDBOX_REQUIRE_AGENTS=1 SANDBOX_REQUIRE_NETNS=1 make them mandatory.
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

printf '\ntimings:\n'
printf '%s\n' "${timings[@]}"
printf 'all checks passed in %ss\n' "$(( $(date +%s) - started ))"
