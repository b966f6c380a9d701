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
# - Runs scripts/fuzz.sh: the short run of every fuzz target (fuzz/, cargo-fuzz and libFuzzer: a
#   quick unoptimised build without sanitizer in fuzz/target, 20 s a target; about 16 minutes
#   from a fresh clone, docs/fuzzing.md); a crash, failed assertion or timeout fails the run.
# - Runs `cargo nextest run --workspace --all-targets` if cargo-nextest is installed, else
#   `cargo test --workspace --all-targets`. Doctests are off in this workspace.
# - Then, for a whole run (no arguments), deploy/test.sh: builds the container images with podman
#   and checks deploy/compose.yaml's two instances behind their balancer (about 3 minutes the first
#   time on a machine, which makes the Debian base image with debootstrap; 30 s after).
# - A missing prerequisite (system package, test client) fails the run here and every test that
#   needs it fails, on every machine: CI=true changes nothing about that. Only TOOLSMITH_ALLOW_SKIP=1,
#   set on purpose by the person running the tests, lets those tests skip instead
#   (toolsmith_core::testkit); each skip is logged to TOOLSMITH_SKIP_LOG (a temp file), and the run
#   ends, pass or fail, by printing how many tests were skipped and why. CI never sets it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

in_ci() { [[ "${CI:-}" == "true" || "${CI:-}" == "1" ]]; }
skip_allowed() { [[ "${TOOLSMITH_ALLOW_SKIP:-}" == "1" ]]; }
have() { command -v "$1" >/dev/null 2>&1; }

if ! have cargo; then
  echo "test.sh: cargo is not installed; install Rust (https://rustup.rs) first" >&2
  exit 1
fi

# System packages of the tests (bubblewrap, util-linux, postgresql, chromium …). Without them the
# run fails, unless TOOLSMITH_ALLOW_SKIP=1: then the tests that need them skip, and say so at the end.
if ! bash scripts/install-system-deps.sh; then
  if ! skip_allowed; then
    echo "test.sh: the system packages the tests need could not be installed (see above); install them" \
      "(as root: bash scripts/install-system-deps.sh), or set TOOLSMITH_ALLOW_SKIP=1 to skip their tests on purpose" >&2
    exit 1
  fi
  echo "test.sh: TOOLSMITH_ALLOW_SKIP=1: system packages missing; the tests that need them will skip" >&2
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
elif ! skip_allowed; then
  echo "test.sh: the test clients cannot be installed without ${missing[*]}; install them" \
    "(bash scripts/install-system-deps.sh), or set TOOLSMITH_ALLOW_SKIP=1 to skip their tests on purpose" >&2
  exit 1
else
  echo "test.sh: TOOLSMITH_ALLOW_SKIP=1: missing ${missing[*]}; the tests with real clients will skip" >&2
fi

# A fresh CI clone gains nothing from incremental compilation, and its caches were a quarter of
# the target dir's disk.
if in_ci; then
  export CARGO_INCREMENTAL=0
fi

# The house rules (formatting, clippy with the workspace's lints, no new duplicated block) fail
# the run before any test does: scripts/check.sh.
bash scripts/check.sh

# Every fuzz target for a short while (before the tests, so the test runner's summary is the
# run's last word): a crash found fails the run, with the input saved in fuzz/artifacts/.
bash scripts/fuzz.sh

# Every allowed skip (TOOLSMITH_ALLOW_SKIP=1) appends "test<TAB>prerequisite<TAB>reason" here; the
# summary is printed when the run ends, whether the tests passed or not.
TOOLSMITH_SKIP_LOG="$(mktemp "${TMPDIR:-/tmp}/toolsmith-skips.XXXXXX")"
export TOOLSMITH_SKIP_LOG
skip_summary() {
  if [[ -s "$TOOLSMITH_SKIP_LOG" ]]; then
    echo >&2
    echo "test.sh: $(wc -l <"$TOOLSMITH_SKIP_LOG") test(s) SKIPPED (TOOLSMITH_ALLOW_SKIP=1), by missing prerequisite:" >&2
    cut -f2 "$TOOLSMITH_SKIP_LOG" | sort | uniq -c | sort -rn | while read -r count prerequisite; do
      reason="$(awk -F'\t' -v p="$prerequisite" '$2 == p { print $3; exit }' "$TOOLSMITH_SKIP_LOG")"
      echo "  $count  $prerequisite: $reason" >&2
    done
    echo "  (each test: $TOOLSMITH_SKIP_LOG)" >&2
  else
    rm -f "$TOOLSMITH_SKIP_LOG"
  fi
}
trap skip_summary EXIT

if cargo nextest --version >/dev/null 2>&1; then
  echo "test.sh: cargo nextest run --workspace --all-targets $*"
  cargo nextest run --workspace --all-targets "$@"
else
  echo "test.sh: cargo-nextest not installed; cargo test --workspace --all-targets $*"
  cargo test --workspace --all-targets "$@"
fi

# The deployment (deploy/): the image, the compose pair behind its balancer, with the binary the
# tests just built. Only for the whole run (a nextest filter given here runs just those tests).
if [[ $# -eq 0 ]]; then
  echo "test.sh: bash deploy/test.sh"
  bash deploy/test.sh
fi
