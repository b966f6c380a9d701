//! The teams tools (spec 001 §8 "Agent Teams"): a shared coordination layer for a team of the
//! caller's agents — a **task board** (`team_tasks`: list, create, claim, complete, search) and
//! a **mailbox** (`team_message`: send, broadcast, read unread).
//!
//! A team is made by a person (REST `/api/v1/teams`, `toolsmith team`): a lead and members,
//! each one of the person's agent definitions. Only the team's lead and members call its tools
//! (the caller's `agent_id`); a person reads the board through REST.
//!
//! Everything lives in the per-user record store ([`crate::data`]), like the scheduler's
//! tasks: a team is a `team` record of its owner (`agent` `""`), its tasks and messages are
//! `team_task` and `team_message` records of the team's own scope (`agent` `team:<id>`), which
//! no other tool reads. A task's or message's state changes only through the store's
//! compare-and-set on its `at` (`Records::claim`, a conditional `UPDATE`), so of two agents
//! claiming one task — on one instance or two sharing a PostgreSQL database — exactly one wins,
//! and an unread message is delivered once.
//!
//! [`ops`] is what the service calls for the person's routes and for `TEAM.md`, the lead's
//! context file (§8 "Lead-Centric Design": only the lead gets it).

pub mod ops;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, SubsecRound, Utc};
use serde_json::{Value, json};
use toolsmith_core::data::{DataRecord, RecordOrder, RecordQuery, RecordScope};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::data::{Call, DataWork, Records, data_tool_with, new_id, record_text};
use crate::groups::{ToolGroup, off};
use crate::utilities::{Fail, choice, opt_int, required_choice, str_arg};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Teams";
/// The tool group of this family.
pub const GROUP: &str = "teams";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    GROUP,
    "Teams",
    "Agent teams: a task board the team's agents post to, claim and complete tasks on, and a mailbox they message each other through.",
    "lets your agents coordinate through a shared board and mailbox (a person makes the team)",
    ResultSource::UserData,
    &["team_tasks", "team_message"],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(Effect::Changes, &["team_tasks", "team_message"])];

/// The record store's collection of teams (scope: the owner, no agent).
pub const TEAMS: &str = "team";
/// The collection of a team's tasks (scope: [`board_scope`]).
pub const TASKS: &str = "team_task";
/// The collection of a team's messages (scope: [`board_scope`]).
pub const MESSAGES: &str = "team_message";

/// Longest task subject, in bytes.
pub const MAX_SUBJECT: usize = 500;
/// Longest task description, result or message, in bytes.
pub const MAX_TEXT: usize = 16 * 1024;
/// Most tasks one task may wait for.
pub const MAX_BLOCKED_BY: usize = 20;
/// Most tasks or messages one read returns.
pub const MAX_LIST: i64 = 100;
/// Most tasks a board holds that a listing or an unblocking pass reads.
pub const MAX_BOARD: usize = 2_000;

/// A task's status: `pending` (claimable), `blocked` (waits for others), `in_progress`
/// (claimed), `completed`.
pub const PENDING: &str = "pending";
pub const BLOCKED: &str = "blocked";
pub const IN_PROGRESS: &str = "in_progress";
pub const COMPLETED: &str = "completed";
const UNREAD: &str = "unread";
const READ: &str = "read";

/// The scope of a team's board and mailbox: its owner, and the team as the "agent".
#[must_use]
pub fn board_scope(owner: &str, team_id: &str) -> RecordScope {
    RecordScope {
        owner: owner.to_owned(),
        agent: format!("team:{team_id}"),
    }
}

/// One agent of a team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub id: String,
    pub name: String,
}

/// A team as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Team {
    pub id: String,
    pub owner: String,
    pub name: String,
    pub description: String,
    pub lead: Member,
    /// The teammates, the lead not among them.
    pub members: Vec<Member>,
    pub created_at: DateTime<Utc>,
}

impl Team {
    fn member_of(value: &Value) -> Option<Member> {
        Some(Member {
            id: value.get("id")?.as_str()?.to_owned(),
            name: value.get("name")?.as_str()?.to_owned(),
        })
    }

