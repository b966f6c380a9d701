//! `array_operations`: sort, filter, deduplicate, shuffle, chunk, flatten, sample, slice,
//! group, and sum/average/min/max/count a list.

use std::cmp::Ordering;
use std::collections::HashSet;

use rand::seq::{IndexedRandom as _, SliceRandom as _};
use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, MAX_ARRAY_LEN, array_arg, choice, number, opt_int, required_choice};

const OPERATIONS: &[&str] = &[
    "sort", "reverse", "unique", "shuffle", "chunk", "flatten", "sample", "first", "last",
    "filter", "group_by", "sum", "avg", "min", "max", "count",
];
const FILTER_OPS: &[&str] = &["eq", "ne", "gt", "gte", "lt", "lte", "contains", "exists"];
/// Most elements `flatten` may produce.
pub const MAX_FLAT: usize = 100_000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "array_operations",
        "Work on a list (JSON array): sort (by a key for objects), reverse, unique \
         (deduplicate), shuffle, chunk into groups of n, flatten, random sample, first/last n, \
         filter by a condition, group_by a key, or sum / avg (average) / min / max / count of its \
         numbers.",
        json!({
            "type": "object",
            "properties": {
                "array": {"anyOf": [{"type": "array"}, {"type": "string"}], "description": "The list, e.g. [3, 1, 2] or [{\"name\": \"a\", \"age\": 3}], or its JSON text. At most 10000 elements."},
                "operation": {"type": "string", "enum": OPERATIONS, "description": "sort, reverse, unique (drop duplicates), shuffle, chunk (groups of options.size), flatten (nested lists, every level), sample (options.size random elements), first / last (options.size elements), filter (by options.key, op and value), group_by (options.key), sum, avg, min, max (of the numbers), count."},
                "options": {
                    "type": "object",
                    "description": "key (object field for sort, unique, filter, group_by, sum…), order (asc/desc), size (chunk size, sample size, first/last count), op (filter: eq, ne, gt, gte, lt, lte, contains, exists) and value (filter's operand).",
                    "properties": {
                        "key": {"type": "string", "description": "The field of object elements to use."},
                        "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort order (default asc)."},
                        "size": {"type": "integer", "minimum": 1, "description": "Chunk size (default 2), sample size or first/last count (default 1)."},
                        "op": {"type": "string", "enum": FILTER_OPS, "description": "Filter comparison of the element (or its key) with value: eq (default, equal), ne (not equal), gt / gte (greater, or equal), lt / lte (less, or equal), contains (a string or list holding value), exists (the key is present)."},
                        "value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}], "description": "Filter operand."}
                    },
                    "additionalProperties": false
                }
            },
            "required": ["array", "operation"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "array", "list", "sort", "order", "alphabetically", "filter", "deduplicate", "duplicates", "unique", "shuffle", "chunk", "flatten", "sample", "group", "sum", "average", "min", "max", "count", "items", "collection",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let array = array_arg(args, "array", MAX_ARRAY_LEN)?;
    let operation = required_choice(args, "operation", OPERATIONS)?;
    let none = json!({});
    let options = args.get("options").unwrap_or(&none);
    let key = options.get("key").and_then(Value::as_str);
    let field = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let size = |default: i64| -> Result<usize, Fail> {
        let n = opt_int(
            options,
            "size",
            default,
            1,
            i64::try_from(MAX_ARRAY_LEN).unwrap_or(i64::MAX),
        )?;
        Ok(usize::try_from(n).unwrap_or(1))
    };
    let len = array.len();
    let mut rng = rand::rng();
    let result = match operation {
        "sort" => {
            let desc = choice(options, "order", "asc", &["asc", "desc"])? == "desc";
            let mut sorted = array;
            sorted.sort_by(|a, b| {
                let o = compare(&field(a), &field(b));
                if desc { o.reverse() } else { o }
            });
            Value::Array(sorted)
        }
        "reverse" => Value::Array(array.into_iter().rev().collect()),
        "unique" => {
            let mut seen = HashSet::new();
            Value::Array(
                array
                    .into_iter()
                    .filter(|v| seen.insert(field(v).to_string()))
                    .collect(),
            )
        }
        "shuffle" => {
            let mut shuffled = array;
            shuffled.shuffle(&mut rng);
            Value::Array(shuffled)
        }
        "chunk" => {
            let n = size(2)?;
            Value::Array(array.chunks(n).map(|c| Value::Array(c.to_vec())).collect())
        }
        "flatten" => {
            let mut flat = Vec::new();
            flatten(array, &mut flat)?;
            Value::Array(flat)
        }
        "sample" => Value::Array(array.sample(&mut rng, size(1)?).cloned().collect()),
        "first" => Value::Array(array.into_iter().take(size(1)?).collect()),
        "last" => {
            let n = size(1)?;
            Value::Array(array.into_iter().skip(len.saturating_sub(n)).collect())
        }
        "filter" => {
            let op = choice(options, "op", "eq", FILTER_OPS)?;
            let operand = options.get("value").cloned().unwrap_or(Value::Null);
            if op != "exists" && options.get("value").is_none() {
                return Err(Fail::Args(format!(
                    "filter with op '{op}' needs options.value, e.g. {{\"key\": \"age\", \"op\": \"gt\", \"value\": 30}}"
                )));
            }
            Value::Array(
                array
                    .into_iter()
                    .filter(|v| keep(&field(v), op, &operand))
                    .collect(),
            )
        }
        "group_by" => {
            let Some(k) = key else {
                return Err(Fail::Args(
                    "group_by needs options.key, the field to group by, e.g. {\"key\": \"city\"}"
                        .to_owned(),
                ));
            };
            let mut groups = Map::new();
            for v in array {
                let name = match v.get(k) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => "null".to_owned(),
                };
                if let Value::Array(items) = groups.entry(name).or_insert_with(|| json!([])) {
                    items.push(v);
                }
            }
            Value::Object(groups)
        }
        "count" => json!(len),
        aggregate => {
            let numbers: Vec<f64> = array.iter().filter_map(|v| field(v).as_f64()).collect();
            let value = match aggregate {
                "sum" => Some(numbers.iter().sum()),
                "avg" => (!numbers.is_empty())
                    .then(|| numbers.iter().sum::<f64>() / numbers.len() as f64),
                "min" => numbers.iter().copied().reduce(f64::min),
                _ => numbers.iter().copied().reduce(f64::max),
            };
            let result = value.map(number).transpose()?.unwrap_or(Value::Null);
            return Ok(
                json!({"operation": operation, "inputLength": len, "result": result, "numbersUsed": numbers.len()}),
            );
        }
    };
    Ok(json!({"operation": operation, "inputLength": len, "result": result}))
}

