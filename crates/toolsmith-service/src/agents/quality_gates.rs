//! Quality gates (spec 001 §11): checks of what a delegation answers before the agent that
//! delegated reads it. They live in the delegating (source) agent's definition,
//! `qualityGates` (§11's `quality_gates`, read as written), each on the event
//! `delegation.completed`, with one of two evaluators:
//!
//! - **agent**: a synchronous delegation (mode `gate`) from the source agent to the reviewer
//!   `agent`, over the source's link to it and under every rule of delegation, asked to answer
//!   `APPROVED` or `REJECTED: <feedback>` (read as `evaluate_loop` reads its evaluator); a
//!   name with `-` (spec 001's agent keys, `qa-reviewer`) finds the agent with `_` there;
//! - **command**: a shell `command` run by the command sandbox exactly as a command tool's is
//!   (bubblewrap, rlimits, seccomp, `nobody` under root, the deny patterns, no network, an
//!   empty private workspace), given the task and the answer in `TOOLSMITH_GATE_TASK` and
//!   `TOOLSMITH_GATE_OUTPUT`: exit 0 passes; otherwise its stderr (or stdout) is the feedback.
//!   Only a person writes one: a definition a model writes may hold agent gates only.
//!
//! A failed gate with `blockOnFailure` (the default) holds the answer back: while the retries
//! so far are fewer than its `maxRetries`, the delegated agent runs again with the feedback and
//! its previous answer, and every gate judges the new answer; then the delegation fails, its
//! error naming the gate and the last feedback. A gate that cannot run (no link to the
//! reviewer, no sandbox) fails a blocking delegation at once. A non-blocking gate's failure
//! is only recorded. Every gate's result is a `quality_gate` step of the run it judged and an
//! audit entry (`agent.quality_gate`, target the delegation).
//!
//! **Recursion prevention** (§11's `WithSkipHooks`): no gate runs on a delegation of mode
//! `gate` (a reviewer's) or `evaluate` (`evaluate_loop`'s), nor on any delegation made inside
//! such a delegation's run, however deep.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::Utc;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolsmith_command::{CommandToolSpec, RunRequest, check_denied};
use toolsmith_core::agent::{
    AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep, QualityGate,
};
use toolsmith_core::delegation::{DelegationRecord, DelegationStatus};
use toolsmith_core::{Narrowing, ToolContext};

use super::delegation::{MAX_DELEGATION_DEPTH, Mode};
use super::evaluate::{Verdict, verdict};
use super::runner::Extras;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The events a gate may name (§11 names one).
pub const GATE_EVENTS: &[&str] = &["delegation.completed"];
/// The most gates one agent has.
pub const MAX_GATES: usize = 8;
/// The most retries one gate asks for.
pub const MAX_GATE_RETRIES: u32 = 5;
/// A command gate's wall-clock limit when it names none (a command tool's default).
pub const DEFAULT_GATE_TIMEOUT_SECS: u64 = toolsmith_command::DEFAULT_TIMEOUT_SECONDS;
const MAX_COMMAND_CHARS: usize = 4096;
const MAX_REVIEWER_CHARS: usize = 64;
/// The most characters of feedback kept and given back.
const MAX_FEEDBACK_CHARS: usize = 4000;
/// The most bytes of the task and of the answer a command gate gets (an environment value
/// must stay under the kernel's 128 KiB per string).
const MAX_ENV_BYTES: usize = 100_000;
/// The most characters of the task and of the answer a reviewer or a retry is given (the
/// delegation's task limit is 100,000 in all).
const MAX_TASK_SHOWN: usize = 20_000;
const MAX_ANSWER_SHOWN: usize = 70_000;

