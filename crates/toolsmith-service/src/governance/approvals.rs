//! Human approval of executions (spec 000, Layer 8): which calls wait for a person, the
//! pending approvals they leave, and the decisions that release them.
//!
//! - [`ExecutionApproval`] is the setting: `llm_tools` (every tool marked `requires_approval`,
//!   which all LLM-created tools are), `dangerous` (tools holding `network`, `shell`,
//!   `filesystem` or `email`), or `off`.
//! - [`ApprovalMiddleware`] sits in the pipeline after the policy. A call that needs a person
//!   runs if the caller holds an `allow_always` grant for the tool, or if an `allow_once`
//!   approval of exactly this call (same tool, caller and arguments) is waiting to be used.
//!   Otherwise it leaves a pending approval (or finds the one already waiting) and, if the
//!   call's context carries an [`Approver`](toolsmith_core::Approver) (an MCP client with
//!   elicitation), asks the person and continues with their answer; without one it answers
//!   `approval_required` naming the approval, and the same call made after a person allowed
//!   it runs.
//! - An approval not decided within its time (default 2 minutes) is expired: denied.
//! - A decision taken anywhere settles the one call waiting for it: a call held in the
//!   client's form wakes when a person decides through REST, the UI or the CLI (in-process
//!   through [`ApprovalGate::note_decided`], which every decision of this process and the
//!   PostgreSQL change feed call; decisions of another process are read again every
//!   [`RECHECK`] besides), and the form is withdrawn.
//! - A denial is final for its call: the same call (tool, caller, arguments) made again before
//!   the approval would have expired is told who denied it and when, and no new approval is
//!   asked for.
//!
//! The caller of an approval is the agent (empty when none is named); grants bind to the tool's
//! id, so a tool deleted and re-created under the same name starts without them, and a change
//! of a tool's code revokes them; a bridged tool's bind to its definition (`tool_key`), so an
//! upstream that changes a tool's description or schema leaves them behind.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolsmith_core::{
    ApprovalAnswer, ApprovalQuestion, Call, ErrorKind, Middleware, Permission, RegisteredTool,
    ToolContext, ToolOrigin, ToolResult,
};
use toolsmith_store::{ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, Store};

use crate::error::ServiceError;
use crate::governance::audit::{AuditLog, AuditTarget};
use crate::governance::scrubbing::ScrubMiddleware;
use crate::input::Actor;

/// The longest argument preview kept with an approval, in characters.
const MAX_PREVIEW_CHARS: usize = 2000;

/// How often a call waiting in its client's form reads its approval again, for decisions
/// taken by another process (the CLI on the same SQLite file; another instance whose notice
/// was lost).
pub const RECHECK: Duration = Duration::from_secs(1);

/// Where a person can decide an approval that the caller's client could not put to them:
/// named in the reply that tells the model to ask, so it never points at a door that is not
/// there (`toolsmith mcp` over stdio has no web UI and no REST API).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ApprovalDoors {
    /// `toolsmith serve`: the web UI, the REST API and the CLI.
    #[default]
    Server,
    /// `toolsmith mcp` over stdio: the CLI on the same store, whose global option (e.g.
    /// `--data-dir /srv/toolsmith`) is given here; a `toolsmith serve` on that store also works.
    Local { store_option: String },
}

impl ApprovalDoors {
    /// Where a person decides approval `id`, as a clause for a reply.
    pub fn describe(&self, id: &str) -> String {
        match self {
            ApprovalDoors::Server => format!(
                "in the Toolsmith web UI (Approvals), with `toolsmith approvals allow {id}` \
                 (add the server's --data-dir), or with POST /api/v1/approvals/{id}/decision"
            ),
            ApprovalDoors::Local { store_option } => format!(
                "in a terminal with `toolsmith {store_option} approvals allow {id}` (this \
                 stdio server has no web UI or REST API; a `toolsmith serve` on the same store \
                 shows it too)"
            ),
        }
    }

    /// Where a person approves the stored tool `name` (id `id`) that waits in
    /// `pending_approval`, as a clause for a reply.
    pub fn describe_tool_approval(&self, name: &str, id: &str) -> String {
        match self {
            ApprovalDoors::Server => format!(
                "in the Toolsmith web UI (Tools, pending), with `toolsmith tool approve {name}` \
                 (add the server's --data-dir), or with POST /api/v1/custom-tools/{id}/approve \
                 and an admin token"
            ),
            ApprovalDoors::Local { store_option } => format!(
                "in a terminal with `toolsmith {store_option} tool approve {name}` (this stdio \
                 server has no web UI or REST API)"
            ),
        }
    }

