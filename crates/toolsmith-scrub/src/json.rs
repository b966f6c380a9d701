//! Scrubbing inside JSON values: every string (and object key) goes through the text scrubber, and
//! the value under a credential-like key is redacted whole.

use serde_json::Value;

use crate::patterns::is_credential_key;
use crate::{REDACTED, Scrubber};

impl Scrubber {
    /// Redacts credentials inside `value` in place and returns how many redactions it made.
    ///
    /// A string or number under a credential-like key (`"password"`, `"apiKey"` …) becomes
    /// `"[REDACTED]"`; empty strings, `null` and booleans stay; objects and arrays under such a key
    /// are scrubbed member by member, not replaced (not by a [`Scrubber::secrets_only`], which
    /// redacts known secrets alone). A number anywhere whose digits hold a known secret becomes
    /// `"[REDACTED]"` too.
    pub fn scrub_json(&self, value: &mut Value) -> usize {
        let mut n = 0;
        self.walk(value, &mut n);
        n
    }

    fn walk(&self, value: &mut Value, n: &mut usize) {
        match value {
            Value::String(text) => {
                if let (std::borrow::Cow::Owned(scrubbed), found) = self.scrub_counted(text) {
                    *text = scrubbed;
                    *n += found;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.walk(item, n)),
            Value::Object(map) => {
                let renamed: Vec<(String, String)> = map
                    .keys()
                    .filter_map(|key| match self.scrub_counted(key) {
                        (std::borrow::Cow::Owned(scrubbed), found) => {
                            *n += found;
                            Some((key.clone(), scrubbed))
                        }
                        (std::borrow::Cow::Borrowed(_), _) => None,
                    })
                    .collect();
                for (old, new) in renamed {
                    if let Some(inner) = map.remove(&old) {
                        map.insert(new, inner);
                    }
                }
                for (key, inner) in map.iter_mut() {
                    if self.applies_patterns() && is_credential_key(key) && self.redact_whole(inner)
                    {
                        *n += 1;
                    } else {
                        self.walk(inner, n);
                    }
                }
            }
            Value::Number(number) => {
                // A numeric secret (a PIN, an account number) returned as a JSON number.
                let (_, found) = self.scrub_counted(&number.to_string());
                if found > 0 {
                    *value = Value::String(REDACTED.to_owned());
                    *n += found;
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }

    /// Replaces a credential-key value that holds a secret; false if it holds none.
    fn redact_whole(&self, value: &mut Value) -> bool {
        let holds_secret = match value {
            Value::String(text) => !text.trim().is_empty() && text.as_str() != REDACTED,
            Value::Number(_) => true,
            Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => false,
        };
        if holds_secret {
            *value = Value::String(REDACTED.to_owned());
            self.count(1);
        }
        holds_secret
    }
}
