//! Writing a field of the JSON object a tool answers with, without `Value`'s `IndexMut` (which
//! panics on a value that is neither an object nor `null`).

use serde_json::{Map, Value};

/// Sets `key` of the object `target` to `value`. A `null` target becomes an object first, as
/// with `IndexMut`; any other non-object is left as it is (every caller builds `target` as an
/// object, so nothing is lost).
pub(crate) fn set(target: &mut Value, key: &str, value: Value) {
    if target.is_null() {
        *target = Value::Object(Map::new());
    }
    if let Some(map) = target.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
}
