//! A goal's steps: `decompose_goal` adds them after the goal's existing ones (at most
//! [`MAX_STEPS`] a goal), `complete_step` completes one; the steps family's rules keep them in
//! order (`position`, 1 for the first), keep a step in its goal, refuse changes to the steps of
//! a completed or abandoned goal, and after every change of a step bring its goal's progress
//! in line ([`super::lifecycle`] derives it).

use chrono::Utc;
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, RecordOrder, RecordQuery, RecordScope};

use super::{FAMILY, MAX_STEPS, STEPS};
use crate::data::{Call, Records, id_arg, scan};
use crate::personal::{Family, fields, ops};
use crate::utilities::{Fail, array_arg};

/// Most steps one `decompose_goal` adds.
pub const MAX_NEW_STEPS: usize = 50;

/// A step's weight: its position negated, so the store's "highest weight first" is the goal's
/// order.
pub fn weight(step: &Map<String, Value>) -> f64 {
    -step.get("position").and_then(Value::as_f64).unwrap_or(0.0)
}

fn goal_of(step: &Map<String, Value>) -> &str {
    step.get("goalId")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The steps of `goal_id`, in order.
pub async fn of_goal(
    records: &dyn Records,
    scope: &RecordScope,
    goal_id: &str,
) -> Result<Vec<DataRecord>, Fail> {
    let query = RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: STEPS.collection.to_owned(),
        category: Some(goal_id.to_lowercase()),
        order: RecordOrder::Weight,
        ..RecordQuery::default()
    };
    scan(records, query, 10 * MAX_STEPS).await
}

/// How many steps `goal_id` has, and how many of them are completed.
pub async fn count(
    records: &dyn Records,
    scope: &RecordScope,
    goal_id: &str,
) -> Result<(usize, usize), Fail> {
    let steps = of_goal(records, scope, goal_id).await?;
    let done = steps
        .iter()
        .filter(|s| s.kind.as_deref() == Some("completed"))
        .count();
    Ok((steps.len(), done))
}

/// The goal `goal_id` of the caller, open to changes of its steps.
async fn open_goal(
    records: &dyn Records,
    scope: &RecordScope,
    goal_id: &str,
) -> Result<DataRecord, Fail> {
    let Some(goal) = records.get(scope, FAMILY.collection, goal_id).await? else {
        return Err(Fail::Args(format!(
            "'goalId': no goal with id '{}' among yours: find ids with list_goals",
            goal_id.chars().take(100).collect::<String>()
        )));
    };
    let status = goal.kind.clone().unwrap_or_default();
    if status == "completed" || status == "abandoned" {
        return Err(Fail::Args(format!(
            "the goal '{goal_id}' is {status}: its steps cannot change until it is reopened \
             (update_goal with status active)"
        )));
    }
    Ok(goal)
}

/// `completedAt` follows a step's status.
pub fn settle(step: &mut Map<String, Value>) -> Result<(), Fail> {
    if step.get("status").and_then(Value::as_str) == Some("completed") {
        if !step.contains_key("completedAt") {
            step.insert("completedAt".to_owned(), json!(Utc::now()));
        }
    } else {
        step.remove("completedAt");
    }
    Ok(())
}

/// A new step: its goal open and not full; its position after the goal's last step.
pub async fn before_add(
    records: &dyn Records,
    scope: &RecordScope,
    step: &mut Map<String, Value>,
) -> Result<(), Fail> {
    let goal_id = goal_of(step).to_owned();
    open_goal(records, scope, &goal_id).await?;
    let existing = of_goal(records, scope, &goal_id).await?;
    if existing.len() >= MAX_STEPS {
        return Err(Fail::Args(format!(
            "the goal '{goal_id}' already has {} steps, the most a goal has: split it into \
             sub-goals (create_goal with parentId)",
            existing.len()
        )));
    }
    let last = existing.iter().map(|s| -s.weight).fold(0.0, f64::max);
    step.insert("position".to_owned(), json!(last as i64 + 1));
    Ok(())
}

/// A changed step: still in its goal, and the goal open.
pub async fn before_change(
    records: &dyn Records,
    scope: &RecordScope,
    old: &DataRecord,
    step: &mut Map<String, Value>,
) -> Result<(), Fail> {
    let before = old.document.as_object().cloned().unwrap_or_default();
    if goal_of(&before) != goal_of(step) {
        return Err(Fail::Args(
            "a step cannot move to another goal: add it there with decompose_goal and delete \
             this one"
                .to_owned(),
        ));
    }
    open_goal(records, scope, goal_of(step)).await?;
    Ok(())
}

/// How many times a goal's progress is derived again when steps keep changing under it.
const SETTLE_ROUNDS: usize = 5;