/// A total order: numbers (and numeric strings) by value, then other strings by text, then
/// booleans, arrays and objects by their JSON text, then nulls.
fn compare(a: &Value, b: &Value) -> Ordering {
    fn num(v: &Value) -> Option<f64> {
        v.as_f64().or_else(|| {
            v.as_str()
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|f| f.is_finite())
        })
    }
    fn class(v: &Value) -> u8 {
        match v {
            Value::Null => 3,
            _ if num(v).is_some() => 0,
            Value::String(_) => 1,
            _ => 2,
        }
    }
    class(a)
        .cmp(&class(b))
        .then_with(|| match (num(a), num(b), a.as_str(), b.as_str()) {
            (Some(x), Some(y), _, _) => x.total_cmp(&y),
            (_, _, Some(x), Some(y)) => x.cmp(y),
            _ => a.to_string().cmp(&b.to_string()),
        })
}

fn keep(v: &Value, op: &str, operand: &Value) -> bool {
    match op {
        "exists" => !v.is_null(),
        "eq" => v == operand || (v.as_f64().is_some() && v.as_f64() == operand.as_f64()),
        "ne" => !keep(v, "eq", operand),
        "contains" => match (v, operand) {
            (Value::String(s), Value::String(needle)) => {
                s.to_lowercase().contains(&needle.to_lowercase())
            }
            (Value::Array(items), needle) => items.contains(needle),
            _ => false,
        },
        _ => {
            let comparable = matches!(
                (v, operand),
                (Value::Number(_), Value::Number(_)) | (Value::String(_), Value::String(_))
            );
            let o = compare(v, operand);
            comparable
                && match op {
                    "gt" => o == Ordering::Greater,
                    "gte" => o != Ordering::Less,
                    "lt" => o == Ordering::Less,
                    _ => o != Ordering::Greater,
                }
        }
    }
}

