//! A personal-data family's fields: what each one accepts ([`FieldKind`]), its JSON Schema,
//! and how a call's arguments (or a REST body) become a record's document — a new one
//! ([`read_new`]) or the changes to one ([`read_changes`]). Every refusal names the field and
//! the fix.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use serde_json::{Map, Value, json};

use toolsmith_core::object;

use super::{natural, zone};
use crate::utilities::Fail;
use chrono_tz::Tz;

/// What a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Text of at most this many bytes (trimmed, not empty, no NUL).
    Text(usize),
    /// One of these words.
    Choice(&'static [&'static str]),
    /// `true` or `false` (`false` when not given).
    Flag,
    /// A calendar date, `YYYY-MM-DD`, or a day in words (`tomorrow`, `next Friday`;
    /// [`super::natural`]) stored as the `YYYY-MM-DD` it resolves to.
    Date,
    /// A date or a date and time in ISO 8601 (`2026-05-01`, `2026-05-01T14:30`,
    /// `2026-05-01T14:30:00+02:00`); a time without an offset is UTC. A day in words, with a
    /// time or not (`next Friday 9am`), is stored as the ISO date or date-time it resolves to.
    Time,
    /// An `http` or `https` URL.
    Url,
    /// An email address.
    Email,
    /// A list of at most [`MAX_TAGS`] tags (lower-cased, duplicates dropped).
    Tags,
    /// A whole number of minutes, 0 to four weeks.
    Minutes,
    /// A whole number from the first to the second (a goal's priority, 1 to 10).
    Int(i64, i64),
    /// A positive decimal number, kept as its decimal text (`12.5`, or the string `"12.50"`)
    /// so no float rounding ever touches it; the family's check gives it its scale.
    Decimal,
}

/// Most tags on one record.
pub const MAX_TAGS: usize = 20;
/// Longest URL.
pub const MAX_URL_BYTES: usize = 2048;
/// Most minutes a reminder may be set before its event (four weeks).
pub const MAX_MINUTES: i64 = 40_320;

/// One field of a family's records.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its name in arguments, documents and replies (the spec's camelCase).
    pub name: &'static str,
    pub kind: FieldKind,
    /// Required when a record is added.
    pub required: bool,
    /// Whether it can be given when a record is added (a task's status cannot: it starts
    /// `pending`).
    pub on_add: bool,
    /// Its value when a record is added without it (`None`: left out).
    pub default: Option<&'static str>,
    /// Whether full-text search reads it.
    pub searched: bool,
    pub description: &'static str,
}

impl Field {
    /// An optional field given when a record is added.
    pub const fn new(name: &'static str, kind: FieldKind, description: &'static str) -> Field {
        Field {
            name,
            kind,
            required: false,
            on_add: true,
            default: None,
            searched: false,
            description,
        }
    }

    /// The field, required when a record is added.
    pub const fn required(self) -> Field {
        Field {
            required: true,
            ..self
        }
    }

    /// The field, read by full-text search.
    pub const fn searched(self) -> Field {
        Field {
            searched: true,
            ..self
        }
    }

    /// The field, `value` when not given.
    pub const fn default(self, value: &'static str) -> Field {
        Field {
            default: Some(value),
            ..self
        }
    }

    /// The field, only changed after the record is added.
    pub const fn not_on_add(self) -> Field {
        Field {
            on_add: false,
            ..self
        }
    }

