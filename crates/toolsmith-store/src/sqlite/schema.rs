//! Opening a SQLite file safely and bringing its schema up to date.
//!
//! The schema version lives in `PRAGMA user_version`. A file that is not a SQLite database, is
//! damaged, belongs to another program, or carries a newer schema than this build knows stops
//! the open with a clear error — it is never rewritten or replaced.

use std::path::Path;

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, ErrorCode, TransactionBehavior};

use crate::StoreError;

/// The newest schema version this build knows.
pub(crate) const SCHEMA_VERSION: i64 = 21;

/// Migration `i` brings a store from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE custom_tools (
    id                TEXT PRIMARY KEY,
    owner             TEXT NOT NULL DEFAULT 'default',
    name              TEXT NOT NULL,
    kind              TEXT NOT NULL,
    description       TEXT NOT NULL,
    parameters        TEXT NOT NULL,
    code              TEXT NOT NULL,
    category          TEXT,
    tags              TEXT NOT NULL DEFAULT '[]',
    permissions       TEXT NOT NULL DEFAULT '[]',
    status            TEXT NOT NULL
                        CHECK (status IN ('active', 'disabled', 'pending_approval', 'rejected')),
    requires_approval INTEGER NOT NULL DEFAULT 0,
    created_by        TEXT NOT NULL CHECK (created_by IN ('user', 'llm')),
    version           INTEGER NOT NULL,
    revision          INTEGER NOT NULL,
    usage_count       INTEGER NOT NULL DEFAULT 0,
    last_used_at      TEXT,
    metadata          TEXT NOT NULL DEFAULT '{}',
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    UNIQUE (owner, name)
);
-- Covers tool_stats (an index-only scan) and the status filter of listings.
CREATE INDEX idx_custom_tools_owner_status ON custom_tools (owner, status, created_by, usage_count);
CREATE INDEX idx_custom_tools_owner_category ON custom_tools (owner, category);
-- Covers the search of listings: the substring match scans this index, not the table.
CREATE INDEX idx_custom_tools_owner_search ON custom_tools (owner, name, description, category);

CREATE TABLE tool_versions (
    tool_id     TEXT NOT NULL REFERENCES custom_tools (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    description TEXT NOT NULL,
    parameters  TEXT NOT NULL,
    code        TEXT NOT NULL,
    permissions TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (tool_id, version)
);

CREATE TABLE tool_executions (
    id              TEXT PRIMARY KEY,
    tool_id         TEXT NOT NULL,
    tool_name       TEXT NOT NULL,
    tool_version    INTEGER NOT NULL,
    owner           TEXT NOT NULL,
    conversation_id TEXT,
    status          TEXT NOT NULL,
    error_kind      TEXT,
    error           TEXT,
    duration_ms     REAL NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE INDEX idx_tool_executions_owner_tool ON tool_executions (owner, tool_id, created_at);
CREATE INDEX idx_tool_executions_owner_created ON tool_executions (owner, created_at);

-- The last revision a deleted tool had, so a re-created tool of the same name starts above it.
CREATE TABLE tool_name_retired (
    owner         TEXT NOT NULL,
    name          TEXT NOT NULL,
    last_revision INTEGER NOT NULL,
    PRIMARY KEY (owner, name)
);
"#,
    r#"
-- API tokens: only a SHA-256 of each token is kept; the token itself is shown once.
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    last_used_at TEXT
);
"#,
    r#"
-- Config Center: services a tool may need, and their entries. Secret values are stored sealed
-- (encrypted above the store); field_values never holds a plaintext secret.
CREATE TABLE config_services (
    id              TEXT PRIMARY KEY,
    owner           TEXT NOT NULL,
    name            TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    description     TEXT,
    category        TEXT,
    docs_url        TEXT,
    multi_entry     INTEGER NOT NULL DEFAULT 0,
    fields          TEXT NOT NULL,
    registered_by   TEXT NOT NULL DEFAULT '[]',
    auto_registered INTEGER NOT NULL DEFAULT 0,
    revision        INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (owner, name)
);

CREATE TABLE config_entries (
    id           TEXT PRIMARY KEY,
    service_id   TEXT NOT NULL REFERENCES config_services (id) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    is_default   INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    field_values TEXT NOT NULL,
    revision     INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    UNIQUE (service_id, label)
);
-- At most one default entry per service (a partial index; PostgreSQL has the same).
CREATE UNIQUE INDEX idx_config_entries_one_default ON config_entries (service_id) WHERE is_default = 1;
"#,
    // 4: governance — approvals of executions, standing grants, the audit log, the stored
    // policy, and tokens bound to an agent.
    r#"
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
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    decided_at   TEXT
);
CREATE INDEX idx_execution_approvals_call
    ON execution_approvals (owner, tool_key, caller, args_hash, status);