    /// The team a `team` record holds.
    #[must_use]
    pub fn from_record(record: &DataRecord) -> Option<Team> {
        let d = &record.document;
        Some(Team {
            id: record.id.clone(),
            owner: record.owner.clone(),
            name: d.get("name")?.as_str()?.to_owned(),
            description: d
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            lead: Team::member_of(d.get("lead")?)?,
            members: d
                .get("members")?
                .as_array()?
                .iter()
                .filter_map(Team::member_of)
                .collect(),
            created_at: record.created_at,
        })
    }

    /// The lead and every teammate.
    pub fn everyone(&self) -> impl Iterator<Item = &Member> {
        std::iter::once(&self.lead).chain(self.members.iter())
    }

    /// The agent `id` of the team, if it is the lead or a teammate.
    #[must_use]
    pub fn member(&self, id: &str) -> Option<&Member> {
        self.everyone().find(|m| m.id == id)
    }

    /// The agent of the team that `who` names (an id or a name).
    #[must_use]
    pub fn named(&self, who: &str) -> Option<&Member> {
        let who = who.trim();
        self.everyone().find(|m| m.id == who || m.name == who)
    }

    /// The name of agent `id`, or the id itself when it is not of the team (any longer).
    #[must_use]
    pub fn name_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.member(id).map_or(id, |m| m.name.as_str())
    }

    /// The team as the tools and REST show it.
    #[must_use]
    pub fn view(&self) -> Value {
        let member = |m: &Member| json!({"id": m.id, "name": m.name});
        json!({
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "lead": member(&self.lead),
            "members": self.members.iter().map(member).collect::<Vec<_>>(),
            "createdAt": self.created_at,
        })
    }
}

/// A new version stamp for a record's `at` after `old`: now, or a microsecond after `old`
/// when the clock has not moved past it, so no state is ever stamped twice.
fn next_stamp(old: Option<DateTime<Utc>>) -> DateTime<Utc> {
    let now = Utc::now().trunc_subsecs(6);
    match old {
        Some(old) if now <= old => old + Duration::microseconds(1),
        _ => now,
    }
}

/// Changes `record` to `document` with status `kind` if nobody changed it since it was read
/// (the store's compare-and-set on `at`): whether this call did.
pub(crate) async fn transition(
    records: &dyn Records,
    record: &DataRecord,
    kind: &str,
    document: Value,
) -> Result<bool, Fail> {
    let Some(expected) = record.at else {
        return Err(Fail::Run(format!(
            "the {} record {} has no version stamp; it was not written by the teams tools",
            record.collection, record.id
        )));
    };
    let mut changed = record.clone();
    changed.document = document;
    changed.kind = Some(kind.to_owned());
    changed.at = Some(next_stamp(record.at));
    changed.updated_at = Utc::now();
    Ok(records.claim(changed, expected).await?)
}

/// The teams of `owner`, by name (at most [`ops::MAX_TEAMS`]).
pub async fn teams_of(records: &dyn Records, owner: &str) -> Result<Vec<Team>, Fail> {
    let query = RecordQuery {
        owner: owner.to_owned(),
        agent: String::new(),
        collection: TEAMS.to_owned(),
        order: RecordOrder::Newest,
        ..RecordQuery::default()
    };
    let mut teams: Vec<Team> = crate::data::scan(records, query, ops::MAX_TEAMS)
        .await?
        .iter()
        .filter_map(Team::from_record)
        .collect();
    teams.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(teams)
}