/// Checks gates as a definition is written.
pub(crate) fn check_gates(gates: &[QualityGate]) -> Result<(), ServiceError> {
    if gates.len() > MAX_GATES {
        return Err(ServiceError::Validation(format!(
            "qualityGates: at most {MAX_GATES} gates, not {}",
            gates.len()
        )));
    }
    for (i, gate) in gates.iter().enumerate() {
        let at = format!("qualityGates[{i}]");
        let bad = |what: String| Err(ServiceError::Validation(format!("{at}.{what}")));
        if !GATE_EVENTS.contains(&gate.event.as_str()) {
            return bad(format!(
                "event: '{}' is not an event gates run on; use 'delegation.completed' (a \
                 delegation this agent made has its answer)",
                gate.event
            ));
        }
        if gate.max_retries > MAX_GATE_RETRIES {
            return bad(format!(
                "maxRetries: from 0 to {MAX_GATE_RETRIES}, not {}",
                gate.max_retries
            ));
        }
        if gate.max_retries > 0 && !gate.block_on_failure {
            return bad(
                "maxRetries: retries are for a gate that blocks; set blockOnFailure to true, \
                 or leave maxRetries out"
                    .to_owned(),
            );
        }
        match gate.kind.as_str() {
            "agent" => {
                let reviewer = gate.agent.as_deref().unwrap_or_default();
                if reviewer.trim().is_empty() || reviewer.chars().count() > MAX_REVIEWER_CHARS {
                    return bad(format!(
                        "agent: the reviewer agent (one of your agents, by name or id, at most \
                         {MAX_REVIEWER_CHARS} characters) is needed for type 'agent'"
                    ));
                }
                if gate.command.is_some() || gate.timeout_seconds.is_some() {
                    return bad(
                        "command: an 'agent' gate runs no command; leave command and \
                         timeoutSeconds out, or use type 'command'"
                            .to_owned(),
                    );
                }
            }
            "command" => {
                let command = gate.command.as_deref().unwrap_or_default();
                if command.trim().is_empty() || command.chars().count() > MAX_COMMAND_CHARS {
                    return bad(format!(
                        "command: the shell command (1 to {MAX_COMMAND_CHARS} characters) is \
                         needed for type 'command'"
                    ));
                }
                if let Err(denied) = check_denied(command) {
                    return bad(format!("command: refused: {denied}"));
                }
                if gate.agent.is_some() {
                    return bad(
                        "agent: a 'command' gate asks no agent; leave agent out, or use type \
                         'agent'"
                            .to_owned(),
                    );
                }
                let max = toolsmith_command::MAX_TIMEOUT_SECONDS;
                if let Some(t) = gate.timeout_seconds
                    && !(1..=max).contains(&t)
                {
                    return bad(format!("timeoutSeconds: from 1 to {max}, not {t}"));
                }
            }
            other => {
                return bad(format!(
                    "type: 'agent' (a reviewer agent answers APPROVED or REJECTED: feedback) \
                     or 'command' (a shell command: exit 0 passes), not '{other}'"
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a command gate in a definition a model writes: a command evaluator runs a shell
/// command in the command sandbox, which only a person may configure.
pub(crate) fn check_gates_by_model(gates: &[QualityGate]) -> Result<(), ServiceError> {
    match gates.iter().position(|g| g.kind == "command") {
        None => Ok(()),
        Some(i) => Err(ServiceError::Forbidden(format!(
            "qualityGates[{i}]: a command evaluator runs a shell command, which only a person \
             configures (PUT /api/v1/agents/{{id}}, `toolsmith agent`); use an 'agent' gate \
             (a reviewer agent)"
        ))),
    }
}

/// The first `max` characters of `text`, marked when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((i, _)) => format!("{}…", text.get(..i).unwrap_or_default()),
    }
}

/// At most `max` bytes of `text` at a character boundary, without NUL bytes (an environment
/// value holds none), and whether it was cut.
fn env_value(text: &str, max: usize) -> (String, bool) {
    let clean: String = text.chars().filter(|&c| c != '\0').collect();
    if clean.len() <= max {
        return (clean, false);
    }
    let mut end = max;
    while !clean.is_char_boundary(end) {
        end -= 1;
    }
    (clean.get(..end).unwrap_or_default().to_owned(), true)
}

/// How one gate judged one answer.
#[derive(Debug)]
enum Judged {
    Passed,
    /// Rejected, with its feedback.
    Failed(String),
    /// The gate could not judge (the reason, naming the fix).
    Broken(String),
}

impl Judged {
    fn as_str(&self) -> &'static str {
        match self {
            Judged::Passed => "passed",
            Judged::Failed(_) => "failed",
            Judged::Broken(_) => "error",
        }
    }
}

/// What a delegation's watcher needs to run its source's gates and ask its target again.
pub(crate) struct Gating {
    pub(crate) gates: Vec<QualityGate>,
    /// The delegating caller's context (its client and cancellation left out).
    pub(crate) caller: ToolContext,
    /// The context the target's runs are started with.
    pub(crate) starter: ToolContext,
    pub(crate) source: AgentRecord,
    pub(crate) target: AgentRecord,
    /// What the target was asked.
    pub(crate) input: String,
    pub(crate) scope: Narrowing,
}

impl Gating {
    pub(crate) fn new(
        caller: &ToolContext,
        starter: &ToolContext,
        source: &AgentRecord,
        target: &AgentRecord,
        input: &str,
        scope: &Narrowing,
    ) -> Gating {
        let mut caller = caller.clone();
        caller.client = None;
        caller.cancellation = CancellationToken::new();
        Gating {
            gates: source
                .definition
                .quality_gates
                .iter()
                .filter(|g| g.event == "delegation.completed")
                .cloned()
                .collect(),
            caller,
            starter: starter.clone(),
            source: source.clone(),
            target: target.clone(),
            input: input.to_owned(),
            scope: scope.clone(),
        }
    }

    fn evaluator(gate: &QualityGate) -> String {
        match gate.kind.as_str() {
            "agent" => format!("agent '{}'", gate.agent.as_deref().unwrap_or_default()),
            _ => "command".to_owned(),
        }
    }
}

type Delegated<'a> =
    Pin<Box<dyn Future<Output = Result<DelegationRecord, ServiceError>> + Send + 'a>>;

impl ToolService {
    /// Whether gates are skipped for a delegation in `mode` whose parent (the delegation the
    /// delegating run serves, if any) is `parent`: a reviewer's or an evaluate loop's
    /// delegation, or any made below one.
    pub(crate) async fn hooks_skipped(
        &self,
        owner: &str,
        mode: Mode,
        parent: Option<&DelegationRecord>,
    ) -> bool {
        if matches!(mode, Mode::Gate | Mode::Evaluate) {
            return true;
        }
        let mut next = parent.cloned();
        for _ in 0..=MAX_DELEGATION_DEPTH {
            let Some(d) = next else { return false };
            if d.mode == Mode::Gate.as_str() || d.mode == Mode::Evaluate.as_str() {
                return true;
            }
            next = match d.parent_run.as_deref() {
                Some(run) => self
                    .store
                    .delegation_of_run(owner, run)
                    .await
                    .ok()
                    .flatten(),
                None => None,
            };
        }
        false
    }

    /// `delegate`, boxed: a reviewer's delegation is made from inside a delegation's watcher.
    fn delegate_boxed<'a>(
        self: &'a Arc<Self>,
        ctx: &'a ToolContext,
        target: &'a str,
        task: String,
    ) -> Delegated<'a> {
        Box::pin(self.delegate(ctx, target, task, None, Mode::Gate))
    }

    /// Runs the gates of `gating` on `run`, the target's completed run of `record`, asking the
    /// target again with the feedback while a blocking gate fails and retries remain. The run
    /// whose end the delegation records: the last one, failed when a blocking gate held its
    /// answer back.
    pub(crate) async fn gated(
        self: &Arc<Self>,
        gating: Gating,
        record: &mut DelegationRecord,
        mut run: AgentRunRecord,
    ) -> AgentRunRecord {
        let mut retries = 0u32;
        loop {
            if run.status != AgentRunStatus::Completed {
                return run;
            }
            let answer = run.output.clone().unwrap_or_default();
            let mut again = None;
            for (i, gate) in gating.gates.iter().enumerate() {
                let n = i + 1;
                let (judged, mut detail) = self.judge(&gating, gate, record, &answer).await;
                let blocking = gate.block_on_failure;
                for (key, value) in [
                    ("gate", json!(n)),
                    ("event", json!(gate.event)),
                    ("type", json!(gate.kind)),
                    ("evaluator", json!(Gating::evaluator(gate))),
                    ("verdict", json!(judged.as_str())),
                    ("blocking", json!(blocking)),
                    ("attempt", json!(retries + 1)),
                    ("delegation", json!(record.id)),
                ] {
                    toolsmith_core::object::set(&mut detail, key, value);
                }
                match &judged {
                    Judged::Failed(f) | Judged::Broken(f) => {
                        toolsmith_core::object::set(&mut detail, "feedback", json!(f));
                    }
                    Judged::Passed => {}
                }
                self.gate_recorded(&gating, record, &run, detail).await;
                let about = format!("quality gate {n} ({})", Gating::evaluator(gate));
                match judged {
                    Judged::Passed => {}
                    Judged::Failed(_) | Judged::Broken(_) if !blocking => {}
                    Judged::Broken(why) => {
                        return held_back(
                            run,
                            format!(
                                "{about} of agent '{}' could not judge the answer: {why}",
                                gating.source.name
                            ),
                        );
                    }
                    Judged::Failed(feedback) if retries < gate.max_retries => {
                        again = Some(feedback);
                        break;
                    }
                    Judged::Failed(feedback) => {
                        return held_back(
                            run.clone(),
                            format!(
                                "{about} of agent '{}' rejected the answer of '{}' {} time(s), \
                                 its maxRetries ({}) used up: {feedback}. The last answer is in \
                                 run {}; change the task, or the gate (qualityGates of '{}')",
                                gating.source.name,
                                gating.target.name,
                                retries + 1,
                                gate.max_retries,
                                run.id,
                                gating.source.name
                            ),
                        );
                    }
                }
            }
            let Some(feedback) = again else {
                return run;
            };
            // A cancel made while the gates ran ends it here.
            if let Ok(Some(now)) = self.store.get_delegation(&record.owner, &record.id).await
                && now.status != DelegationStatus::Running
            {
                run.status = AgentRunStatus::Cancelled;
                run.output = None;
                run.error = now
                    .error
                    .or(Some("cancelled while its quality gates ran".into()));
                return run;
            }
            retries += 1;
            let revised = format!(
                "{}\n\n[quality gate feedback] Your previous answer was not accepted. Revise it. \
                 Feedback: {feedback}\n\nYour previous answer:\n{}",
                gating.input,
                cut(&answer, MAX_ANSWER_SHOWN)
            );
            let launched = self
                .launch_agent_run_scoped(
                    &gating.starter,
                    gating.target.clone(),
                    revised,
                    Extras::default(),
                    gating.scope.clone(),
                )
                .await;
            let (next, handle) = match launched {
                Ok(launched) => launched,
                Err(e) => {
                    return held_back(
                        run,
                        format!(
                            "a quality gate asked '{}' to revise its answer, and its run could \
                             not start: {e}",
                            gating.target.name
                        ),
                    );
                }
            };
            record.run_id = Some(next.id.clone());
            record.updated_at = Utc::now();
            if let Err(e) = self.store.update_delegation(record).await {
                tracing::warn!(delegation = %record.id, "recording a delegation's retry failed: {e}");
            }
            run = match handle.await {
                Ok(ended) => ended,
                Err(e) => {
                    return held_back(next, format!("the revised run stopped unexpectedly ({e})"));
                }
            };
        }
    }

    /// How `gate` judges `answer`, and what its step records of the evaluator.
    async fn judge(
        self: &Arc<Self>,
        gating: &Gating,
        gate: &QualityGate,
        record: &DelegationRecord,
        answer: &str,
    ) -> (Judged, Value) {
        match gate.kind.as_str() {
            "agent" => {
                let written = gate.agent.as_deref().unwrap_or_default();
                // Spec 001's agent keys have hyphens (`qa-reviewer`); names here have `_`.
                let underscored = written.replace('-', "_");
                let reviewer = if written.contains('-')
                    && self.get_agent(&gating.caller, written).await.is_err()
                {
                    underscored.as_str()
                } else {
                    written
                };
                let ask = format!(
                    "Review the answer agent '{}' gave to the task below. Answer \"APPROVED\" if \
                     it is right, or \"REJECTED: <what to change>\".\n\nTask:\n{}\n\nAnswer:\n{}",
                    gating.target.name,
                    cut(&record.task, MAX_TASK_SHOWN),
                    cut(answer, MAX_ANSWER_SHOWN)
                );
                match self.delegate_boxed(&gating.caller, reviewer, ask).await {
                    Err(e) => (
                        Judged::Broken(format!("delegating to the reviewer '{reviewer}': {e}")),
                        json!({}),
                    ),
                    Ok(d) if d.status != DelegationStatus::Completed => (
                        Judged::Broken(format!(
                            "the reviewer '{reviewer}' did not answer ({}: {}); delegation {}",
                            d.status.as_str(),
                            d.error.as_deref().unwrap_or("no answer"),
                            d.id
                        )),
                        json!({"reviewerDelegation": d.id}),
                    ),
                    Ok(d) => {
                        let said = d.result.clone().unwrap_or_default();
                        let judged = match verdict(&said) {
                            Verdict::Approved => Judged::Passed,
                            Verdict::Rejected(f) => Judged::Failed(cut(&f, MAX_FEEDBACK_CHARS)),
                        };
                        (judged, json!({"reviewerDelegation": d.id}))
                    }
                }
            }
            _ => {
                self.command_judges(gate, &record.task, answer, &gating.target.name)
                    .await
            }
        }
    }

    /// Runs a command gate in the command sandbox, as a command tool runs.
    async fn command_judges(
        &self,
        gate: &QualityGate,
        task: &str,
        answer: &str,
        target: &str,
    ) -> (Judged, Value) {
        let command = gate.command.clone().unwrap_or_default();
        if let Err(denied) = check_denied(&command) {
            return (
                Judged::Broken(format!("the command was refused: {denied}")),
                json!({}),
            );
        }
        let sandbox = match self.command_runtime().sandbox().await {
            Ok(sandbox) => sandbox,
            Err(why) => {
                return (
                    Judged::Broken(format!(
                        "command evaluators run in the command sandbox, unavailable on this \
                         host: {why}; install bubblewrap (scripts/install-system-deps.sh), or use \
                         an 'agent' gate"
                    )),
                    json!({}),
                );
            }
        };
        let (output, output_cut) = env_value(answer, MAX_ENV_BYTES);
        let (task, task_cut) = env_value(task, MAX_ENV_BYTES);
        let mut env = BTreeMap::new();
        env.insert("TOOLSMITH_GATE_OUTPUT".to_owned(), output);
        env.insert("TOOLSMITH_GATE_TASK".to_owned(), task);
        env.insert("TOOLSMITH_GATE_AGENT".to_owned(), target.to_owned());
        if output_cut || task_cut {
            env.insert("TOOLSMITH_GATE_CUT".to_owned(), "1".to_owned());
        }
        let timeout = gate.timeout_seconds.unwrap_or(DEFAULT_GATE_TIMEOUT_SECS);
        let spec = CommandToolSpec {
            command: command.clone(),
            working_dir: None,
            timeout_seconds: timeout,
            env,
            network: false,
            scope: None,
        };
        let request = RunRequest::for_spec(&spec, &command);
        let out = match sandbox.run(&request).await {
            Ok(out) => out,
            Err(e) => {
                return (
                    Judged::Broken(format!("the command could not run: {e}")),
                    json!({}),
                );
            }
        };
        let detail = json!({
            "exitCode": out.exit_code,
            "timedOut": out.timed_out,
            "durationMs": u64::try_from(out.duration.as_millis()).unwrap_or(u64::MAX),
        });
        let judged = if out.timed_out {
            Judged::Failed(format!(
                "the command evaluator ran out of time ({timeout} s) and was killed"
            ))
        } else if out.exit_code == Some(0) {
            Judged::Passed
        } else {
            let said = [out.stderr.trim(), out.stdout.trim()]
                .into_iter()
                .find(|s| !s.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    out.exit_code.map_or_else(
                        || "the command ended without an exit code".to_owned(),
                        |c| format!("the command exited with {c}"),
                    )
                });
            Judged::Failed(cut(&said, MAX_FEEDBACK_CHARS))
        };
        (judged, detail)
    }

    /// A gate's result: a `quality_gate` step of the run it judged (which has ended, so the
    /// step goes after its last) and an audit entry.
    async fn gate_recorded(
        &self,
        gating: &Gating,
        record: &DelegationRecord,
        run: &AgentRunRecord,
        detail: Value,
    ) {
        let seq = match self.store.agent_run_steps(&run.id).await {
            Ok(steps) => steps.last().map_or(0, |s| s.seq + 1),
            Err(e) => {
                tracing::warn!(run = %run.id, "reading a run's steps failed: {e}");
                0
            }
        };
        let step = AgentRunStep {
            run_id: run.id.clone(),
            seq,
            kind: "quality_gate".to_owned(),
            detail: detail.clone(),
            at: Utc::now(),
        };
        self.telemetry.agents.step("quality_gate");
        if let Err(e) = self.store.add_agent_run_step(&step).await {
            tracing::warn!(run = %run.id, "recording a quality gate's step failed: {e}");
        }
        let ctx = &gating.caller;
        let actor = if ctx.by_model() {
            Actor::llm(ctx.user_id.clone())
                .with_agent(ctx.agent_id.clone())
                .with_member(ctx.member.clone())
        } else {
            Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                .with_member(ctx.member.clone())
        };
        // The feedback is the evaluator's text: the step keeps it, the audit does not.
        let mut details = detail;
        if let Value::Object(map) = &mut details {
            map.remove("feedback");
        }
        toolsmith_core::object::set(&mut details, "run", json!(run.id));
        toolsmith_core::object::set(&mut details, "to", json!(gating.target.name));
        self.audit
            .record(
                &actor,
                "agent.quality_gate",
                AuditTarget::new(
                    "delegation",
                    record.id.clone(),
                    Some(gating.source.name.clone()),
                ),
                (None, None),
                details,
            )
            .await;
    }
}

