//! `hash_text`: MD5, SHA-1, SHA-256 or SHA-512 digest of a text's UTF-8 bytes, in hex or
//! base64. MD5 and SHA-1 are for checksums and legacy systems only; the description says so.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256, Sha512};
use toolsmith_core::ToolDefinition;

use super::{Fail, MAX_TEXT_BYTES, choice, text_arg};

const ALGORITHMS: &[&str] = &["sha256", "sha512", "sha1", "md5"];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "hash_text",
        "Compute a hash (checksum, digest) of a text's UTF-8 bytes: SHA-256 (default), SHA-512, \
         SHA-1 or MD5. MD5 and SHA-1 are broken for security: use them only to match existing \
         checksums. At most 1 MB of text.",
        json!({
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "The text to hash (at most 1 MB)."
                },
                "algorithm": {
                    "type": "string",
                    "description": "sha256 (default), sha512, sha1 or md5 (sha1 and md5 only to match existing checksums: they are broken for security).",
                    "enum": ALGORITHMS,
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
    .with_tags(&[
        "hash", "sha256", "sha512", "sha1", "md5", "digest", "checksum", "crypto", "fingerprint",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    let algorithm = choice(args, "algorithm", "sha256", ALGORITHMS)?;
    let bytes = text.as_bytes();
    let digest = match algorithm {
        "sha512" => Sha512::digest(bytes).to_vec(),
        "sha1" => sha1::Sha1::digest(bytes).to_vec(),
        "md5" => md5::Md5::digest(bytes).to_vec(),
        _ => Sha256::digest(bytes).to_vec(),
    };
    let hash = match choice(args, "encoding", "hex", &["hex", "base64"])? {
        "base64" => STANDARD.encode(digest),
        _ => hex::encode(digest),
    };
    Ok(json!({"algorithm": algorithm, "hash": hash}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests_of_abc() {
        for (algorithm, expected) in [
            ("md5", "900150983cd24fb0d6963f7d28e17f72"),
            ("sha1", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (
                "sha256",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
        ] {
            let got = run(&json!({"text": "abc", "algorithm": algorithm})).unwrap();
            assert_eq!(got, json!({"algorithm": algorithm, "hash": expected}));
        }
    }

    #[test]
    fn bad_arguments_and_the_size_limit() {
        let err = run(&json!({"text": "abc", "algorithm": "crc32"})).unwrap_err();
        assert_eq!(
            err.message(),
            "'algorithm' must be one of: sha256, sha512, sha1, md5"
        );
        let err = run(&json!({"text": "a".repeat(MAX_TEXT_BYTES + 1)})).unwrap_err();
        assert!(
            err.message().contains("the limit is 1000000 bytes"),
            "{err:?}"
        );
        assert!(run(&json!({"text": "a".repeat(MAX_TEXT_BYTES)})).is_ok());
    }
}
