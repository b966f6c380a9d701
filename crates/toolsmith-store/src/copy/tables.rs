//! The tables `db copy` moves, their columns and what each column holds: the one list both
//! backends read and write by. A table or column of a database that is neither here nor in
//! [`NOT_COPIED`] stops a copy before anything is written ([`check_catalog`]), and the tests
//! hold both fresh schemas against this list, so a table added by a migration cannot be left
//! behind silently.

use super::CopyError;

/// What a column holds, in terms both backends can read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Int,
    Real,
    /// SQLite `INTEGER` 0/1, PostgreSQL `BOOLEAN`.
    Bool,
    /// SQLite JSON text, PostgreSQL `JSONB`.
    Json,
    /// SQLite RFC 3339 text (microseconds), PostgreSQL `TIMESTAMPTZ`.
    Time,
    /// An embedding: SQLite little-endian f32 `BLOB`, PostgreSQL `REAL[]`.
    Floats,
}

/// One table: its name, its columns in order, the columns it is read in order of (its primary
/// key), and its identity column (PostgreSQL's sequence is moved past the copied ids).
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    pub order_by: &'static str,
    pub identity: Option<&'static str>,
}

impl Table {
    /// The column names, comma-separated.
    pub(crate) fn column_list(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }

    /// `SELECT <columns> FROM <table> ORDER BY <key>`.
    pub(crate) fn select_all(&self) -> String {
        format!(
            "SELECT {} FROM {} ORDER BY {}",
            self.column_list(),
            self.name,
            self.order_by
        )
    }
}

use Kind::{Bool, Floats, Int, Json, Real, Text, Time};

