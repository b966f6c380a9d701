//! `hash_text`: SHA-256 or SHA-512 digest of a text's UTF-8 bytes, in hex or base64.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256, Sha512};
use toolsmith_core::ToolDefinition;

use super::{opt_str_arg, str_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "hash_text",
        "Compute a cryptographic hash (SHA-256 or SHA-512) of a text's UTF-8 bytes.",
        json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "The text to hash."
                },
                "algorithm": {
                    "type": "string",
                    "description": "The hash algorithm (default sha256).",
                    "enum": ["sha256", "sha512"],
                    "default": "sha256"
                },
                "encoding": {
                    "type": "string",
                    "description": "How to encode the digest: lowercase hex (default) or standard base64.",
                    "enum": ["hex", "base64"],
                    "default": "hex"
                }
            },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["hash", "sha256", "sha512", "digest", "checksum", "crypto"])
}

pub fn run(args: &Value) -> Result<Value, String> {
    let text = str_arg(args, "text")?;
    let algorithm = opt_str_arg(args, "algorithm", "sha256");
    let digest = match algorithm {
        "sha256" => Sha256::digest(text.as_bytes()).to_vec(),
        "sha512" => Sha512::digest(text.as_bytes()).to_vec(),
        other => {
            return Err(format!(
                "unknown algorithm '{other}' (use sha256 or sha512)"
            ));
        }
    };
    let hash = match opt_str_arg(args, "encoding", "hex") {
        "hex" => hex::encode(digest),
        "base64" => STANDARD.encode(digest),
        other => return Err(format!("unknown encoding '{other}' (use hex or base64)")),
    };
    Ok(json!({"algorithm": algorithm, "hash": hash}))
}
