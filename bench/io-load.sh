#!/usr/bin/env bash
# I/O-bound load: JS tools that await a slow endpoint. Starts a local slow endpoint (Node), a
# release `toolsmith serve` and a Node.js `vm` server running the same tool code, then for each
# (concurrent calls, endpoint delay) fires that many calls at once at both and reports wall time,
# calls answered and succeeded, p50/p99, and the server's peak RSS. Then, in the same run, a
# trivial tool's latency: quiet, while 500 calls are admitted, while they wait on the slow
# endpoint, and while 50 CPU-bound calls share the cores.
#
# Usage: bench/io-load.sh [calls list] [delays in ms]   (defaults: "200,1000", "200,1000")
# Loopback only. Prints the load average before and after: figures on a shared machine are noisy,
# compare the ratios of one run.
set -euo pipefail
cd "$(dirname "$0")/.."
calls_list="${1:-200,1000}"
delays="${2:-200,1000}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release -q -p toolsmith
bin="$target_dir/release/toolsmith"

data=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$data"
}
trap cleanup EXIT

# Starts "$@" in the background and waits for the URL it prints on its first line.
start() {
  local out="$data/$1.out"; shift
  "$@" >"$out" 2>"$out.err" &
  pids+=($!)
  for _ in $(seq 1 100); do
    url=$(grep -o 'http://127.0.0.1:[0-9]*' "$out" | head -1 || true)
    [[ -n "$url" ]] && return 0
    sleep 0.1
  done
  echo "$* did not start" >&2; cat "$out.err" >&2; exit 1
}

start slow node bench/io_load.js slow; slow="$url"
start vm node bench/io_load.js vm; vm="$url"
cat >"$data/toolsmith.toml" <<TOML
[egress]
allowed_private_hosts = ["${slow#http://}"]
TOML
start serve "$bin" serve --bind 127.0.0.1 --port 0 --data-dir "$data/ts" --config "$data/toolsmith.toml" \
  --execution-approval off --js-wall-time 30s; ts="$url"
server_pid="${pids[-1]}"

code='const r = await fetch(args.url); return await r.json();'
create() { # name code permissions-json
  curl -sf -X POST "$ts/api/v1/custom-tools" -H 'content-type: application/json' \
    -d "$(python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1], "description": "io-load bench", "code": sys.argv[2], "permissions": json.loads(sys.argv[3]), "parameters": {"type": "object", "properties": {"url": {"type": "string"}}}}))' "$1" "$2" "$3")" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])'
}
fetch_id=$(create io_fetch "$code" '["network"]')
trivial_id=$(create io_trivial 'return 1;' '[]')

peak_rss_mb() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server_pid/status"; }
body() { python3 -c 'import json,sys; print(json.dumps({"arguments": {"url": sys.argv[1]}}))' "$1"; }
vm_body() { python3 -c 'import json,sys; print(json.dumps({"code": sys.argv[1], "args": {"url": sys.argv[2]}}))' "$code" "$1"; }

echo "toolsmith: $ts (release, $(nproc) cores), node vm: $vm, slow endpoint: $slow"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s%-8s%-10s%10s%10s%10s%10s%10s%12s\n' calls delay system wall_s answered ok p50_ms p99_ms peak_rss_mb
IFS=',' read -ra ns <<<"$calls_list"
IFS=',' read -ra ds <<<"$delays"
for d in "${ds[@]}"; do
  for n in "${ns[@]}"; do
    url="$slow/slow?ms=$d"
    t=$(node bench/io_load.js client "$ts/api/v1/custom-tools/$fetch_id/execute" "$(body "$url")" "$n")
    v=$(node bench/io_load.js client "$vm/execute" "$(vm_body "$url")" "$n")
    python3 - "$n" "$d" "$t" "$v" "$(peak_rss_mb)" <<'PY'
import json, sys
n, d, t, v, rss = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
for name, r, mem in (("toolsmith", t, rss), ("node-vm", v, "-")):
    print(f"{n:<8}{d:<8}{name:<10}{r['wall_s']:>10.2f}{r['answered']:>10}{r['ok']:>10}{r['p50_ms']:>10.1f}{r['p99_ms']:>10.1f}{mem:>12}")
print(f"{'':<16}{'ratio':<10}{v['wall_s'] / t['wall_s']:>10.2f}   (node-vm wall / toolsmith wall; > 1: toolsmith faster)")
PY
  done
done

# A trivial tool's latency, 20 sequential calls on one connection each time, in four settings of
# one run: quiet (the baseline); while 500 calls to the fetching tool are being admitted (fired
# at once, the probe starts with them); while those 500 all wait inside the slow endpoint (the
# probe first waits until the endpoint holds 500); and while 50 CPU-bound calls (3 s busy loops)
# share the cores. The trivial calls are the same user's as the load: no help from the fairness
# across users.
trivial_url="$ts/api/v1/custom-tools/$trivial_id/execute"
probe() { node bench/io_load.js probe "$trivial_url" '{"arguments": {}}' 20 "$@"; }
quiet=$(probe)
url="$slow/slow?ms=5000"
node bench/io_load.js client "$ts/api/v1/custom-tools/$fetch_id/execute" "$(body "$url")" 500 >"$data/burst.json" &
bg=$!
burst=$(probe)
waiting=$(probe "$slow/inflight" 500)
wait "$bg"
busy_id=$(create io_busy 'const end = Date.now() + 3000; let n = 0; while (Date.now() < end) n++; return n;' '[]')
node bench/io_load.js client "$ts/api/v1/custom-tools/$busy_id/execute" '{"arguments": {}}' 50 >"$data/busy.json" &
bg=$!
sleep 0.3
busy=$(probe)
wait "$bg"
python3 - "$quiet" "$burst" "$waiting" "$busy" "$(cat "$data/burst.json")" "$(cat "$data/busy.json")" <<'PY'
import json, sys
quiet, burst, waiting, busy, bg, cpu = (json.loads(a) for a in sys.argv[1:])
print("trivial tool, 20 sequential calls      p50_ms  p99_ms  max_ms  ratio_p50_to_quiet")
for name, r in (("quiet", quiet), ("while 500 calls are admitted", burst),
                (f"while {waiting['inflight_before']} calls wait in the endpoint", waiting),
                ("while 50 CPU-bound calls run", busy)):
    print(f"{name:<38}{r['p50_ms']:>8.1f}{r['p99_ms']:>8.1f}{r['max_ms']:>8.1f}{r['p50_ms'] / quiet['p50_ms']:>10.1f}  ({r['ok']}/{r['n']} ok)")
print(f"the 500 fetching calls: {bg['ok']}/{bg['n']} ok, wall {bg['wall_s']:.2f} s; "
      f"the 50 CPU-bound: {cpu['ok']}/{cpu['n']} ok, wall {cpu['wall_s']:.2f} s")
PY
echo "server peak RSS: $(peak_rss_mb) MB"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