    /// Its JSON Schema.
    #[must_use]
    pub fn schema(&self) -> Value {
        let mut schema = match self.kind {
            FieldKind::Text(max) => json!({"type": "string", "minLength": 1, "maxLength": max}),
            FieldKind::Choice(words) => json!({"type": "string", "enum": words}),
            FieldKind::Flag => json!({"type": "boolean"}),
            FieldKind::Date | FieldKind::Time => {
                json!({"type": "string", "minLength": 1, "maxLength": 40})
            }
            FieldKind::Url => json!({"type": "string", "minLength": 1, "maxLength": MAX_URL_BYTES}),
            FieldKind::Email => json!({"type": "string", "minLength": 3, "maxLength": 254}),
            FieldKind::Tags => json!({
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 64},
                "maxItems": MAX_TAGS
            }),
            FieldKind::Minutes => json!({"type": "integer", "minimum": 0, "maximum": MAX_MINUTES}),
            FieldKind::Int(min, max) => json!({"type": "integer", "minimum": min, "maximum": max}),
            // A number, or its decimal text as replies show it (`"12.50"`): `anyOf`, not a
            // type array, for clients that take one type a schema (see `ops::update_schema`).
            // The string's form is checked by `read`, whose refusal names it (a pattern's
            // refusal would not say that "$45.00" wants its symbol dropped).
            FieldKind::Decimal => json!({"anyOf": [
                {"type": "number"},
                {"type": "string", "minLength": 1, "maxLength": MAX_DECIMAL_CHARS}
            ]}),
        };
        object::set(&mut schema, "description", json!(self.description));
        schema
    }

    /// `value` as this field holds it, or the reason it cannot; a date in words is read in UTC.
    pub fn read(&self, value: &Value) -> Result<Value, Fail> {
        self.read_at(value, Tz::UTC, Utc::now())
    }

    /// [`Field::read`] with a date in words read in `zone` at `now`: "today" is `now`'s date
    /// there, and "tomorrow 9am" is 9am there, stored as the RFC 3339 instant with its offset
    /// (`2026-03-30T09:00:00+02:00`).
    pub fn read_at(&self, value: &Value, zone: Tz, now: DateTime<Utc>) -> Result<Value, Fail> {
        let name = self.name;
        let today = zone::today(zone, now);
        let text = |max: usize| -> Result<String, Fail> {
            let Some(text) = value.as_str() else {
                return Err(Fail::Args(format!("'{name}' must be a string")));
            };
            let text = text.trim();
            if text.is_empty() {
                return Err(Fail::Args(format!("'{name}' must not be empty")));
            }
            crate::utilities::check_size(name, text.len(), max)?;
            if text.contains('\0') {
                return Err(Fail::Args(format!(
                    "'{name}' contains a NUL character (\\u0000); remove it"
                )));
            }
            Ok(text.to_owned())
        };
        Ok(match self.kind {
            FieldKind::Text(max) => json!(text(max)?),
            FieldKind::Choice(words) => match value.as_str() {
                Some(word) if words.contains(&word) => json!(word),
                _ => {
                    return Err(Fail::Args(format!(
                        "'{name}' must be one of: {}",
                        words.join(", ")
                    )));
                }
            },
            FieldKind::Flag => match value {
                Value::Bool(b) => json!(b),
                _ => return Err(Fail::Args(format!("'{name}' must be true or false"))),
            },
            FieldKind::Date => {
                let date = text(40)?;
                if NaiveDate::parse_from_str(&date, "%Y-%m-%d")
                    .ok()
                    .filter(in_range)
                    .is_some()
                {
                    return Ok(json!(date));
                }
                match natural::resolve(&date, today) {
                    Ok(day) if day.time.is_none() && in_range(&day.date) => {
                        json!(day.date.to_string())
                    }
                    Ok(_) => {
                        return Err(Fail::Args(format!(
                            "'{name}' is a day without a time of day: write it YYYY-MM-DD (like \
                             2026-12-04) or as a day in words (\"tomorrow\", \"next Friday\")"
                        )));
                    }
                    Err(why) => return Err(not_a_day(name, &date, why)),
                }
            }
            FieldKind::Time => {
                let time = text(40)?;
                if instant(&time).is_some() {
                    return Ok(json!(time));
                }
                match natural::resolve(&time, today) {
                    Ok(day) if in_range(&day.date) => match day.time {
                        None => json!(day.date.to_string()),
                        Some(at) => match zone::at(zone, day.date.and_time(at)) {
                            Some(at) => json!(at.to_rfc3339()),
                            None => return Err(not_a_day(name, &time, natural::NotADay::Unknown)),
                        },
                    },
                    Ok(_) => return Err(not_a_day(name, &time, natural::NotADay::Unknown)),
                    Err(why) => return Err(not_a_day(name, &time, why)),
                }
            }
            FieldKind::Url => {
                let url = text(MAX_URL_BYTES)?;
                let ok = url::Url::parse(&url)
                    .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
                if !ok {
                    return Err(Fail::Args(format!(
                        "'{name}' must be an http or https URL (like https://example.org/page)"
                    )));
                }
                json!(url)
            }
            FieldKind::Email => {
                let email = text(254)?;
                let valid = email.split_once('@').is_some_and(|(local, domain)| {
                    !local.is_empty()
                        && domain.contains('.')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !email.chars().any(char::is_whitespace)
                        && !domain.contains('@')
                });
                if !valid {
                    return Err(Fail::Args(format!(
                        "'{name}' must be an email address (like ada@example.org)"
                    )));
                }
                json!(email)
            }
            FieldKind::Tags => {
                let args = json!({ name: value });
                json!(crate::data::tags_arg(&args, name, MAX_TAGS)?)
            }
            FieldKind::Minutes => {
                let args = json!({ name: value });
                json!(crate::utilities::opt_int(&args, name, 0, 0, MAX_MINUTES)?)
            }
            FieldKind::Int(min, max) => {
                let args = json!({ name: value });
                json!(crate::utilities::opt_int(&args, name, min, min, max)?)
            }
            FieldKind::Decimal => json!(decimal_text(name, value)?),
        })
    }
}

