#!/usr/bin/env bash
# Installs the pinned real agent CLIs that the test kit drives, into a cache directory
# outside the source tree, and writes <cache>/agents.env with their real executables.
#
#   scripts/install-test-agents.sh            # install (idempotent) and print the paths
#   SANDBOX_TEST_AGENTS_DIR=/x scripts/...    # another cache directory
#
# Default cache: $HOME/.cache/sandbox-daemon/test-agents. npm uses its own configured
# registry. Pins: scripts/test-agents.tsv (generated from the agents' manifest).
set -euo pipefail

CACHE="${SANDBOX_TEST_AGENTS_DIR:-$HOME/.cache/sandbox-daemon/test-agents}"
NPM_DIR="$CACHE/npm"
NM="$NPM_DIR/node_modules"

# The pins and where each package keeps its real executable come from the agents'
# manifest (crates/agents/src/manifest.rs) through the generated scripts/test-agents.tsv:
# `agent <TAB> package@version <TAB> candidate...`, a `!` candidate only when it is a native
# binary. (Claude 2.1.330 declares node>=22; on Node 20 npm warns EBADENGINE and installs it
# anyway, which is fine: the CLI is a native binary.)
TSV="$(dirname "$0")/test-agents.tsv"
AGENTS=()
PINS=()
declare -A CANDIDATES
while IFS=$'\t' read -r agent pin candidates; do
  case "$agent" in '#'* | '') continue ;; esac
  AGENTS+=("$agent")
  PINS+=("$pin")
  CANDIDATES[$agent]="$candidates"
done <"$TSV"

case "$(uname -m)" in
  x86_64 | amd64) ARCH=x64; TRIPLE=x86_64-unknown-linux-musl ;;
  aarch64 | arm64) ARCH=arm64; TRIPLE=aarch64-unknown-linux-musl ;;
  *) echo "install-test-agents: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# Prints the real executable of one agent: its first candidate that qualifies, else the
# last (the same rule as sandbox_agents::manifest::npm_executable).
executable() {
  local candidate path last=""
  IFS=$'\t' read -r -a list <<<"${CANDIDATES[$1]}"
  for candidate in "${list[@]}"; do
    path="${candidate#!}"
    path="$NM/${path//\{arch\}/$ARCH}"
    path="${path//\{triple\}/$TRIPLE}"
    last="$path"
    if [ "${candidate:0:1}" = '!' ]; then
      is_elf "$path" && { echo "$path"; return; }
    elif [ -f "$path" ]; then
      echo "$path"; return
    fi
  done
  echo "$last"
}

all_present() {
  [ -f "$NPM_DIR/.pins" ] && [ "$(cat "$NPM_DIR/.pins")" = "${PINS[*]}" ] || return 1
  for agent in "${AGENTS[@]}"; do [ -x "$(executable "$agent")" ] || return 1; done
}

start=$(date +%s)
if all_present; then
  echo "install-test-agents: pinned agents already installed in $CACHE"
else
  command -v npm >/dev/null || { echo "install-test-agents: npm not found" >&2; exit 1; }
  mkdir -p "$NPM_DIR"
  deps=""
  for pin in "${PINS[@]}"; do
    name="${pin%@*}"; version="${pin##*@}"
    deps="$deps${deps:+,}\"$name\":\"$version\""
  done
  printf '{"name":"sandbox-test-agents","private":true,"dependencies":{%s}}\n' "$deps" >"$NPM_DIR/package.json"
  echo "install-test-agents: npm install into $NPM_DIR"
  (cd "$NPM_DIR" && npm install --no-audit --no-fund --loglevel=error)
  printf '%s' "${PINS[*]}" >"$NPM_DIR/.pins"
fi

missing=0
{
  echo "# Written by scripts/install-test-agents.sh; source it to point the daemon at the test agents."
  echo "SANDBOX_TEST_AGENTS_DIR=$CACHE"
  for agent in "${AGENTS[@]}"; do
    path="$(executable "$agent")"
    upper="$(echo "$agent" | tr '[:lower:]' '[:upper:]')"
    echo "SANDBOX_DAEMON_${upper}_PATH=$path"
  done
} >"$CACHE/agents.env.tmp"
mv "$CACHE/agents.env.tmp" "$CACHE/agents.env"

printf '%-9s %-24s %s\n' agent version executable
i=0
for agent in "${AGENTS[@]}"; do
  path="$(executable "$agent")"
  pin="${PINS[$i]}"
  installed="$(node -p "require('$NM/${pin%@*}/package.json').version" 2>/dev/null || echo none)"
  state=""
  [ -x "$path" ] || { state="  MISSING"; missing=1; }
  [ "$installed" = "${pin##*@}" ] || { state="$state  WRONG VERSION (want ${pin##*@})"; missing=1; }
  printf '%-9s %-24s %s%s\n' "$agent" "$installed" "$path" "$state"
  i=$((i + 1))
done
echo "install-test-agents: wrote $CACHE/agents.env ($(($(date +%s) - start)) s)"
exit "$missing"
