//! The eleven Custom Data operations on the caller's scope of the record store, for the tools
//! and for REST alike (the same checks, the same replies).
//!
//! A table is one record of the collection [`TABLES`] (its [`Definition`] as the document, its
//! name as the dedup key and the indexed `category`, so a name is unique in its scope and found
//! by index); its rows are the records of a collection of their own, [`rows_collection`] of
//! the table's id, so a table's rows are filtered, sorted, searched, counted and deleted as
//! one collection, and a table made again under an old name never finds the old rows.

use serde_json::{Map, Value, json};
use toolsmith_core::data::{
    DataRecord, FieldMatch, FieldOrder, PutOutcome, RecordOrder, RecordQuery, RecordScope,
    query_terms,
};
use toolsmith_core::object;

use super::columns::{Definition, check_name};
use crate::data::{DataError, Records, id_arg, new_id};
use crate::utilities::{Fail, array_arg, choice, json_arg, opt_bool, opt_int};

/// The collection of every scope's table definitions.
pub const TABLES: &str = "custom_table";
/// Most tables one user has (across their agents).
pub const MAX_TABLES: u64 = 50;
// Rows per batch (50), a list's limit (003 "Tool Max Limits": 50, default 20) and its paging
// bound are the personal families'.
pub use crate::personal::ops::{DEFAULT_LIST, MAX_BATCH, MAX_LIST, MAX_OFFSET};
/// Most columns one filter names.
pub const MAX_FILTERS: usize = 10;
/// Longest search text.
pub const MAX_QUERY: usize = 500;

/// The collection of one table's rows.
#[must_use]
pub fn rows_collection(table_id: &str) -> String {
    format!("custom_row:{table_id}")
}

/// A stored table: its record's id, times and definition.
#[derive(Debug, Clone)]
pub struct Table {
    pub id: String,
    pub definition: Definition,
    pub record: DataRecord,
}

impl Table {
    fn rows(&self) -> String {
        rows_collection(&self.id)
    }

    fn view(&self) -> Value {
        let mut out = json!({
            "id": self.id,
            "name": self.definition.name,
            "displayName": self.definition.display_name,
            "columns": self.definition.columns.iter().map(super::columns::Column::view).collect::<Vec<_>>(),
            "createdAt": self.record.created_at,
        });
        if let Some(description) = &self.definition.description {
            object::set(&mut out, "description", json!(description));
        }
        out
    }
}

/// The caller's table `name_or_id` (a name, or a `tbl_` id), or `None`.
pub async fn find_table(
    records: &dyn Records,
    scope: &RecordScope,
    name_or_id: &str,
) -> Result<Option<Table>, Fail> {
    let record = if name_or_id.starts_with("tbl_") && name_or_id.len() <= 100 {
        records.get(scope, TABLES, name_or_id).await?
    } else if check_name(name_or_id, "table").is_ok() {
        let hits = records
            .query(&RecordQuery {
                owner: scope.owner.clone(),
                agent: scope.agent.clone(),
                collection: TABLES.to_owned(),
                category: Some(name_or_id.to_owned()),
                limit: 1,
                ..RecordQuery::default()
            })
            .await?;
        hits.into_iter().next().map(|h| h.record)
    } else {
        None
    };
    record
        .map(|record| {
            Ok(Table {
                id: record.id.clone(),
                definition: Definition::from_document(&record.document)?,
                record,
            })
        })
        .transpose()
}

