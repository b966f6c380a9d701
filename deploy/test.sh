#!/usr/bin/env bash
# The deployment test (issue 41): builds the image, PostgreSQL and the balancer from
# deploy/*Containerfile with podman, starts deploy/compose.yaml's pair with podman-compose, and
# checks, through the balancer and each instance:
#   - /readyz answers 200 through the balancer;
#   - a command tool created on instance A is listed and runs on instance B (the shared
#     database; the command sandbox working inside the container);
#   - the image runs as a non-root user.
# Then tears everything down (containers, volumes, network).
#
# No container registry is reachable here: the Debian base image is made with debootstrap from
# Debian's mirror (cached as localhost/toolsmith-base:bookworm) and the Toolsmith image packs a
# binary built outside (TOOLSMITH_BIN, default $CARGO_TARGET_DIR or target, then debug/toolsmith;
# the `prebuilt` target).
# Needs root, podman, podman-compose, debootstrap and runc (scripts/install-system-deps.sh).
# Run from anywhere: `bash deploy/test.sh`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${TOOLSMITH_BIN:-${CARGO_TARGET_DIR:-target}/debug/toolsmith}
project=toolsmith-ci-$$
base=localhost/toolsmith-base:bookworm
work=$(mktemp -d /tmp/toolsmith-deploy.XXXXXX)

for tool in podman podman-compose debootstrap runc curl; do
  command -v "$tool" >/dev/null || { echo "deploy/test.sh: $tool is missing (bash scripts/install-system-deps.sh)" >&2; exit 1; }
done
[[ -x $bin ]] || { echo "deploy/test.sh: no binary at $bin (cargo build -p toolsmith, or set TOOLSMITH_BIN)" >&2; exit 1; }

# This machine kind's container quirks: cgroups v1 (crun refuses a hybrid hierarchy; runc runs)
# and hard open-files and process limits below podman's default container limits.
cat > "$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF=$work/containers.conf

# (podman-compose 1.0, Debian 12's, has no --env-file: the settings come from the environment.)
compose() { (set -a; . "$work/env"; set +a; podman-compose -p "$project" -f deploy/compose.yaml "$@"); }
cleanup() {
  status=$?
  if [[ $status -ne 0 ]]; then
    echo "deploy/test.sh: failed; podman-compose up said (last lines):" >&2
    tail -15 "$work/up.log" >&2 2>/dev/null || true
    echo "deploy/test.sh: the containers' logs:" >&2
    for c in $(podman ps -a --filter "label=io.podman.compose.project=$project" --format '{{.Names}}'); do
      echo "--- $c" >&2; podman logs --tail 30 "$c" >&2 || true
    done
  fi
  compose down -v >/dev/null 2>&1 || true
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT

if ! podman image exists "$base"; then
  echo "deploy/test.sh: making $base with debootstrap (once per machine)"
  debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  tar -C "$work/rootfs" -c . | podman import - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi

echo "deploy/test.sh: building the images"
mkdir "$work/ctx"
cp "$bin" "$work/ctx/toolsmith"
build() { podman build -q --build-arg BASE="$base" "$@" >/dev/null; }
build -f deploy/Containerfile --target prebuilt -t localhost/toolsmith:ci "$work/ctx"
build -f deploy/postgres.Containerfile -t localhost/toolsmith-postgres:ci .
build -f deploy/lb.Containerfile -t localhost/toolsmith-lb:ci .

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
admin=$(openssl rand -hex 32)
cat > "$work/env" <<ENV
POSTGRES_PASSWORD=$(openssl rand -hex 16)
TOOLSMITH_SECRET_KEY=$(openssl rand -base64 32)
TOOLSMITH_ADMIN_TOKEN=$admin
TOOLSMITH_PUBLISH=127.0.0.1:$port
TOOLSMITH_IMAGE=localhost/toolsmith:ci
TOOLSMITH_POSTGRES_IMAGE=localhost/toolsmith-postgres:ci
TOOLSMITH_LB_IMAGE=localhost/toolsmith-lb:ci
ENV

echo "deploy/test.sh: starting the pair (project $project, balancer on 127.0.0.1:$port)"
compose up -d >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
# podman-compose 1.0 goes on (and exits 0) when a container fails to start: check each runs.
container() { podman ps -a --filter "label=io.podman.compose.project=$project" --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | head -1; }
for service in postgres toolsmith-a toolsmith-b lb; do
  name=$(container "$service")
  state=$([[ -n $name ]] && podman inspect --format '{{.State.Status}}' "$name" || true)
  [[ $state == running ]] || { echo "deploy/test.sh: $service is ${state:-missing}, not running" >&2; exit 1; }
done

ready=
for _ in $(seq 1 120); do
  if [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz") == 200 ]]; then ready=1; break; fi
  sleep 1
done
[[ -n $ready ]] || { echo "deploy/test.sh: /readyz through the balancer never answered 200" >&2; exit 1; }
echo "deploy/test.sh: /readyz through the balancer: 200"

a=$(container toolsmith-a); b=$(container toolsmith-b)
# Each instance answers for itself (inside its container: the balancer would pick one).
api() { # container method path [body]
  podman exec "$1" curl -sS -X "$2" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    ${4:+--data "$4"} "http://127.0.0.1:8787$3"
}
for c in "$a" "$b"; do
  for _ in $(seq 1 60); do
    [[ $(podman exec "$c" curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8787/readyz) == 200 ]] && break
    sleep 1
  done
done

user=$(podman exec "$a" id -u)
[[ $user != 0 ]] || { echo "deploy/test.sh: the image runs as root" >&2; exit 1; }

created=$(api "$a" POST /api/v1/custom-tools '{"name":"deploy_echo","description":"Echo a word back, in the command sandbox","parameters":{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]},"command":"echo hello {{.word}}"}')
id=$(printf '%s' "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["id"])') \
  || { echo "deploy/test.sh: creating a tool on instance A failed: $created" >&2; exit 1; }
ran=$(api "$b" POST "/api/v1/custom-tools/$id/execute" '{"arguments":{"word":"from-b"}}')
printf '%s' "$ran" | grep -q 'hello from-b' \
  || { echo "deploy/test.sh: the tool made on A did not run on B: $ran" >&2; exit 1; }
echo "deploy/test.sh: a command tool created on instance A ran on instance B"
via_lb=$(curl -sS -H "Authorization: Bearer $admin" "http://127.0.0.1:$port/api/v1/custom-tools/$id")
printf '%s' "$via_lb" | grep -q deploy_echo \
  || { echo "deploy/test.sh: the balancer does not serve the tool: $via_lb" >&2; exit 1; }
echo "deploy/test.sh: passed"
