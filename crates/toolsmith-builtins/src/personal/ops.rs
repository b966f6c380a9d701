//! The operations every personal-data family shares — add, batch add, list, get, update,
//! delete — on the caller's scope of the record store, for the family's tools and for the
//! REST routes alike (the same checks, the same replies), and the schemas of their tools.

use chrono::{Days, Utc};
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, PutOutcome, RecordOrder, RecordQuery, RecordScope};
use toolsmith_core::object;

use super::fields::{self, Field, FieldKind};
use super::{Family, Weight, zone};
use crate::data::{Records, new_id, tags_arg};
use crate::utilities::{Fail, array_arg, opt_bool, opt_int};
use chrono_tz::Tz;

/// Most records one batch tool adds.
pub const MAX_BATCH: usize = 50;
/// Most records one list returns (003 "Tool Max Limits": 50, default 20).
pub const MAX_LIST: i64 = 50;
pub const DEFAULT_LIST: i64 = 20;
/// Furthest a list may page.
pub const MAX_OFFSET: i64 = 100_000;
/// Longest `search` text.
pub const MAX_SEARCH_BYTES: usize = 500;

/// The schema of one new record (the add tool's arguments, a batch item).
#[must_use]
pub fn add_schema(f: &Family) -> Value {
    let props: Map<String, Value> = f
        .fields
        .iter()
        .filter(|field| field.on_add)
        .map(|field| (field.name.to_owned(), field.schema()))
        .collect();
    let required: Vec<&str> = f
        .fields
        .iter()
        .filter(|field| field.required)
        .map(|field| field.name)
        .collect();
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The schema of the batch tool's arguments.
#[must_use]
pub fn batch_schema(f: &Family) -> Value {
    json!({
        "type": "object",
        "properties": {
            f.batch_param: {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_BATCH,
                "items": add_schema(f),
                "description": format!("The {} to add (at most {MAX_BATCH}), each with the fields of one.", f.many)
            }
        },
        "required": [f.batch_param],
        "additionalProperties": false
    })
}

/// The schema of a tool naming one record (delete, complete).
#[must_use]
pub fn id_schema(f: &Family) -> Value {
    json!({
        "type": "object",
        "properties": { f.id_param: id_property(f) },
        "required": [f.id_param],
        "additionalProperties": false
    })
}

fn id_property(f: &Family) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 100,
        "description": format!("The id of the {} (from {}).", f.noun, f.list_tool)
    })
}

/// The schema of the update tool: the id and any field to change (`null` clears one).
///
/// A clearable field is `{"anyOf": [its schema, {"type": "null"}]}`, not `"type": [t, "null"]`:
/// clients that map tool schemas onto a single-`type` dialect (Gemini's function declarations)
/// reject the array form, and the MCP Inspector's `--strict` check flags it.
#[must_use]
pub fn update_schema(f: &Family) -> Value {
    let mut props: Map<String, Value> = f
        .fields
        .iter()
        .map(|field| {
            let mut schema = field.schema();
            if !field.required && field.default.is_none() {
                let description = schema.as_object_mut().and_then(|s| s.remove("description"));
                let mut nullable = json!({"anyOf": [schema, {"type": "null"}]});
                if let Some(description) = description {
                    object::set(&mut nullable, "description", description);
                }
                schema = nullable;
            }
            (field.name.to_owned(), schema)
        })
        .collect();
    props.insert(f.id_param.to_owned(), id_property(f));
    json!({"type": "object", "properties": props, "required": [f.id_param], "additionalProperties": false})
}