    /// Where a person deletes the stored tool `name` (id `id`), as a clause for a reply.
    pub fn describe_tool_delete(&self, name: &str, id: &str) -> String {
        match self {
            ApprovalDoors::Server => format!(
                "in the Toolsmith web UI (Tools), with `toolsmith tool delete {name}` (add the \
                 server's --data-dir), or with DELETE /api/v1/custom-tools/{id}"
            ),
            ApprovalDoors::Local { store_option } => format!(
                "in a terminal with `toolsmith {store_option} tool delete {name}` (this stdio \
                 server has no web UI or REST API)"
            ),
        }
    }
}

/// Which executions need a human's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionApproval {
    /// Every tool marked `requires_approval` (all LLM-created tools): the spec's rule.
    #[default]
    LlmTools,
    /// Only tools holding `network`, `shell`, `filesystem` or `email`.
    Dangerous,
    /// None.
    Off,
}

impl ExecutionApproval {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::LlmTools => "llm_tools",
            Self::Dangerous => "dangerous",
            Self::Off => "off",
        }
    }

    /// Whether a call of `tool` needs a person under this setting (a built-in's confirmation
    /// aside: [`ApprovalGate::needs_person`]).
    pub fn applies_to(self, tool: &RegisteredTool) -> bool {
        match self {
            Self::LlmTools => tool.requires_approval,
            Self::Dangerous => tool
                .permissions
                .iter()
                .any(|p| p.is_dangerous() || *p == Permission::Network),
            Self::Off => false,
        }
    }
}

impl fmt::Display for ExecutionApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ExecutionApproval {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "llm_tools" => Ok(Self::LlmTools),
            "dangerous" => Ok(Self::Dangerous),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "unknown execution approval setting '{other}': expected llm_tools, dangerous or off"
            )),
        }
    }
}

/// The approvals of this process: the setting, the store, and the scrubber for previews.
pub struct ApprovalGate {
    mode: ExecutionApproval,
    ttl: Duration,
    store: Arc<dyn Store>,
    scrub: Arc<ScrubMiddleware>,
    audit: Arc<AuditLog>,
    doors: ApprovalDoors,
    /// Bumped on every decision this process takes or hears of: wakes the waiting calls.
    decisions: tokio::sync::watch::Sender<u64>,
    /// Built-ins flagged `requires_confirmation` whose calls by a model the operator does not
    /// have confirmed (`confirmation_off`; `*`: none is).
    confirmation_off: Vec<String>,
}

impl ApprovalGate {
    pub fn new(
        mode: ExecutionApproval,
        ttl: Duration,
        store: Arc<dyn Store>,
        scrub: Arc<ScrubMiddleware>,
        audit: Arc<AuditLog>,
    ) -> ApprovalGate {
        ApprovalGate {
            mode,
            ttl,
            store,
            scrub,
            audit,
            doors: ApprovalDoors::default(),
            decisions: tokio::sync::watch::Sender::new(0),
            confirmation_off: Vec::new(),
        }
    }

    /// Leaves the confirmation of these built-ins (by name; `*`: every one) to no one.
    pub fn with_confirmation_off(mut self, tools: Vec<String>) -> ApprovalGate {
        self.confirmation_off = tools;
        self
    }

    /// Whether a call of `tool` made with `ctx` waits for a person: the setting's rule
    /// ([`ExecutionApproval::applies_to`]), or a built-in flagged `requires_confirmation`
    /// (`delete_file` …) called by a model (an MCP session, an agent), unless the operator
    /// turned its confirmation off. A person's own REST or CLI call is never asked to confirm
    /// (the web UI confirms before it calls); `execution_approval = "off"` asks no one.
    pub fn needs_person(&self, tool: &RegisteredTool, ctx: &ToolContext) -> bool {
        if self.mode == ExecutionApproval::Off {
            return false;
        }
        self.mode.applies_to(tool) || self.confirms(tool, ctx)
    }