/// After a step was added, changed or deleted: its goal's step counts and progress derived
/// again (the goal's own rules do it on any change). Two steps changed at the same instant
/// each derive from what they read, so the later write could hold the older counts: after
/// writing, the steps are counted again and the goal derived again until they agree. The
/// last writer always counts after its own write, so the goal ends up matching every step
/// change made before it.
pub async fn settle_goal(
    records: &dyn Records,
    scope: &RecordScope,
    step: &DataRecord,
) -> Result<(), Fail> {
    let goal_id = step
        .document
        .get("goalId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if records
        .get(scope, FAMILY.collection, goal_id)
        .await?
        .is_none()
    {
        return Ok(());
    }
    for _ in 0..SETTLE_ROUNDS {
        let written = ops::modify(&FAMILY, records, scope, goal_id, |_| Ok(())).await?;
        let (total, done) = count(records, scope, goal_id).await?;
        let goal = written.get(FAMILY.one);
        let agrees = |key: &str, n: usize| {
            goal.and_then(|g| g.get(key)).and_then(Value::as_u64) == u64::try_from(n).ok()
        };
        if agrees("stepCount", total) && agrees("completedSteps", done) {
            break;
        }
    }
    Ok(())
}

/// `decompose_goal`'s arguments.
pub fn decompose_schema(_: &Family) -> Value {
    json!({
        "type": "object",
        "properties": {
            "goalId": {"type": "string", "minLength": 1, "maxLength": 100, "description": "The id of the goal to break down (from list_goals)."},
            "steps": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_NEW_STEPS,
                "description": format!("The steps, in order (at most {MAX_NEW_STEPS}; a goal has at most {MAX_STEPS})."),
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Step title (an actionable verb phrase)."},
                        "description": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Details of the step."}
                    },
                    "required": ["title"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["goalId", "steps"],
        "additionalProperties": false
    })
}

/// `decompose_goal`: every step checked first (one bad step adds none), then added in order.
pub async fn decompose(call: Call<'_>) -> Result<Value, Fail> {
    let (records, scope) = (call.records, &call.scope);
    let goal_id = id_arg(&call.args, "goalId")?;
    let items = array_arg(&call.args, "steps", MAX_NEW_STEPS)?;
    if items.is_empty() {
        return Err(Fail::Args(
            "'steps' must hold at least one step, like [{\"title\": \"Book a first lesson\"}]"
                .to_owned(),
        ));
    }
    let goal = open_goal(records, scope, goal_id).await?;
    let have = count(records, scope, goal_id).await?.0;
    if have + items.len() > MAX_STEPS {
        return Err(Fail::Args(format!(
            "the goal has {have} steps and a goal has at most {MAX_STEPS}: add at most {} \
             more, or split it into sub-goals (create_goal with parentId)",
            MAX_STEPS - have
        )));
    }
    let mut new_steps = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(given) = item.as_object() else {
            return Err(Fail::Args(format!(
                "steps[{i}] must be an object like {{\"title\": \"Book a first lesson\"}}"
            )));
        };
        if let Some(key) = given
            .keys()
            .find(|k| k.as_str() != "title" && k.as_str() != "description")
        {
            return Err(Fail::Args(format!(
                "steps[{i}]: unknown field '{}'; a step has title and description",
                key.chars().take(64).collect::<String>()
            )));
        }
        let mut step = given.clone();
        step.insert("goalId".to_owned(), json!(goal.id));
        fields::read_new(
            STEPS.fields,
            &Value::Object(step.clone()),
            STEPS.noun,
            chrono_tz::Tz::UTC,
        )
        .map_err(|e| Fail::Args(format!("steps[{i}]: {}", e.message())))?;
        new_steps.push(Value::Object(step));
    }
    let mut added = Vec::with_capacity(new_steps.len());
    for (i, step) in new_steps.iter().enumerate() {
        let reply = ops::add(&STEPS, records, scope, step).await.map_err(|e| {
            Fail::Args(format!(
                "steps[{i}] was not added ({}); the {i} before it were added",
                e.message()
            ))
        })?;
        added.push(reply.get("step").cloned().unwrap_or_default());
    }
    let goal = ops::existing(&FAMILY, records, scope, goal_id).await?;
    Ok(json!({
        "success": true,
        "goal": ops::view(&goal),
        "steps": added,
        "message": format!("Added {} steps to the goal.", added.len()),
    }))
}

/// `complete_step`'s arguments.
pub fn complete_schema(_: &Family) -> Value {
    json!({
        "type": "object",
        "properties": {
            "stepId": {"type": "string", "minLength": 1, "maxLength": 100, "description": "The id of the step (from get_goal_details or get_next_actions)."},
            "result": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Optional notes on what was accomplished."}
        },
        "required": ["stepId"],
        "additionalProperties": false
    })
}

/// `complete_step`: the step completed (a second call changes nothing), its goal's progress
/// following.
pub async fn complete(call: Call<'_>) -> Result<Value, Fail> {
    let (records, scope) = (call.records, &call.scope);
    let id = id_arg(&call.args, "stepId")?;
    let result = match call.args.get("result") {
        None | Some(Value::Null) => None,
        Some(value) => match STEPS.fields.iter().find(|f| f.name == "result") {
            Some(field) => Some(field.read(value)?),
            None => None,
        },
    };
    let step = ops::existing(&STEPS, records, scope, id).await?;
    let already = step.kind.as_deref() == Some("completed");
    let step = if already {
        ops::view(&step)
    } else {
        ops::modify(&STEPS, records, scope, id, |doc| {
            doc.insert("status".to_owned(), json!("completed"));
            if let Some(result) = result {
                doc.insert("result".to_owned(), result);
            }
            Ok(())
        })
        .await?
        .get_mut("step")
        .map(Value::take)
        .unwrap_or_default()
    };
    let goal_id = step
        .get("goalId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let goal = ops::view(&ops::existing(&FAMILY, records, scope, goal_id).await?);
    let count_of = |key: &str| goal.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (done, total) = (count_of("completedSteps"), count_of("stepCount"));
    let mut message = if already {
        "The step was already completed.".to_owned()
    } else {
        format!(
            "Step completed: {done} of {total} done ({}%).",
            goal.get("progress").cloned().unwrap_or_default()
        )
    };
    if done == total && goal.get("status").is_some_and(|s| s == "active") {
        message.push_str(
            " Every step is done: mark the goal completed with update_goal (status completed).",
        );
    }
    Ok(
        json!({ "success": true, "alreadyCompleted": already, "step": step, "goal": goal, "message": message }),
    )
}
