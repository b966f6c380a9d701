//! Folder names for user and agent ids. An id is the caller's identity, not a path: one made
//! of letters, digits, `_` and `-` (at most 64) is used as it is; any other (`../x`, `a/b`,
//! `.`, non-ASCII, too long) becomes `~` and the SHA-256 of the id in hex. `~` is not in the
//! plain alphabet, so a plain id never names a hashed one's folder.

use sha2::{Digest, Sha256};

/// The folder name for `id`: always one plain name, never `.`, `..` or anything with `/`.
#[must_use]
pub fn folder_name(id: &str) -> String {
    let plain = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if plain {
        id.to_owned()
    } else {
        format!("~{}", hex::encode(Sha256::digest(id.as_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::folder_name;

    #[test]
    fn plain_ids_stay_and_the_rest_are_hashed() {
        assert_eq!(folder_name("alice"), "alice");
        assert_eq!(folder_name("agent-7_b"), "agent-7_b");
        for hostile in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "/etc",
            "al ice",
            "é",
            &"a".repeat(65),
        ] {
            let name = folder_name(hostile);
            assert!(
                name.starts_with('~') && name.len() == 65,
                "{hostile}: {name}"
            );
            assert!(!name.contains('/'));
        }
        assert_ne!(folder_name("a/b"), folder_name("a_b"));
    }
}
