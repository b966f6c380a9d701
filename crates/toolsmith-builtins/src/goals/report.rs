//! What the goals tell: `get_next_actions` (the next pending step of each active goal, most
//! important goal first, then soonest due, then oldest), `get_goal_details` (a goal with its
//! steps, sub-goals and parent) and `goal_stats`.
//!
//! Steps are ordered, so a goal's next action is its first pending step: the later ones wait
//! on it. `get_next_actions` reads active goals priority by priority (10 down to 1), each
//! priority soonest due first, and asks for a first pending step only of goals whose counts
//! say they have one; it reads at most [`MAX_SCANNED`] active goals.

use chrono::{Duration, Utc};
use serde_json::{Value, json};
use toolsmith_core::data::{DataRecord, RecordOrder, RecordQuery, RecordScope};
use toolsmith_core::object;

use super::{FAMILY, MAX_SCANNED, STATUSES, STEPS, steps};
use crate::data::{Call, id_arg, scan};
use crate::personal::{Family, ops};
use crate::utilities::{Fail, opt_int};

/// `get_next_actions`' `limit` (003 "Tool Max Limits": 20, default 5).
pub const DEFAULT_ACTIONS: i64 = 5;
pub const MAX_ACTIONS: i64 = 20;
/// Most sub-goals `get_goal_details` lists.
const MAX_SUB_GOALS: usize = 50;

fn goals_query(scope: &RecordScope) -> RecordQuery {
    RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: FAMILY.collection.to_owned(),
        ..RecordQuery::default()
    }
}

fn number(goal: &DataRecord, key: &str) -> u64 {
    goal.document.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// `get_next_actions`' arguments.
pub fn next_actions_schema(_: &Family) -> Value {
    json!({
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_ACTIONS, "description": format!("Max actions (default: {DEFAULT_ACTIONS}, max: {MAX_ACTIONS}).")}
        },
        "additionalProperties": false
    })
}

/// `get_next_actions`.
pub async fn next_actions(call: Call<'_>) -> Result<Value, Fail> {
    let (records, scope) = (call.records, &call.scope);
    let limit = usize::try_from(opt_int(
        &call.args,
        "limit",
        DEFAULT_ACTIONS,
        1,
        MAX_ACTIONS,
    )?)
    .unwrap_or(5);
    let mut actions = Vec::new();
    let (mut scanned, mut without_steps) = (0, 0);
    'priorities: for priority in (1..=10).rev() {
        let query = RecordQuery {
            kind: Some("active".to_owned()),
            min_weight: Some(f64::from(priority)),
            max_weight: Some(f64::from(priority)),
            order: RecordOrder::At,
            ..goals_query(scope)
        };
        for goal in scan(records, query, MAX_SCANNED - scanned).await? {
            scanned += 1;
            let (total, done) = (number(&goal, "stepCount"), number(&goal, "completedSteps"));
            if total == 0 {
                without_steps += 1;
                continue;
            }
            if done >= total {
                continue;
            }
            let first = RecordQuery {
                owner: scope.owner.clone(),
                agent: scope.agent.clone(),
                collection: STEPS.collection.to_owned(),
                category: Some(goal.id.to_lowercase()),
                kind: Some("pending".to_owned()),
                order: RecordOrder::Weight,
                limit: 1,
                ..RecordQuery::default()
            };
            let Some(step) = records.query(&first).await?.into_iter().next() else {
                continue;
            };
            let (g, s) = (&goal.document, &step.record.document);
            actions.push(json!({
                "stepId": step.record.id,
                "step": s.get("title"),
                "description": s.get("description"),
                "position": s.get("position"),
                "goalId": goal.id,
                "goal": g.get("title"),
                "priority": g.get("priority"),
                "dueDate": g.get("dueDate"),
                "progress": g.get("progress"),
                "stepsLeft": total - done,
            }));
            if actions.len() == limit {
                break 'priorities;
            }
        }
        if scanned >= MAX_SCANNED {
            break;
        }
    }
    let message = if actions.is_empty() && without_steps > 0 {
        format!(
            "No pending steps: {without_steps} active goal(s) have no steps yet. Break one \
             into steps with decompose_goal."
        )
    } else if actions.is_empty() {
        "No pending steps in active goals. Create a goal with create_goal.".to_owned()
    } else {
        "Each action is the next pending step of an active goal, most important goal first."
            .to_owned()
    };
    Ok(json!({ "count": actions.len(), "actions": actions, "message": message }))
}

