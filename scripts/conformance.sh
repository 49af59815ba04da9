#!/usr/bin/env bash
# API conformance: Schemathesis (pinned, from PyPI) against the daemon's own OpenAPI
# document, with every check and every phase (examples, coverage, fuzzing, stateful), once
# with a token and once with --no-token. Any failure fails this script.
#
# Usage: scripts/conformance.sh [path/to/sandbox-daemon]   (default: builds target/debug)
# Schemathesis is installed into a virtualenv under ~/.cache/sandbox-daemon (pip uses its
# own configured index). When it cannot be installed the run is skipped loudly, unless
# SANDBOX_REQUIRE_CONFORMANCE=1 (CI) makes that a failure.
# SCHEMATHESIS_EXAMPLES (default 40) and SCHEMATHESIS_SEED (default fixed, so CI is
# repeatable) tune the run; give another seed to explore.
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.32.5
examples="${SCHEMATHESIS_EXAMPLES:-40}"
seed="${SCHEMATHESIS_SEED:-20261122}"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-daemon/schemathesis-$version"

skip_or_fail() {
  if [ "${SANDBOX_REQUIRE_CONFORMANCE:-}" = 1 ]; then
    echo "schemathesis is required (SANDBOX_REQUIRE_CONFORMANCE=1): $1" >&2
    exit 1
  fi
  printf '\n!! SKIPPED: the Schemathesis conformance run (%s)\n' "$1"
  exit 0
}

if [ ! -x "$venv/bin/schemathesis" ] || [ "$("$venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $version" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >/dev/null 2>&1 || skip_or_fail "python3 -m venv failed"
  "$venv/bin/pip" install --quiet "schemathesis==$version" || skip_or_fail "pip could not install schemathesis==$version"
fi

daemon="${1:-}"
if [ -z "$daemon" ]; then
  cargo build --quiet -p sandbox-daemon
  daemon=target/debug/sandbox-daemon
fi
daemon=$(realpath "$daemon")

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The processes API runs the programs Schemathesis generates. As root (CI) they run as an
# unprivileged user of their own (--agent-user), who owns nothing but the throw-away
# workspace; without root that cannot be, and those two operations are left out, loudly.
agent_user=()
skip_processes=()
if [ "$(id -u)" = 0 ]; then
  id sbx-conformance >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin sbx-conformance
  agent_user=(--agent-user sbx-conformance)
else
  printf '\n!! not root: runProcess and startProcess are left out of this run (their programs would run as you)\n'
  skip_processes=(--exclude-operation-id runProcess --exclude-operation-id startProcess)
fi

# Starts the daemon with the given flags on a free port; sets $url and $pid.
start() {
  local name="$1"; shift
  mkdir -p "$work/$name/workspace"
  if [ "${#agent_user[@]}" -gt 0 ]; then
    chmod 711 "$work" "$work/$name"
    chown sbx-conformance "$work/$name/workspace"
  fi
  # The API is under test, not the agents: no real agent binary is handed to this daemon
  # (they are driven, offline and isolated, by the end-to-end tests), and installs go to a
  # loopback port nothing listens on (they fail at once, as documented: 502).
  # Sessions work in a throw-away workspace root (the daemon's working directory, and every
  # `cwd` must be inside it): the files API's writes and deletes of generated paths never
  # reach this machine's own files. Webhooks and http host tools Schemathesis registers
  # call loopback URLs directly and every other URL through the proxy the environment
  # names: a loopback port nothing listens on, so no request (nor a name lookup) leaves
  # this machine.
  (cd "$work/$name/workspace" && exec env -u SANDBOX_DAEMON_CLAUDE_PATH -u SANDBOX_DAEMON_CODEX_PATH -u SANDBOX_DAEMON_OPENCODE_PATH \
    -u SANDBOX_DAEMON_AMP_PATH -u SANDBOX_DAEMON_PI_PATH \
    SANDBOX_DAEMON_INSTALL_MIRROR=http://127.0.0.1:1 SANDBOX_DAEMON_NPM_REGISTRY=http://127.0.0.1:1/ \
    SANDBOX_DAEMON_NO_AUTO_INSTALL=true \
    HTTP_PROXY=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 ALL_PROXY=http://127.0.0.1:1 \
    http_proxy=http://127.0.0.1:1 https_proxy=http://127.0.0.1:1 all_proxy=http://127.0.0.1:1 \
    NO_PROXY= no_proxy= \
    "$daemon" --port 0 --data-dir "$work/$name/data" --workspace-root "$work/$name/workspace" \
    --sse-keep-alive-secs 1 "${agent_user[@]}" "$@" \
    2>"$work/$name/stderr") &
  pid=$!
  pids+=("$pid")
  url=
  for _ in $(seq 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/$name/stderr" | head -1 || true)
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/$name/stderr" >&2
  echo "the daemon ($name) did not start" >&2
  exit 1
}

# SSE reads end at the request timeout (a live session's stream never ends by itself).
# Every check runs: Schemathesis enables all by default, and `--checks all` is not given
# because a command-line choice would override the few per-operation allowances
# `scripts/schemathesis.toml` makes (and explains).
# Usage: run <the daemon's name> [schemathesis flags]; it works in that daemon's dir.
run() {
  local name="$1"; shift
  (cd "$work/$name" && "$venv/bin/schemathesis" --config-file "$OLDPWD/scripts/schemathesis.toml" \
    run "$url/openapi.json" --phases examples,coverage,fuzzing,stateful \
    --max-examples "$examples" --seed "$seed" --request-timeout 3 --no-color "${skip_processes[@]}" "$@")
}

# The two runs (each a daemon of its own, in its own dirs) go at once: each is mostly one
# Python process, and CI's other core is otherwise idle by now. Each run's output is
# printed whole when both have ended.
printf 'token\n' >"$work/bearer"
chmod 600 "$work/bearer"
start token --token-file "$work/bearer"
(echo "== schemathesis $version, with a token ($url)"; run token -H "Authorization: Bearer token") \
  >"$work/token.log" 2>&1 &
token_run=$!

start no-token --no-token
(echo "== schemathesis $version, with --no-token ($url)"; run no-token) >"$work/no-token.log" 2>&1 &
no_token_run=$!

status=0
wait "$token_run" || status=$?
cat "$work/token.log"
wait "$no_token_run" || status=$?
cat "$work/no-token.log"
exit "$status"
