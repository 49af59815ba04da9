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
# After one build, the suites run in two groups of concurrent steps (each step's output is
# printed whole when its group ends, with its time): the machine's cores are otherwise
# mostly idle while tests wait on agents, Node, Python and the database.
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

# Runs steps at once ("name|function" each), each with its output in a file; prints each
# step's output and time in the order given once all have finished, and fails if any did.
# For suites that mostly wait (on agents, a browser, a server), so the two cores are used.
concurrently() {
  local dir; dir=$(mktemp -d)
  local specs=("$@") pids=() i
  local t0; t0=$(date +%s)
  printf '\n== at once: %s\n' "$(printf '%s; ' "${specs[@]%%|*}")"
  for i in "${!specs[@]}"; do
    (
      set +e
      local s0; s0=$(date +%s)
      ( set -e; "${specs[$i]#*|}" ) >"$dir/$i.log" 2>&1
      echo "$? $(( $(date +%s) - s0 ))" >"$dir/$i.rc"
    ) &
    pids+=("$!")
  done
  local failed=0 rc secs name
  for i in "${!specs[@]}"; do
    wait "${pids[$i]}" || true
    name=${specs[$i]%%|*}
    read -r rc secs <"$dir/$i.rc"
    printf '\n== %s (ran at once with the others; %ss)\n' "$name" "$secs"
    cat "$dir/$i.log"
    timings+=("$(printf '%5ss  %s (at once)' "$secs" "$name")")
    if [ "$rc" != 0 ]; then
      printf '\n!! FAILED: %s (exit %s)\n' "$name" "$rc" >&2
      failed=1
    fi
  done
  rm -rf "$dir"
  timings+=("$(printf '%5ss  the steps above marked (at once), together' "$(( $(date +%s) - t0 ))")")
  return "$failed"
}

step "cargo fmt --check" cargo fmt --all -- --check
step "build the test binaries and the daemon" \
  cargo test --workspace --no-run --quiet
# The binary the tests built (`cargo run` would build another: without the tests'
# dev-dependency features, so every shared crate again).
export SANDBOX_DAEMON_BIN="$PWD/target/debug/sandbox-daemon"
step "spec drift (spec/ must match the code)" \
  "$SANDBOX_DAEMON_BIN" spec --out spec --check

# Every run below selects the whole workspace and picks its test targets by name: `-p X`
# would resolve the dependencies' features for X alone and build another copy of much of
# the workspace (cargo keeps one per feature set), on top of the one built above.
# `test_targets <package>...` prints `--test <name>` for each integration test of those
# packages (from cargo's metadata, so a new test file is never left out).
test_targets() {
  cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
wanted = set(sys.argv[1:])
for package in json.load(sys.stdin)["packages"]:
    if package["name"] in wanted:
        for target in package["targets"]:
            if "test" in target["kind"]:
                print("--test", target["name"])
' "$@"
}
# shellcheck disable=SC2046 # one flag and one name per word
daemon_targets=($(test_targets sandbox-daemon))
# shellcheck disable=SC2046
crate_targets=($(test_targets sandbox-universal sandbox-agents sandbox-client sandbox-install))
# shellcheck disable=SC2046
testkit_targets=($(test_targets sandbox-testkit))

# Its end-to-end tests mostly wait on agents: four at a time. The scenario table notes
# each agent's rows and time in a summary, printed below.
SANDBOX_E2E_SUMMARY="$(mktemp)"
export SANDBOX_E2E_SUMMARY
daemon_tests() { cargo test --workspace "${daemon_targets[@]}" -- --test-threads=4; }
# Every crate's unit tests (the daemon's and the test kit's too), the other crates'
# integration tests, and the doc tests.
crate_tests() {
  cargo test --workspace --lib --bins "${crate_targets[@]}"
  cargo test --workspace --doc
}
clippy() {
  # The test runs above take cargo's build lock only to see their binaries are fresh;
  # clippy holds it while it checks, so it starts once they run.
  sleep 5
  cargo clippy --workspace --all-targets -- -D warnings
}
concurrently \
  "tests: the daemon (API, store, faults, real agents end to end)|daemon_tests" \
  "tests: agents, client, universal, install (loopback mirror)|crate_tests" \
  "cargo clippy -D warnings|clippy"
printf '\nthe scenario table, per agent:\n'
sort "$SANDBOX_E2E_SUMMARY"
rm -f "$SANDBOX_E2E_SUMMARY"

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
  SANDBOX_TEST_STORE=postgres cargo test --workspace --test all -- \
    mock_sessions:: mock_hitl:: sse:: restart:: concurrency:: api_errors:: store:: faults:: \
    connections:: portable_api:: claude_e2e::shared_store::
}
testkit_tests() { cargo test --workspace "${testkit_targets[@]}"; }
conformance() { scripts/conformance.sh "$SANDBOX_DAEMON_BIN"; }
typescript_sdk() { sdks/typescript/ci.sh; }
python_sdk() { sdks/python/ci.sh; }
# The inspector (the web UI at /ui) in Debian's Chromium, against the daemon binary, with
# installs from the test kit's mirror (the browser step skips loudly without Chromium unless
# SANDBOX_REQUIRE_BROWSER=1). Its screenshots stay in ui/test-results/screenshots.
inspector() { SANDBOX_TESTKIT_BIN="$PWD/target/debug/testkit" ui/ci.sh; }
# The side-by-side bench against the peer's published binary, a few rounds of each phase
# on the debug build: it must run, its figures mean nothing here (no timing is asserted).
versus_smoke() { cargo test -q --workspace --bench versus -- --bench --smoke; }

# What follows mostly waits (on agents, Schemathesis, Node, pytest, PostgreSQL): at once.
concurrently \
  "tests: test kit (fake provider, real-agent smoke tests)|testkit_tests" \
  "API conformance (Schemathesis, all checks and phases, token and --no-token)|conformance" \
  "TypeScript SDK (sdks/typescript/ci.sh, against the daemon binary)|typescript_sdk" \
  "Python SDK (sdks/python/ci.sh, against the daemon binary)|python_sdk" \
  "the inspector (ui/ci.sh: the web UI in Chromium, against the daemon binary)|inspector" \
  "tests: the daemon on a PostgreSQL store|postgres_tests" \
  "the versus bench, as a smoke (peer binary from npm, debug build)|versus_smoke"

printf '\ntimings:\n'
printf '%s\n' "${timings[@]}"
printf 'all checks passed in %ss\n' "$(( $(date +%s) - started ))"