/// The table the `table` argument names, or an error that says how to find tables.
pub async fn table_arg(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Table, Fail> {
    let Some(name) = args.get("table").and_then(Value::as_str) else {
        return Err(Fail::Args(
            "'table' is required: a table's name (see list_custom_tables)".to_owned(),
        ));
    };
    find_table(records, scope, name.trim())
        .await?
        .ok_or_else(|| no_table(name))
}

fn no_table(name: &str) -> Fail {
    Fail::Args(format!(
        "no custom table '{}' among yours: see list_custom_tables, or make it with \
         create_custom_table",
        name.chars().take(64).collect::<String>()
    ))
}

/// `list_custom_tables`: every table of the scope with its column and row counts.
pub async fn list_tables(records: &dyn Records, scope: &RecordScope) -> Result<Value, Fail> {
    let hits = records
        .query(&RecordQuery {
            owner: scope.owner.clone(),
            agent: scope.agent.clone(),
            collection: TABLES.to_owned(),
            limit: u32::try_from(MAX_TABLES).unwrap_or(50),
            ..RecordQuery::default()
        })
        .await?;
    let mut tables = Vec::with_capacity(hits.len());
    for hit in hits {
        let definition = Definition::from_document(&hit.record.document)?;
        let rows = records
            .tally(scope, &rows_collection(&hit.record.id))
            .await?
            .total;
        let mut table = json!({
            "id": hit.record.id,
            "name": definition.name,
            "displayName": definition.display_name,
            "columnCount": definition.columns.len(),
            "recordCount": rows,
        });
        if let Some(description) = &definition.description {
            object::set(&mut table, "description", json!(description));
        }
        tables.push(table);
    }
    tables.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(json!({
        "count": tables.len(),
        "tables": tables,
        "message": format!("Found {} custom table(s).", tables.len()),
    }))
}

/// `describe_custom_table`: a table's columns and figures.
pub async fn describe_table(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let stats = records.tally(scope, &table.rows()).await?;
    let mut out = table.view();
    object::set(
        &mut out,
        "stats",
        json!({
            "recordCount": stats.total,
            "firstRecord": stats.oldest,
            "lastRecord": stats.newest,
        }),
    );
    Ok(json!({
        "table": out,
        "message": format!(
            "Table '{}' has {} columns and {} records.",
            table.definition.display_name,
            table.definition.columns.len(),
            stats.total
        ),
    }))
}

/// `create_custom_table`.
pub async fn create_table(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let definition = Definition::read(args)?;
    let mut record = DataRecord::new(
        scope,
        TABLES,
        new_id("tbl"),
        definition.document(),
        String::new(),
    );
    record.dedup_key = Some(format!("table:{}", definition.name));
    record.category = Some(definition.name.clone());
    let stored = match records.put_within(record, MAX_TABLES).await {
        Ok(PutOutcome::Inserted(stored)) => stored,
        Ok(PutOutcome::Duplicate(_)) => {
            return Err(Fail::Args(format!(
                "a custom table named '{}' exists already: add rows to it, see it with \
                 describe_custom_table, or choose another name",
                definition.name
            )));
        }
        Err(DataError::Limit { .. }) => {
            return Err(Fail::Args(format!(
                "you already have {MAX_TABLES} custom tables, the most allowed: delete one \
                 you no longer need with delete_custom_table first"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let table = Table {
        id: stored.id.clone(),
        definition,
        record: stored,
    };
    Ok(json!({
        "success": true,
        "table": table.view(),
        "message": format!(
            "Created table '{}' with {} columns.",
            table.definition.display_name,
            table.definition.columns.len()
        ),
    }))
}

/// `delete_custom_table`: the table and every row of it, with `confirm: true`.
pub async fn delete_table(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    if !opt_bool(args, "confirm", false)? {
        return Err(Fail::Args(
            "deleting a table deletes all of its rows for good: call again with \
             \"confirm\": true"
                .to_owned(),
        ));
    }
    let table = table_arg(records, scope, args).await?;
    // The definition first: from then on no call finds the table to add a row to.
    records.delete(scope, TABLES, &table.id).await?;
    let rows = records.delete_collection(scope, &table.rows()).await?;
    Ok(json!({
        "success": true,
        "deleted": true,
        "table": table.definition.name,
        "recordsDeleted": rows,
        "message": format!(
            "Deleted table '{}' and its {rows} records.",
            table.definition.display_name
        ),
    }))
}

/// A row as the tools and REST return it: its id, its columns, its times (as a personal
/// family's record).
pub use crate::personal::ops::view as row_view;

fn row_record(
    table: &Table,
    scope: &RecordScope,
    id: String,
    row: Map<String, Value>,
) -> DataRecord {
    let search_text = table.definition.search_text(&row);
    DataRecord::new(scope, table.rows(), id, Value::Object(row), search_text)
}

/// A store refusal of a row, said for a row.
fn row_error(e: DataError) -> Fail {
    match e {
        DataError::TooLarge { bytes, max, .. } => Fail::Args(format!(
            "the row is {bytes} bytes; the limit is {max} bytes (max_record_bytes): store less \
             in one row"
        )),
        DataError::Limit { limit, .. } => Fail::Args(format!(
            "the table already has {limit} rows, the most allowed \
             (max_records_per_collection): delete rows you no longer need first"
        )),
        e => e.into(),
    }
}

async fn insert(
    records: &dyn Records,
    scope: &RecordScope,
    table: &Table,
    row: Map<String, Value>,
) -> Result<DataRecord, Fail> {
    let record = row_record(table, scope, new_id("row"), row);
    match records.put(record).await.map_err(row_error)? {
        PutOutcome::Inserted(stored) | PutOutcome::Duplicate(stored) => Ok(stored),
    }
}

/// Keeps the rows just added to `table` only if the table still exists. A deletion removes the
/// definition, then the rows; an add that found the table before the definition went could
/// otherwise insert after the rows went, leaving rows no call reaches. Checked after the
/// insert, whichever of the two finishes last removes them: if this check still finds the
/// definition, the deletion's row sweep comes later and takes them.
async fn keep_if_table_exists(
    records: &dyn Records,
    scope: &RecordScope,
    table: &Table,
    added: &[String],
) -> Result<(), Fail> {
    if added.is_empty() || records.get(scope, TABLES, &table.id).await?.is_some() {
        return Ok(());
    }
    for id in added {
        records.delete(scope, &table.rows(), id).await?;
    }
    Err(Fail::Args(format!(
        "the custom table '{}' was deleted while the rows were being added; nothing was \
         kept: make it again with create_custom_table",
        table.definition.name
    )))
}

/// `add_custom_record`: one row from `data`.
pub async fn add_row(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let row = table
        .definition
        .read_row(args.get("data").unwrap_or(&Value::Null))?;
    let stored = insert(records, scope, &table, row).await?;
    keep_if_table_exists(records, scope, &table, std::slice::from_ref(&stored.id)).await?;
    Ok(json!({
        "success": true,
        "record": row_view(&stored),
        "message": format!("Added a record to '{}'.", table.definition.display_name),
    }))
}

/// `batch_add_custom_records`: every row of `records`, after checking them all (one bad row
/// adds none).
pub async fn batch_add_rows(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let items = array_arg(args, "records", MAX_BATCH)?;
    if items.is_empty() {
        return Err(Fail::Args(
            "'records' must hold at least one row's data".to_owned(),
        ));
    }
    let rows = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            table
                .definition
                .read_row(item)
                .map_err(|e| Fail::Args(format!("records[{i}]: {}", e.message())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut added = Vec::with_capacity(rows.len());
    let mut ids = Vec::with_capacity(rows.len());
    for (i, row) in rows.into_iter().enumerate() {
        let stored = match insert(records, scope, &table, row).await {
            Ok(stored) => stored,
            Err(e) => {
                keep_if_table_exists(records, scope, &table, &ids).await?;
                let message = format!(
                    "records[{i}] was not added ({}); the {} before it were added, the rest \
                     were not",
                    e.message(),
                    added.len()
                );
                return Err(match e {
                    Fail::Args(_) => Fail::Args(message),
                    Fail::Run(_) => Fail::Run(message),
                });
            }
        };
        added.push(row_view(&stored));
        ids.push(stored.id);
    }
    keep_if_table_exists(records, scope, &table, &ids).await?;
    Ok(json!({
        "success": true,
        "added": added.len(),
        "records": added,
        "message": format!("Added {} record(s) to '{}'.", added.len(), table.definition.display_name),
    }))
}

/// The query of a list or search: the table's rows, the filter, the page.
fn rows_query(table: &Table, scope: &RecordScope, args: &Value) -> Result<RecordQuery, Fail> {
    let mut q = RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: table.rows(),
        ..RecordQuery::default()
    };
    if args.get("filter").is_some_and(|f| !f.is_null()) {
        let Value::Object(filter) = json_arg(args, "filter", 100_000)? else {
            return Err(Fail::Args(
                "'filter' must be an object of column values to match, like {\"genre\": \"sci-fi\"}"
                    .to_owned(),
            ));
        };
        if filter.len() > MAX_FILTERS {
            return Err(Fail::Args(format!(
                "'filter' names {} columns; the limit is {MAX_FILTERS}",
                filter.len()
            )));
        }
        for (name, value) in &filter {
            q.fields.push(FieldMatch {
                field: name.clone(),
                value: table.definition.filter_value(name, value)?,
            });
        }
    }
    let limit = opt_int(args, "limit", DEFAULT_LIST, 1, MAX_LIST)?;
    let offset = opt_int(args, "offset", 0, 0, MAX_OFFSET)?;
    q.limit = u32::try_from(limit).unwrap_or(20);
    q.offset = u32::try_from(offset).unwrap_or(0);
    Ok(q)
}

/// `list_custom_records`: rows matching `filter`, sorted by `sortBy` (a column, `createdAt`
/// or `updatedAt`) in `sortOrder`, paged.
pub async fn list_rows(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let mut q = rows_query(&table, scope, args)?;
    let sort_by = match args.get("sortBy") {
        None | Some(Value::Null) => "createdAt",
        Some(v) => v.as_str().unwrap_or_default(),
    };
    let order = match args.get("sortOrder") {
        None | Some(Value::Null) => None,
        Some(_) => Some(choice(args, "sortOrder", "desc", &["asc", "desc"])?),
    };
    match sort_by {
        "createdAt" | "updatedAt" => {
            if order == Some("asc") {
                return Err(Fail::Args(format!(
                    "sorting by {sort_by} is newest first only: leave out sortOrder, or sort by \
                     a column"
                )));
            }
            q.order = if sort_by == "createdAt" {
                RecordOrder::Newest
            } else {
                RecordOrder::Updated
            };
        }
        name => {
            let column = table.definition.column(name).map_err(|e| {
                Fail::Args(format!(
                    "'sortBy': {} (or createdAt, updatedAt)",
                    e.message()
                ))
            })?;
            let sort = column.kind.sort().ok_or_else(|| {
                Fail::Args(format!(
                    "column '{name}' is of type json and cannot be sorted on: sort by another column"
                ))
            })?;
            q.field_order = Some(FieldOrder {
                field: column.name.clone(),
                sort,
                descending: order == Some("desc"),
            });
        }
    }
    let hits = records.query(&q).await?;
    let rows: Vec<Value> = hits.iter().map(|h| row_view(&h.record)).collect();
    let total = records.tally(scope, &table.rows()).await?.total;
    Ok(json!({
        "table": table.definition.name,
        "count": rows.len(),
        "total": total,
        "records": rows,
        "message": format!(
            "Showing {} of {total} record(s) in '{}'.",
            rows.len(),
            table.definition.display_name
        ),
    }))
}

/// `search_custom_records`: rows whose text columns match words of `query`, best first.
pub async fn search_rows(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let text = args
        .get("query")
        .and_then(Value::as_str)
        .map(str::trim)
        .ok_or_else(|| Fail::Args("'query' is required: the words to look for".to_owned()))?;
    crate::utilities::check_size("query", text.len(), MAX_QUERY)?;
    if query_terms(text).is_empty() {
        return Err(Fail::Args(
            "'query' has no word to search for (common words like 'the' are ignored): give \
             the words to look for"
                .to_owned(),
        ));
    }
    let mut q = rows_query(&table, scope, args)?;
    q.text = Some(text.to_owned());
    q.order = RecordOrder::Relevance;
    let hits = records.query(&q).await?;
    let rows: Vec<Value> = hits.iter().map(|h| row_view(&h.record)).collect();
    Ok(json!({
        "table": table.definition.name,
        "count": rows.len(),
        "records": rows,
        "message": format!(
            "Found {} record(s) matching '{}' in '{}'.",
            rows.len(),
            text.chars().take(100).collect::<String>(),
            table.definition.display_name
        ),
    }))
}

/// The row `recordId` of the table, or an error that says how to find ids.
async fn existing_row(
    records: &dyn Records,
    scope: &RecordScope,
    table: &Table,
    id: &str,
) -> Result<DataRecord, Fail> {
    records
        .get(scope, &table.rows(), id)
        .await?
        .ok_or_else(|| no_row(table, id))
}

fn no_row(table: &Table, id: &str) -> Fail {
    Fail::Args(format!(
        "no record with id '{}' in table '{}' among yours: find ids with list_custom_records \
         or search_custom_records",
        id.chars().take(100).collect::<String>(),
        table.definition.name
    ))
}

/// `get_custom_record`.
pub async fn get_row(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let row = existing_row(records, scope, &table, id_arg(args, "recordId")?).await?;
    Ok(json!({ "table": table.definition.name, "record": row_view(&row) }))
}

/// `update_custom_record`: the columns of `data` changed (`null` clears an optional one).
pub async fn update_row(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let id = id_arg(args, "recordId")?;
    let changes = table
        .definition
        .read_changes(args.get("data").unwrap_or(&Value::Null))?;
    let found = existing_row(records, scope, &table, id).await?;
    let before = found.document.to_string();
    let mut row = match found.document {
        Value::Object(doc) => doc,
        _ => Map::new(),
    };
    for (key, value) in changes {
        if value.is_null() {
            row.remove(&key);
        } else {
            row.insert(key, value);
        }
    }
    crate::placeholder::check_overwrite(
        &format!("the record '{id}' of table '{}'", table.definition.name),
        &before,
        &Value::Object(row.clone()).to_string(),
    )?;
    let mut updated = row_record(&table, scope, found.id, row);
    updated.created_at = found.created_at;
    let stored = records
        .update(updated)
        .await
        .map_err(row_error)?
        .ok_or_else(|| no_row(&table, id))?;
    Ok(json!({ "success": true, "record": row_view(&stored) }))
}

/// `delete_custom_record`.
pub async fn delete_row(
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    let table = table_arg(records, scope, args).await?;
    let id = id_arg(args, "recordId")?;
    if !records.delete(scope, &table.rows(), id).await? {
        return Err(no_row(&table, id));
    }
    Ok(json!({ "success": true, "deleted": true, "recordId": id }))
}
