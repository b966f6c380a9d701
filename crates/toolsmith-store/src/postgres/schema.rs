//! The PostgreSQL schema and its versioned migrations.
//!
//! The version lives in the one-row table `toolsmith_schema`. Migrations run at start, each in
//! its own transaction under an advisory lock, so instances starting together migrate once. A
//! database whose version is newer than this build knows stops start-up
//! ([`StoreError::UnknownSchema`]); one that has a `custom_tools` table but no version was not
//! written by Toolsmith ([`StoreError::Corrupt`]); neither is changed.
//!
//! The columns mirror SQLite's (same names, same meaning) with native types: `JSONB` for JSON,
//! `TIMESTAMPTZ` (microseconds, like SQLite's text) for times, `BOOLEAN`, `BIGINT`. Text that
//! is compared or sorted uses `COLLATE "C"` in queries, so the order is the byte order SQLite
//! gives, whatever the database's locale.

use deadpool_postgres::Client;

use super::errors::pg;
use crate::StoreError;

/// The newest schema version this build knows.
pub(crate) const SCHEMA_VERSION: i64 = 18;

/// The advisory lock key that serializes migrations (any fixed number; "tsmigr" in ASCII).
const MIGRATION_LOCK: i64 = 0x7473_6d69_6772;

/// Migration `i` brings a database from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE custom_tools (
    id                TEXT PRIMARY KEY,
    owner             TEXT NOT NULL DEFAULT 'default',
    name              TEXT NOT NULL,
    kind              TEXT NOT NULL,
    description       TEXT NOT NULL,
    parameters        JSONB NOT NULL,
    code              TEXT NOT NULL,
    category          TEXT,
    tags              JSONB NOT NULL DEFAULT '[]'::jsonb,
    permissions       JSONB NOT NULL DEFAULT '[]'::jsonb,
    status            TEXT NOT NULL
                        CHECK (status IN ('active', 'disabled', 'pending_approval', 'rejected')),
    requires_approval BOOLEAN NOT NULL DEFAULT FALSE,
    created_by        TEXT NOT NULL CHECK (created_by IN ('user', 'llm')),
    version           BIGINT NOT NULL,
    revision          BIGINT NOT NULL,
    usage_count       BIGINT NOT NULL DEFAULT 0,
    last_used_at      TIMESTAMPTZ,
    metadata          JSONB NOT NULL DEFAULT '{}'::jsonb,
    created_at        TIMESTAMPTZ NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,
    CONSTRAINT custom_tools_owner_name UNIQUE (owner, name)
);
CREATE INDEX idx_custom_tools_owner_status ON custom_tools (owner, status, created_by);
CREATE INDEX idx_custom_tools_owner_category ON custom_tools (owner, category);
CREATE INDEX idx_custom_tools_owner_name_c ON custom_tools (owner, name COLLATE "C");

CREATE TABLE tool_versions (
    tool_id     TEXT NOT NULL REFERENCES custom_tools (id) ON DELETE CASCADE,
    version     BIGINT NOT NULL,
    description TEXT NOT NULL,
    parameters  JSONB NOT NULL,
    code        TEXT NOT NULL,
    permissions JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tool_id, version)
);

CREATE TABLE tool_executions (
    id              TEXT PRIMARY KEY,
    tool_id         TEXT NOT NULL,
    tool_name       TEXT NOT NULL,
    tool_version    BIGINT NOT NULL,
    owner           TEXT NOT NULL,
    conversation_id TEXT,
    status          TEXT NOT NULL,
    error_kind      TEXT,
    error           TEXT,
    duration_ms     DOUBLE PRECISION NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_tool_executions_owner_tool ON tool_executions (owner, tool_id, created_at);
CREATE INDEX idx_tool_executions_owner_created ON tool_executions (owner, created_at);
CREATE INDEX idx_tool_executions_created ON tool_executions (created_at);

CREATE TABLE tool_name_retired (
    owner         TEXT NOT NULL,
    name          TEXT NOT NULL,
    last_revision BIGINT NOT NULL,
    PRIMARY KEY (owner, name)
);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    scopes       JSONB NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    agent_id     TEXT
);