/// The refusal of a date field's text that is no date: the format, with an example.
fn not_a_day(name: &str, text: &str, why: natural::NotADay) -> Fail {
    let shown: String = text.chars().take(40).collect();
    let what = match why {
        natural::NotADay::MonthOnly => format!(
            "'{shown}' names a month but no day of it: say which day (like 2026-11-15, or \
             2026-11-01 for its first)"
        ),
        natural::NotADay::Unknown => format!("'{shown}' is not a date this field reads"),
    };
    Fail::Args(format!("'{name}': {what}. Write {}", natural::HOW_TO_WRITE))
}

/// Longest decimal text a [`FieldKind::Decimal`] takes.
const MAX_DECIMAL_CHARS: usize = 24;

/// The decimal text of a positive number given as a JSON number (read by its shortest decimal
/// form, so `19.99` stays `19.99`) or a string (`"19.99"`): digits, at most one point, no
/// sign, no exponent.
fn decimal_text(name: &str, value: &Value) -> Result<String, Fail> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_owned(),
        _ => String::new(),
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = !whole.is_empty()
        && text.len() <= MAX_DECIMAL_CHARS
        && digits(whole)
        && digits(fraction)
        && fraction.is_empty() != text.contains('.');
    if !well_formed || text.bytes().all(|b| b == b'0' || b == b'.') {
        let has_symbol = text
            .chars()
            .any(|c| !c.is_ascii_digit() && !matches!(c, '.' | ',' | '-' | '+' | 'e' | 'E' | ' '));
        let symbol = if has_symbol {
            " without a currency symbol or code (the currency goes in 'currency', like \"USD\"),"
        } else {
            ""
        };
        return Err(Fail::Args(format!(
            "'{name}' must be a positive number written plainly,{symbol} like 45.00 or \
             \"45.00\" (digits and one decimal point: no sign, no thousands separator, no \
             exponent, at most {MAX_DECIMAL_CHARS} characters)"
        )));
    }
    Ok(text)
}

/// The instant an ISO 8601 date or date-time names (a date is its midnight; no offset is
/// UTC), between the years 1000 and 9999.
#[must_use]
pub fn instant(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    let at = if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        at.with_timezone(&Utc)
    } else if let Some(naive) = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    {
        naive.and_utc()
    } else {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()?
            .and_time(NaiveTime::MIN)
            .and_utc()
    };
    in_range(&at.date_naive()).then_some(at)
}

fn in_range(date: &NaiveDate) -> bool {
    use chrono::Datelike;
    (1000..=9999).contains(&date.year())
}

/// Whether `text` is a date alone (no time of day).
#[must_use]
pub fn is_date_only(text: &str) -> bool {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").is_ok()
}

/// A new record's document from `args`: every field of `fields` that may be given on add,
/// the required ones present, the defaults filled in; any other key is refused.
/// A date in words is read in `zone` ([`Field::read_at`]).
pub fn read_new(
    fields: &[Field],
    args: &Value,
    noun: &str,
    zone: Tz,
) -> Result<Map<String, Value>, Fail> {
    let now = Utc::now();
    let given = object(args, noun)?;
    refuse_unknown(fields, given, noun, |f| f.on_add)?;
    let mut doc = Map::new();
    for field in fields {
        match given.get(field.name) {
            Some(value) if !value.is_null() && field.on_add => {
                doc.insert(field.name.to_owned(), field.read_at(value, zone, now)?);
            }
            _ if field.required => {
                return Err(Fail::Args(format!(
                    "'{}' is required: {}",
                    field.name, field.description
                )));
            }
            _ => {
                if let Some(default) = field.default {
                    let value = match field.kind {
                        FieldKind::Int(..) => {
                            default.parse::<i64>().map_or(json!(default), |n| json!(n))
                        }
                        _ => json!(default),
                    };
                    doc.insert(field.name.to_owned(), value);
                } else if field.kind == FieldKind::Flag {
                    doc.insert(field.name.to_owned(), json!(false));
                }
            }
        }
    }
    Ok(doc)
}

/// The changes `args` makes to a record (besides `skip`, its id): each field given replaces
/// the stored one, and `null` clears an optional one. At least one change is required.
pub fn read_changes(
    fields: &[Field],
    args: &Value,
    noun: &str,
    skip: &str,
    zone: Tz,
) -> Result<Map<String, Value>, Fail> {
    let given = object(args, noun)?;
    let mut rest = given.clone();
    rest.remove(skip);
    refuse_unknown(fields, &rest, noun, |_| true)?;
    let mut changes = Map::new();
    for (key, value) in &rest {
        let Some(field) = fields.iter().find(|f| f.name == key) else {
            continue;
        };
        let value = if value.is_null() {
            if field.required || field.default.is_some() {
                return Err(Fail::Args(format!(
                    "'{key}' cannot be cleared; give a new value instead"
                )));
            }
            Value::Null
        } else {
            field.read_at(value, zone, Utc::now())?
        };
        changes.insert(key.clone(), value);
    }
    if changes.is_empty() {
        let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
        return Err(Fail::Args(format!(
            "nothing to change: give at least one of {}",
            names.join(", ")
        )));
    }
    Ok(changes)
}

