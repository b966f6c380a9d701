#!/usr/bin/env bash
# Runs every test of the workspace: the command README.md gives and CI (.ci/run) calls.
#
#   scripts/test.sh            from anywhere; extra arguments go to the test runner
#
# - Installs the real MCP clients the MCP tests drive into repo-local, git-ignored folders
#   (scripts/install-test-deps.sh: a Python venv and node_modules under tests/clients/).
#   python3 (with venv) and npm must already be there.
# - Installs the system packages the tests need (scripts/install-system-deps.sh: bubblewrap and
#   util-linux for the command sandbox, postgresql for the store's second backend; with apt-get
#   when run as root).
# - Runs scripts/check.sh: `cargo fmt --check`, `cargo clippy --all-targets -D warnings` and the
#   duplication check (jscpd, installed with the clients); any finding fails the run.
# - Runs `cargo nextest run --workspace --all-targets` if cargo-nextest is installed, else
#   `cargo test --workspace --all-targets`. Doctests are off in this workspace.
# - With CI=true a missing prerequisite is a failure, never a silent skip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

in_ci() { [[ "${CI:-}" == "true" || "${CI:-}" == "1" ]]; }
have() { command -v "$1" >/dev/null 2>&1; }

if ! have cargo; then
  echo "test.sh: cargo is not installed; install Rust (https://rustup.rs) first" >&2
  exit 1
fi

# System packages of the command-tool sandbox (bubblewrap, util-linux). Without them the
# sandbox tests fail under CI=true and report SKIP otherwise.
if ! bash scripts/install-system-deps.sh; then
  if in_ci; then
    echo "test.sh: CI=true but the system packages (bubblewrap, util-linux, postgresql) could not be installed" >&2
    exit 1
  fi
  echo "test.sh: WARNING: system packages missing: the sandbox or PostgreSQL tests will be skipped" >&2
fi

# Real MCP clients (official Python and TypeScript SDKs, MCP Inspector).
missing=()
have python3 || missing+=("python3")
have npm || missing+=("npm")
if have python3 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  missing+=("python3 venv/ensurepip (Debian: python3-venv)")
fi
if ((${#missing[@]} == 0)); then
  bash scripts/install-test-deps.sh
elif in_ci; then
  echo "test.sh: CI=true but prerequisites of the MCP client tests are missing: ${missing[*]}" >&2
  exit 1
else
  echo "test.sh: WARNING: missing ${missing[*]}: the MCP tests with real clients will be skipped" >&2
fi

# A fresh CI clone gains nothing from incremental compilation, and its caches were a quarter of
# the target dir's disk.
if in_ci; then
  export CARGO_INCREMENTAL=0
fi

# The house rules (formatting, clippy with the workspace's lints, no new duplicated block) fail
# the run before any test does: scripts/check.sh.
bash scripts/check.sh

if cargo nextest --version >/dev/null 2>&1; then
  echo "test.sh: cargo nextest run --workspace --all-targets $*"
  cargo nextest run --workspace --all-targets "$@"
else
  echo "test.sh: cargo-nextest not installed; cargo test --workspace --all-targets $*"
  cargo test --workspace --all-targets "$@"
fi