CREATE INDEX idx_execution_approvals_status ON execution_approvals (status, created_at);

CREATE TABLE approval_grants (
    owner      TEXT NOT NULL,
    tool_key   TEXT NOT NULL,
    caller     TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (owner, tool_key, caller)
);

CREATE TABLE audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              TEXT NOT NULL,
    actor           TEXT NOT NULL,
    actor_kind      TEXT NOT NULL,
    action          TEXT NOT NULL,
    target_type     TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    target_name     TEXT,
    before_revision INTEGER,
    after_revision  INTEGER,
    request_id      TEXT,
    details         TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_audit_log_at ON audit_log (at);
CREATE INDEX idx_audit_log_target ON audit_log (target_id, id);

CREATE TABLE policies (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    document   TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

ALTER TABLE api_tokens ADD COLUMN agent_id TEXT;
"#,
    // 5: the agent that made each execution, to filter executions by caller.
    r#"
ALTER TABLE tool_executions ADD COLUMN agent_id TEXT;
CREATE INDEX idx_tool_executions_owner_agent ON tool_executions (owner, agent_id, created_at);
"#,
    // 6: the agent's own records (memory, tasks, notes …): every family in one table, its
    // text in an FTS5 index kept in step by triggers. `seq` is the FTS row id (an INTEGER
    // PRIMARY KEY, so VACUUM keeps it); `id` is the record's name outside.
    r#"
CREATE TABLE data_records (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    collection  TEXT NOT NULL,
    owner       TEXT NOT NULL,
    agent       TEXT NOT NULL DEFAULT '',
    document    TEXT NOT NULL,
    search_text TEXT NOT NULL DEFAULT '',
    dedup_key   TEXT,
    kind        TEXT,
    category    TEXT,
    weight      REAL NOT NULL DEFAULT 0,
    at          TEXT,
    tags        TEXT NOT NULL DEFAULT '[]',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX idx_data_records_scope ON data_records (owner, collection, agent, created_at);
CREATE UNIQUE INDEX idx_data_records_dedup
    ON data_records (owner, agent, collection, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE VIRTUAL TABLE data_records_fts USING fts5(
    search_text, content = 'data_records', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER data_records_fts_insert AFTER INSERT ON data_records BEGIN
    INSERT INTO data_records_fts (rowid, search_text) VALUES (new.seq, new.search_text);
END;
CREATE TRIGGER data_records_fts_delete AFTER DELETE ON data_records BEGIN
    INSERT INTO data_records_fts (data_records_fts, rowid, search_text)
    VALUES ('delete', old.seq, old.search_text);
END;
CREATE TRIGGER data_records_fts_update AFTER UPDATE OF search_text ON data_records BEGIN
    INSERT INTO data_records_fts (data_records_fts, rowid, search_text)
    VALUES ('delete', old.seq, old.search_text);
    INSERT INTO data_records_fts (rowid, search_text) VALUES (new.seq, new.search_text);
END;
"#,
    // 7: the MCP bridge: upstream servers registered through REST or the CLI (their
    // configuration as JSON, Config Center references instead of secret values), grants of a
    // server's tools to users and agents, and requests for access an admin decides.
    r#"
CREATE TABLE mcp_servers (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    config     TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

CREATE TABLE mcp_grants (
    id           TEXT PRIMARY KEY,
    server       TEXT NOT NULL,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('user', 'agent')),
    subject      TEXT NOT NULL,
    enabled      INTEGER NOT NULL,
    tool_allow   TEXT NOT NULL,
    tool_deny    TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    updated_by   TEXT NOT NULL,
    UNIQUE (server, subject_kind, subject)
);

CREATE TABLE mcp_access_requests (
    id           TEXT PRIMARY KEY,
    server       TEXT NOT NULL,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('user', 'agent')),
    subject      TEXT NOT NULL,
    tools        TEXT NOT NULL,
    reason       TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    requested_by TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    decided_by   TEXT,
    decided_at   TEXT,
    grant_id     TEXT
);
CREATE INDEX idx_mcp_access_requests_status ON mcp_access_requests (status, created_at);
"#,
    // 8: records due at a time, across owners (the scheduler's query every second).
    r#"
CREATE INDEX idx_data_records_due ON data_records (collection, at) WHERE at IS NOT NULL;
"#,
    // 9: how many records each owner, collection and agent holds, kept by triggers, so the
    // per-collection limit and a listing's total are read without counting the records. (No
    // statement changes a record's owner, collection or agent.)
    r#"
CREATE TABLE data_record_counts (
    owner      TEXT NOT NULL,
    collection TEXT NOT NULL,
    agent      TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (owner, collection, agent)
) WITHOUT ROWID;
INSERT INTO data_record_counts (owner, collection, agent, n)
    SELECT owner, collection, agent, count(*) FROM data_records GROUP BY owner, collection, agent;
CREATE TRIGGER data_record_counts_insert AFTER INSERT ON data_records BEGIN
    INSERT INTO data_record_counts (owner, collection, agent, n)
    VALUES (new.owner, new.collection, new.agent, 1)
    ON CONFLICT (owner, collection, agent) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER data_record_counts_delete AFTER DELETE ON data_records BEGIN
    UPDATE data_record_counts SET n = n - 1
    WHERE owner = old.owner AND collection = old.collection AND agent = old.agent;
    DELETE FROM data_record_counts
    WHERE owner = old.owner AND collection = old.collection AND agent = old.agent AND n <= 0;
END;
"#,
    // 10: tool tasks: tool calls run on after their request was answered (MCP tasks, REST's
    // asynchronous execute), with their status and result until they expire. `agent` is ''
    // for calls without one; `instance` is the process that runs the call.
    r#"
CREATE TABLE tool_tasks (
    id             TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    agent          TEXT NOT NULL DEFAULT '',
    tool           TEXT NOT NULL,
    status         TEXT NOT NULL
        CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    ttl_ms         INTEGER NOT NULL,
    expires_at     TEXT NOT NULL,
    result         TEXT,
    instance       TEXT NOT NULL
);
CREATE INDEX idx_tool_tasks_owner ON tool_tasks (owner, agent, created_at);
CREATE INDEX idx_tool_tasks_expires ON tool_tasks (expires_at);
CREATE INDEX idx_tool_tasks_running ON tool_tasks (owner, expires_at)
    WHERE status IN ('working', 'input_required');
"#,
    // 11: each version keeps the tool's metadata as it was (its npm dependencies and their
    // lock among it), so a rollback brings them back; versions stored before read as `{}`.
    r#"
ALTER TABLE tool_versions ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
"#,
    // 11: agents Toolsmith runs (issue 37): their definitions, owned by a user, each
    // revision kept (`agent_versions`); their runs (`caller_agent` '' for a person; `document`
    // the run's input, output, error and usage as JSON text) and each run's steps (`detail`
    // JSON text: a tool's result may hold a NUL character, which PostgreSQL's JSONB refuses).
    r#"
CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    name       TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE agent_versions (
    agent_id   TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
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
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    instance     TEXT NOT NULL
);
CREATE INDEX idx_agent_runs_owner ON agent_runs (owner, caller_agent, created_at);
CREATE INDEX idx_agent_runs_agent ON agent_runs (agent_id, status);
CREATE TABLE agent_run_steps (
    run_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    kind   TEXT NOT NULL,
    detail TEXT NOT NULL,
    at     TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"#,
    // 13: what each run asked of its caller's client (issue 34): `mcp.log` and `mcp.progress`
    // messages, sampling and elicitation requests, and requests the gate refused; rows stored
    // before read as none.
    r#"
ALTER TABLE tool_executions ADD COLUMN client_logs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_progress INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_samples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_elicitations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_executions ADD COLUMN client_refused INTEGER NOT NULL DEFAULT 0;
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
    revision   INTEGER NOT NULL,
    enabled    INTEGER NOT NULL DEFAULT 1,
    created_by TEXT NOT NULL CHECK (created_by IN ('user', 'llm')),
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE prompt_versions (
    prompt_id  TEXT NOT NULL,
    revision   INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at TEXT NOT NULL,
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
    depth         INTEGER NOT NULL,
    status        TEXT NOT NULL CHECK (status IN
        ('idle', 'running', 'completed', 'failed', 'cancelled', 'archived')),
    document      TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    message_bytes INTEGER NOT NULL DEFAULT 0,
    trimmed       INTEGER NOT NULL DEFAULT 0,
    next_seq      INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX idx_agent_sessions_owner ON agent_sessions (owner, caller_agent, updated_at);
CREATE INDEX idx_agent_sessions_running ON agent_sessions (owner, kind, status);
CREATE INDEX idx_agent_sessions_parent ON agent_sessions (parent, status);
CREATE TABLE agent_session_messages (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    run_id     TEXT NOT NULL DEFAULT '',
    at         TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"#,
    // 15: the server-wide analytics read every owner's executions of a period, newest first:
    // by this index, in its order (PostgreSQL has had it from the start), instead of sorting
    // the period's rows in a temporary B-tree.
    r#"
CREATE INDEX idx_tool_executions_created ON tool_executions (created_at);
"#,
    // 16: a run's lease (issue 37): the instance running it renews `lease_until` while it
    // runs, and any instance fails a run not ended whose lease ran out (its own stopped). A
    // run not ended from before reads as lapsed at once (no instance of this schema holds it).
    r#"
ALTER TABLE agent_runs ADD COLUMN lease_until TEXT;
UPDATE agent_runs SET lease_until = updated_at WHERE status IN ('running', 'waiting_approval');
CREATE INDEX idx_agent_runs_lease ON agent_runs (status, lease_until);
"#,
    // 17: agents working together (issue 38, spec 001 §7, §10): the links a person makes between
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
    created_at   TEXT NOT NULL,
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
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
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
    created_at     TEXT NOT NULL
);
CREATE INDEX idx_handoff_routes_target ON handoff_routes (owner, target_session);
"#,
    // 18: vector search (issue 39, 003 §17): each owner's named collections and their items
    // (`embedding` the little-endian f32s, `metadata` JSON text). Each collection's index is a
    // sqlite-vec `vec0` table of its own (`vec_index_<id>`, rowid = `seq`), made with the
    // collection and derived from these rows (sqlite/vectors.rs).
    r#"
CREATE TABLE vector_collections (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    name        TEXT NOT NULL,
    dimensions  INTEGER NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (owner, name)
);
CREATE TABLE vector_items (
    seq           INTEGER PRIMARY KEY,
    collection_id TEXT NOT NULL REFERENCES vector_collections (id) ON DELETE CASCADE,
    item_id       TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    metadata      TEXT NOT NULL DEFAULT '{}',
    embedding     BLOB NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (collection_id, item_id)
);
"#,
    // 19: where the tool of each recorded call comes from (issue 36): `custom`, `builtin` or
    // `mcp` (a bridged upstream's tool); built-in and bridged calls are recorded too, owned by
    // their caller. Rows stored before were all custom tools' calls.
    r#"
ALTER TABLE tool_executions ADD COLUMN source TEXT NOT NULL DEFAULT 'custom'
    CHECK (source IN ('custom', 'builtin', 'mcp'));
CREATE INDEX idx_tool_executions_owner_source ON tool_executions (owner, source, created_at);
"#,
    // 20: organisations (issue 41): an organisation owns things as a user does (its id,
    // `org_` and 16 hex digits, in their `owner` column), so no owned table changes; these two
    // tables say who belongs to which organisation with which role.
    r#"
CREATE TABLE organizations (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    created_by   TEXT NOT NULL
);
CREATE TABLE organization_members (
    org_id   TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL,
    role     TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
    added_at TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX idx_organization_members_user ON organization_members (user_id);
"#,
];

const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

/// Opens (creating if missing) the database file, checks it, and migrates it.
///
/// Nothing is written to an existing file before it has been recognised as a Toolsmith store
/// (or an empty database): the first statement only reads the header.
pub(crate) fn open_checked(path: &Path) -> Result<Connection, StoreError> {
    super::vectors::register_sqlite_vec();
    let shown = path.display().to_string();
    let corrupt = |reason: String| StoreError::Corrupt {
        path: shown.clone(),
        reason,
    };
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| {
            StoreError::Backend(
                format!("cannot create the directory {}: {e}", parent.display()).into(),
            )
        })?;
    }
    if path.is_dir() {
        return Err(corrupt("it is a directory, not a database file".to_owned()));
    }
    create_private_or_check(path, &shown)?;
    let mut conn = Connection::open(path).map_err(|e| classify(&shown, e))?;
    // Read before writing anything: a file that is not a database fails here, untouched.
    let version = user_version(&conn).map_err(|e| classify(&shown, e))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::UnknownSchema {
            path: shown,
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    if version < 0 {
        return Err(corrupt(format!(
            "it has a negative schema version ({version}); it was not written by Toolsmith"
        )));
    }
    if version == 0 {
        let n_tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |row| row.get(0),
            )
            .map_err(|e| classify(&shown, e))?;
        if n_tables > 0 {
            return Err(corrupt(
                "it is a SQLite database of another program (it has tables but no Toolsmith \
                 schema version); the file was left untouched"
                    .to_owned(),
            ));
        }
    } else {
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .map_err(|e| classify(&shown, e))?;
        if check != "ok" {
            return Err(corrupt(format!(
                "integrity check failed: {check}; the file was left untouched"
            )));
        }
        let has_tools: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'custom_tools'",
                [],
                |row| row.get(0),
            )
            .map_err(|e| classify(&shown, e))?;
        if has_tools == 0 {
            return Err(corrupt(format!(
                "it has schema version {version} but no custom_tools table; it was not written \
                 by Toolsmith and was left untouched"
            )));
        }
    }
    configure(&conn).map_err(|e| classify(&shown, e))?;
    migrate(&mut conn, &shown)?;
    Ok(conn)
}

/// Creates a missing database file with mode 0600 (SQLite gives its WAL and shared-memory
/// files the same mode), so other local users cannot read tokens' hashes, audit entries or
/// sealed secrets. An existing file of 0 bytes is refused like any other unusable file: it is
/// not a store that can be taken as new (its tokens would be gone and a loopback server would
/// run open).
fn create_private_or_check(path: &Path, shown: &str) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::metadata(path).map_err(|e| io_refusal(shown, "read", &e))?;
            if meta.is_file() && meta.len() == 0 {
                return Err(StoreError::Corrupt {
                    path: shown.to_owned(),
                    reason:
                        "it is empty (0 bytes), so it holds no Toolsmith store; a new store is \
                             created only where no file exists. Restore the database from a \
                             backup, or remove the empty file to start a new store; the file was \
                             left untouched"
                            .to_owned(),
                });
            }
            Ok(())
        }
        Err(e) => Err(io_refusal(shown, "create", &e)),
    }
}