    fn confirms(&self, tool: &RegisteredTool, ctx: &ToolContext) -> bool {
        matches!(tool.origin, ToolOrigin::BuiltIn { .. })
            && tool.definition.requires_confirmation
            && ctx.by_model()
            && !self
                .confirmation_off
                .iter()
                .any(|name| name == "*" || name == tool.name())
    }

    /// Wakes the calls waiting for a decision, so each reads its approval again: called after
    /// every decision of this process, and by the change feed for another instance's.
    pub fn note_decided(&self) {
        self.decisions.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Names `doors` in the replies that ask the model to get a person's decision.
    pub fn with_doors(mut self, doors: ApprovalDoors) -> ApprovalGate {
        self.doors = doors;
        self
    }

    /// Where a person can decide an approval of this service.
    pub fn doors(&self) -> &ApprovalDoors {
        &self.doors
    }

    pub fn mode(&self) -> ExecutionApproval {
        self.mode
    }

    /// Whether the tool's own rule asks a person for this call
    /// ([`toolsmith_core::ToolExecutor::asks_person`]: a coding agent set to `prompt`);
    /// `execution_approval = "off"` asks no one, as for every other rule.
    async fn tool_asks(&self, tool: &RegisteredTool, args: &Value, ctx: &ToolContext) -> bool {
        self.mode != ExecutionApproval::Off && tool.executor.asks_person(args, ctx).await
    }

    /// Lets the call through, or says why it waits (or was denied).
    async fn check(
        &self,
        tool: &RegisteredTool,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<(), ToolResult> {
        if !self.needs_person(tool, ctx) && !self.tool_asks(tool, args, ctx).await {
            return Ok(());
        }
        let probe = self.probe(tool, args, ctx).await;
        match self.clearance(&probe).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) => return Err(store_failure(&e)),
        }
        let now = Utc::now();
        match self.store.find_denied_approval(&probe, now).await {
            Ok(Some(refused)) => return Err(denied(&refused)),
            Ok(None) => {}
            Err(e) => return Err(store_failure(&e)),
        }
        let approval = match self.store.find_pending_approval(&probe, now).await {
            Ok(Some(waiting)) => waiting,
            Ok(None) => {
                if let Err(e) = self.store.insert_approval(&probe).await {
                    return Err(store_failure(&e));
                }
                tracing::info!(approval = %probe.id, tool = %probe.tool_name, owner = %probe.owner, "execution waits for approval");
                probe
            }
            Err(e) => return Err(store_failure(&e)),
        };
        match &ctx.approver {
            Some(approver) => self.wait(&approval, approver, ctx, now).await,
            None => Err(awaiting(&approval, &self.doors)),
        }
    }

    /// Puts the question to the person through the call's client and waits for a decision,
    /// from the form or from anywhere else, until the approval expires or the call is
    /// cancelled. Leaving drops the question, which withdraws the form.
    async fn wait(
        &self,
        approval: &ApprovalRecord,
        approver: &toolsmith_core::Approver,
        ctx: &ToolContext,
        now: chrono::DateTime<Utc>,
    ) -> Result<(), ToolResult> {
        let expires_in = (approval.expires_at - now).to_std().unwrap_or_default();
        let question = ApprovalQuestion {
            approval_id: approval.id.clone(),
            tool_name: approval.tool_name.clone(),
            args_preview: approval.args_preview.clone(),
            expires_in,
        };
        let mut decisions = self.decisions.subscribe();
        decisions.mark_unchanged();
        let ask = approver.0.ask(&question);
        tokio::pin!(ask);
        let deadline = tokio::time::sleep(expires_in);
        tokio::pin!(deadline);
        let mut recheck = tokio::time::interval(RECHECK);
        recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        recheck.reset();
        loop {
            tokio::select! {
                answer = &mut ask => {
                    return match answer {
                        Some(answer) => self.apply_answer(approval, answer, &ctx.user_id).await,
                        // The form was cancelled: the approval stays pending, unless it was
                        // decided elsewhere meanwhile.
                        None => match self.settled(approval).await {
                            Some(outcome) => outcome,
                            None => Err(awaiting(approval, &self.doors)),
                        },
                    };
                }
                () = &mut deadline => {
                    return match self.settled(approval).await {
                        Some(outcome) => outcome,
                        None => Err(expired(approval)),
                    };
                }
                () = ctx.cancellation.cancelled() => return Err(awaiting(approval, &self.doors)),
                Ok(()) = decisions.changed() => {}
                _ = recheck.tick() => {}
            }
            if let Some(outcome) = self.settled(approval).await {
                return outcome;
            }
        }
    }

