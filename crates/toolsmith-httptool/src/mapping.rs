//! Response mapping: dot paths with `[n]` indexes (`data.items[0].name`) into the JSON response.
//!
//! A path is parsed once into steps; looking it up never fails, a missing step gives `None`.

use serde_json::Value;

/// Longest path accepted, in bytes.
const MAX_PATH_LEN: usize = 512;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// A path that is not in the dot-path syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid response path '{path}': {reason}")]
pub(crate) struct PathError {
    path: String,
    reason: &'static str,
}

/// Parses `a.b[0].c` (a leading `[n]` indexes a top-level array).
pub(crate) fn parse_path(path: &str) -> Result<Vec<Step>, PathError> {
    let fail = |reason| PathError {
        path: path.chars().take(80).collect(),
        reason,
    };
    if path.is_empty() {
        return Err(fail("path is empty"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(fail("path is too long"));
    }
    let mut steps = Vec::new();
    for (seg_idx, segment) in path.split('.').enumerate() {
        let (key, mut rest) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        if key.contains(']') {
            return Err(fail("unbalanced ']'"));
        }
        let leading_index = seg_idx == 0 && !rest.is_empty();
        if key.is_empty() && !leading_index {
            return Err(fail("empty segment"));
        }
        if !key.is_empty() {
            steps.push(Step::Key(key.to_owned()));
        }
        while !rest.is_empty() {
            let Some(inner) = rest.strip_prefix('[') else {
                return Err(fail("text after an index"));
            };
            let Some(close) = inner.find(']') else {
                return Err(fail("unterminated '['"));
            };
            let digits = &inner[..close];
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(fail("index must be a non-negative integer"));
            }
            let idx = digits.parse().map_err(|_| fail("index is too large"))?;
            steps.push(Step::Index(idx));
            rest = &inner[close + 1..];
        }
    }
    Ok(steps)
}

/// Follows `steps` into `value`.
pub(crate) fn lookup<'v>(value: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(value, |cur, step| match step {
        Step::Key(key) => cur.as_object()?.get(key),
        Step::Index(idx) => cur.as_array()?.get(*idx),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parses_keys_and_indexes() {
        assert_eq!(
            parse_path("data.items[0][2].name").unwrap(),
            vec![
                Step::Key("data".into()),
                Step::Key("items".into()),
                Step::Index(0),
                Step::Index(2),
                Step::Key("name".into()),
            ]
        );
        assert_eq!(
            parse_path("[1].id").unwrap(),
            vec![Step::Index(1), Step::Key("id".into())]
        );
    }

    #[test]
    fn refuses_malformed_paths() {
        for bad in [
            "",
            "a..b",
            "a.",
            ".a",
            "a[",
            "a[x]",
            "a[-1]",
            "a[0]b",
            "a]",
            "a[99999999999999999999999]",
        ] {
            assert!(parse_path(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(parse_path(&"a.".repeat(300)).is_err());
    }

    #[test]
    fn looks_up_values_and_misses_quietly() {
        let doc = json!({"data": {"items": [{"name": "x"}], "n": 3}});
        let get = |p: &str| lookup(&doc, &parse_path(p).unwrap()).cloned();
        assert_eq!(get("data.items[0].name"), Some(json!("x")));
        assert_eq!(get("data.n"), Some(json!(3)));
        assert_eq!(get("data.items[5].name"), None);
        assert_eq!(get("data.n.deeper"), None);
        assert_eq!(get("data.items.name"), None);
    }
}
