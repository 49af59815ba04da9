#!/usr/bin/env bash
# The project's test command: formatting, lints, spec drift, and every test.
# Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }
started=$(date +%s)

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "spec drift (spec/ must match the code)"
cargo run --quiet -p sandbox-daemon -- spec --out spec --check

step "cargo test"
cargo test --workspace

printf '\nall checks passed in %ss\n' "$(( $(date +%s) - started ))"