    /// What a decision taken on `approval` means for the call waiting for it: `None` while it
    /// is still pending.
    async fn settled(&self, approval: &ApprovalRecord) -> Option<Result<(), ToolResult>> {
        match self.store.get_approval(&approval.id).await {
            Ok(Some(now)) if now.state(Utc::now()) == ApprovalStatus::Pending => None,
            Ok(Some(mut now)) => Some(self.outcome(&mut now).await),
            Ok(None) => Some(Err(denied(approval))),
            Err(e) => Some(Err(store_failure(&e))),
        }
    }

    /// Whether the call an approval in state `now` was asked for runs (using up an
    /// `allow_once`), or why not.
    async fn outcome(&self, now: &mut ApprovalRecord) -> Result<(), ToolResult> {
        match now.state(Utc::now()) {
            // This call is the one the approval allows: use it up, or do not run.
            ApprovalStatus::Allowed => match self.consume(now).await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(used_elsewhere(now)),
                Err(e) => Err(store_failure(&e)),
            },
            ApprovalStatus::Granted => Ok(()),
            // Allowed once, and another identical call used it first.
            ApprovalStatus::Consumed => Err(used_elsewhere(now)),
            ApprovalStatus::Expired | ApprovalStatus::Pending => Err(expired(now)),
            ApprovalStatus::Denied => Err(denied(now)),
        }
    }

    /// Whether a grant or an allowed approval of exactly this call lets it run (using up the
    /// approval).
    async fn clearance(&self, probe: &ApprovalRecord) -> Result<bool, toolsmith_store::StoreError> {
        if self
            .store
            .has_approval_grant(&probe.owner, &probe.tool_key, &probe.caller)
            .await?
        {
            return Ok(true);
        }
        Ok(self.store.consume_allowed_approval(probe).await?.is_some())
    }

    /// The person's answer, asked during the call: recorded like any decision, and then the
    /// call continues or is denied.
    async fn apply_answer(
        &self,
        approval: &ApprovalRecord,
        answer: ApprovalAnswer,
        user: &str,
    ) -> Result<(), ToolResult> {
        let decision = decision_of(answer);
        match self
            .store
            .decide_approval(&approval.id, decision, user, Utc::now())
            .await
        {
            Ok(Some(decided)) => {
                self.note_decided();
                self.audit_decision(&Actor::user(user), &decided, Via::Client)
                    .await;
            }
            // Decided elsewhere meanwhile (REST, CLI): that decision stands.
            Ok(None) => {}
            Err(e) => return Err(store_failure(&e)),
        }
        match self.store.get_approval(&approval.id).await {
            Ok(Some(mut now)) => self.outcome(&mut now).await,
            Ok(None) => Err(denied(approval)),
            Err(e) => Err(store_failure(&e)),
        }
    }

    /// Uses up the allowed approval `approval` (as a probe of its call, made now).
    async fn consume(
        &self,
        approval: &mut ApprovalRecord,
    ) -> Result<Option<String>, toolsmith_store::StoreError> {
        approval.created_at = Utc::now();
        self.store.consume_allowed_approval(approval).await
    }

    /// The approval this call would leave: its tool, caller and arguments.
    async fn probe(
        &self,
        tool: &RegisteredTool,
        args: &Value,
        ctx: &ToolContext,
    ) -> ApprovalRecord {
        let mut preview = args.clone();
        self.scrub.scrub_value(&ctx.user_id, &mut preview).await;
        let mut args_preview = preview.to_string();
        if args_preview.chars().count() > MAX_PREVIEW_CHARS {
            args_preview = args_preview
                .chars()
                .take(MAX_PREVIEW_CHARS)
                .collect::<String>()
                + "…";
        }
        let now = Utc::now();
        ApprovalRecord {
            id: new_approval_id(),
            owner: ctx.user_id.clone(),
            tool_name: tool.name().to_owned(),
            tool_key: tool_key(tool),
            caller: ctx.agent_id.clone().unwrap_or_default(),
            args_hash: args_hash(args),
            args_preview,
            status: ApprovalStatus::Pending,
            decision: None,
            decided_by: None,
            created_at: now,
            // The settings bound the timeout; checked all the same, so no value ever panics.
            expires_at: chrono::Duration::from_std(self.ttl)
                .ok()
                .and_then(|ttl| now.checked_add_signed(ttl))
                .unwrap_or(now + chrono::Duration::minutes(2)),
            decided_at: None,
        }
    }

    /// Approvals of `owner` (every owner's for `None`), newest first.
    pub async fn list(
        &self,
        owner: Option<&str>,
        pending_only: bool,
        limit: u32,
    ) -> Result<Vec<ApprovalRecord>, ServiceError> {
        self.list_in(ApprovalScope::owner(owner), pending_only, limit)
            .await
    }

    /// The approvals `scope` sees, newest first.
    pub async fn list_in(
        &self,
        scope: ApprovalScope<'_>,
        pending_only: bool,
        limit: u32,
    ) -> Result<Vec<ApprovalRecord>, ServiceError> {
        let query = ApprovalQuery {
            owner: scope.owner.map(str::to_owned),
            caller: scope.agent.map(str::to_owned),
            pending_only,
            limit: limit.clamp(1, 1000),
        };
        Ok(self.store.list_approvals(&query, Utc::now()).await?)
    }

    /// One approval, if `owner` may see it (`None`: any owner's).
    pub async fn get(&self, owner: Option<&str>, id: &str) -> Result<ApprovalRecord, ServiceError> {
        self.get_in(ApprovalScope::owner(owner), id).await
    }

    /// One approval, if `scope` sees it.
    pub async fn get_in(
        &self,
        scope: ApprovalScope<'_>,
        id: &str,
    ) -> Result<ApprovalRecord, ServiceError> {
        match self.store.get_approval(id).await? {
            Some(a) if scope.sees(&a) => Ok(a),
            _ => Err(ServiceError::NotFound(format!("no approval with id {id}"))),
        }
    }

    /// A person's decision on a pending approval, through the REST API. `decided_by` is the
    /// person's user id.
    pub async fn decide(
        &self,
        owner: Option<&str>,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
    ) -> Result<ApprovalRecord, ServiceError> {
        self.decide_as(&Actor::user(decided_by), owner, id, decision, Via::Api)
            .await
    }

    /// A decision of `actor` (a person: the user id is recorded as `decided_by`, the request id
    /// goes to the audit log) made through `via`. A model — any caller acting as an agent —
    /// never decides, whatever door it came through.
    pub async fn decide_as(
        &self,
        actor: &Actor,
        owner: Option<&str>,
        id: &str,
        decision: ApprovalDecision,
        via: Via,
    ) -> Result<ApprovalRecord, ServiceError> {
        if actor.is_llm() {
            let who = match &actor.agent {
                Some(agent) => format!("the caller acts as agent '{agent}'"),
                None => "the caller is the model".to_owned(),
            };
            return Err(ServiceError::Forbidden(format!(
                "{who}; an agent cannot decide approvals — a person must (the web UI, REST or the CLI, without an agent)"
            )));
        }
        // In an organisation, the person decides (the organisation owns the approval).
        let decided_by = actor.person();
        let current = self.get(owner, id).await?;
        let now = Utc::now();
        let state = current.state(now);
        if state != ApprovalStatus::Pending {
            return Err(ServiceError::InvalidState(format!(
                "approval {id} is {state}, not pending: it cannot be decided any more"
            )));
        }
        match self
            .store
            .decide_approval(id, decision, decided_by, now)
            .await?
        {
            Some(decided) => {
                self.note_decided();
                tracing::info!(approval = %id, decision = %decision, by = %decided_by, via = via.as_str(), "approval decided");
                self.audit_decision(actor, &decided, via).await;
                Ok(decided)
            }
            None => Err(ServiceError::InvalidState(format!(
                "approval {id} was decided or expired meanwhile"
            ))),
        }
    }

    async fn audit_decision(&self, actor: &Actor, decided: &ApprovalRecord, via: Via) {
        self.audit
            .record(
                actor,
                "approval.decide",
                AuditTarget::new("approval", decided.id.clone(), Some(decided.tool_name.clone())),
                (None, None),
                json!({
                    "decision": decided.decision, "owner": decided.owner, "toolKey": decided.tool_key,
                    "agent": decided.caller, "via": via.as_str(),
                }),
            )
            .await;
    }

    /// How many approvals wait for a decision now.
    pub async fn pending_count(&self) -> u64 {
        self.store
            .count_pending_approvals(Utc::now())
            .await
            .unwrap_or(0)
    }
}

