#!/usr/bin/env bash
# Property-based test of the REST API against its own OpenAPI document.
#
#   scripts/schemathesis.sh BASE_URL        e.g. scripts/schemathesis.sh http://127.0.0.1:8787
#
# 1. Creates (or reuses) the repo's ignored `.venv` with pinned schemathesis and
#    openapi-spec-validator (needs python3 >= 3.10 with venv, and PyPI).
# 2. Fetches BASE_URL/api/v1/openapi.json and validates it as an OpenAPI 3.1 document.
# 3. Runs `schemathesis run` with every check (`--checks all`): no 5xx, every status, header,
#    content type and body as documented, schema-violating requests refused, valid ones
#    accepted, and the stateful/link checks. Bounded for CI: SCHEMATHESIS_MAX_EXAMPLES cases per
#    operation (default 50), fixed seed SCHEMATHESIS_SEED (default 1) so a run is reproducible.
#
# The settings written to a temporary config below, and why: `positive_data_acceptance` also
# accepts 422 on the operations whose request content carries meaning the document cannot
# express — tool definitions (JavaScript code, a JSON Schema as `parameters`, reserved names) and
# tool arguments (checked against each tool's own schema, which the document cannot know),
# HTTP tool definitions (YAML), and Config Center values (checked against each service's own
# fields) and policies (whose profiles and groups must exist), and custom tables (columns and
# defaults of their types, names taken) and their records (values, filters and sorts checked
# against the table's own columns), and agents (whose tool policy must compile, and whose run
# needs the model service the definition names in the caller's Config Center), and prompts
# (whose templates must compile and use only their declared arguments; a rollback names a version
# that must exist, and a render's arguments are checked against the prompt's own), and resources (a URI needs a scheme, a template's variables and code must be valid, exactly one content, base64 that decodes), and a time zone (a name the tz database must know). A
# schema-valid but semantically invalid definition is a 422 by the API's status rules.
# Running, approving and rejecting a tool in the wrong state (disabled, already active) also
# accept 400: spec 000 answers those with a 400, and the document says so.
#
# `createToken` is left out: a token it created would turn authentication on halfway through the
# run, and every later request would be a 401 (its own tests are in rest_ui.rs).
#
# Exits non-zero on any failure (schemathesis's own exit code), and on a document that does not
# validate; exits 3 when the tools cannot be installed (no python3/venv, no PyPI), so a caller
# can tell a missing prerequisite from a failed run.
#
# One worker by default (SCHEMATHESIS_WORKERS): with two, schemathesis's threads run
# hypothesis's `ast.parse` of filter lambdas at once, which CPython 3.11 can fail with
# "SystemError: AST constructor recursion depth mismatch" (a race in the interpreter, not a
# finding), reported as a runtime error of whichever operation it hit.
set -euo pipefail

SCHEMATHESIS_VERSION="4.32.5"
VALIDATOR_VERSION="0.9.0"

if [[ $# -ne 1 ]]; then
  echo "usage: scripts/schemathesis.sh BASE_URL" >&2
  exit 2
fi
base_url="${1%/}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="schemathesis==$SCHEMATHESIS_VERSION openapi-spec-validator==$VALIDATOR_VERSION"

if [[ ! -x "$venv/bin/schemathesis" || "$(cat "$venv/.toolsmith-schemathesis" 2>/dev/null)" != "$stamp" ]]; then
  python="${PYTHON:-python3}"
  echo "schemathesis.sh: installing $stamp into .venv"
  if ! { [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"; }; then
    echo "schemathesis.sh: cannot create .venv with $python" >&2
    exit 3
  fi
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "schemathesis==$SCHEMATHESIS_VERSION" "openapi-spec-validator==$VALIDATOR_VERSION"; then
    echo "schemathesis.sh: cannot install $stamp from PyPI" >&2
    exit 3
  fi
  echo "$stamp" > "$venv/.toolsmith-schemathesis"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "schemathesis.sh: validating $base_url/api/v1/openapi.json"
"$venv/bin/python" - "$base_url/api/v1/openapi.json" "$work/openapi.json" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as res:
    data = res.read()
open(sys.argv[2], "wb").write(data)
PY
"$venv/bin/openapi-spec-validator" "$work/openapi.json"

cat > "$work/schemathesis.toml" <<'TOML'
[[operations]]
include-operation-id = [
  "createCustomTool",
  "updateCustomTool",
  "testCustomTool",
  "executeTool",
  "rollbackCustomTool",
  "importCustomTool",
  "createConfigService",
  "updateConfigService",
  "createConfigEntry",
  "updateConfigEntry",
  "putPolicy",
  "registerMcpServer",
  "updateMcpServer",
  "putMcpGrant",
  "requestMcpAccess",
  "decideMcpAccessRequest",
  "createScheduledTask",
  "updateScheduledTask",
  "createCustomTable",
  "listCustomRecords",
  "createCustomRecord",
  "updateCustomRecord",
  "createAgent",
  "replaceAgent",
  "startAgentRun",
  "createPrompt",
  "replacePrompt",
  "rollbackPrompt",
  "renderPrompt",
  "createResource",
  "replaceResource",
  "setTimeZone",
]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]

[[operations]]
include-operation-id = [
  "executeCustomTool",
  "approveCustomTool",
  "rejectCustomTool",
]
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "422", "429", "5xx"]
TOML

echo "schemathesis.sh: running schemathesis $SCHEMATHESIS_VERSION against $base_url"
cd "$work"
"$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run \
  "$base_url/api/v1/openapi.json" \
  --url "$base_url" \
  --checks all \
  --exclude-operation-id createToken \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-50}" \
  --seed "${SCHEMATHESIS_SEED:-1}" \
  --generation-database none \
  --workers "${SCHEMATHESIS_WORKERS:-1}" \
  --request-timeout 30 \
  --no-color