/// `get_goal_details`: the goal, its steps in order, its sub-goals and its parent.
pub async fn details(call: Call<'_>) -> Result<Value, Fail> {
    let (records, scope) = (call.records, &call.scope);
    let id = id_arg(&call.args, FAMILY.id_param)?;
    let goal = ops::existing(&FAMILY, records, scope, id).await?;
    let steps: Vec<Value> = steps::of_goal(records, scope, &goal.id)
        .await?
        .iter()
        .map(ops::view)
        .collect();
    let children = RecordQuery {
        category: Some(goal.id.to_lowercase()),
        order: RecordOrder::Weight,
        ..goals_query(scope)
    };
    let sub_goals = scan(records, children, MAX_SUB_GOALS + 1).await?;
    let more = sub_goals.len() > MAX_SUB_GOALS;
    let sub_goals: Vec<Value> = sub_goals
        .iter()
        .take(MAX_SUB_GOALS)
        .map(|g| {
            json!({"id": g.id, "title": g.document.get("title"), "status": g.kind,
                   "priority": g.document.get("priority"), "progress": g.document.get("progress")})
        })
        .collect();
    let parent = match goal.document.get("parentId").and_then(Value::as_str) {
        Some(parent) => records
            .get(scope, FAMILY.collection, parent)
            .await?
            .map(|p| json!({"id": p.id, "title": p.document.get("title"), "status": p.kind})),
        None => None,
    };
    let mut out = json!({
        "goal": ops::view(&goal),
        "steps": steps,
        "subGoals": sub_goals,
        "parent": parent,
    });
    if more {
        object::set(&mut out, "moreSubGoals", json!(true));
    }
    Ok(out)
}

/// `goal_stats` takes no arguments.
pub fn stats_schema(_: &Family) -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// `goal_stats`.
pub async fn stats(call: Call<'_>) -> Result<Value, Fail> {
    let (records, scope) = (call.records, &call.scope);
    let figures = records.stats(scope, FAMILY.collection).await?;
    let by_status: serde_json::Map<String, Value> = STATUSES
        .iter()
        .map(|s| {
            (
                (*s).to_owned(),
                json!(figures.by_kind.get(*s).copied().unwrap_or(0)),
            )
        })
        .collect();
    let of = |s: &str| figures.by_kind.get(s).copied().unwrap_or(0);
    let completion_rate = if figures.total == 0 {
        0.0
    } else {
        (of("completed") as f64 * 1000.0 / figures.total as f64).round() / 10.0
    };
    let now = Utc::now();
    let active = scan(
        records,
        RecordQuery {
            kind: Some("active".to_owned()),
            ..goals_query(scope)
        },
        MAX_SCANNED,
    )
    .await?;
    let average_progress = if active.is_empty() {
        0.0
    } else {
        let sum: u64 = active.iter().map(|g| number(g, "progress")).sum();
        (sum as f64 * 10.0 / active.len() as f64).round() / 10.0
    };
    let overdue = active
        .iter()
        .filter(|g| g.at.is_some_and(|at| at < now))
        .count();
    let week = now + Duration::days(7);
    let due_soon = active
        .iter()
        .filter(|g| g.at.is_some_and(|at| at >= now && at < week))
        .count();
    let completed = scan(
        records,
        RecordQuery {
            kind: Some("completed".to_owned()),
            order: RecordOrder::Updated,
            ..goals_query(scope)
        },
        MAX_SCANNED,
    )
    .await?;
    let month_ago = now - Duration::days(30);
    let completed_recently = completed
        .iter()
        .filter(|g| {
            g.document
                .get("completedAt")
                .and_then(Value::as_str)
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .is_some_and(|t| t >= month_ago)
        })
        .count();
    let step_figures = records.stats(scope, STEPS.collection).await?;
    let steps_of = |s: &str| step_figures.by_kind.get(s).copied().unwrap_or(0);
    Ok(json!({
        "total": figures.total,
        "byStatus": by_status,
        "completionRate": completion_rate,
        "averageProgress": average_progress,
        "overdue": overdue,
        "dueWithin7Days": due_soon,
        "completedLast30Days": completed_recently,
        "steps": {
            "total": step_figures.total,
            "completed": steps_of("completed"),
            "pending": steps_of("pending"),
        },
    }))
}
