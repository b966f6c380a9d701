//! Calendar (003 §4): events with a start time, an optional end, all-day flag, location,
//! description, category and a reminder in minutes. Indexed: start as `at` (so listing is by
//! a date range, from today when none is given), category; title, location, description and
//! category are searched. An event cannot end before it starts.

use serde_json::{Map, Value};
use toolsmith_core::data::RecordOrder;

use super::fields::{Field, FieldKind, instant};
use super::{BY_CREATED, Family, Index, Op, Range, Sort, ToolSpec, Weight};
use crate::utilities::Fail;

static FIELDS: &[Field] = &[
    Field::new("title", FieldKind::Text(500), "Event title.")
        .required()
        .searched(),
    Field::new(
        "startTime",
        FieldKind::Time,
        "Start time in ISO format (2026-05-01T14:30:00; UTC unless it ends with an offset such as +02:00; a date alone for all-day events).",
    )
    .required(),
    Field::new("endTime", FieldKind::Time, "End time in ISO format (not before the start)."),
    Field::new("isAllDay", FieldKind::Flag, "Whether this is an all-day event."),
    Field::new("location", FieldKind::Text(500), "Event location.").searched(),
    Field::new("description", FieldKind::Text(5000), "Event description.").searched(),
    Field::new("category", FieldKind::Text(100), "Category (e.g. \"meeting\", \"birthday\").")
        .searched(),
    Field::new(
        "reminder",
        FieldKind::Minutes,
        "Minutes before the event a reminder is wanted, kept with the event for a client to act \
         on; the server sends nothing.",
    ),
];

pub static FAMILY: Family = Family {
    collection: "calendar_event",
    plural: "events",
    noun: "calendar event",
    category: "Calendar",
    id_prefix: "evt",
    id_param: "eventId",
    one: "event",
    many: "events",
    batch_param: "events",
    list_tool: "list_calendar_events",
    fields: FIELDS,
    index: Index {
        kind: None,
        category: Some("category"),
        weight: Weight::None,
        at: Some("startTime"),
        tags: None,
    },
    range: Some(Range {
        from: "startDate",
        to: "endDate",
        from_today: true,
    }),
    sorts: &[
        Sort {
            name: "startTime",
            order: RecordOrder::At,
            description: "earliest first",
        },
        BY_CREATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: Some(check),
    rules: None,
};

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_calendar_event",
        op: Op::Add,
        description: "Create a calendar event or appointment (add it to the user's calendar or schedule) \
         with a start time, optional end, location, description, category and reminder.",
        tags: &[
            "calendar",
            "event",
            "appointment",
            "meeting",
            "meet",
            "team",
            "schedule",
            "book",
            "add",
            "agenda",
        ],
    },
    ToolSpec {
        name: "batch_add_calendar_events",
        op: Op::BatchAdd,
        description: "Add multiple calendar events at once (up to 50), each like add_calendar_event.",
        tags: &["calendar", "event", "batch", "many", "bulk", "add"],
    },
    ToolSpec {
        name: "list_calendar_events",
        op: Op::List,
        description: "List calendar events between two dates (from today when none is given), earliest \
         first, optionally of one category or matching some words: what is on the schedule.",
        tags: &[
            "calendar",
            "event",
            "events",
            "list",
            "agenda",
            "schedule",
            "upcoming",
            "week",
            "today",
            "tomorrow",
            "appointments",
            "do i have",
            "meetings",
        ],
    },
    ToolSpec {
        name: "delete_calendar_event",
        op: Op::Delete,
        description: "Delete a calendar event (cancel an appointment).",
        tags: &["calendar", "event", "delete", "remove", "cancel"],
    },
];

/// An event's end is not before its start.
fn check(event: &mut Map<String, Value>) -> Result<(), Fail> {
    let time = |k: &str| event.get(k).and_then(Value::as_str).and_then(instant);
    if let (Some(start), Some(end)) = (time("startTime"), time("endTime"))
        && end < start
    {
        return Err(Fail::Args(
            "'endTime' is before 'startTime': give an end at or after the start".to_owned(),
        ));
    }
    Ok(())
}