/// `run` as a delegation held back by a gate records it: failed, with `error`, no answer.
fn held_back(mut run: AgentRunRecord, error: String) -> AgentRunRecord {
    run.status = AgentRunStatus::Failed;
    run.output = None;
    run.error = Some(error);
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(json: Value) -> QualityGate {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_specs_example_reads_and_passes_the_checks() {
        let spec: Value = serde_json::from_str(
            r#"{"quality_gates": [{"event": "delegation.completed", "type": "agent",
                "agent": "qa-reviewer", "block_on_failure": true, "max_retries": 2}]}"#,
        )
        .unwrap();
        let gates: Vec<QualityGate> =
            serde_json::from_value(spec["quality_gates"].clone()).unwrap();
        assert_eq!(gates[0].max_retries, 2);
        assert!(gates[0].block_on_failure);
        check_gates(&gates).unwrap();
    }

    #[test]
    fn bad_gates_are_refused_naming_the_fix() {
        let refused = |g: Value| check_gates(&[gate(g)]).unwrap_err().to_string();
        assert!(
            refused(json!({"event": "run.completed", "type": "agent", "agent": "qa"}))
                .contains("delegation.completed")
        );
        assert!(
            refused(json!({"event": "delegation.completed", "type": "agent"})).contains("reviewer")
        );
        assert!(
            refused(json!({"event": "delegation.completed", "type": "shell", "command": "true"}))
                .contains("'command'")
        );
        assert!(
            refused(json!({"event": "delegation.completed", "type": "command",
                "command": "rm -rf /"}))
            .contains("refused")
        );
        assert!(
            refused(
                json!({"event": "delegation.completed", "type": "agent", "agent": "qa",
                "maxRetries": 6})
            )
            .contains("from 0 to 5")
        );
        assert!(
            refused(
                json!({"event": "delegation.completed", "type": "agent", "agent": "qa",
                "blockOnFailure": false, "maxRetries": 1})
            )
            .contains("blockOnFailure")
        );
        assert!(
            refused(json!({"event": "delegation.completed", "type": "command",
                "command": "true", "timeoutSeconds": 601}))
            .contains("from 1 to 600")
        );
        let command = gate(json!({"event": "delegation.completed", "type": "command",
            "command": "npm test"}));
        check_gates(std::slice::from_ref(&command)).unwrap();
        assert!(
            check_gates_by_model(&[command])
                .unwrap_err()
                .to_string()
                .contains("only a person")
        );
    }

    #[test]
    fn env_values_are_cut_at_a_character_and_lose_nul_bytes() {
        assert_eq!(env_value("a\0b", 10), ("ab".to_owned(), false));
        let (cut_text, was_cut) = env_value("ééé", 3);
        assert_eq!((cut_text.as_str(), was_cut), ("é", true));
    }
}
