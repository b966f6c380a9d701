#!/usr/bin/env bash
# The house rules the machine keeps (CONTRIBUTING.md, "Before you commit"), run by
# scripts/test.sh before the tests, so CI fails on any of them:
#
#   1. cargo fmt --all --check                                   an unformatted file
#   2. cargo clippy --workspace --all-targets -- -D warnings     a clippy warning, with the
#      workspace's lints (Cargo.toml [workspace.lints]: unwrap_used, expect_used and panic in
#      non-test code among them; clippy.toml allows them in tests)
#   3. scripts/check-duplicates.py                               a new block of 10+ lines
#      repeated in production code (jscpd, installed with the test clients), against the
#      pairs scripts/duplicates-allowed.txt accepts, each with its reason
#
#   scripts/check.sh            all three;   scripts/check.sh fmt|clippy|duplicates   one
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
only="${1:-all}"

if [[ "$only" == all || "$only" == fmt ]]; then
  echo "check.sh: cargo fmt --all --check"
  cargo fmt --all --check || {
    echo "check.sh: unformatted files (above); run cargo fmt --all" >&2
    exit 1
  }
fi
if [[ "$only" == all || "$only" == clippy ]]; then
  echo "check.sh: cargo clippy --workspace --all-targets -- -D warnings"
  cargo clippy --workspace --all-targets --quiet -- -D warnings
fi
if [[ "$only" == all || "$only" == duplicates ]]; then
  echo "check.sh: duplicated code (jscpd)"
  python3 scripts/check-duplicates.py
fi