CREATE TABLE config_services (
    id              TEXT PRIMARY KEY,
    owner           TEXT NOT NULL,
    name            TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    description     TEXT,
    category        TEXT,
    docs_url        TEXT,
    multi_entry     BOOLEAN NOT NULL DEFAULT FALSE,
    fields          JSONB NOT NULL,
    registered_by   JSONB NOT NULL DEFAULT '[]'::jsonb,
    auto_registered BOOLEAN NOT NULL DEFAULT FALSE,
    revision        BIGINT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    CONSTRAINT config_services_owner_name UNIQUE (owner, name)
);

CREATE TABLE config_entries (
    id           TEXT PRIMARY KEY,
    service_id   TEXT NOT NULL REFERENCES config_services (id) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    is_default   BOOLEAN NOT NULL DEFAULT FALSE,
    field_values JSONB NOT NULL,
    revision     BIGINT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    CONSTRAINT config_entries_service_label UNIQUE (service_id, label)
);
CREATE UNIQUE INDEX idx_config_entries_one_default ON config_entries (service_id) WHERE is_default;

CREATE TABLE execution_approvals (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    tool_name    TEXT NOT NULL,
    tool_key     TEXT NOT NULL,
    caller       TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    args_preview TEXT NOT NULL,
    status       TEXT NOT NULL
                   CHECK (status IN ('pending', 'allowed', 'consumed', 'denied', 'expired')),
    decision     TEXT CHECK (decision IN ('allow_once', 'allow_always', 'deny')),
    decided_by   TEXT,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    decided_at   TIMESTAMPTZ
);
CREATE INDEX idx_execution_approvals_call
    ON execution_approvals (owner, tool_key, caller, args_hash, status);
CREATE INDEX idx_execution_approvals_status ON execution_approvals (status, created_at);

CREATE TABLE approval_grants (
    owner      TEXT NOT NULL,
    tool_key   TEXT NOT NULL,
    caller     TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (owner, tool_key, caller)
);

