//! Writing a field of a JSON object (a tool's reply, a schema) without `Value`'s `IndexMut`,
//! which panics on a value that is neither an object nor `null`.

use serde_json::{Map, Value};

/// Sets `key` of the object `target` to `value`. A `null` target becomes an object first, as
/// with `IndexMut`; any other non-object is left as it is (every caller builds `target` as an
/// object, so nothing is lost).
pub fn set(target: &mut Value, key: &str, value: Value) {
    if target.is_null() {
        *target = Value::Object(Map::new());
    }
    if let Some(map) = target.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::set;

    #[test]
    fn sets_a_field_of_an_object_or_of_null_and_leaves_other_values_alone() {
        let mut object = json!({"a": 1});
        set(&mut object, "b", json!(2));
        assert_eq!(object, json!({"a": 1, "b": 2}));
        let mut null = json!(null);
        set(&mut null, "b", json!(2));
        assert_eq!(null, json!({"b": 2}));
        let mut list = json!([1]);
        set(&mut list, "b", json!(2));
        assert_eq!(list, json!([1]));
    }
}