/// A file-system failure on the database, said in words with the path (read-only file
/// system, permission denied), not SQLite's "unable to open database file".
fn io_refusal(shown: &str, action: &str, e: &std::io::Error) -> StoreError {
    let why = match e.kind() {
        std::io::ErrorKind::ReadOnlyFilesystem => "the file system is read-only".to_owned(),
        std::io::ErrorKind::PermissionDenied => {
            "permission denied (check the owner and mode of the file and its directory)".to_owned()
        }
        _ => e.to_string(),
    };
    StoreError::Backend(format!("cannot {action} the database file {shown}: {why}").into())
}

/// Opens a reader connection to an already checked and migrated file. It refuses writes.
pub(crate) fn open_reader(path: &Path) -> Result<Connection, StoreError> {
    super::vectors::register_sqlite_vec();
    let shown = path.display().to_string();
    let conn = Connection::open(path).map_err(|e| classify(&shown, e))?;
    configure(&conn).map_err(|e| classify(&shown, e))?;
    conn.pragma_update(None, "query_only", true)
        .map_err(|e| classify(&shown, e))?;
    Ok(conn)
}

/// Per-connection settings.
///
/// Durability: WAL with `synchronous = NORMAL`. A commit is appended to the WAL file before the
/// call returns, so it survives the *process* being killed at any point (the data is in the OS
/// page cache and reaches the disk later). Only a power loss or an OS crash can lose the last
/// commits before a checkpoint — never corrupt the database. `synchronous = FULL` would close
/// that window at the cost of an fsync per commit.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(mode = %mode, "the store could not switch to WAL mode; reads may wait for writes");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Reads of a 10,000-tool store (about 10 MB with typical code) come from memory: a larger
    // page cache, and the file mapped so that cache misses cost no system call. (With the file
    // mapped, an I/O error while reading surfaces as SIGBUS instead of an error code; SQLite
    // never maps the WAL, so writes are unaffected.)
    conn.pragma_update(None, "cache_size", -16_000)?;
    conn.pragma_update(None, "mmap_size", 256 * 1024 * 1024)?;
    // SQLite's own lower() folds ASCII only; searches fold every script, as PostgreSQL does.
    conn.create_scalar_function(
        "lower",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(bytes) => {
                    SqlValue::Text(String::from_utf8_lossy(bytes).to_lowercase())
                }
                ValueRef::Null => SqlValue::Null,
                ValueRef::Integer(i) => SqlValue::Integer(i),
                ValueRef::Real(r) => SqlValue::Real(r),
                ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
            })
        },
    )?;
    Ok(())
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Applies the missing migrations, each in its own `BEGIN IMMEDIATE` transaction that re-reads
/// the version (another process may have migrated in the meantime).
fn migrate(conn: &mut Connection, shown: &str) -> Result<(), StoreError> {
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(shown, e))?;
        let from = user_version(&tx).map_err(|e| classify(shown, e))?;
        if from > SCHEMA_VERSION {
            return Err(StoreError::UnknownSchema {
                path: shown.to_owned(),
                found: from,
                supported: SCHEMA_VERSION,
            });
        }
        let Some(sql) = usize::try_from(from).ok().and_then(|i| MIGRATIONS.get(i)) else {
            return Ok(());
        };
        let to = from + 1;
        tx.execute_batch(sql).map_err(|e| classify(shown, e))?;
        tx.pragma_update(None, "user_version", to)
            .map_err(|e| classify(shown, e))?;
        tx.commit().map_err(|e| classify(shown, e))?;
        tracing::info!(path = %shown, version = to, "store schema migrated");
    }
}

/// Tells damaged or foreign files apart from other failures.
pub(crate) fn classify(path: &str, e: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(err, _) = &e
        && matches!(
            err.code,
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt
        )
    {
        return StoreError::Corrupt {
            path: path.to_owned(),
            reason: format!("{e}; the file was left untouched"),
        };
    }
    if let rusqlite::Error::SqliteFailure(err, _) = &e {
        let why = match err.code {
            ErrorCode::ReadOnly => Some(
                "it is read-only (a read-only file system, or no write permission on the file, \
                 its directory, or its -wal and -shm files)",
            ),
            ErrorCode::CannotOpen => Some(
                "it cannot be opened (permission denied or a read-only directory: SQLite needs \
                 to create its -wal and -shm files next to it)",
            ),
            ErrorCode::PermissionDenied => Some("permission denied"),
            _ => None,
        };
        if let Some(why) = why {
            return StoreError::Backend(format!("the database file {path}: {why} ({e})").into());
        }
    }
    StoreError::Backend(Box::new(e))
}