/// Whose approvals a caller sees: an admin (a person) every owner's, a person all of their own,
/// and an agent only those of its own calls — never its user's other agents' calls and their
/// arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalScope<'a> {
    /// One owner's approvals, or every owner's (`None`).
    pub owner: Option<&'a str>,
    /// Only the calls of this agent, or every caller's (`None`).
    pub agent: Option<&'a str>,
}

impl<'a> ApprovalScope<'a> {
    /// Every caller's approvals of `owner` (every owner's for `None`).
    pub fn owner(owner: Option<&'a str>) -> ApprovalScope<'a> {
        ApprovalScope { owner, agent: None }
    }

    /// What a caller sees: `user`'s approvals (every owner's for an admin acting as a person),
    /// and only `agent`'s calls when it acts as one.
    pub fn of_caller(user: &'a str, agent: Option<&'a str>, admin: bool) -> ApprovalScope<'a> {
        match agent {
            Some(agent) => ApprovalScope {
                owner: Some(user),
                agent: Some(agent),
            },
            None if admin => ApprovalScope::owner(None),
            None => ApprovalScope::owner(Some(user)),
        }
    }

    /// Whether `approval` is in this scope.
    pub fn sees(&self, approval: &ApprovalRecord) -> bool {
        self.owner.is_none_or(|o| o == approval.owner)
            && self.agent.is_none_or(|a| a == approval.caller)
    }
}