/// Every nested array's elements in order, up to [`MAX_FLAT`].
fn flatten(items: Vec<Value>, out: &mut Vec<Value>) -> Result<(), Fail> {
    for item in items {
        match item {
            Value::Array(inner) => flatten(inner, out)?,
            other => {
                if out.len() == MAX_FLAT {
                    return Err(Fail::Args(format!(
                        "the flattened list would have more than {MAX_FLAT} elements: send less"
                    )));
                }
                out.push(other);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(array: Value, operation: &str, options: Value) -> Value {
        run(&json!({"array": array, "operation": operation, "options": options})).unwrap()["result"]
            .clone()
    }

    #[test]
    fn every_operation() {
        let people = json!([{"name": "Cy", "age": 30, "city": "Rome"}, {"name": "Ada", "age": 36, "city": "Oslo"}, {"name": "Bob", "age": 7, "city": "Rome"}]);
        let names = |v: Value| {
            v.as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(op(people.clone(), "sort", json!({"key": "age"}))),
            ["Bob", "Cy", "Ada"]
        );
        assert_eq!(
            names(op(
                people.clone(),
                "sort",
                json!({"key": "name", "order": "desc"})
            )),
            ["Cy", "Bob", "Ada"]
        );
        assert_eq!(
            names(op(
                people.clone(),
                "filter",
                json!({"key": "age", "op": "gte", "value": 30})
            )),
            ["Cy", "Ada"]
        );
        assert_eq!(
            names(op(
                people.clone(),
                "filter",
                json!({"key": "city", "op": "contains", "value": "ro"})
            )),
            ["Cy", "Bob"]
        );
        assert_eq!(
            names(op(people.clone(), "unique", json!({"key": "city"}))),
            ["Cy", "Ada"]
        );
        assert_eq!(
            op(people.clone(), "group_by", json!({"key": "city"}))["Rome"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            op(people.clone(), "avg", json!({"key": "age"})),
            json!(24.333333333333332)
        );
        assert_eq!(
            op(json!(["10", "9", 100, null, "b", "a"]), "sort", json!({})),
            json!(["9", "10", 100, "a", "b", null])
        );
        assert_eq!(
            op(json!([1, [2, [3, [4]]], []]), "flatten", json!({})),
            json!([1, 2, 3, 4])
        );
        assert_eq!(
            op(json!([1, 2, 3, 4, 5]), "chunk", json!({"size": 2})),
            json!([[1, 2], [3, 4], [5]])
        );
        assert_eq!(
            op(json!([1, 2, 3]), "last", json!({"size": 2})),
            json!([2, 3])
        );
        assert_eq!(op(json!([1, 2, 3]), "first", json!({})), json!([1]));
        assert_eq!(op(json!([1, 2, 3]), "reverse", json!({})), json!([3, 2, 1]));
        assert_eq!(
            op(json!([1, 1, "1", [1]]), "unique", json!({})),
            json!([1, "1", [1]])
        );
        assert_eq!(
            op(json!("[1, 2, \"x\", 3.5]"), "sum", json!({})),
            json!(6.5)
        );
        assert_eq!(op(json!([]), "max", json!({})), Value::Null);
        assert_eq!(op(json!([4, 2, 9]), "min", json!({})), json!(2.0));
        assert_eq!(op(json!([1, 2]), "count", json!({})), json!(2));
        let mut shuffled: Vec<i64> = op(json!((0..100).collect::<Vec<_>>()), "shuffle", json!({}))
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .collect();
        shuffled.sort_unstable();
        assert_eq!(shuffled, (0..100).collect::<Vec<_>>());
        let sample = op(json!([1, 2, 3, 4]), "sample", json!({"size": 3}));
        let mut picked: Vec<i64> = sample
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_i64)
            .collect();
        picked.sort_unstable();
        picked.dedup();
        assert_eq!(picked.len(), 3, "a sample never repeats an element");
    }

    #[test]
    fn bad_arguments_and_limits() {
        let msg = |args: Value| run(&args).unwrap_err().message().to_owned();
        assert!(
            msg(json!({"array": [1], "operation": "explode"}))
                .starts_with("'operation' must be one of: sort, reverse")
        );
        assert!(
            msg(json!({"array": "{\"a\": 1}", "operation": "sort"})).contains("must be an array")
        );
        assert!(msg(json!({"array": [1], "operation": "group_by"})).contains("needs options.key"));
        assert!(
            msg(json!({"array": [1], "operation": "filter", "options": {"op": "gt"}}))
                .contains("needs options.value")
        );
        assert!(
            msg(json!({"array": [1], "operation": "chunk", "options": {"size": 0}}))
                .contains("'size' must be an integer from 1")
        );
        assert!(
            msg(json!({"array": vec![0; MAX_ARRAY_LEN + 1], "operation": "count"}))
                .contains("the limit is 10000")
        );
        let nested = vec![vec![0; 20]; MAX_ARRAY_LEN];
        assert!(
            msg(json!({"array": nested, "operation": "flatten"}))
                .contains("more than 100000 elements")
        );
        assert!(matches!(
            run(&json!({"array": [1e308, 1e308], "operation": "sum"})),
            Err(Fail::Run(_))
        ));
    }
}
