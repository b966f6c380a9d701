//! The evaluate-optimize loop (spec 001 §9): a generator agent drafts, an evaluator agent
//! judges the draft against the caller's criteria, and the generator revises with the
//! feedback, for at most `maxRounds` rounds (default [`DEFAULT_ROUNDS`], at most
//! [`MAX_ROUNDS`]). Each round is a pair of synchronous delegations (mode `evaluate`), over the
//! caller's links, under every rule of delegation. The loop stops when the evaluator's answer
//! starts with "APPROVED" (any letter case): the draft is the output; an answer starting with
//! "REJECTED:" gives its feedback to the next round (any other answer is feedback as a whole);
//! after the last round the last draft is returned, not approved. A delegation that fails ends
//! the loop with its error.
//!
//! Quality gates (§11) do not run on the loop's own delegations (the spec's `WithSkipHooks`):
//! they are recorded with mode `evaluate`.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_core::ToolContext;
use toolsmith_core::delegation::DelegationStatus;

use super::delegation::Mode;
use super::sessions::Args;
use crate::{ServiceError, ToolService};

/// Rounds when the caller names none (§9).
pub const DEFAULT_ROUNDS: u32 = 3;
/// The most rounds (§9).
pub const MAX_ROUNDS: u32 = 5;

/// What an evaluator's answer says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Approved,
    Rejected(String),
}

/// Reads an evaluator's answer: "APPROVED" as a prefix in any letter case approves; anything
/// else rejects, with the text after "REJECTED:" (or the whole answer) as feedback.
pub(crate) fn verdict(answer: &str) -> Verdict {
    let answer = answer.trim();
    let lower = answer.to_lowercase();
    if lower.starts_with("approved") {
        return Verdict::Approved;
    }
    let feedback = if lower.starts_with("rejected") {
        answer
            .char_indices()
            .nth("rejected".len())
            .map_or("", |(i, _)| answer.get(i..).unwrap_or_default())
            .trim_start_matches([':', ' ', '-'])
            .trim()
    } else {
        answer
    };
    Verdict::Rejected(feedback.to_owned())
}

impl ToolService {
    /// Runs the `evaluate_loop` tool.
    pub(crate) async fn evaluate_loop_tool(
        self: &Arc<Self>,
        args: &Args,
        ctx: &ToolContext,
        name: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<Value, ServiceError> {
        let generator = args.required("generator")?;
        let evaluator = args.required("evaluator")?;
        let task = args.required("task")?;
        let criteria = args.required("criteria")?;
        let rounds = match args.0.get("maxRounds") {
            None | Some(Value::Null) => DEFAULT_ROUNDS,
            Some(n) => match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) if (1..=MAX_ROUNDS).contains(&n) => n,
                _ => {
                    return Err(ServiceError::Validation(format!(
                        "maxRounds: from 1 to {MAX_ROUNDS} (default {DEFAULT_ROUNDS}), not {n}"
                    )));
                }
            },
        };
        let mut history = Vec::new();
        let mut draft = String::new();
        let mut feedback = String::new();
        for round in 1..=rounds {
            let asked = if round == 1 {
                task.clone()
            } else {
                format!(
                    "{task}\n\nRevise your previous draft. Feedback: {feedback}\n\nYour previous \
                     draft:\n{draft}"
                )
            };
            let made = self
                .delegate(ctx, &generator, asked, None, Mode::Evaluate)
                .await?;
            if made.status != DelegationStatus::Completed {
                return Err(ServiceError::Validation(format!(
                    "round {round}: the generator '{}' did not answer ({}: {}); delegation {}",
                    name(&made.target_agent),
                    made.status.as_str(),
                    made.error.as_deref().unwrap_or("no answer"),
                    made.id
                )));
            }
            draft = made.result.clone().unwrap_or_default();
            let judge = format!(
                "Evaluate this draft against the criteria. Answer \"APPROVED\" if it meets \
                 them, or \"REJECTED: <what to change>\".\n\nCriteria:\n{criteria}\n\nTask:\n\
                 {task}\n\nDraft:\n{draft}"
            );
            let judged = self
                .delegate(ctx, &evaluator, judge, None, Mode::Evaluate)
                .await?;
            if judged.status != DelegationStatus::Completed {
                return Err(ServiceError::Validation(format!(
                    "round {round}: the evaluator '{}' did not answer ({}: {}); delegation {}",
                    name(&judged.target_agent),
                    judged.status.as_str(),
                    judged.error.as_deref().unwrap_or("no answer"),
                    judged.id
                )));
            }
            let answer = judged.result.clone().unwrap_or_default();
            let said = verdict(&answer);
            history.push(json!({
                "round": round,
                "draft": draft,
                "verdict": if said == Verdict::Approved { "approved" } else { "rejected" },
                "feedback": match &said { Verdict::Rejected(f) => Some(f.clone()), Verdict::Approved => None },
                "delegations": [made.id, judged.id],
            }));
            match said {
                Verdict::Approved => {
                    return Ok(json!({
                        "approved": true,
                        "rounds": round,
                        "output": draft,
                        "history": history,
                    }));
                }
                Verdict::Rejected(f) => feedback = f,
            }
        }
        Ok(json!({
            "approved": false,
            "rounds": rounds,
            "output": draft,
            "lastFeedback": feedback,
            "history": history,
            "next": format!(
                "the evaluator approved no draft in {rounds} rounds: the last one is the output; \
                 revise it yourself or run the loop again with the feedback"
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approved_is_a_prefix_in_any_letter_case_and_rejected_carries_its_feedback() {
        assert_eq!(verdict("APPROVED"), Verdict::Approved);
        assert_eq!(verdict("  approved — good work"), Verdict::Approved);
        assert_eq!(verdict("Approved."), Verdict::Approved);
        assert_eq!(
            verdict("REJECTED: Too long, missing pricing"),
            Verdict::Rejected("Too long, missing pricing".to_owned())
        );
        assert_eq!(
            verdict("rejected - add a price"),
            Verdict::Rejected("add a price".to_owned())
        );
        assert_eq!(
            verdict("It needs a price."),
            Verdict::Rejected("It needs a price.".to_owned())
        );
    }
}