/// The team a caller's tool call works on: the one named by `team` (its name or id) among
/// the caller's agent's teams, or its only team.
async fn callers_team(call: &Call<'_>) -> Result<(Team, Member), Fail> {
    let Some(agent) = call.ctx.agent_id.as_deref() else {
        return Err(Fail::Args(
            "the team tools are for a team's agents: call them inside a run of one of the \
             team's agents (a person reads the board with GET /api/v1/teams/{team}/board)"
                .to_owned(),
        ));
    };
    let named = call.args.get("team").and_then(Value::as_str);
    let mine: Vec<Team> = teams_of(call.records, &call.scope.owner)
        .await?
        .into_iter()
        // The caller's agent by id or by name (`X-Toolsmith-Agent` may name it), as
        // delegation finds it.
        .filter(|t| t.named(agent).is_some())
        .collect();
    let team = match (named, mine.as_slice()) {
        (_, []) => {
            return Err(Fail::Args(format!(
                "agent '{agent}' is in no team: a person makes one with POST /api/v1/teams (or \
                 `toolsmith team create`) naming it as the lead or a member"
            )));
        }
        (Some(named), _) => mine
            .iter()
            .find(|t| t.id == named || t.name == named)
            .cloned()
            .ok_or_else(|| {
                Fail::Args(format!(
                    "you are in no team '{named}'; yours: {}",
                    names(&mine)
                ))
            })?,
        (None, [one]) => one.clone(),
        (None, many) => {
            return Err(Fail::Args(format!(
                "you are in several teams: say which with 'team' (one of {})",
                names(many)
            )));
        }
    };
    let me = team
        .named(agent)
        .cloned()
        .ok_or_else(|| Fail::Run("the team changed meanwhile; try again".to_owned()))?;
    Ok((team, me))
}

fn names(teams: &[Team]) -> String {
    teams
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn team_property() -> Value {
    json!({"type": "string", "maxLength": 200, "description": "The team (its name or id); only needed when your agent is in several teams."})
}

fn tasks_definition() -> ToolDefinition {
    ToolDefinition::new(
        "team_tasks",
        "Your team's task board: list tasks (filter active/completed/all, order priority/newest), create one (subject, description, priority, blocked_by), claim a pending one (atomic: of several claimers one wins), complete yours with a result (which unblocks the tasks waiting for it), or search subjects and descriptions.",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "create", "claim", "complete", "search"], "description": "list: the board; create: post a task; claim: take a pending task to work on; complete: finish the task you claimed, with its result; search: full-text search over subjects and descriptions."},
                "team": team_property(),
                "filter": {"type": "string", "enum": ["active", "completed", "all"], "description": "list: active (pending, blocked, in progress; the default), completed, or all."},
                "order": {"type": "string", "enum": ["priority", "newest"], "description": "list: highest priority first (the default) or newest first."},
                "subject": {"type": "string", "maxLength": MAX_SUBJECT, "description": "create: the task in one line."},
                "description": {"type": "string", "maxLength": MAX_TEXT, "description": "create: what to do, in full: the teammate who claims it reads nothing else."},
                "priority": {"type": "integer", "minimum": 0, "maximum": 100, "description": "create: higher is more urgent (default 0)."},
                "blocked_by": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_BLOCKED_BY, "description": "create: ids of tasks that must be completed before this one can be claimed."},
                "task_id": {"type": "string", "maxLength": 100, "description": "claim, complete: the task's id (from list or search)."},
                "result": {"type": "string", "maxLength": MAX_TEXT, "description": "complete: what you found or made."},
                "query": {"type": "string", "maxLength": 500, "description": "search: words to find in subjects and descriptions."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "description": "list, search: at most this many (default 50)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["team", "tasks", "board", "claim", "coordinate", "parallel", "work"])
}

fn message_definition() -> ToolDefinition {
    ToolDefinition::new(
        "team_message",
        "Your team's mailbox: send a message to one teammate (or the lead), broadcast one to every teammate, or read your unread messages (each is delivered once).",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["send", "broadcast", "read"], "description": "send: to one teammate; broadcast: to all the others; read: your unread messages, oldest first."},
                "team": team_property(),
                "to": {"type": "string", "maxLength": 200, "description": "send: the teammate (agent name or id)."},
                "text": {"type": "string", "maxLength": MAX_TEXT, "description": "send, broadcast: the message."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "description": "read: at most this many (default 50)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["team", "message", "mailbox", "broadcast", "teammate", "inbox"])
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        data_tool_with(env, CATEGORY, tasks_definition(), TaskTool),
        data_tool_with(
            env,
            CATEGORY,
            message_definition(),
            MessageTool {
                wake: env.team_wake.clone(),
            },
        ),
    ]
}

