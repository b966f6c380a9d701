#!/usr/bin/env bash
# The cost per call of the limits instances share on PostgreSQL: three `toolsmith serve` on one
# private PostgreSQL cluster (its own temp dir and loopback port) — no limit, a per-user rate
# limit (`--rate-per-user`, one bucket spent per call), and the rate limit plus a per-user
# concurrency cap (a slot leased and given back per call) — loaded in turn with
# toolsmith-loadgen's REST execute of one trivial JS tool, in two rounds, so the ratios come
# from one run. The limits are set so high that nothing is refused: what is measured is their
# cost, not their refusals.
#
# Usage: bench/shared-limits.sh [seconds per run] [clients]   (defaults: 10, 8)
#   BUILD=release   build and run release binaries (default: the debug build in target/debug)
# Loopback only. Needs the PostgreSQL server binaries (/usr/lib/postgresql/*/bin or PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
clients="${2:-8}"
target_dir="${CARGO_TARGET_DIR:-target}"
if [[ "${BUILD:-debug}" == release ]]; then
  cargo build --release -q -p toolsmith -p toolsmith-loadgen
  bin="$target_dir/release"
else
  cargo build -q -p toolsmith -p toolsmith-loadgen
  bin="$target_dir/debug"
fi

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -n "$pgbin" ]] || pgbin=$(dirname "$(command -v pg_ctl)")
work=$(mktemp -d)
as_pg=()
if [[ $(id -u) == 0 ]]; then
  chown nobody "$work"
  as_pg=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U postgres --auth=trust >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1" start >/dev/null
"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U postgres toolsmith
db="postgres://postgres@127.0.0.1:$port/toolsmith"

# serve NAME ARGS…: starts one instance on the database; sets $url.
serve() {
  local name=$1; shift
  mkdir -p "$work/$name"
  "$bin/toolsmith" serve --bind 127.0.0.1 --port 0 --data-dir "$work/$name" \
    --database-url "$db" --execution-approval off "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^toolsmith listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/$name.out" | head -1)
    [[ -n "$url" ]] && return
    sleep 0.1
  done
  echo "$name did not start" >&2; cat "$work/$name.err" >&2; exit 1
}
serve none;  none_url=$url
serve rate --rate-per-user 4000000000;  rate_url=$url
serve slot --rate-per-user 4000000000 --max-concurrent-per-user 100000;  slot_url=$url

echo "binaries: $bin; PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
echo "REST execute of a trivial JS tool, $clients clients, $seconds s per run"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
first=1
for round in 1 2; do
  for setup in none rate slot; do
    var="${setup}_url"
    header=()
    [[ $first == 1 ]] || header=(--no-header)
    first=0
    echo "round $round: $setup"
    "$bin/toolsmith-loadgen" --url "${!var}" --kind rest --clients "$clients" \
      --seconds "$seconds" --warmup 1 "${header[@]}"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