/// Every table `db copy` copies, parents before children (foreign keys hold at each insert).
pub const TABLES: &[Table] = &[
    Table {
        name: "custom_tools",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("name", Text),
            ("kind", Text),
            ("description", Text),
            ("parameters", Json),
            ("code", Text),
            ("category", Text),
            ("tags", Json),
            ("permissions", Json),
            ("status", Text),
            ("requires_approval", Bool),
            ("created_by", Text),
            ("version", Int),
            ("revision", Int),
            ("usage_count", Int),
            ("last_used_at", Time),
            ("metadata", Json),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "tool_versions",
        columns: &[
            ("tool_id", Text),
            ("version", Int),
            ("description", Text),
            ("parameters", Json),
            ("code", Text),
            ("permissions", Json),
            ("created_at", Time),
            ("metadata", Json),
        ],
        order_by: "tool_id, version",
        identity: None,
    },
    Table {
        name: "tool_name_retired",
        columns: &[("owner", Text), ("name", Text), ("last_revision", Int)],
        order_by: "owner, name",
        identity: None,
    },
    Table {
        name: "tool_executions",
        columns: &[
            ("id", Text),
            ("tool_id", Text),
            ("tool_name", Text),
            ("tool_version", Int),
            ("owner", Text),
            ("conversation_id", Text),
            ("status", Text),
            ("error_kind", Text),
            ("error", Text),
            ("duration_ms", Real),
            ("created_at", Time),
            ("agent_id", Text),
            ("client_logs", Int),
            ("client_progress", Int),
            ("client_samples", Int),
            ("client_elicitations", Int),
            ("client_refused", Int),
            ("source", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "api_tokens",
        columns: &[
            ("id", Text),
            ("user_id", Text),
            ("name", Text),
            ("scopes", Json),
            ("token_hash", Text),
            ("created_at", Time),
            ("last_used_at", Time),
            ("agent_id", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "config_services",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("name", Text),
            ("display_name", Text),
            ("description", Text),
            ("category", Text),
            ("docs_url", Text),
            ("multi_entry", Bool),
            ("fields", Json),
            ("registered_by", Json),
            ("auto_registered", Bool),
            ("revision", Int),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // Secret values are sealed above the store and bound to their owner, service, entry and
        // field: copied as they are, with the same ids, they open with the same key.
        name: "config_entries",
        columns: &[
            ("id", Text),
            ("service_id", Text),
            ("label", Text),
            ("is_default", Bool),
            ("field_values", Json),
            ("revision", Int),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "execution_approvals",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("tool_name", Text),
            ("tool_key", Text),
            ("caller", Text),
            ("args_hash", Text),
            ("args_preview", Text),
            ("status", Text),
            ("decision", Text),
            ("decided_by", Text),
            ("created_at", Time),
            ("expires_at", Time),
            ("decided_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "approval_grants",
        columns: &[
            ("owner", Text),
            ("tool_key", Text),
            ("caller", Text),
            ("granted_by", Text),
            ("created_at", Time),
        ],
        order_by: "owner, tool_key, caller",
        identity: None,
    },
    Table {
        name: "audit_log",
        columns: &[
            ("id", Int),
            ("at", Time),
            ("actor", Text),
            ("actor_kind", Text),
            ("action", Text),
            ("target_type", Text),
            ("target_id", Text),
            ("target_name", Text),
            ("before_revision", Int),
            ("after_revision", Int),
            ("request_id", Text),
            ("details", Json),
        ],
        order_by: "id",
        identity: Some("id"),
    },
    Table {
        name: "policies",
        columns: &[
            ("id", Int),
            ("document", Json),
            ("revision", Int),
            ("updated_by", Text),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // The agent's own records; SQLite's full-text index over them is rebuilt by its
        // triggers as the rows arrive (`NOT_COPIED`), PostgreSQL's is an index.
        name: "data_records",
        columns: &[
            ("seq", Int),
            ("id", Text),
            ("collection", Text),
            ("owner", Text),
            ("agent", Text),
            ("document", Json),
            ("search_text", Text),
            ("dedup_key", Text),
            ("kind", Text),
            ("category", Text),
            ("weight", Real),
            ("at", Time),
            ("tags", Json),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "seq",
        identity: Some("seq"),
    },
    Table {
        // The MCP bridge's servers registered at run time (their configuration holds Config
        // Center references, never secret values).
        name: "mcp_servers",
        columns: &[
            ("name", Text),
            ("owner", Text),
            ("config", Json),
            ("revision", Int),
            ("created_at", Time),
            ("updated_at", Time),
            ("updated_by", Text),
        ],
        order_by: "name",
        identity: None,
    },
    Table {
        name: "mcp_grants",
        columns: &[
            ("id", Text),
            ("server", Text),
            ("subject_kind", Text),
            ("subject", Text),
            ("enabled", Bool),
            ("tool_allow", Json),
            ("tool_deny", Json),
            ("created_at", Time),
            ("updated_at", Time),
            ("updated_by", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "mcp_access_requests",
        columns: &[
            ("id", Text),
            ("server", Text),
            ("subject_kind", Text),
            ("subject", Text),
            ("tools", Json),
            ("reason", Text),
            ("status", Text),
            ("requested_by", Text),
            ("created_at", Time),
            ("decided_by", Text),
            ("decided_at", Time),
            ("grant_id", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // Tool calls run on as tasks, with their results until they expire (a task still
        // `working` in the copy expires there like any other: no instance of the copy runs it).
        name: "tool_tasks",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("agent", Text),
            ("tool", Text),
            ("status", Text),
            ("status_message", Text),
            ("created_at", Time),
            ("updated_at", Time),
            ("ttl_ms", Int),
            ("expires_at", Time),
            // JSON text in both (PostgreSQL's JSONB refuses the NUL a result may hold).
            ("result", Text),
            ("instance", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // Agents Toolsmith runs: definitions (JSON text) and every revision of them.
        name: "agents",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("name", Text),
            ("revision", Int),
            ("definition", Text),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // Sessions with agents and subagents (a subagent still `running` in the copy stays
        // so, as its run does).
        name: "agent_sessions",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("caller_agent", Text),
            ("agent_id", Text),
            ("kind", Text),
            ("label", Text),
            ("parent", Text),
            ("depth", Int),
            ("status", Text),
            ("document", Text),
            ("message_count", Int),
            ("message_bytes", Int),
            ("trimmed", Int),
            ("next_seq", Int),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "agent_session_messages",
        columns: &[
            ("session_id", Text),
            ("seq", Int),
            ("role", Text),
            // A JSON string in both (PostgreSQL's TEXT refuses the NUL a message may hold).
            ("content", Text),
            ("bytes", Int),
            ("run_id", Text),
            ("at", Time),
        ],
        order_by: "session_id, seq",
        identity: None,
    },
    Table {
        name: "agent_versions",
        columns: &[
            ("agent_id", Text),
            ("revision", Int),
            ("definition", Text),
            ("created_at", Time),
        ],
        order_by: "agent_id, revision",
        identity: None,
    },
    Table {
        // Runs of agents (a run still `running` in the copy stays so: no instance of the
        // copy runs it; cancel it there).
        name: "agent_runs",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("caller_agent", Text),
            ("agent_id", Text),
            ("status", Text),
            ("document", Text),
            ("created_at", Time),
            ("updated_at", Time),
            ("instance", Text),
            ("lease_until", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "agent_run_steps",
        columns: &[
            ("run_id", Text),
            ("seq", Int),
            ("kind", Text),
            // JSON text in both (PostgreSQL's JSONB refuses the NUL a result may hold).
            ("detail", Text),
            ("at", Time),
        ],
        order_by: "run_id, seq",
        identity: None,
    },
    Table {
        // Agent links (issue 38): the permission to delegate, made by a person.
        name: "agent_links",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("source_agent", Text),
            ("target_agent", Text),
            ("document", Text),
            ("created_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        // Delegations (a delegation still `running` in the copy counts no more once its run
        // has ended; cancel its run there).
        name: "delegations",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("source_agent", Text),
            ("target_agent", Text),
            ("link_id", Text),
            ("run_id", Text),
            ("status", Text),
            ("document", Text),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "handoff_routes",
        columns: &[
            ("session_id", Text),
            ("owner", Text),
            ("target_session", Text),
            ("document", Text),
            ("created_at", Time),
        ],
        order_by: "session_id",
        identity: None,
    },
    Table {
        // Prompts made at runtime (issue 40) and every kept version of their definitions.
        name: "prompts",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("agent", Text),
            ("name", Text),
            ("revision", Int),
            ("enabled", Bool),
            ("created_by", Text),
            ("definition", Text),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "prompt_versions",
        columns: &[
            ("prompt_id", Text),
            ("revision", Int),
            ("created_by", Text),
            ("definition", Text),
            ("created_at", Time),
        ],
        order_by: "prompt_id, revision",
        identity: None,
    },
    Table {
        name: "vector_collections",
        columns: &[
            ("id", Text),
            ("owner", Text),
            ("name", Text),
            ("dimensions", Int),
            ("description", Text),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "vector_items",
        columns: &[
            ("seq", Int),
            ("collection_id", Text),
            ("item_id", Text),
            ("content", Text),
            ("metadata", Json),
            ("embedding", Floats),
            ("created_at", Time),
            ("updated_at", Time),
        ],
        order_by: "seq",
        identity: Some("seq"),
    },
    Table {
        // Organisations (issue 41) before their members, whose rows name them.
        name: "organizations",
        columns: &[
            ("id", Text),
            ("name", Text),
            ("display_name", Text),
            ("created_at", Time),
            ("created_by", Text),
        ],
        order_by: "id",
        identity: None,
    },
    Table {
        name: "organization_members",
        columns: &[
            ("org_id", Text),
            ("user_id", Text),
            ("role", Text),
            ("added_at", Time),
        ],
        order_by: "org_id, user_id",
        identity: None,
    },
];

/// Tables a database may hold that are deliberately not copied, and why.
pub const NOT_COPIED: &[(&str, &str)] = &[
    (
        "data_record_counts",
        "how many data_records each owner, collection and agent holds: derived, kept by \
         triggers as data_records rows are written",
    ),
    (
        "data_records_fts",
        "SQLite's full-text index of data_records (an FTS5 table): derived, rebuilt by triggers \
         as data_records rows are written",
    ),
    (
        "data_records_fts_config",
        "a shadow table of SQLite's full-text index of data_records: derived",
    ),
    (
        "data_records_fts_data",
        "a shadow table of SQLite's full-text index of data_records: derived",
    ),
    (
        "data_records_fts_docsize",
        "a shadow table of SQLite's full-text index of data_records: derived",
    ),
    (
        "data_records_fts_idx",
        "a shadow table of SQLite's full-text index of data_records: derived",
    ),
    (
        "toolsmith_schema",
        "PostgreSQL's schema version: the destination is migrated by this build when opened",
    ),
    (
        "limit_buckets",
        "PostgreSQL's shared rate-limit buckets: transient counters; the destination's buckets \
         start full",
    ),
    (
        "limit_slots",
        "PostgreSQL's leased concurrency slots: they belong to the running calls of the source's \
         instances, and lapse there on their own",
    ),
];

/// SQLite's per-collection sqlite-vec tables (`vec_index_<id>` and its shadow tables): each a
/// collection's index, derived from `vector_items` and rebuilt by the destination's next write
/// (searched exactly until then), so never copied.
pub const VECTOR_INDEX_PREFIX: &str = "vec_index_";

/// Checks a database's tables and columns (`catalog`: name → column names) against
/// [`TABLES`] and [`NOT_COPIED`]: every table must be known, and every copied table must have
/// exactly the listed columns. `shown` names the database in the error.
pub fn check_catalog(shown: &str, catalog: &[(String, Vec<String>)]) -> Result<(), CopyError> {
    for (name, columns) in catalog {
        if NOT_COPIED.iter().any(|(n, _)| n == name) || name.starts_with(VECTOR_INDEX_PREFIX) {
            continue;
        }
        let Some(table) = TABLES.iter().find(|t| t.name == name) else {
            return Err(CopyError::UnknownTable {
                database: shown.to_owned(),
                table: name.clone(),
            });
        };
        let mut expected: Vec<&str> = table.columns.iter().map(|(n, _)| *n).collect();
        let mut found: Vec<&str> = columns.iter().map(String::as_str).collect();
        expected.sort_unstable();
        found.sort_unstable();
        if expected != found {
            return Err(CopyError::Columns {
                database: shown.to_owned(),
                table: name.clone(),
                expected: expected.join(", "),
                found: found.join(", "),
            });
        }
    }
    if let Some(missing) = TABLES
        .iter()
        .find(|t| !catalog.iter().any(|(n, _)| n == t.name))
    {
        return Err(CopyError::Columns {
            database: shown.to_owned(),
            table: missing.name.to_owned(),
            expected: missing.column_list(),
            found: "no such table".to_owned(),
        });
    }
    Ok(())
}