/// What a team message does besides waiting in the mailbox: the server starts a run of the
/// agent it is for (§8: "teammates are activated"), whose answer comes back to the sender.
#[async_trait]
pub trait TeamWake: Send + Sync + std::fmt::Debug {
    /// Wakes `to` of `team` with `text` (already marked as a team message from `from`); the
    /// run's id, or why no run started (the message stays in the mailbox either way).
    async fn wake(
        &self,
        ctx: &toolsmith_core::ToolContext,
        team: &Team,
        from: &Member,
        to: &Member,
        text: &str,
    ) -> Result<String, String>;
}

/// A task as the tools and REST show it.
#[must_use]
pub fn task_view(team: &Team, record: &DataRecord) -> Value {
    let d = &record.document;
    let text = |key: &str| d.get(key).and_then(Value::as_str);
    json!({
        "id": record.id,
        "subject": text("subject").unwrap_or_default(),
        "description": text("description").unwrap_or_default(),
        "priority": record.weight,
        "status": record.kind.as_deref().unwrap_or(PENDING),
        "blocked_by": d.get("blocked_by").cloned().unwrap_or_else(|| json!([])),
        "createdBy": text("createdBy").map(|id| team.name_of(id)),
        "claimedBy": text("claimedBy").map(|id| team.name_of(id)),
        "result": text("result"),
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
    })
}

/// A message as the tools and REST show it.
#[must_use]
pub fn message_view(team: &Team, record: &DataRecord) -> Value {
    let d = &record.document;
    let text = |key: &str| d.get(key).and_then(Value::as_str).unwrap_or_default();
    json!({
        "id": record.id,
        "from": team.name_of(text("from")),
        "to": team.name_of(text("to")),
        "text": text("text"),
        "broadcast": d.get("broadcast").and_then(Value::as_bool).unwrap_or(false),
        "read": record.kind.as_deref() == Some(READ),
        "at": record.created_at,
    })
}

/// Every task of a team's board (at most [`MAX_BOARD`]), newest first.
pub async fn board_tasks(records: &dyn Records, team: &Team) -> Result<Vec<DataRecord>, Fail> {
    let scope = board_scope(&team.owner, &team.id);
    let query = RecordQuery {
        owner: scope.owner,
        agent: scope.agent,
        collection: TASKS.to_owned(),
        order: RecordOrder::Newest,
        ..RecordQuery::default()
    };
    crate::data::scan(records, query, MAX_BOARD).await
}

struct TaskTool;

#[async_trait]
impl DataWork for TaskTool {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail> {
        let action = required_choice(
            &call.args,
            "action",
            &["list", "create", "claim", "complete", "search"],
        )?;
        let (team, me) = callers_team(&call).await?;
        match action {
            "create" => create_task(&call, &team, &me).await,
            "claim" => claim_task(&call, &team, &me).await,
            "complete" => complete_task(&call, &team, &me).await,
            "search" => search_tasks(&call, &team).await,
            _ => list_tasks(&call, &team).await,
        }
    }
}

async fn list_tasks(call: &Call<'_>, team: &Team) -> Result<Value, Fail> {
    let filter = choice(
        &call.args,
        "filter",
        "active",
        &["active", "completed", "all"],
    )?;
    let order = choice(&call.args, "order", "priority", &["priority", "newest"])?;
    let limit = usize::try_from(opt_int(&call.args, "limit", 50, 1, MAX_LIST)?).unwrap_or(50);
    let mut tasks: Vec<DataRecord> = board_tasks(call.records, team)
        .await?
        .into_iter()
        .filter(|t| {
            let done = t.kind.as_deref() == Some(COMPLETED);
            match filter {
                "completed" => done,
                "all" => true,
                _ => !done,
            }
        })
        .collect();
    if order == "priority" {
        // Newest first already; a stable sort keeps that order within one priority.
        tasks.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    }
    let total = tasks.len();
    Ok(json!({
        "team": team.name,
        "tasks": tasks.iter().take(limit).map(|t| task_view(team, t)).collect::<Vec<_>>(),
        "total": total,
    }))
}

