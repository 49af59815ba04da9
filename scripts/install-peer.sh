#!/usr/bin/env bash
# Installs the published binary of the closest existing product (the peer that
# `cargo bench -p sandbox-daemon --bench versus` measures side by side with the daemon) into
# a cache directory outside the source tree, and prints its path.
#
#   scripts/install-peer.sh                 # install (idempotent) and print the path
#   SANDBOX_PEER_DIR=/x scripts/...         # another cache directory
#
# Default cache: $HOME/.cache/sandbox-daemon/peer/<version>. npm fetches the package from
# its own configured registry and checks its integrity; nothing of it is run here.
set -euo pipefail

VERSION="${SANDBOX_PEER_VERSION:-0.4.2}"
case "$(uname -m)" in
  x86_64 | amd64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) echo "install-peer: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
PACKAGE="@sandbox-agent/cli-linux-$ARCH@$VERSION"
CACHE="${SANDBOX_PEER_DIR:-$HOME/.cache/sandbox-daemon/peer}/$VERSION"
BIN="$CACHE/sandbox-agent"

if [ ! -x "$BIN" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$PACKAGE" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  mkdir -p "$CACHE"
  install -m 0755 "$tmp/package/bin/sandbox-agent" "$BIN.part"
  mv "$BIN.part" "$BIN"
  echo "install-peer: installed $PACKAGE" >&2
fi
echo "$BIN"
