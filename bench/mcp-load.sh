#!/usr/bin/env bash
# MCP tools/call load benchmark: builds release, starts `toolsmith serve` on 127.0.0.1 with a
# temporary data dir, creates a trivial JS tool, and runs toolsmith-loadgen with several client
# counts — MCP tools/call (2025-11-25 sessions, and 2026-07-28 stateless), plus two same-run baselines (REST execute of the same tool, and
# GET /livez as the HTTP floor). Prints one table and the load average before and after.
#
# Usage: bench/mcp-load.sh [seconds per run] [client counts]   (defaults: 10, "1,16,64")
#   LOADGEN_THREADS=N   worker threads of the generator (default 1; it shares the machine)
#   LOADGEN_JSON=1      JSON lines instead of the table
#   TOOLSMITH_BIN=PATH  the server binary to measure (e.g. an older build, for an A/B in one
#                       run); the generator is still this tree's
#   KINDS=a,b           the load kinds to run (default mcp,mcp-stateless,rest,noop)
# Loopback only: the server binds 127.0.0.1 and the generator refuses any other address.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
clients="${2:-1,16,64}"
threads="${LOADGEN_THREADS:-1}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release -q -p toolsmith -p toolsmith-loadgen
bin="$target_dir/release"
server_bin="${TOOLSMITH_BIN:-$bin/toolsmith}"

data=$(mktemp -d)
log="$data/serve.log"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT

"$server_bin" serve --bind 127.0.0.1 --port 0 --data-dir "$data" --execution-approval off >"$log" 2>"$data/serve.err" &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -n 's/^toolsmith listening on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -1)
  [[ -n "$url" ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$data/serve.err" >&2; exit 1; fi
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the server did not start" >&2; cat "$data/serve.err" >&2; exit 1; }

json=()
[[ -n "${LOADGEN_JSON:-}" ]] && json=(--json)
echo "server: $url ($server_bin), generator threads: $threads, $seconds s per run"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
first=1
IFS=, read -r -a kinds <<<"${KINDS:-mcp,mcp-stateless,rest,noop}"
for kind in "${kinds[@]}"; do
  header=()
  [[ $first == 1 ]] || header=(--no-header)
  first=0
  "$bin/toolsmith-loadgen" --url "$url" --kind "$kind" --clients "$clients" \
    --seconds "$seconds" --warmup 1 --threads "$threads" "${header[@]}" "${json[@]}"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