async fn search_tasks(call: &Call<'_>, team: &Team) -> Result<Value, Fail> {
    let text = record_text(&call.args, "query", 500)?;
    let limit = u32::try_from(opt_int(&call.args, "limit", 50, 1, MAX_LIST)?).unwrap_or(50);
    let scope = board_scope(&team.owner, &team.id);
    let hits = call
        .records
        .query(&RecordQuery {
            owner: scope.owner,
            agent: scope.agent,
            collection: TASKS.to_owned(),
            text: Some(text.to_owned()),
            order: RecordOrder::Relevance,
            limit,
            ..RecordQuery::default()
        })
        .await?;
    Ok(json!({
        "team": team.name,
        "tasks": hits.iter().map(|h| task_view(team, &h.record)).collect::<Vec<_>>(),
    }))
}

async fn create_task(call: &Call<'_>, team: &Team, me: &Member) -> Result<Value, Fail> {
    let subject = record_text(&call.args, "subject", MAX_SUBJECT)?;
    let description = match call.args.get("description") {
        None | Some(Value::Null) => "",
        Some(_) => crate::utilities::text_arg(&call.args, "description", MAX_TEXT)?,
    };
    if description.contains('\0') {
        return Err(Fail::Args(
            "'description' contains a NUL character (\\u0000); remove it".to_owned(),
        ));
    }
    let priority = opt_int(&call.args, "priority", 0, 0, 100)?;
    let blocked_by = blocked_by_arg(&call.args)?;
    let scope = board_scope(&team.owner, &team.id);
    let mut waiting = Vec::new();
    for id in &blocked_by {
        let task = call.records.get(&scope, TASKS, id).await?.ok_or_else(|| {
            Fail::Args(format!(
                "blocked_by: no task '{id}' on the board of team '{}' (see the ids with \
                     action list)",
                team.name
            ))
        })?;
        if task.kind.as_deref() != Some(COMPLETED) {
            waiting.push(task.id);
        }
    }
    let status = if waiting.is_empty() { PENDING } else { BLOCKED };
    let mut record = DataRecord::new(
        &scope,
        TASKS,
        new_id("ttk"),
        json!({
            "subject": subject,
            "description": description,
            "blocked_by": blocked_by,
            "createdBy": me.id,
        }),
        format!("{subject}\n{description}"),
    );
    record.kind = Some(status.to_owned());
    #[allow(
        clippy::cast_precision_loss,
        reason = "a priority is from 0 to 100: exact as a float"
    )]
    {
        record.weight = priority as f64;
    }
    record.at = Some(next_stamp(None));
    let stored = match call.records.put(record).await? {
        toolsmith_core::data::PutOutcome::Inserted(r)
        | toolsmith_core::data::PutOutcome::Duplicate(r) => r,
    };
    Ok(json!({"team": team.name, "task": task_view(team, &stored)}))
}

fn blocked_by_arg(args: &Value) -> Result<Vec<String>, Fail> {
    let items = match args.get("blocked_by") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= MAX_BLOCKED_BY => items,
        Some(_) => {
            return Err(Fail::Args(format!(
                "'blocked_by' must be an array of at most {MAX_BLOCKED_BY} task ids"
            )));
        }
    };
    let mut ids: Vec<String> = Vec::new();
    for item in items {
        let id = item.as_str().map(str::trim).unwrap_or_default();
        if id.is_empty() || id.len() > 100 {
            return Err(Fail::Args(
                "every entry of 'blocked_by' must be a task id (from action list)".to_owned(),
            ));
        }
        if !ids.iter().any(|known| known == id) {
            ids.push(id.to_owned());
        }
    }
    Ok(ids)
}

async fn the_task(call: &Call<'_>, team: &Team) -> Result<DataRecord, Fail> {
    let id = str_arg(&call.args, "task_id")?.trim();
    let scope = board_scope(&team.owner, &team.id);
    call.records.get(&scope, TASKS, id).await?.ok_or_else(|| {
        Fail::Args(format!(
            "no task '{id}' on the board of team '{}': see the ids with action list",
            team.name
        ))
    })
}

