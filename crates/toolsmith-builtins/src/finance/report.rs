//! What the expenses tell: `export_expenses` (CSV for a spreadsheet — RFC 4180 through the
//! `csv` crate, every cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return
//! prefixed with `'` as OWASP advises against formula injection — or JSON) and
//! `expense_summary` (totals by category and by period, one set per currency: amounts of
//! different currencies are never added together). Both take `query_expenses`' filters and
//! read at most [`MAX_ROWS`] expenses, saying so when there were more.

use std::collections::BTreeMap;

use chrono::Datelike;
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, RecordOrder};
use toolsmith_core::object;

use super::FAMILY;
use super::money::{decimals, minor_units, to_text};
use crate::data::{Call, scan};
use crate::personal::{Family, ops};
use crate::utilities::{Fail, csv_write::formula_safe, required_choice};

/// Most expenses one export or summary reads.
pub const MAX_ROWS: usize = 10_000;
const FORMATS: &[&str] = &["csv", "json"];
const PERIODS: &[&str] = &["day", "week", "month", "year"];
/// The CSV columns, in order.
const COLUMNS: &[&str] = &[
    "id",
    "date",
    "amount",
    "currency",
    "category",
    "description",
    "paymentMethod",
    "tags",
    "notes",
    "createdAt",
];

/// `query_expenses`' filters without its paging and order, plus `extra`.
fn filters_schema(f: &Family, extra: &[(&str, Value)], required: &[&str]) -> Value {
    let mut schema = ops::list_schema(f);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for key in ["limit", "offset", "sortBy"] {
            props.remove(key);
        }
        for (key, prop) in extra {
            props.insert((*key).to_owned(), prop.clone());
        }
    }
    object::set(&mut schema, "required", json!(required));
    schema
}

/// Every expense of the caller `args`' filters select, in date order; whether there were
/// more than [`MAX_ROWS`].
async fn selected(call: &Call<'_>, skip: &[&str]) -> Result<(Vec<DataRecord>, bool), Fail> {
    let mut args = call.args.clone();
    if let Some(obj) = args.as_object_mut() {
        for key in skip {
            obj.remove(*key);
        }
    }
    let zone = crate::personal::zone::get(call.records, &call.scope.owner).await?;
    let mut query = ops::list_query(&FAMILY, &call.scope, &args, zone)?;
    query.order = RecordOrder::At;
    let mut rows = scan(call.records, query, MAX_ROWS + 1).await?;
    let more = rows.len() > MAX_ROWS;
    rows.truncate(MAX_ROWS);
    Ok((rows, more))
}

/// `export_expenses`' arguments.
pub fn export_schema(f: &Family) -> Value {
    filters_schema(
        f,
        &[(
            "format",
            json!({"type": "string", "enum": FORMATS, "description": "csv (RFC 4180, for a spreadsheet) or json."}),
        )],
        &["format"],
    )
}

/// `export_expenses`.
pub async fn export(call: Call<'_>) -> Result<Value, Fail> {
    let format = required_choice(&call.args, "format", FORMATS)?;
    let (rows, truncated) = selected(&call, &["format"]).await?;
    let mut out = json!({"format": format, "count": rows.len(), "truncated": truncated});
    if format == "json" {
        object::set(&mut out, "expenses", rows.iter().map(ops::view).collect());
        return Ok(out);
    }
    let mut writer = csv::WriterBuilder::new().from_writer(Vec::new());
    let fail = |e: csv::Error| Fail::Run(format!("cannot write CSV: {e}"));
    writer.write_record(COLUMNS).map_err(fail)?;
    for row in &rows {
        let view = ops::view(row);
        let cells = COLUMNS.iter().map(|c| {
            formula_safe(match view.get(*c) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(";"),
                Some(other) => other.to_string(),
            })
        });
        writer.write_record(cells).map_err(fail)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| Fail::Run(format!("cannot write CSV: {e}")))?;
    object::set(&mut out, "csv", json!(String::from_utf8_lossy(&bytes)));
    Ok(out)
}

/// `expense_summary`'s arguments.
pub fn summary_schema(f: &Family) -> Value {
    filters_schema(
        f,
        &[(
            "groupBy",
            json!({"type": "string", "enum": PERIODS, "description": "The period of the totals over time: day, week (ISO), month (default) or year."}),
        )],
        &[],
    )
}

/// A running total of one currency.
#[derive(Default)]
struct Total {
    units: i128,
    count: u64,
}

impl Total {
    fn add(&mut self, units: i128) {
        self.units += units;
        self.count += 1;
    }
}

/// `expense_summary`.
pub async fn summary(call: Call<'_>) -> Result<Value, Fail> {
    let period = match call.args.get("groupBy") {
        None | Some(Value::Null) => "month",
        Some(_) => required_choice(&call.args, "groupBy", PERIODS)?,
    };
    let (rows, truncated) = selected(&call, &["groupBy"]).await?;
    #[derive(Default)]
    struct Currency {
        total: Total,
        by_category: BTreeMap<String, Total>,
        by_period: BTreeMap<String, Total>,
    }
    let mut currencies: BTreeMap<String, Currency> = BTreeMap::new();
    for row in &rows {
        let Value::Object(doc) = &row.document else {
            continue;
        };
        let (currency, units) = minor_units(doc);
        let entry = currencies.entry(currency).or_default();
        entry.total.add(units);
        let category = row.kind.clone().unwrap_or_else(|| "other".to_owned());
        entry.by_category.entry(category).or_default().add(units);
        if let Some(at) = row.at {
            entry
                .by_period
                .entry(period_of(at.date_naive(), period))
                .or_default()
                .add(units);
        }
    }
    let summaries: Vec<Value> = currencies
        .into_iter()
        .map(|(currency, c)| {
            let scale = decimals(&currency);
            let line = |key: &str, name: String, t: &Total| {
                let mut m = Map::new();
                m.insert(key.to_owned(), json!(name));
                m.insert("total".to_owned(), json!(to_text(t.units, scale)));
                m.insert("count".to_owned(), json!(t.count));
                Value::Object(m)
            };
            let mut by_category: Vec<(String, Total)> = c.by_category.into_iter().collect();
            by_category.sort_by(|a, b| b.1.units.cmp(&a.1.units).then(a.0.cmp(&b.0)));
            json!({
                "currency": currency,
                "total": to_text(c.total.units, scale),
                "count": c.total.count,
                "byCategory": by_category.iter().map(|(k, t)| line("category", k.clone(), t)).collect::<Vec<_>>(),
                "byPeriod": c.by_period.iter().map(|(k, t)| line("period", k.clone(), t)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let message = match summaries.len() {
        0 => "No expenses match.".to_owned(),
        1 => format!("{} expenses.", rows.len()),
        n => format!(
            "{} expenses in {n} currencies: each currency has its own totals (amounts of \
             different currencies are never added together).",
            rows.len()
        ),
    };
    Ok(json!({
        "count": rows.len(),
        "groupBy": period,
        "truncated": truncated,
        "currencies": summaries,
        "message": message,
    }))
}

/// The period `day` falls in: `2026-05-01`, `2026-W18`, `2026-05` or `2026`.
fn period_of(day: chrono::NaiveDate, period: &str) -> String {
    match period {
        "day" => day.to_string(),
        "week" => {
            let week = day.iso_week();
            format!("{}-W{:02}", week.year(), week.week())
        }
        "year" => day.year().to_string(),
        _ => format!("{}-{:02}", day.year(), day.month()),
    }
}
