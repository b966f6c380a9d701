//! Scrubbing a result made of content blocks (MCP's: `{"content": [block, …],
//! "structuredContent"?, "_meta"?}`) without corrupting binary data.
//!
//! Text is scrubbed as everywhere ([`Scrubber::scrub_json`]): text blocks, an embedded
//! resource's `text`, URIs, names, annotations, structured content. Base64 fields — an image's
//! or audio's `data`, a resource's `blob` — are bytes, not text: a credential pattern matching
//! by chance inside them must not rewrite them, and a redaction inside base64 would corrupt the
//! whole file. So they are never rewritten: they are searched for the known secrets alone (in
//! every form, base64 at each alignment included), and a block holding one is withheld whole —
//! replaced by a text block that says so.

use serde_json::{Map, Value, json};

use crate::Scrubber;

/// The text a withheld block becomes.
const WITHHELD: &str = "[REDACTED: this content block held a secret of the owner's Config Center and was withheld whole]";

impl Scrubber {
    /// Redacts credentials inside a content-block result in place (see the module's doc) and
    /// returns how many redactions it made (a withheld block counts once).
    pub fn scrub_blocks(&self, result: &mut Value) -> usize {
        let Value::Object(fields) = result else {
            return self.scrub_json(result);
        };
        let mut n = 0;
        for (key, value) in fields.iter_mut() {
            match (key.as_str(), value) {
                ("content", Value::Array(blocks)) => {
                    for block in blocks.iter_mut() {
                        n += self.scrub_block(block);
                    }
                }
                (_, value) => n += self.scrub_json(value),
            }
        }
        n
    }

    fn scrub_block(&self, block: &mut Value) -> usize {
        let Value::Object(fields) = block else {
            return self.scrub_json(block);
        };
        let in_resource = match fields.get("type").and_then(Value::as_str) {
            Some("image" | "audio") => false,
            Some("resource") => true,
            _ => return self.scrub_json(block),
        };
        let Some(data) = binary_field(fields, in_resource).and_then(take_string) else {
            return self.scrub_json(block);
        };
        if self.holds_known_secret(&data) {
            self.count(1);
            *block = json!({"type": "text", "text": WITHHELD});
            return 1;
        }
        let n = self.scrub_json(block);
        // The block's text was scrubbed without the base64 field; put it back as it was.
        if let Value::Object(fields) = block
            && let Some(slot) = binary_field(fields, in_resource)
        {
            *slot = Value::String(data);
        }
        n
    }

    /// Whether `text` holds one of the known secrets in any of its forms (the credential
    /// patterns are not asked).
    fn holds_known_secret(&self, text: &str) -> bool {
        let mut spans = Vec::new();
        self.secrets.find(text, &mut spans);
        !spans.is_empty()
    }
}

/// The base64 field of a block: an image's or audio's `data`, an embedded resource's `blob`.
fn binary_field(fields: &mut Map<String, Value>, in_resource: bool) -> Option<&mut Value> {
    if in_resource {
        match fields.get_mut("resource") {
            Some(Value::Object(resource)) => resource.get_mut("blob"),
            _ => None,
        }
    } else {
        fields.get_mut("data")
    }
}

/// The text of a string value, leaving an empty string in its place (so the text scrubbing of
/// the block passes over it); `None`, and the value untouched, when it is not a string.
fn take_string(value: &mut Value) -> Option<String> {
    match value {
        Value::String(text) => Some(std::mem::take(text)),
        _ => None,
    }
}