/// An approval as people see it (REST, CLI, UI): its state as of now, the caller as the agent
/// or `null`, and the scrubbed argument preview.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalView {
    pub id: String,
    pub tool_name: String,
    /// The agent that called, if one was named.
    pub agent: Option<String>,
    /// The arguments, scrubbed and shortened (JSON text).
    pub arguments: String,
    /// `pending`, `allowed` (once, not yet used), `consumed` (allowed once and used),
    /// `granted` (allowed always), `denied` or `expired`.
    pub status: ApprovalStatus,
    pub decision: Option<ApprovalDecision>,
    pub decided_by: Option<String>,
    pub created_at: chrono::DateTime<Utc>,
    pub expires_at: chrono::DateTime<Utc>,
    pub decided_at: Option<chrono::DateTime<Utc>>,
}

impl ApprovalView {
    pub fn of(record: &ApprovalRecord) -> ApprovalView {
        ApprovalView {
            id: record.id.clone(),
            tool_name: record.tool_name.clone(),
            agent: (!record.caller.is_empty()).then(|| record.caller.clone()),
            arguments: record.args_preview.clone(),
            status: record.state(Utc::now()),
            decision: record.decision,
            decided_by: record.decided_by.clone(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            decided_at: record.decided_at,
        }
    }
}

/// What grants bind to: the custom tool's id, or the built-in's name.
///
/// A bridged tool is what its upstream says it is, and the upstream may change that at any
/// time: its key holds a digest of the definition a person saw (title, description, input
/// schema, the confirmation and approval marks its annotations gave), so a change of any of
/// them leaves the grants and unused approvals given for the old one behind, as a change of a
/// custom tool's code revokes them.
pub(crate) fn tool_key(tool: &RegisteredTool) -> String {
    match &tool.origin {
        ToolOrigin::Custom { id, .. } => id.clone(),
        ToolOrigin::Mcp {
            server,
            tool: remote,
        } => {
            let definition = &tool.definition;
            let seen = json!([
                definition.title,
                definition.description,
                definition.parameters,
                definition.requires_confirmation,
                tool.requires_approval,
            ]);
            // The first 8 bytes of the digest: 16 hex digits.
            let digest = Sha256::digest(seen.to_string().as_bytes());
            let short = hex::encode(digest.get(..8).unwrap_or_default());
            format!("mcp:{server}:{remote}:{short}")
        }
        ToolOrigin::BuiltIn { .. } => format!("builtin:{}", tool.name()),
    }
}

/// SHA-256 of a call's arguments, hex: what an approval binds to. serde_json's maps are
/// sorted, so equal arguments hash equally.
pub fn args_hash(args: &Value) -> String {
    hex::encode(Sha256::digest(args.to_string().as_bytes()))
}

/// The decision a person's answer stands for.
pub fn decision_of(answer: ApprovalAnswer) -> ApprovalDecision {
    match answer {
        ApprovalAnswer::AllowOnce => ApprovalDecision::AllowOnce,
        ApprovalAnswer::AllowAlways => ApprovalDecision::AllowAlways,
        ApprovalAnswer::Deny => ApprovalDecision::Deny,
    }
}

/// Through which door a person decided, for the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The REST API (and the UI on it).
    Api,
    /// The `toolsmith approvals` command.
    Cli,
    /// The MCP client's approval form (elicitation, or a 2026-07-28 `inputResponses` answer).
    Client,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Api => "api",
            Via::Cli => "cli",
            Via::Client => "client",
        }
    }
}