async fn claim_task(call: &Call<'_>, team: &Team, me: &Member) -> Result<Value, Fail> {
    let task = the_task(call, team).await?;
    let status = task.kind.as_deref().unwrap_or(PENDING);
    if status != PENDING {
        let by = task
            .document
            .get("claimedBy")
            .and_then(Value::as_str)
            .map(|id| team.name_of(id));
        return Err(Fail::Args(match (status, by) {
            (BLOCKED, _) => format!(
                "task {} is blocked until these are completed: {}; claim a pending task \
                 instead (action list)",
                task.id,
                task.document
                    .get("blocked_by")
                    .map(Value::to_string)
                    .unwrap_or_default()
            ),
            (IN_PROGRESS, Some(by)) => format!(
                "task {} was already claimed by {by}; claim another pending task (action list)",
                task.id
            ),
            _ => format!(
                "task {} is {status}, not pending; claim a pending task (action list)",
                task.id
            ),
        }));
    }
    let mut document = task.document.clone();
    toolsmith_core::object::set(&mut document, "claimedBy", json!(me.id));
    if !transition(call.records, &task, IN_PROGRESS, document).await? {
        return Err(Fail::Args(format!(
            "task {} was claimed by another teammate just now; claim another pending task \
             (action list)",
            task.id
        )));
    }
    let claimed = the_task(call, team).await?;
    Ok(json!({"team": team.name, "claimed": true, "task": task_view(team, &claimed)}))
}

async fn complete_task(call: &Call<'_>, team: &Team, me: &Member) -> Result<Value, Fail> {
    let task = the_task(call, team).await?;
    let result = record_text(&call.args, "result", MAX_TEXT)?;
    let claimer = task.document.get("claimedBy").and_then(Value::as_str);
    if task.kind.as_deref() != Some(IN_PROGRESS) || claimer != Some(me.id.as_str()) {
        return Err(Fail::Args(format!(
            "task {} is not one you claimed and are working on (it is {}{}): claim a pending \
             task first, then complete it",
            task.id,
            task.kind.as_deref().unwrap_or(PENDING),
            claimer.map_or(String::new(), |id| format!(
                ", claimed by {}",
                team.name_of(id)
            ))
        )));
    }
    let mut document = task.document.clone();
    toolsmith_core::object::set(&mut document, "result", json!(result));
    if !transition(call.records, &task, COMPLETED, document).await? {
        return Err(Fail::Run(format!(
            "task {} changed while you completed it; read it again (action list)",
            task.id
        )));
    }
    let unblocked = unblock(call.records, team).await?;
    let done = the_task(call, team).await?;
    Ok(json!({"team": team.name, "task": task_view(team, &done), "unblocked": unblocked}))
}

/// Makes every blocked task whose blockers are all completed pending; their ids.
pub(crate) async fn unblock(records: &dyn Records, team: &Team) -> Result<Vec<String>, Fail> {
    let tasks = board_tasks(records, team).await?;
    let done: std::collections::HashSet<&str> = tasks
        .iter()
        .filter(|t| t.kind.as_deref() == Some(COMPLETED))
        .map(|t| t.id.as_str())
        .collect();
    let mut unblocked = Vec::new();
    for task in tasks.iter().filter(|t| t.kind.as_deref() == Some(BLOCKED)) {
        let ready = task
            .document
            .get("blocked_by")
            .and_then(Value::as_array)
            .is_none_or(|ids| {
                ids.iter()
                    .filter_map(Value::as_str)
                    .all(|id| done.contains(id))
            });
        // Another completion may unblock it at the same time: one of them does.
        if ready && transition(records, task, PENDING, task.document.clone()).await? {
            unblocked.push(task.id.clone());
        }
    }
    Ok(unblocked)
}

struct MessageTool {
    wake: Option<Arc<dyn TeamWake>>,
}

