#!/usr/bin/env bash
# Installs the system packages Toolsmith needs at run time and in its tests:
#   bubblewrap   `bwrap`, the OS sandbox of command tools (crates/toolsmith-command)
#   util-linux   `prlimit` (rlimits inside the sandbox) and `setpriv` (drop from root to nobody)
#   git          the git tools (crates/toolsmith-builtins/src/git), run inside that sandbox
#   postgresql   `initdb`, `pg_ctl`, `postgres`: the tests start a private cluster to run the store
#                and two-instance tests against a real PostgreSQL (PATH or /usr/lib/postgresql/*/bin)
#   chromium     `/usr/bin/chromium`, the browser of the web UI's end-to-end tests
#                (crates/toolsmith/tests/cli/ui_browser.rs), driven headless by playwright-core
#   podman, podman-compose, debootstrap, runc
#                the deployment test (deploy/test.sh) builds the container images and runs
#                deploy/compose.yaml's pair; debootstrap makes the Debian base image (no container
#                registry is needed), runc runs containers where crun cannot (cgroups v1)
#   openssl      `openssl`: the PostgreSQL TLS tests make their CA and certificates with it
#   mount        `mount`: under root, a workspace run's private bind mount (toolsmith-command)
#   pgvector     the `vector` extension of vector search on PostgreSQL (crates/toolsmith-store/src/
#                postgres/vectors.rs): Debian 12 ships no postgresql-15-pgvector, so it is built from
#                the source kept in third_party/pgvector (v0.8.6, PostgreSQL licence) against the
#                installed server with postgresql-server-dev-<major>, make and gcc; nothing is downloaded
#   python3, python3-pip, nodejs
#                `/usr/bin/python3` (execute_python, compile_code), its pip (package_manager) and
#                `/usr/bin/node` (sandbox_run_js): the code tools run the host's own interpreters
#                inside the sandbox, which sees /usr/bin only (not pyenv or nvm shims)
#   dovecot-imapd, python3-aiosmtpd
#                the email tools' tests (crates/toolsmith-server/tests/server/mcp_email.rs) start
#                `/usr/sbin/dovecot` (IMAP) and `python3 -m aiosmtpd` (SMTP) on 127.0.0.1 with
#                their own configuration in a temp dir; no system service is used (Debian's
#                package, so no pip install meets PEP 668)
# Idempotent: installs only what is missing. Installs with apt-get when running as root on a
# Debian-like system; otherwise prints what is missing and exits non-zero.
# Run from anywhere: `bash scripts/install-system-deps.sh`.
set -euo pipefail

declare -A package_of=([bwrap]=bubblewrap [prlimit]=util-linux [setpriv]=util-linux [git]=git [chromium]=chromium [openssl]=openssl [podman]=podman [podman-compose]=podman-compose [debootstrap]=debootstrap [runc]=runc)

missing=()
# The server binaries of PostgreSQL: on PATH, or where Debian's packages put them.
have_postgres() {
  command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

for tool in bwrap prlimit setpriv git chromium openssl podman podman-compose debootstrap runc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    pkg="${package_of[$tool]}"
    [[ " ${missing[*]-} " == *" $pkg "* ]] || missing+=("$pkg")
  fi
done
have_postgres || missing+=("postgresql")
command -v mount >/dev/null 2>&1 || missing+=("mount")
[[ -x /usr/bin/python3 ]] || missing+=("python3")
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=("python3-pip")
[[ -x /usr/bin/node ]] || missing+=("nodejs")
[[ -x /usr/sbin/dovecot ]] || missing+=("dovecot-imapd")
/usr/bin/python3 -c 'import aiosmtpd' >/dev/null 2>&1 || missing+=("python3-aiosmtpd")
# deploy/test.sh's containers reach each other by name: Debian's podman, installed without its
# recommends, networks through CNI, whose name resolution is the dnsname plugin (netavark would
# bring aardvark-dns instead).
has_container_dns() { [[ -x /usr/lib/cni/dnsname || -x /usr/lib/podman/aardvark-dns ]]; }
has_container_dns || missing+=("golang-github-containernetworking-plugin-dnsname")

# pgvector: built from third_party/pgvector for every installed PostgreSQL major version that
# lacks it (after the packages below, so a fresh machine gets the server first).
install_pgvector() {
  local root pg_config major
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  for pg_config in /usr/lib/postgresql/*/bin/pg_config; do
    [[ -x "$pg_config" ]] || continue
    [[ -f "$("$pg_config" --sharedir)/extension/vector.control" ]] && continue
    major="$("$pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
    if [[ ! -f "$("$pg_config" --includedir-server)/postgres.h" ]] || ! command -v make >/dev/null 2>&1 || ! command -v gcc >/dev/null 2>&1; then
      if [[ "$EUID" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        echo "install-system-deps: pgvector needs postgresql-server-dev-$major, make and gcc (apt-get install postgresql-server-dev-$major make gcc)" >&2
        return 1
      fi
      apt-get install -y -qq --no-install-recommends "postgresql-server-dev-$major" make gcc
    fi
    echo "install-system-deps: building pgvector for PostgreSQL $major"
    local build
    build="$(mktemp -d)"
    cp -r "$root/third_party/pgvector/." "$build/"
    make -s -C "$build" PG_CONFIG="$pg_config" OPTFLAGS="" with_llvm=no >/dev/null
    make -s -C "$build" PG_CONFIG="$pg_config" with_llvm=no install >/dev/null
    rm -rf "$build"
  done
}

if [[ ${#missing[@]} -eq 0 ]]; then
  install_pgvector
  echo "install-system-deps: bwrap, prlimit, setpriv, mount, git, chromium, openssl, podman (with podman-compose, debootstrap, runc, container DNS), python3 (with pip and aiosmtpd), node, dovecot and the PostgreSQL server binaries are present"
  exit 0
fi

if [[ "$EUID" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: missing packages: ${missing[*]}" >&2
  echo "install-system-deps: install them as root (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "install-system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

for tool in bwrap prlimit setpriv git chromium openssl podman podman-compose debootstrap runc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install-system-deps: $tool is still missing after the install" >&2
    exit 1
  fi
done
if ! have_postgres; then
  echo "install-system-deps: initdb/pg_ctl are still missing after installing postgresql" >&2
  exit 1
fi
if ! has_container_dns; then
  echo "install-system-deps: podman's container name resolution (the CNI dnsname plugin) is still missing" >&2
  exit 1
fi
if [[ ! -x /usr/sbin/dovecot ]]; then
  echo "install-system-deps: /usr/sbin/dovecot is still missing after installing dovecot-imapd" >&2
  exit 1
fi
install_pgvector
echo "install-system-deps: done"
