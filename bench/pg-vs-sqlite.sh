#!/usr/bin/env bash
# Tool calls end to end on SQLite and on PostgreSQL, in one run on one machine: starts a private
# PostgreSQL cluster (the installed server binaries, a temp dir, a free loopback port; fsync off,
# as the test kit's), then `toolsmith serve` on a SQLite data dir and on the PostgreSQL database
# in turn, and runs toolsmith-loadgen's REST execute of one trivial JS tool against each (every
# call is recorded in the store: usage batches, execution rows). Prints both tables and the load
# average before and after.
#
# Usage: bench/pg-vs-sqlite.sh [seconds per run] [client counts]   (defaults: 10, "1,16")
# Debug build (the helpers' rule on the shared machine: no release builds); compare the two
# backends with each other, not with release figures. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
clients="${2:-1,16}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build -q -p toolsmith -p toolsmith-loadgen
bin="$target_dir/debug"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x "$pg_bin/initdb" ]] || { echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

work=$(mktemp -d)
chmod 755 "$work"
server_pid=""
as_pg() {
  if [[ $EUID == 0 ]]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi
}
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  as_pg "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/pg" "$work/sock"
[[ $EUID == 0 ]] && chown 65534:65534 "$work/pg" "$work/sock"
as_pg "$pg_bin/initdb" -D "$work/pg" -U postgres -A trust --no-sync -E UTF8 >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/sock/pg.log" -w \
  -o "-p $port -k $work/sock -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" \
  start >/dev/null
as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U postgres toolsmith
pg_url="postgres://postgres@127.0.0.1:$port/toolsmith"

echo "debug build; generator: 1 thread; $seconds s per run; PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') with fsync off"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for backend in sqlite postgres; do
  db=()
  [[ $backend == postgres ]] && db=(--database-url "$pg_url")
  log="$work/$backend.out"
  "$bin/toolsmith" serve --bind 127.0.0.1 --port 0 --data-dir "$work/$backend" \
    --execution-approval off "${db[@]}" >"$log" 2>"$work/$backend.err" &
  server_pid=$!
  url=""
  for _ in $(seq 1 200); do
    url=$(sed -n 's/^toolsmith listening on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -1)
    [[ -n "$url" ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/$backend.err" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n "$url" ]] || { echo "the $backend server did not start" >&2; exit 1; }
  echo "== $backend ($url)"
  "$bin/toolsmith-loadgen" --url "$url" --kind rest --clients "$clients" \
    --seconds "$seconds" --warmup 1 --threads 1
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
