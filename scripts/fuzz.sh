#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/, cargo-fuzz and libFuzzer) and runs each of them for a while;
# fails on any crash, panic, failed assertion, timeout or out-of-memory. docs/fuzzing.md says
# what each target covers and what each run costs.
#
#   scripts/fuzz.sh                     the short run (scripts/test.sh runs it, so CI does): the
#                                       quick build, 20 s per target
#   scripts/fuzz.sh --long SECONDS      the long run: the full build, SECONDS per target
#   scripts/fuzz.sh --full              the short run on the full build
#   scripts/fuzz.sh [...] TARGET...     only these targets
#
# - Two builds. The quick one (the short run's): cargo-fuzz's --dev build (fuzz/Cargo.toml's
#   [profile.dev]: no optimisation, debug assertions and overflow checks on) without a
#   sanitizer, in fuzz/target/<host>/debug — the cheapest that still runs every target under
#   libFuzzer's coverage. The full one (the long run's): release with debug assertions and
#   AddressSanitizer, one codegen unit, in fuzz/target/<host>/release.
# - Installs cargo-fuzz (`cargo install cargo-fuzz --version 0.13.2 --locked`) when missing.
# - Needs no nightly toolchain: libFuzzer's instrumentation flags are unstable rustc flags, which
#   RUSTC_BOOTSTRAP=1 lets the stable toolchain take (AddressSanitizer's runtime ships with the
#   stable toolchain for x86_64 Linux).
# - Each target's corpus grows in fuzz/target/corpus/<target>, seeded from the corpus kept in
#   the repository, fuzz/corpus/<target>, which a run never changes. A crashing input is written
#   to fuzz/artifacts/<target>/ and the output says how to reproduce it.
# - Ends with a table per target: executions, coverage (edges), features, corpus size.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds=20
build=quick
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --long)
            [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --long takes a number of seconds, e.g. --long 600" >&2; exit 2; }
            seconds="$2"
            build=full
            shift 2
            ;;
        --full)
            build=full
            shift
            ;;
        -h | --help)
            sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        -*)
            echo "fuzz.sh: unknown option $1 (see scripts/fuzz.sh --help)" >&2
            exit 2
            ;;
        *)
            targets+=("$1")
            shift
            ;;
    esac
done

export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz (cargo install cargo-fuzz --version 0.13.2 --locked)" >&2
    cargo install cargo-fuzz --version 0.13.2 --locked
fi

# The same flags for build and run, so `cargo fuzz run` (the reproduction) finds the build done.
host="$(rustc -vV | sed -n 's/^host: //p')"
# cargo fuzz builds into fuzz/target, or into CARGO_TARGET_DIR when that is set.
target_dir="${CARGO_TARGET_DIR:-fuzz/target}"
if [[ "$build" == quick ]]; then
    fuzz_flags=(--fuzz-dir fuzz --dev --sanitizer none)
    bin_dir="$target_dir/$host/debug"
else
    fuzz_flags=(--fuzz-dir fuzz --sanitizer address)
    bin_dir="$target_dir/$host/release"
fi

start=$(date +%s)
echo "fuzz.sh: cargo fuzz build ${fuzz_flags[*]}" >&2
cargo fuzz build "${fuzz_flags[@]}"
built=$(date +%s)
echo "fuzz.sh: built in $((built - start)) s" >&2

if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cargo fuzz list --fuzz-dir fuzz)
fi

logs="fuzz/target/logs"
mkdir -p "$logs"
failed=()
summary=()
for target in "${targets[@]}"; do
    [[ -d "fuzz/corpus/$target" ]] || { echo "fuzz.sh: no seed corpus fuzz/corpus/$target" >&2; exit 2; }
    work="fuzz/target/corpus/$target"
    mkdir -p "$work"
    echo "fuzz.sh: $target for $seconds s" >&2
    # The binary the build made, run directly: `cargo fuzz run` would build again first, and a
    # source changed meanwhile would make the runs test different code. New inputs go to the
    # first folder (the work corpus); the seeds are read only. Crashes go to fuzz/artifacts.
    mkdir -p "fuzz/artifacts/$target"
    if ASAN_OPTIONS="detect_odr_violation=0" "$bin_dir/$target" "$work" "fuzz/corpus/$target" \
        -artifact_prefix="fuzz/artifacts/$target/" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$logs/$target.log" 2>&1; then
        status=ok
    else
        status=FAILED
        failed+=("$target")
        tail -n 60 "$logs/$target.log" >&2
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log" | tail -n 1)
    last=$(grep -E '#[0-9]+.*cov: ' "$logs/$target.log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$last")
    summary+=("$(printf '%-18s %-7s %12s %8s %8s %12s' "$target" "$status" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")")
done

echo
printf '%-18s %-7s %12s %8s %8s %12s\n' target status executions cov ft corpus
printf '%s\n' "${summary[@]}"
echo "fuzz.sh: build $((built - start)) s, runs $(($(date +%s) - built)) s; logs in $logs"
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz.sh: FAILED: ${failed[*]} (the crashing inputs are in fuzz/artifacts/<target>/; reproduce with: RUSTC_BOOTSTRAP=1 cargo fuzz run ${fuzz_flags[*]} <target> <input>)" >&2
    exit 1
fi
