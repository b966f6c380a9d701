//! The rules every change of a goal follows, through its tools and REST alike (they are the
//! goal family's [`Rules`](crate::personal::rules::Rules) hooks):
//!
//! - **Status**: `active` → `paused`, `completed` or `abandoned`; `paused` → `active` or
//!   `abandoned` (a paused goal is resumed before it is completed); `completed` or
//!   `abandoned` → `active` (reopened). Any other move is refused with the allowed ones named.
//!   A completed goal has progress 100 and a `completedAt`; reopening removes `completedAt`.
//! - **Parent**: `parentId` names one of the caller's own goals (another user's or agent's is
//!   "not found"), never the goal itself or one of its sub-goals (no cycles), at most
//!   [`MAX_DEPTH`] levels up.
//! - **Progress**: a goal without steps takes the progress it is given; a goal with steps
//!   takes it from them (completed steps × 100 / steps, rounded down), and a different value
//!   is refused. Its document carries `stepCount` and `completedSteps`.
//! - **Deletion** (REST only: the spec has no tool for it) deletes the goal's steps and makes
//!   its sub-goals top-level goals.

use chrono::Utc;
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, RecordQuery, RecordScope};

use super::{FAMILY, MAX_DEPTH, MAX_SCANNED, STEPS, steps};
use crate::data::{Records, scan};
use crate::personal::ops;
use crate::utilities::Fail;

/// The statuses a goal in `from` may move to.
#[must_use]
pub fn allowed_moves(from: &str) -> &'static [&'static str] {
    match from {
        "active" => &["paused", "completed", "abandoned"],
        "paused" => &["active", "abandoned"],
        "completed" | "abandoned" => &["active"],
        _ => &[],
    }
}

fn status(doc: &Map<String, Value>) -> &str {
    doc.get("status")
        .and_then(Value::as_str)
        .unwrap_or("active")
}

/// A new goal: its parent checked, no steps yet.
pub async fn before_add(
    records: &dyn Records,
    scope: &RecordScope,
    goal: &mut Map<String, Value>,
) -> Result<(), Fail> {
    if let Some(parent) = goal.get("parentId").and_then(Value::as_str) {
        check_parent(records, scope, None, parent).await?;
    }
    goal.insert("stepCount".to_owned(), json!(0));
    goal.insert("completedSteps".to_owned(), json!(0));
    Ok(())
}

/// A changed goal: the status move, the parent and the progress checked; `completedAt`,
/// `stepCount`, `completedSteps` and a stepped goal's progress derived.
pub async fn before_change(
    records: &dyn Records,
    scope: &RecordScope,
    old: &DataRecord,
    goal: &mut Map<String, Value>,
) -> Result<(), Fail> {
    let before = old.document.as_object().cloned().unwrap_or_default();
    let (from, to) = (status(&before).to_owned(), status(goal).to_owned());
    if from != to && !allowed_moves(&from).contains(&to.as_str()) {
        let hint = if from == "paused" && to == "completed" {
            " (resume it with status active first)"
        } else {
            ""
        };
        return Err(Fail::Args(format!(
            "a {from} goal cannot become {to}: a {from} goal can become {}{hint}",
            allowed_moves(&from).join(" or ")
        )));
    }
    let parent = goal.get("parentId").and_then(Value::as_str);
    if let Some(parent) = parent
        && before.get("parentId").and_then(Value::as_str) != Some(parent)
    {
        check_parent(records, scope, Some(&old.id), parent).await?;
    }
    let progress_changed = before.get("progress") != goal.get("progress");
    if to == "completed" {
        if progress_changed && goal.get("progress") != Some(&json!(100)) {
            return Err(Fail::Args(
                "a completed goal's progress is 100: reopen it (status active) to change its \
                 progress"
                    .to_owned(),
            ));
        }
        goal.insert("progress".to_owned(), json!(100));
        if !goal.contains_key("completedAt") {
            goal.insert("completedAt".to_owned(), json!(Utc::now()));
        }
    } else {
        goal.remove("completedAt");
    }
    let (total, done) = steps::count(records, scope, &old.id).await?;
    goal.insert("stepCount".to_owned(), json!(total));
    goal.insert("completedSteps".to_owned(), json!(done));
    if total > 0 && to != "completed" {
        let follows = done * 100 / total;
        if progress_changed && goal.get("progress") != Some(&json!(follows)) {
            return Err(Fail::Args(format!(
                "this goal's progress follows its steps ({done} of {total} done: {follows}%): \
                 complete steps with complete_step, or add steps with decompose_goal"
            )));
        }
        goal.insert("progress".to_owned(), json!(follows));
    }
    Ok(())
}

/// Refuses a parent that is not one of the caller's goals, is the goal itself (`this`) or
/// one of its sub-goals, or sits deeper than [`MAX_DEPTH`].
async fn check_parent(
    records: &dyn Records,
    scope: &RecordScope,
    this: Option<&str>,
    parent: &str,
) -> Result<(), Fail> {
    if Some(parent) == this {
        return Err(Fail::Args(
            "'parentId' is this goal's own id: a goal cannot be its own parent".to_owned(),
        ));
    }
    let mut next = Some(parent.to_owned());
    let mut depth = 0;
    while let Some(id) = next {
        let Some(ancestor) = records.get(scope, FAMILY.collection, &id).await? else {
            if id == parent {
                return Err(Fail::Args(format!(
                    "'parentId': no goal with id '{}' among yours: find ids with list_goals",
                    parent.chars().take(100).collect::<String>()
                )));
            }
            // An ancestor deleted under our feet: the chain ends here.
            break;
        };
        depth += 1;
        if depth > MAX_DEPTH {
            return Err(Fail::Args(format!(
                "'parentId': goals nest at most {MAX_DEPTH} levels deep; choose a parent \
                 higher up"
            )));
        }
        next = ancestor
            .document
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if next.is_some() && next.as_deref() == this {
            return Err(Fail::Args(format!(
                "'parentId': goal '{parent}' is a sub-goal of this goal: a goal cannot sit \
                 under one of its own sub-goals"
            )));
        }
    }
    Ok(())
}

/// After a goal was deleted: its steps go with it, its sub-goals become top-level goals.
pub async fn after_delete(
    records: &dyn Records,
    scope: &RecordScope,
    goal: &DataRecord,
) -> Result<(), Fail> {
    let in_goal = |collection: &str| RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: collection.to_owned(),
        category: Some(goal.id.to_lowercase()),
        ..RecordQuery::default()
    };
    for step in scan(records, in_goal(STEPS.collection), MAX_SCANNED).await? {
        records.delete(scope, STEPS.collection, &step.id).await?;
    }
    for child in scan(records, in_goal(FAMILY.collection), MAX_SCANNED).await? {
        ops::modify(&FAMILY, records, scope, &child.id, |doc| {
            doc.remove("parentId");
            Ok(())
        })
        .await?;
    }
    Ok(())
}