#[async_trait]
impl DataWork for MessageTool {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail> {
        let action = required_choice(&call.args, "action", &["send", "broadcast", "read"])?;
        let (team, me) = callers_team(&call).await?;
        match action {
            "read" => read_messages(&call, &team, &me).await,
            _ => {
                let text = record_text(&call.args, "text", MAX_TEXT)?;
                let to: Vec<Member> = if action == "send" {
                    let who = str_arg(&call.args, "to")?;
                    let to = team.named(who).cloned().ok_or_else(|| {
                        Fail::Args(format!(
                            "'{who}' is not of team '{}': send to one of {}",
                            team.name,
                            team.everyone()
                                .filter(|m| m.id != me.id)
                                .map(|m| m.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?;
                    if to.id == me.id {
                        return Err(Fail::Args(
                            "'to' is you: send to a teammate, or keep the note to yourself"
                                .to_owned(),
                        ));
                    }
                    vec![to]
                } else {
                    team.everyone().filter(|m| m.id != me.id).cloned().collect()
                };
                self.send(&call, &team, &me, &to, text, action == "broadcast")
                    .await
            }
        }
    }
}

impl MessageTool {
    async fn send(
        &self,
        call: &Call<'_>,
        team: &Team,
        me: &Member,
        to: &[Member],
        text: &str,
        broadcast: bool,
    ) -> Result<Value, Fail> {
        let scope = board_scope(&team.owner, &team.id);
        let mut sent = Vec::new();
        for member in to {
            let mut record = DataRecord::new(
                &scope,
                MESSAGES,
                new_id("tmsg"),
                json!({"from": me.id, "to": member.id, "text": text, "broadcast": broadcast}),
                text.to_owned(),
            );
            record.kind = Some(UNREAD.to_owned());
            record.category = Some(member.id.clone());
            record.at = Some(next_stamp(None));
            call.records.put(record).await?;
            // §8: a message activates the teammate it is for; its answer comes back.
            let woken = match &self.wake {
                Some(wake) => {
                    let marked = format!("[Team message from {}]: {text}", me.name);
                    match wake.wake(call.ctx, team, me, member, &marked).await {
                        Ok(run) => json!({"run": run}),
                        Err(why) => json!({"notWoken": why}),
                    }
                }
                None => json!({"notWoken": "this server runs no agents"}),
            };
            let mut entry = json!({"to": member.name});
            if let (Some(entry), Some(woken)) = (entry.as_object_mut(), woken.as_object()) {
                entry.extend(woken.clone());
            }
            sent.push(entry);
        }
        Ok(json!({"team": team.name, "sent": sent}))
    }
}

async fn read_messages(call: &Call<'_>, team: &Team, me: &Member) -> Result<Value, Fail> {
    let limit = usize::try_from(opt_int(&call.args, "limit", 50, 1, MAX_LIST)?).unwrap_or(50);
    let scope = board_scope(&team.owner, &team.id);
    let query = RecordQuery {
        owner: scope.owner,
        agent: scope.agent,
        collection: MESSAGES.to_owned(),
        kind: Some(UNREAD.to_owned()),
        category: Some(me.id.clone()),
        order: RecordOrder::Newest,
        ..RecordQuery::default()
    };
    let mut unread = crate::data::scan(call.records, query, MAX_BOARD).await?;
    unread.reverse();
    let mut delivered = Vec::new();
    for message in unread {
        if delivered.len() >= limit {
            break;
        }
        // Read once: of two reads at the same time, one gets it.
        if transition(call.records, &message, READ, message.document.clone()).await? {
            let mut read = message;
            read.kind = Some(READ.to_owned());
            delivered.push(message_view(team, &read));
        }
    }
    Ok(json!({"team": team.name, "messages": delivered}))
}

/// Leaves a message from `from` to `to` in `team`'s mailbox (a teammate's answer routed back,
/// §8); `already_read` when it reached `to` another way (its run's next turn).
pub async fn deliver(
    records: &dyn Records,
    team: &Team,
    from: &Member,
    to: &Member,
    text: &str,
    already_read: bool,
) -> Result<(), Fail> {
    let scope = board_scope(&team.owner, &team.id);
    let text: String = text.chars().take(MAX_TEXT / 4).collect();
    let mut record = DataRecord::new(
        &scope,
        MESSAGES,
        new_id("tmsg"),
        json!({"from": from.id, "to": to.id, "text": text, "broadcast": false}),
        text.clone(),
    );
    record.kind = Some(if already_read { READ } else { UNREAD }.to_owned());
    record.category = Some(to.id.clone());
    record.at = Some(next_stamp(None));
    records.put(record).await?;
    Ok(())
}
