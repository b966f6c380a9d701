#!/usr/bin/env bash
# Runs the three benchmark JS tools through Toolsmith (in-process, release build) and through a
# Node.js vm-based sandbox, in one run, and prints the figures and the Toolsmith/Node ratios.
# Usage: bench/compare.sh [iterations]   (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-2000}"
cargo build --release -q -p toolsmith-service --example js_bench
ours=$(target/release/examples/js_bench bench/cases.json "$n")
node_out=$(node bench/node_vm.js "$n")
python3 - "$ours" "$node_out" <<'PY'
import json, sys
ours, node = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"{'case':<22}{'toolsmith p50':>15}{'node vm p50':>14}{'ratio':>9}{'toolsmith p99':>15}{'node vm p99':>14}")
for case in node:
    t, n = ours[case], node[case]
    print(f"{case:<22}{t['p50_us']:>13.1f}us{n['p50_us']:>12.1f}us{t['p50_us']/n['p50_us']:>9.3f}{t['p99_us']:>13.1f}us{n['p99_us']:>12.1f}us")
tp = ours["trivial_throughput"]
print(f"throughput: {tp['per_sec']:.0f} trivial executions/s ({tp['calls']} calls, {tp['callers']} concurrent callers)")
PY
