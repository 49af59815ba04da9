#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster for the tests (idempotent) and prints the line that
# points the tests at it:
#
#   eval "$(scripts/test-postgres.sh)"     # exports SANDBOX_TEST_POSTGRES_URL
#   scripts/test-postgres.sh stop          # stops it
#
# Uses the PostgreSQL server found under /usr/lib/postgresql; with
# SANDBOX_TEST_POSTGRES_INSTALL=1, as root on a machine without one, installs Debian's
# `postgresql` package first (CI does). The cluster trusts local connections,
# listens on 127.0.0.1 only, and runs without fsync (its data is thrown away).
set -euo pipefail

PORT="${SANDBOX_TEST_POSTGRES_PORT:-55432}"
DIR="${SANDBOX_TEST_POSTGRES_DIR:-/tmp/sandbox-daemon-test-pg}"

find_bin() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$bin" ] && [ -x "$bin/postgres" ] && echo "$bin"
}

BIN=$(find_bin || true)
if [ -z "$BIN" ]; then
  if [ "${SANDBOX_TEST_POSTGRES_INSTALL:-}" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test-postgres: installing PostgreSQL from Debian packages" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    BIN=$(find_bin)
  else
    echo "test-postgres: no PostgreSQL server here (install Debian's postgresql package)" >&2
    exit 1
  fi
fi

# initdb and postgres refuse to run as root: use the postgres user then.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [ "${1:-start}" = stop ]; then
  [ -f "$DIR/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DIR" -m fast stop >&2 || true
  exit 0
fi

URL="postgres://postgres@127.0.0.1:$PORT/postgres"
if ! "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
  if [ ! -f "$DIR/PG_VERSION" ]; then
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
    as_owner "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
  fi
  as_owner "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 60 \
    -o "-p $PORT -c listen_addresses=127.0.0.1 -k $DIR -c fsync=off -c max_connections=400" \
    start >&2
fi
echo "export SANDBOX_TEST_POSTGRES_URL=$URL"