fn object<'a>(args: &'a Value, noun: &str) -> Result<&'a Map<String, Value>, Fail> {
    args.as_object().ok_or_else(|| {
        Fail::Args(format!(
            "a {noun} must be a JSON object of its fields, like {{\"title\": \"…\"}}"
        ))
    })
}

fn refuse_unknown(
    fields: &[Field],
    given: &Map<String, Value>,
    noun: &str,
    allowed: impl Fn(&Field) -> bool,
) -> Result<(), Fail> {
    for key in given.keys() {
        if !fields.iter().any(|f| f.name == key && allowed(f)) {
            let names: Vec<&str> = fields
                .iter()
                .filter(|f| allowed(f))
                .map(|f| f.name)
                .collect();
            return Err(Fail::Args(format!(
                "unknown field '{}' for a {noun}; its fields are: {}",
                key.chars().take(64).collect::<String>(),
                names.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_dates_and_offsets() {
        let utc = |s: &str| instant(s).map(|t| t.to_rfc3339());
        assert_eq!(utc("2026-05-01").unwrap(), "2026-05-01T00:00:00+00:00");
        assert_eq!(
            utc("2026-05-01T14:30").unwrap(),
            "2026-05-01T14:30:00+00:00"
        );
        assert_eq!(
            utc("2026-05-01T14:30:00+02:00").unwrap(),
            "2026-05-01T12:30:00+00:00"
        );
        assert_eq!(
            utc("2026-05-01 08:00:00").unwrap(),
            "2026-05-01T08:00:00+00:00"
        );
        for bad in [
            "tomorrow",
            "2026-13-01",
            "2026-02-30",
            "0001-01-01",
            "",
            "2026-05-01T25:00",
        ] {
            assert!(instant(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn fields_read_and_refuse_with_the_fix() {
        let url = Field::new("url", FieldKind::Url, "");
        assert!(url.read(&json!("https://example.org/x")).is_ok());
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "example.org",
            "http://",
        ] {
            let e = url.read(&json!(bad)).unwrap_err();
            assert!(e.message().contains("http or https URL"), "{bad}: {e:?}");
        }
        let email = Field::new("email", FieldKind::Email, "");
        assert!(email.read(&json!("ada@example.org")).is_ok());
        for bad in ["ada", "ada@", "@x.org", "a b@x.org", "ada@localhost"] {
            assert!(email.read(&json!(bad)).is_err(), "{bad}");
        }
        let date = Field::new("birthday", FieldKind::Date, "");
        assert!(date.read(&json!("1990-04-23")).is_ok());
        assert!(date.read(&json!("23/04/1990")).is_err());
        let fields = [
            Field::new("title", FieldKind::Text(10), "The title.").required(),
            Field::new("isPinned", FieldKind::Flag, ""),
            Field::new("status", FieldKind::Choice(&["open", "done"]), "")
                .default("open")
                .not_on_add(),
        ];
        let doc = read_new(&fields, &json!({"title": " hi "}), "note", Tz::UTC).unwrap();
        assert_eq!(
            Value::Object(doc),
            json!({"title": "hi", "isPinned": false, "status": "open"})
        );
        let e = read_new(&fields, &json!({}), "note", Tz::UTC).unwrap_err();
        assert!(e.message().contains("'title' is required"));
        let e = read_new(
            &fields,
            &json!({"title": "x", "status": "done"}),
            "note",
            Tz::UTC,
        )
        .unwrap_err();
        assert!(e.message().contains("unknown field 'status'"), "{e:?}");
        let e = read_new(&fields, &json!({"title": "x".repeat(11)}), "note", Tz::UTC).unwrap_err();
        assert!(e.message().contains("limit is 10 bytes"), "{e:?}");
        let changes = read_changes(
            &fields,
            &json!({"id": "n1", "status": "done"}),
            "note",
            "id",
            Tz::UTC,
        );
        assert_eq!(Value::Object(changes.unwrap()), json!({"status": "done"}));
        let e = read_changes(&fields, &json!({"id": "n1"}), "note", "id", Tz::UTC).unwrap_err();
        assert!(e.message().contains("nothing to change"));
        let e = read_changes(
            &fields,
            &json!({"id": "n", "title": null}),
            "note",
            "id",
            Tz::UTC,
        )
        .unwrap_err();
        assert!(e.message().contains("cannot be cleared"));
    }
}