CREATE TABLE audit_log (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at              TIMESTAMPTZ NOT NULL,
    actor           TEXT NOT NULL,
    actor_kind      TEXT NOT NULL,
    action          TEXT NOT NULL,
    target_type     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    target_name     TEXT,
    before_revision BIGINT,
    after_revision  BIGINT,
    request_id      TEXT,
    details         JSONB NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX idx_audit_log_at ON audit_log (at);
CREATE INDEX idx_audit_log_target ON audit_log (target_id, id);

CREATE TABLE policies (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    document   JSONB NOT NULL,
    revision   BIGINT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
"#,
    // 2: the agent that made each execution, to filter executions by caller.
    r#"
ALTER TABLE tool_executions ADD COLUMN agent_id TEXT;
CREATE INDEX idx_tool_executions_owner_agent ON tool_executions (owner, agent_id, created_at);
"#,
    // 3: rate limits and concurrency slots shared by every instance (transient counters, not
    // data: `toolsmith db copy` leaves them out). One token bucket per (scope, key), with the
    // rate it was last spent at; a bucket that is full again is the same as no row and is
    // swept. A slot is a lease its instance renews; one that lapses (the instance died) no
    // longer counts. UNLOGGED: no WAL, so a call's take waits for no disk flush; after a
    // database crash (or on a promoted replica) the tables are empty, which is every bucket
    // full and no slot taken. A bucket's update touches no indexed column and its page keeps
    // room (fillfactor), so a hot bucket's updates stay HOT (no index writes).
    r#"
CREATE UNLOGGED TABLE limit_buckets (
    scope      TEXT NOT NULL,
    key        TEXT NOT NULL,
    tokens     DOUBLE PRECISION NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    capacity   DOUBLE PRECISION NOT NULL,
    per_second DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (scope, key)
) WITH (fillfactor = 50);

CREATE UNLOGGED TABLE limit_slots (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    TEXT NOT NULL,
    instance   TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_limit_slots_user ON limit_slots (user_id, expires_at);

-- One call's take, in one round trip: lock each bucket (created full when missing) in the
-- order given (one bucket per scope, in scope order, so two callers never wait on each other
-- in a cycle), refill it to the clock read after the locks, and spend one token of each only
-- if every one has a token; then, if a slot is asked for, count the user's live slots under
-- a per-user advisory lock and lease one. refused: 0 allowed, i > 0 bucket i was empty
-- (wait_seconds until it has a token), -1 the user's slots are all taken.
CREATE FUNCTION toolsmith_take_limits(
    p_scopes TEXT[], p_keys TEXT[], p_capacity DOUBLE PRECISION[],
    p_per_second DOUBLE PRECISION[], p_user TEXT, p_cap INTEGER, p_instance TEXT,
    p_ttl_seconds DOUBLE PRECISION,
    OUT refused INTEGER, OUT wait_seconds DOUBLE PRECISION, OUT lease BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    n INTEGER := coalesce(array_length(p_keys, 1), 0);
    k TEXT;
    held DOUBLE PRECISION;
    stamp TIMESTAMPTZ;
    tokens DOUBLE PRECISION[] := '{}';
    stamps TIMESTAMPTZ[] := '{}';
    keys TEXT[] := '{}';
    levels DOUBLE PRECISION[] := '{}';
    t TIMESTAMPTZ;
    level DOUBLE PRECISION;
    wait DOUBLE PRECISION;
    live BIGINT;
BEGIN
    refused := 0;
    wait_seconds := 0;
    lease := NULL;
    FOR i IN 1..n LOOP
        -- Keys past what an index entry holds are stored by their hash.
        k := CASE WHEN octet_length(p_keys[i]) > 256
                  THEN 'sha256:' || encode(sha256(convert_to(p_keys[i], 'UTF8')), 'hex')
                  ELSE p_keys[i] END;
        SELECT b.tokens, b.updated_at INTO held, stamp
          FROM limit_buckets b WHERE b.scope = p_scopes[i] AND b.key = k FOR UPDATE;
        IF NOT FOUND THEN
            INSERT INTO limit_buckets (scope, key, tokens, updated_at, capacity, per_second)
            VALUES (p_scopes[i], k, p_capacity[i], clock_timestamp(), p_capacity[i],
                    p_per_second[i])
            ON CONFLICT (scope, key) DO NOTHING;
            SELECT b.tokens, b.updated_at INTO held, stamp
              FROM limit_buckets b WHERE b.scope = p_scopes[i] AND b.key = k FOR UPDATE;
        END IF;
        keys := keys || k;
        tokens := tokens || held;
        stamps := stamps || stamp;
    END LOOP;
    t := clock_timestamp();
    FOR i IN 1..n LOOP
        level := least(p_capacity[i], tokens[i]
            + greatest(0, extract(epoch FROM t - stamps[i])::double precision) * p_per_second[i]);
        levels := levels || level;
        IF level < 1 THEN
            wait := CASE WHEN p_per_second[i] > 0 THEN (1 - level) / p_per_second[i] ELSE 3600 END;
            IF refused = 0 OR wait > wait_seconds THEN
                refused := i;
                wait_seconds := wait;
            END IF;
        END IF;
    END LOOP;
    IF refused > 0 THEN
        RETURN;
    END IF;
    FOR i IN 1..n LOOP
        UPDATE limit_buckets
           SET tokens = levels[i] - 1, updated_at = t, capacity = p_capacity[i],
               per_second = p_per_second[i]
         WHERE scope = p_scopes[i] AND key = keys[i];
    END LOOP;
    IF p_user IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended('toolsmith-slots:' || p_user, 0));
        SELECT count(*) INTO live FROM limit_slots WHERE user_id = p_user AND expires_at > t;
        IF live >= p_cap THEN
            refused := -1;
            RETURN;
        END IF;
        INSERT INTO limit_slots (user_id, instance, expires_at)
        VALUES (p_user, p_instance, t + make_interval(secs => p_ttl_seconds))
        RETURNING id INTO lease;
    END IF;
END
$$;
"#,
    // 4: the agent's own records (memory, tasks, notes …): every family in one table, its
    // text searched through a GIN index on the English text-search vector. `seq` mirrors
    // SQLite's FTS row id (so both schemas have the same columns for `db copy`).
    r#"
CREATE TABLE data_records (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    collection  TEXT NOT NULL,
    owner       TEXT NOT NULL,
    agent       TEXT NOT NULL DEFAULT '',
    document    JSONB NOT NULL,
    search_text TEXT NOT NULL DEFAULT '',
    dedup_key   TEXT,
    kind        TEXT,
    category    TEXT,
    weight      DOUBLE PRECISION NOT NULL DEFAULT 0,
    at          TIMESTAMPTZ,
    tags        JSONB NOT NULL DEFAULT '[]'::jsonb,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_data_records_scope ON data_records (owner, collection, agent, created_at);
CREATE UNIQUE INDEX idx_data_records_dedup
    ON data_records (owner, agent, collection, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE INDEX idx_data_records_search
    ON data_records USING GIN (to_tsvector('english'::regconfig, search_text));
"#,
    // 5: the MCP bridge: upstream servers registered through REST or the CLI (their
    // configuration as JSON, Config Center references instead of secret values), grants of a
    // server's tools to users and agents, and requests for access an admin decides.
    r#"
CREATE TABLE mcp_servers (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    config     JSONB NOT NULL,
    revision   BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    updated_by TEXT NOT NULL
);

CREATE TABLE mcp_grants (
    id           TEXT PRIMARY KEY,
    server       TEXT NOT NULL,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('user', 'agent')),
    subject      TEXT NOT NULL,
    enabled      BOOLEAN NOT NULL,
    tool_allow   JSONB NOT NULL,
    tool_deny    JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    updated_by   TEXT NOT NULL,
    UNIQUE (server, subject_kind, subject)
);

CREATE TABLE mcp_access_requests (
    id           TEXT PRIMARY KEY,
    server       TEXT NOT NULL,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('user', 'agent')),
    subject      TEXT NOT NULL,
    tools        JSONB NOT NULL,
    reason       TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    requested_by TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    decided_by   TEXT,
    decided_at   TIMESTAMPTZ,
    grant_id     TEXT
);
CREATE INDEX idx_mcp_access_requests_status ON mcp_access_requests (status, created_at);
"#,
    // 6: records due at a time, across owners (the scheduler's query every second).
    r#"
CREATE INDEX idx_data_records_due ON data_records (collection, at) WHERE at IS NOT NULL;
"#,
    // 7: how many records each owner, collection and agent holds, kept by statement-level
    // triggers (one counter update per statement, not per row: erasing a person's 100,000
    // records updates each counter once), so the per-collection limit and a listing's total
    // are read without counting the records. (No statement changes a record's owner,
    // collection or agent; PostgreSQL allows no column list on a trigger with a transition
    // table, and an update trigger would rewrite a counter on every edit.)
    r#"
CREATE TABLE data_record_counts (
    owner      TEXT NOT NULL,
    collection TEXT NOT NULL,
    agent      TEXT NOT NULL,
    n          BIGINT NOT NULL,
    PRIMARY KEY (owner, collection, agent)
);
INSERT INTO data_record_counts (owner, collection, agent, n)
    SELECT owner, collection, agent, count(*) FROM data_records GROUP BY owner, collection, agent;
CREATE FUNCTION data_record_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO data_record_counts AS c (owner, collection, agent, n)
        SELECT owner, collection, agent, count(*) FROM added
        GROUP BY owner, collection, agent ORDER BY owner, collection, agent
    ON CONFLICT (owner, collection, agent) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;
CREATE FUNCTION data_record_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE data_record_counts c SET n = c.n - gone.k
    FROM (SELECT owner, collection, agent, count(*) AS k FROM removed
          GROUP BY owner, collection, agent) gone
    WHERE c.owner = gone.owner AND c.collection = gone.collection AND c.agent = gone.agent;
    DELETE FROM data_record_counts c USING (SELECT DISTINCT owner, collection, agent FROM removed) gone
    WHERE c.owner = gone.owner AND c.collection = gone.collection AND c.agent = gone.agent
      AND c.n <= 0;
    RETURN NULL;
END
$$;
CREATE TRIGGER data_record_counts_insert AFTER INSERT ON data_records
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION data_record_counts_add();
CREATE TRIGGER data_record_counts_delete AFTER DELETE ON data_records
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
    EXECUTE FUNCTION data_record_counts_remove();
"#,
    // 8: tool tasks: tool calls run on after their request was answered (MCP tasks, REST's
    // asynchronous execute), with their status and result until they expire. `agent` is ''
    // for calls without one; `instance` is the process that runs the call. `result` is JSON
    // text, not JSONB: a tool's result may hold a NUL character, which JSONB refuses.
    r#"
CREATE TABLE tool_tasks (
    id             TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    agent          TEXT NOT NULL DEFAULT '',
    tool           TEXT NOT NULL,
    status         TEXT NOT NULL
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message TEXT,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    ttl_ms         BIGINT NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
    result         TEXT,
    instance       TEXT NOT NULL
);
CREATE INDEX idx_tool_tasks_owner ON tool_tasks (owner, agent, created_at);
CREATE INDEX idx_tool_tasks_expires ON tool_tasks (expires_at);
CREATE INDEX idx_tool_tasks_running ON tool_tasks (owner, expires_at)
    WHERE status IN ('working', 'input_required');
"#,
    // 9: each version keeps the tool's metadata as it was (its npm dependencies and their
    // lock among it), so a rollback brings them back; versions stored before read as `{}`.
    r#"
ALTER TABLE tool_versions ADD COLUMN metadata JSONB NOT NULL DEFAULT '{}'::jsonb;
"#,
    // 9: agents Toolsmith runs (issue 37): their definitions, owned by a user, each
    // revision kept (`agent_versions`); their runs (`caller_agent` '' for a person; `document`
    // the run's input, output, error and usage as JSON text) and each run's steps (`detail`
    // JSON text: a tool's result may hold a NUL character, which PostgreSQL's JSONB refuses).
    r#"
CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    name       TEXT NOT NULL,
    revision   BIGINT NOT NULL,
    definition TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE agent_versions (
    agent_id   TEXT NOT NULL,
    revision   BIGINT NOT NULL,
    definition TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_id, revision)
);
CREATE TABLE agent_runs (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    caller_agent TEXT NOT NULL DEFAULT '',
    agent_id     TEXT NOT NULL,
    status       TEXT NOT NULL
        CHECK (status IN ('running', 'waiting_approval', 'completed', 'failed', 'cancelled')),
    document     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    instance     TEXT NOT NULL
);
CREATE INDEX idx_agent_runs_owner ON agent_runs (owner, caller_agent, created_at);
CREATE INDEX idx_agent_runs_agent ON agent_runs (agent_id, status);
CREATE TABLE agent_run_steps (
    run_id TEXT NOT NULL,
    seq    BIGINT NOT NULL,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL,
    at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"#,
    // 11: what each run asked of its caller's client (issue 34): `mcp.log` and `mcp.progress`
    // messages, sampling and elicitation requests, and requests the gate refused; rows stored
    // before read as none.
    r#"
ALTER TABLE tool_executions ADD COLUMN client_logs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_progress BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_samples BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_elicitations BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_refused BIGINT NOT NULL DEFAULT 0;
"#,
    // prompts made at runtime (issue 40): owned by a user (`agent` '' for every agent of
    // the user, else the one agent that sees it), each revision of a definition kept
    // (`prompt_versions`); `definition` JSON text.
    r#"
CREATE TABLE prompts (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    agent      TEXT NOT NULL DEFAULT '',
    name       TEXT NOT NULL,
    revision   BIGINT NOT NULL,
    enabled    BOOLEAN NOT NULL DEFAULT TRUE,
    created_by TEXT NOT NULL CHECK (created_by IN ('user', 'llm')),
    definition TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE prompt_versions (
    prompt_id  TEXT NOT NULL,
    revision   BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (prompt_id, revision)
);
"#,
    // sessions with agents and subagents (issue 37, spec 001 §2, §6): a session's record
    // (`caller_agent` and `parent` '' for none; `document` its task, result, error and last run
    // as JSON text; the kept messages' count and bytes, how many were trimmed, the next
    // message's number) and its messages (`content` a JSON string: a NUL character stays
    // storable on both backends).
    r#"
CREATE TABLE agent_sessions (
    id            TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    caller_agent  TEXT NOT NULL DEFAULT '',
    agent_id      TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('session', 'subagent')),
    label         TEXT NOT NULL,
    parent        TEXT NOT NULL DEFAULT '',
    depth         BIGINT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN
        ('idle', 'running', 'completed', 'failed', 'cancelled', 'archived')),
    document      TEXT NOT NULL,
    message_count BIGINT NOT NULL DEFAULT 0,
    message_bytes BIGINT NOT NULL DEFAULT 0,
    trimmed       BIGINT NOT NULL DEFAULT 0,
    next_seq      BIGINT NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_agent_sessions_owner ON agent_sessions (owner, caller_agent, updated_at);
CREATE INDEX idx_agent_sessions_running ON agent_sessions (owner, kind, status);
CREATE INDEX idx_agent_sessions_parent ON agent_sessions (parent, status);
CREATE TABLE agent_session_messages (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    bytes      BIGINT NOT NULL,
    run_id     TEXT NOT NULL DEFAULT '',
    at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"#,
    // 13: a run's lease (issue 37): the instance running it renews `lease_until` while it
    // runs, and any instance fails a run not ended whose lease ran out (its own stopped). A
    // run not ended from before reads as lapsed at once (no instance of this schema holds it).
    r#"
ALTER TABLE agent_runs ADD COLUMN lease_until TIMESTAMPTZ;
UPDATE agent_runs SET lease_until = updated_at WHERE status IN ('running', 'waiting_approval');
CREATE INDEX idx_agent_runs_lease ON agent_runs (status, lease_until);
"#,
    // 14: agents working together (issue 38, spec 001 §7, §10): the links a person makes between
    // two agents (`document` the whole link as JSON text), the delegations made over them
    // (`run_id` '' until the target's run starts; `document` the whole delegation, `status`
    // the word that counts) and the sessions handed off to another agent.
    r#"
CREATE TABLE agent_links (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    target_agent TEXT NOT NULL,
    document     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (owner, source_agent, target_agent)
);
CREATE TABLE delegations (
    id           TEXT PRIMARY KEY,
    owner        TEXT NOT NULL,
    source_agent TEXT NOT NULL,
    target_agent TEXT NOT NULL,
    link_id      TEXT NOT NULL,
    run_id       TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    document     TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_delegations_owner ON delegations (owner, created_at);
CREATE INDEX idx_delegations_link ON delegations (link_id, status);
CREATE INDEX idx_delegations_target ON delegations (owner, target_agent, status);
CREATE INDEX idx_delegations_run ON delegations (run_id);
CREATE TABLE handoff_routes (
    session_id     TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    target_session TEXT NOT NULL,
    document       TEXT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_handoff_routes_target ON handoff_routes (owner, target_session);
"#,
    // 15: vector search (issue 39, 003 §17): each owner's named collections and their items
    // (`embedding` a REAL[], so the tables need no extension). Each collection's index is a
    // partial pgvector HNSW index of its own on `embedding::vector(N)` (`vec_index_<id>`),
    // made with the collection after `CREATE EXTENSION IF NOT EXISTS vector`
    // (postgres/vectors.rs).
    r#"
CREATE TABLE vector_collections (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    name        TEXT NOT NULL,
    dimensions  BIGINT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE vector_items (
    seq           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    collection_id TEXT NOT NULL REFERENCES vector_collections (id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    metadata      JSONB NOT NULL DEFAULT '{}',
    embedding     REAL[] NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    UNIQUE (collection_id, item_id)
);
"#,
    // 16: where the tool of each recorded call comes from (issue 36): `custom`, `builtin` or
    // `mcp` (a bridged upstream's tool); built-in and bridged calls are recorded too, owned by
    // their caller. Rows stored before were all custom tools' calls.
    r#"
ALTER TABLE tool_executions ADD COLUMN source TEXT NOT NULL DEFAULT 'custom'
    CHECK (source IN ('custom', 'builtin', 'mcp'));
CREATE INDEX idx_tool_executions_owner_source ON tool_executions (owner, source, created_at);
"#,
    // 17: organisations (issue 41): an organisation owns things as a user does (its id,
    // `org_` and 16 hex digits, in their `owner` column), so no owned table changes; these two
    // tables say who belongs to which organisation with which role.
    r#"
CREATE TABLE organizations (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    created_by   TEXT NOT NULL
);
CREATE TABLE organization_members (
    org_id   TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL,
    role     TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
    added_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX idx_organization_members_user ON organization_members (user_id);
"#,
];

const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

/// Checks the database and applies the missing migrations. `shown` names the database in
/// errors (the URL without its password).
pub(crate) async fn migrate(client: &mut Client, shown: &str) -> Result<(), StoreError> {
    loop {
        let tx = client.transaction().await.map_err(pg)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(pg)?;
        let has_version: bool = tx
            .query_one("SELECT to_regclass('toolsmith_schema') IS NOT NULL", &[])
            .await
            .map_err(pg)?
            .get(0);
        let from: i64 = if has_version {
            let row = tx
                .query_opt("SELECT version FROM toolsmith_schema", &[])
                .await
                .map_err(pg)?;
            row.map_or(0, |r| r.get(0))
        } else {
            let foreign: bool = tx
                .query_one("SELECT to_regclass('custom_tools') IS NOT NULL", &[])
                .await
                .map_err(pg)?
                .get(0);
            if foreign {
                return Err(StoreError::Corrupt {
                    path: shown.to_owned(),
                    reason: "it has a custom_tools table but no Toolsmith schema version; it \
                             was not written by Toolsmith and was left untouched"
                        .to_owned(),
                });
            }
            tx.batch_execute(
                "CREATE TABLE toolsmith_schema (
                     id      INTEGER PRIMARY KEY CHECK (id = 1),
                     version BIGINT NOT NULL
                 );
                 INSERT INTO toolsmith_schema (id, version) VALUES (1, 0);",
            )
            .await
            .map_err(pg)?;
            0
        };
        if from > SCHEMA_VERSION {
            return Err(StoreError::UnknownSchema {
                path: shown.to_owned(),
                found: from,
                supported: SCHEMA_VERSION,
            });
        }
        if from < 0 {
            return Err(StoreError::Corrupt {
                path: shown.to_owned(),
                reason: format!(
                    "it has a negative schema version ({from}); it was not written by Toolsmith"
                ),
            });
        }
        let Some(sql) = usize::try_from(from).ok().and_then(|i| MIGRATIONS.get(i)) else {
            tx.commit().await.map_err(pg)?;
            return Ok(());
        };
        let to = from + 1;
        tx.batch_execute(sql).await.map_err(pg)?;
        tx.execute("UPDATE toolsmith_schema SET version = $1", &[&to])
            .await
            .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        tracing::info!(database = %shown, version = to, "store schema migrated");
    }
}