/// The schema of the list tool: its filters, `search`, `sortBy`, `limit` and `offset`.
#[must_use]
pub fn list_schema(f: &Family) -> Value {
    let mut props = Map::new();
    props.insert(
        "search".to_owned(),
        json!({"type": "string", "minLength": 1, "maxLength": MAX_SEARCH_BYTES,
               "description": format!("Words to look for in the {} (any may match; best matches first).", f.many)}),
    );
    for (name, schema) in filter_fields(f) {
        props.insert(name.to_owned(), schema);
    }
    if let Some(range) = &f.range {
        let at = f.index.at.unwrap_or_default();
        props.insert(
            range.from.to_owned(),
            json!({"type": "string", "minLength": 10, "maxLength": 40,
                   "description": format!("Only {} whose {at} is at or after this ISO date or time.", f.many)}),
        );
        props.insert(
            range.to.to_owned(),
            json!({"type": "string", "minLength": 10, "maxLength": 40,
                   "description": format!("Only {} whose {at} is before this ISO time (a date alone includes its whole day).", f.many)}),
        );
    }
    let sorts: Vec<&str> = f.sorts.iter().map(|s| s.name).collect();
    let described: Vec<String> = f
        .sorts
        .iter()
        .map(|s| format!("{} ({})", s.name, s.description))
        .collect();
    props.insert(
        "sortBy".to_owned(),
        json!({"type": "string", "enum": sorts,
               "description": format!("Order: {}; with search, best matches first unless sortBy is given.", described.join(", "))}),
    );
    let (default, max) = list_limit(f);
    props.insert(
        "limit".to_owned(),
        json!({"type": "integer", "minimum": 1, "maximum": max, "description": format!("Max results (default: {default}, max: {max}).")}),
    );
    if let Some(filters) = f.rules.and_then(|r| r.filters) {
        (filters.schema)(&mut props);
    }
    props.insert(
        "offset".to_owned(),
        json!({"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "description": "Skip this many (for the next page)."}),
    );
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

/// The list `limit`'s default and most for `f`.
fn list_limit(f: &Family) -> (i64, i64) {
    f.rules.map_or((DEFAULT_LIST, MAX_LIST), |r| r.list_limit)
}

/// The list tool's equality filters: one per indexed field.
fn filter_fields(f: &Family) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    let field = |name: &str| f.fields.iter().find(|x| x.name == name);
    if let Some(kind) = f.index.kind.and_then(field) {
        out.push((kind.name, filter_schema(f, kind)));
    }
    if let Some(category) = f.index.category.and_then(field) {
        out.push((
            category.name,
            json!({"type": "string", "minLength": 1, "maxLength": 200,
            "description": format!("Only {} of this {} (any case).", f.many, category.name)}),
        ));
    }
    match f.index.weight {
        Weight::Rank(name, _) | Weight::Flag(name) => {
            if let Some(weight) = field(name) {
                out.push((weight.name, filter_schema(f, weight)));
            }
        }
        Weight::None | Weight::Computed(_) => {}
    }
    if let Some(tags) = f.index.tags {
        out.push((tags, json!({"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 64},
            "maxItems": fields::MAX_TAGS, "description": format!("Only {} with any of these tags.", f.many)})));
    }
    out
}

fn filter_schema(f: &Family, field: &Field) -> Value {
    let mut schema = field.schema();
    object::set(
        &mut schema,
        "description",
        json!(match field.kind {
            FieldKind::Flag => format!(
                "true: only {} with {}; false: only those without.",
                f.many, field.name
            ),
            // The words are their own meaning (priorities, statuses, categories): name them.
            FieldKind::Choice(words) => format!(
                "Only {} with this {}: {}.",
                f.many,
                field.name,
                words.join(", ")
            ),
            _ => format!("Only {} with this {}.", f.many, field.name),
        }),
    );
    schema
}

/// A record as the tools and REST return it: its id, its fields, its times.
#[must_use]
pub fn view(record: &DataRecord) -> Value {
    let mut out = Map::new();
    out.insert("id".to_owned(), json!(record.id));
    if let Value::Object(doc) = &record.document {
        out.extend(doc.clone());
    }
    out.insert("createdAt".to_owned(), json!(record.created_at));
    out.insert("updatedAt".to_owned(), json!(record.updated_at));
    Value::Object(out)
}

/// The stored record of `doc` in `scope`: the family's indexed fields and searched text
/// derived from the document.
fn record(f: &Family, scope: &RecordScope, id: String, doc: Map<String, Value>) -> DataRecord {
    let text = |name: Option<&str>| name.and_then(|n| doc.get(n)).and_then(Value::as_str);
    let weight = match f.index.weight {
        Weight::None => 0.0,
        Weight::Rank(name, words) => text(Some(name))
            .and_then(|w| words.iter().position(|x| *x == w))
            .map_or(0.0, |i| (i + 1) as f64),
        Weight::Flag(name) => {
            if doc.get(name) == Some(&Value::Bool(true)) {
                1.0
            } else {
                0.0
            }
        }
        Weight::Computed(weigh) => weigh(&doc),
    };
    let tags: Vec<String> = f
        .index
        .tags
        .and_then(|n| doc.get(n))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut search = Vec::new();
    for field in f.fields.iter().filter(|x| x.searched) {
        match doc.get(field.name) {
            Some(Value::String(s)) => search.push(s.clone()),
            Some(Value::Array(items)) => {
                search.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            _ => {}
        }
    }
    let now = Utc::now();
    DataRecord {
        collection: f.collection.to_owned(),
        id,
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        search_text: search.join("\n"),
        dedup_key: f
            .dedup
            .and_then(|n| doc.get(n))
            .and_then(Value::as_str)
            .map(|v| {
                format!(
                    "{}:{}",
                    f.dedup.unwrap_or_default(),
                    v.trim().to_lowercase()
                )
            }),
        kind: text(f.index.kind).map(str::to_owned),
        category: text(f.index.category).map(|c| c.to_lowercase()),
        weight,
        at: text(f.index.at).and_then(fields::instant),
        tags,
        document: Value::Object(doc),
        created_at: now,
        updated_at: now,
    }
}

/// Adds one record from `args`.
pub async fn add(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let zone = zone::get(records, &scope.owner).await?;
    let doc = read_doc(f, records, scope, args, zone).await?;
    let resolved = resolved_dates(f, args, &doc, zone);
    let mut reply = store(f, records, scope, doc).await?;
    if !resolved.is_empty() {
        object::set(&mut reply, "resolved", json!(resolved));
    }
    Ok(reply)
}

/// What the date fields written in words (`"tomorrow"`) were read as: one line a field,
/// `'dueDate': "tomorrow" is 2026-11-30 (Europe/Paris)`, so the caller sees the ISO date used
/// and the time zone it was read in.
fn resolved_dates(f: &Family, given: &Value, doc: &Map<String, Value>, zone: Tz) -> Vec<String> {
    f.fields
        .iter()
        .filter(|field| matches!(field.kind, FieldKind::Date | FieldKind::Time))
        .filter_map(|field| {
            let written = given.get(field.name)?.as_str()?.trim();
            let stored = doc.get(field.name)?.as_str()?;
            (written != stored).then(|| {
                let shown: String = written.chars().take(40).collect();
                format!(
                    "'{}': \"{shown}\" is {stored} ({})",
                    field.name,
                    zone.name()
                )
            })
        })
        .collect()
}

/// Adds every record of `args[batch_param]`, after checking them all: one bad record adds
/// none.
pub async fn batch_add(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let items = array_arg(args, f.batch_param, MAX_BATCH)?;
    if items.is_empty() {
        return Err(Fail::Args(format!(
            "'{}' must hold at least one {}",
            f.batch_param, f.noun
        )));
    }
    let zone = zone::get(records, &scope.owner).await?;
    let mut docs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let doc = read_doc(f, records, scope, item, zone)
            .await
            .map_err(|e| Fail::Args(format!("{}[{i}]: {}", f.batch_param, e.message())))?;
        docs.push(doc);
    }
    let total = docs.len();
    let mut results = Vec::with_capacity(total);
    let (mut added, mut duplicates) = (0, 0);
    for (i, doc) in docs.into_iter().enumerate() {
        let result = store(f, records, scope, doc).await.map_err(|e| {
            let message = format!(
                "{}[{i}] was not added ({}); the {added} before it were added, the rest were not",
                f.batch_param,
                e.message()
            );
            match e {
                Fail::Args(_) => Fail::Args(message),
                Fail::Run(_) => Fail::Run(message),
            }
        })?;
        if result.get("duplicate") == Some(&Value::Bool(true)) {
            duplicates += 1;
        } else {
            added += 1;
        }
        results.push(result.get(f.one).cloned().unwrap_or_default());
    }
    Ok(json!({
        "success": true,
        "added": added,
        "duplicates": duplicates,
        f.many: results,
        "message": format!("Added {added} {}.", if added == 1 { f.noun } else { f.many }),
    }))
}

/// A new record's document from `args`, its fields read and the family's checks passed.
async fn read_doc(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
    zone: Tz,
) -> Result<Map<String, Value>, Fail> {
    let mut doc = fields::read_new(f.fields, args, f.noun, zone)?;
    if let Some(check) = f.check {
        check(&mut doc)?;
    }
    if let Some(before_add) = f.rules.and_then(|r| r.before_add) {
        before_add(records, scope, &mut doc).await?;
    }
    Ok(doc)
}

async fn store(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    doc: Map<String, Value>,
) -> Result<Value, Fail> {
    let record = record(f, scope, new_id(f.id_prefix), doc);
    match records.put(record).await? {
        PutOutcome::Inserted(stored) => {
            after_write(f, records, scope, &stored).await?;
            Ok(json!({
            "success": true,
            "duplicate": false,
            f.one: view(&stored),
            "message": format!("Added the {}.", f.noun),
            }))
        }
        PutOutcome::Duplicate(found) => Ok(json!({
            "success": true,
            "duplicate": true,
            f.one: view(&found),
            "message": format!("Already saved: the existing {} was kept.", f.noun),
        })),
    }
}

/// The records of the scope that `args` asks for (filters, search, order, page).
pub async fn list(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let zone = zone::get(records, &scope.owner).await?;
    let query = list_query(f, scope, args, zone)?;
    let hits = records.query(&query).await?;
    let items: Vec<Value> = hits.iter().map(|h| view(&h.record)).collect();
    let total = records.stats(scope, f.collection).await?.total;
    Ok(json!({ "count": items.len(), "total": total, f.many: items }))
}

/// The query of the list tool's arguments `args` (filters, search, order, page); a range that
/// starts today by default starts at midnight in `zone`.
pub fn list_query(
    f: &Family,
    scope: &RecordScope,
    args: &Value,
    zone: Tz,
) -> Result<RecordQuery, Fail> {
    if !args.is_object() && !args.is_null() {
        return Err(Fail::Args("the arguments must be a JSON object".to_owned()));
    }
    let mut q = RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: f.collection.to_owned(),
        ..RecordQuery::default()
    };
    let given = |key: &str| args.get(key).filter(|v| !v.is_null());
    if let Some(search) = given("search") {
        let text = search.as_str().unwrap_or_default().trim();
        crate::utilities::check_size("search", text.len(), MAX_SEARCH_BYTES)?;
        if toolsmith_core::data::query_terms(text).is_empty() {
            return Err(Fail::Args(
                "'search' has no word to search for (common words like 'the' are ignored): \
                 give the words to look for, or leave it out"
                    .to_owned(),
            ));
        }
        q.text = Some(text.to_owned());
    }
    let field = |name: &str| f.fields.iter().find(|x| x.name == name);
    if let Some(kind) = f.index.kind.and_then(field)
        && let Some(value) = given(kind.name)
    {
        q.kind = Some(kind.read(value)?.as_str().unwrap_or_default().to_owned());
    }
    if let Some(name) = f.index.category
        && let Some(value) = given(name)
    {
        let category = value.as_str().map(str::trim).unwrap_or_default();
        if category.is_empty() || category.len() > 200 {
            return Err(Fail::Args(format!(
                "'{name}' must be a non-empty string of at most 200 bytes"
            )));
        }
        q.category = Some(category.to_lowercase());
    }
    match f.index.weight {
        Weight::Rank(name, words) => {
            if let (Some(value), Some(weight)) = (given(name), field(name)) {
                let word = weight.read(value)?;
                let rank = words
                    .iter()
                    .position(|w| Some(*w) == word.as_str())
                    .unwrap_or(0)
                    + 1;
                q.min_weight = Some(rank as f64);
                q.max_weight = Some(rank as f64);
            }
        }
        Weight::Flag(name) => {
            if given(name).is_some() {
                if opt_bool(args, name, false)? {
                    q.min_weight = Some(1.0);
                } else {
                    q.max_weight = Some(0.0);
                }
            }
        }
        Weight::None | Weight::Computed(_) => {}
    }
    if let Some(name) = f.index.tags {
        q.tags = tags_arg(args, name, fields::MAX_TAGS)?;
    }
    if let Some(range) = &f.range {
        let time = |key: &str, end: bool| -> Result<Option<chrono::DateTime<Utc>>, Fail> {
            let Some(value) = given(key) else {
                return Ok(None);
            };
            let text = value.as_str().unwrap_or_default();
            let at = fields::instant(text).ok_or_else(|| {
                Fail::Args(format!(
                    "'{key}' must be an ISO 8601 date or date and time (like 2026-05-01 or \
                     2026-05-01T14:30:00)"
                ))
            })?;
            // A date alone as the end includes its whole day.
            Ok(Some(if end && fields::is_date_only(text) {
                at.checked_add_days(Days::new(1)).unwrap_or(at)
            } else {
                at
            }))
        };
        q.at_from = time(range.from, false)?;
        q.at_before = time(range.to, true)?;
        if range.from_today && q.at_from.is_none() && q.at_before.is_none() {
            let midnight = zone::today(zone, Utc::now()).and_time(chrono::NaiveTime::MIN);
            q.at_from = zone::at(zone, midnight).map(|at| at.with_timezone(&Utc));
        }
        if let (Some(from), Some(before)) = (q.at_from, q.at_before)
            && before <= from
        {
            return Err(Fail::Args(format!(
                "'{}' must be after '{}'",
                range.to, range.from
            )));
        }
    }
    let names: Vec<&str> = f.sorts.iter().map(|s| s.name).collect();
    q.order = match given("sortBy") {
        None if q.text.is_some() => RecordOrder::Relevance,
        None => f.sorts.first().map_or(RecordOrder::Newest, |s| s.order),
        Some(value) => f
            .sorts
            .iter()
            .find(|s| value.as_str() == Some(s.name))
            .map(|s| s.order)
            .ok_or_else(|| Fail::Args(format!("'sortBy' must be one of: {}", names.join(", "))))?,
    };
    if let Some(filters) = f.rules.and_then(|r| r.filters) {
        (filters.apply)(args, &mut q)?;
    }
    let (default, max) = list_limit(f);
    let limit = opt_int(args, "limit", default, 1, max)?;
    let offset = opt_int(args, "offset", 0, 0, MAX_OFFSET)?;
    q.limit = u32::try_from(limit).unwrap_or(20);
    q.offset = u32::try_from(offset).unwrap_or(0);
    Ok(q)
}

/// The record `id` of the scope, or an error that says how to find ids.
pub async fn existing(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
) -> Result<DataRecord, Fail> {
    match records.get(scope, f.collection, id).await? {
        Some(found) => Ok(found),
        None => Err(missing(f, records, scope, id).await),
    }
}

/// The refusal of an id that names no record of the scope; an exact title is answered with
/// the id to pass ([`crate::data::not_an_id`]).
async fn missing(f: &Family, records: &dyn Records, scope: &RecordScope, id: &str) -> Fail {
    let Some(title) = f
        .fields
        .iter()
        .find(|field| {
            matches!(field.kind, FieldKind::Text(_))
                && matches!(field.name, "title" | "name" | "description")
        })
        .map(|field| field.name)
    else {
        return not_found(f, id);
    };
    let of = crate::data::Titled {
        collection: f.collection,
        field: title,
        noun: f.noun,
        id_param: f.id_param,
        list_tool: f.list_tool,
    };
    crate::data::not_an_id(records, scope, &of, id).await
}

fn not_found(f: &Family, id: &str) -> Fail {
    Fail::Args(format!(
        "no {} with id '{}' among yours: find ids with {}",
        f.noun,
        id.chars().take(100).collect::<String>(),
        f.list_tool
    ))
}

/// One record of the scope.
pub async fn get(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
) -> Result<Value, Fail> {
    let found = existing(f, records, scope, id).await?;
    Ok(json!({ f.one: view(&found) }))
}

/// Applies the field changes of `body` (all keys but `skip`) to the record `id`.
pub async fn update(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
    body: &Value,
    skip: &str,
) -> Result<Value, Fail> {
    let zone = zone::get(records, &scope.owner).await?;
    let changes = fields::read_changes(f.fields, body, f.noun, skip, zone)?;
    if let Some(key) = f.dedup
        && changes.contains_key(key)
    {
        return Err(Fail::Args(format!(
            "the {key} of a {} cannot be changed: delete it and add the new one",
            f.noun
        )));
    }
    let resolved = resolved_dates(f, body, &changes, zone);
    let mut reply = modify(f, records, scope, id, |doc| {
        for (key, value) in changes {
            if value.is_null() {
                doc.remove(&key);
            } else {
                doc.insert(key, value);
            }
        }
        Ok(())
    })
    .await?;
    if !resolved.is_empty() {
        object::set(&mut reply, "resolved", json!(resolved));
    }
    Ok(reply)
}

/// Changes the document of the record `id` with `change` and stores it (its indexed fields
/// and searched text derived again); the record as stored.
pub async fn modify(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<(), Fail>,
) -> Result<Value, Fail> {
    let found = existing(f, records, scope, id).await?;
    let mut doc = match &found.document {
        Value::Object(doc) => doc.clone(),
        _ => Map::new(),
    };
    change(&mut doc)?;
    crate::placeholder::check_overwrite(
        &format!("the {} '{id}'", f.noun),
        &found.document.to_string(),
        &Value::Object(doc.clone()).to_string(),
    )?;
    if let Some(check) = f.check {
        check(&mut doc)?;
    }
    if let Some(before_change) = f.rules.and_then(|r| r.before_change) {
        before_change(records, scope, &found, &mut doc).await?;
    }
    let mut updated = record(f, scope, found.id.clone(), doc);
    updated.created_at = found.created_at;
    let stored = records
        .update(updated)
        .await?
        .ok_or_else(|| not_found(f, id))?;
    after_write(f, records, scope, &stored).await?;
    Ok(json!({ "success": true, f.one: view(&stored) }))
}

/// The family's follow-up of a stored record, if it has one.
async fn after_write(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    stored: &DataRecord,
) -> Result<(), Fail> {
    match f.rules.and_then(|r| r.after_write) {
        Some(after) => after(records, scope, stored).await,
        None => Ok(()),
    }
}

/// Deletes the record `id` of the scope.
pub async fn delete(
    f: &Family,
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
) -> Result<Value, Fail> {
    let Some(after_delete) = f.rules.and_then(|r| r.after_delete) else {
        if !records.delete(scope, f.collection, id).await? {
            return Err(missing(f, records, scope, id).await);
        }
        return Ok(json!({ "success": true, "deleted": true, f.id_param: id }));
    };
    let found = existing(f, records, scope, id).await?;
    if !records.delete(scope, f.collection, id).await? {
        return Err(not_found(f, id));
    }
    after_delete(records, scope, &found).await?;
    Ok(json!({ "success": true, "deleted": true, f.id_param: id }))
}