fn new_approval_id() -> String {
    // The first 64 bits of a random UUID: 16 hex digits.
    format!("apr_{:016x}", uuid::Uuid::new_v4().as_u64_pair().0)
}

fn awaiting(approval: &ApprovalRecord, doors: &ApprovalDoors) -> ToolResult {
    ToolResult::error_with(
        ErrorKind::ApprovalRequired,
        format!(
            "awaiting approval {id}: tool '{tool}' needs a person's approval before it runs. \
             Ask the user to approve it {where_}, then make the same call again. \
             It expires at {expires}.",
            id = approval.id,
            where_ = doors.describe(&approval.id),
            tool = approval.tool_name,
            expires = approval
                .expires_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        details(json!({
            "approvalId": approval.id,
            "approvalStatus": "pending",
            "expiresAt": approval.expires_at,
        })),
    )
}

fn used_elsewhere(approval: &ApprovalRecord) -> ToolResult {
    ToolResult::error_with(
        ErrorKind::ApprovalRequired,
        format!(
            "approval {} allowed one call of '{}', and another identical call used it first; \
             make the call again to ask for a new approval",
            approval.id, approval.tool_name
        ),
        details(json!({"approvalId": approval.id})),
    )
}

fn denied(approval: &ApprovalRecord) -> ToolResult {
    let when = |t: &chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let by = match (&approval.decided_by, &approval.decided_at) {
        (Some(who), Some(at)) => format!("denied by {who} at {}", when(at)),
        _ => "denied".to_owned(),
    };
    ToolResult::error_with(
        ErrorKind::Denied,
        format!(
            "the user did not approve this call of '{tool}': {by} (approval {id}). The denial \
             is final for this call: the same call is refused until {until}; tell the user, or \
             ask them what to do instead",
            tool = approval.tool_name,
            id = approval.id,
            until = when(&approval.expires_at),
        ),
        details(json!({
            "approvalId": approval.id,
            "approvalStatus": "denied",
            "deniedBy": approval.decided_by,
            "deniedAt": approval.decided_at,
        })),
    )
}

fn expired(approval: &ApprovalRecord) -> ToolResult {
    ToolResult::error_with(
        ErrorKind::ApprovalRequired,
        format!(
            "approval {id} of this call of '{tool}' expired at {at} without a decision; the \
             call did not run. Make the call again to ask a person anew",
            id = approval.id,
            tool = approval.tool_name,
            at = approval
                .expires_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        details(json!({"approvalId": approval.id, "approvalStatus": "expired"})),
    )
}

fn details(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn store_failure(e: &toolsmith_store::StoreError) -> ToolResult {
    tracing::error!(error = %e, "approval store failure");
    ToolResult::error(
        ErrorKind::Internal,
        "the approval of this call could not be checked; it was not run".to_owned(),
    )
}

/// Holds calls that need a person until one decides.
pub struct ApprovalMiddleware(pub Arc<ApprovalGate>);

#[async_trait]
impl Middleware for ApprovalMiddleware {
    fn name(&self) -> &'static str {
        "approval"
    }

    async fn before(&self, call: &mut Call) -> Result<(), ToolResult> {
        self.0.check(&call.tool, &call.args, &call.ctx).await
    }
}

#[cfg(test)]
mod tests;
