//! Tests of the key, the cipher and masking, with real files in temp directories.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::*;

fn place<'a>(field: &'a str) -> SecretPlace<'a> {
    SecretPlace {
        owner: "alice",
        service_id: "svc_1",
        entry_id: "cfg_1",
        field,
    }
}

fn key() -> SecretKey {
    SecretKey::generate().unwrap()
}

#[test]
fn seal_then_open_round_trips_and_hides_the_plaintext() {
    let cipher = Cipher::new(&key());
    for plain in ["sk-live-1234567890", "", "ünïcødé 🔑", &"x".repeat(100_000)] {
        let sealed = cipher.seal(plain, &place("api_key")).unwrap();
        assert!(sealed.starts_with(SEALED_PREFIX));
        if !plain.is_empty() {
            assert!(!sealed.contains(plain));
        }
        assert_eq!(
            cipher.open(&sealed, &place("api_key")).unwrap().as_str(),
            plain
        );
    }
}

#[test]
fn every_seal_uses_a_fresh_nonce() {
    let cipher = Cipher::new(&key());
    let a = cipher.seal("same", &place("f")).unwrap();
    let b = cipher.seal("same", &place("f")).unwrap();
    assert_ne!(a, b);
    let nonce = |s: &str| STANDARD.decode(&s[3..]).unwrap()[..12].to_vec();
    assert_ne!(nonce(&a), nonce(&b));
}

#[test]
fn tampering_with_any_byte_is_detected() {
    let cipher = Cipher::new(&key());
    let sealed = cipher.seal("secret-value", &place("api_key")).unwrap();
    let raw = STANDARD.decode(&sealed[3..]).unwrap();
    for i in 0..raw.len() {
        let mut bad = raw.clone();
        bad[i] ^= 0x01;
        let text = format!("v1:{}", STANDARD.encode(&bad));
        let err = cipher.open(&text, &place("api_key")).unwrap_err();
        assert_eq!(err.code(), "secret_decrypt_failed", "byte {i}");
    }
    // Truncated and extended.
    let short = format!("v1:{}", STANDARD.encode(&raw[..raw.len() - 1]));
    assert!(cipher.open(&short, &place("api_key")).is_err());
    let mut long = raw.clone();
    long.push(0);
    let long = format!("v1:{}", STANDARD.encode(&long));
    assert!(cipher.open(&long, &place("api_key")).is_err());
}

#[test]
fn a_wrong_key_does_not_open() {
    let sealed = Cipher::new(&key()).seal("secret", &place("f")).unwrap();
    let err = Cipher::new(&key()).open(&sealed, &place("f")).unwrap_err();
    assert_eq!(err.code(), "secret_decrypt_failed");
    assert!(err.to_string().contains("'f'"));
    assert!(!err.to_string().contains("secret\""));
}

#[test]
fn a_value_moved_to_another_place_does_not_open() {
    let cipher = Cipher::new(&key());
    let home = place("api_key");
    let sealed = cipher.seal("secret", &home).unwrap();
    let elsewhere = [
        SecretPlace {
            owner: "bob",
            ..home
        },
        SecretPlace {
            service_id: "svc_2",
            ..home
        },
        SecretPlace {
            entry_id: "cfg_2",
            ..home
        },
        SecretPlace {
            field: "password",
            ..home
        },
        // Same concatenation, other split: the length prefixes tell them apart.
        SecretPlace {
            owner: "alicesvc_1",
            service_id: "",
            ..home
        },
        SecretPlace {
            owner: "alic",
            service_id: "esvc_1",
            ..home
        },
    ];
    for other in elsewhere {
        let err = cipher.open(&sealed, &other).unwrap_err();
        assert_eq!(err.code(), "secret_decrypt_failed", "{other:?}");
    }
    assert_eq!(cipher.open(&sealed, &home).unwrap().as_str(), "secret");
}

#[test]
fn malformed_sealed_text_is_refused_without_panicking() {
    let cipher = Cipher::new(&key());
    for bad in [
        "",
        "plaintext",
        "v2:AAAA",
        "v1:",
        "v1:!!!!",
        "v1:AAAA",
        "v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "V1:AAAA",
        "v1:\u{0}",
    ] {
        let err = cipher.open(bad, &place("f")).unwrap_err();
        assert!(
            matches!(err.code(), "secret_malformed" | "secret_decrypt_failed"),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn huge_plaintext_is_refused() {
    let cipher = Cipher::new(&key());
    let err = cipher
        .seal(&"x".repeat(1024 * 1024 + 1), &place("f"))
        .unwrap_err();
    assert_eq!(err.code(), "secret_too_large");
}

#[test]
fn key_text_accepts_hex_and_every_base64_spelling() {
    let bytes: Vec<u8> = (0u8..32)
        .map(|i| i.wrapping_mul(37).wrapping_add(200))
        .collect();
    let sealed_with = |k: &SecretKey| Cipher::new(k).seal("v", &place("f")).unwrap();
    let reference = SecretKey::from_text(&hex::encode(&bytes)).unwrap();
    let sealed = sealed_with(&reference);
    let spellings = [
        hex::encode(&bytes),
        hex::encode_upper(&bytes),
        base64::engine::general_purpose::STANDARD.encode(&bytes),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes),
        base64::engine::general_purpose::URL_SAFE.encode(&bytes),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes),
        format!("  {}\n", STANDARD.encode(&bytes)),
    ];
    for text in spellings {
        let k = SecretKey::from_text(&text).unwrap();
        assert_eq!(
            Cipher::new(&k).open(&sealed, &place("f")).unwrap().as_str(),
            "v"
        );
    }
}

#[test]
fn bad_env_keys_are_clear_errors_and_never_echo_the_value() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        "",
        "   ",
        "not a key at all!",
        &hex::encode([7u8; 31]),
        &hex::encode([7u8; 33]),
        &STANDARD.encode([7u8; 16]),
        &STANDARD.encode([7u8; 64]),
        &"z".repeat(64),
    ] {
        let err = SecretKey::load_with(Some(OsString::from(bad)), dir.path()).unwrap_err();
        assert_eq!(err.code(), "secret_key_invalid", "{bad:?}");
        let message = err.to_string();
        assert!(message.contains("TOOLSMITH_SECRET_KEY"), "{message}");
        if bad.trim().len() > 3 {
            assert!(!message.contains(bad.trim()), "{message}");
        }
    }
    // A bad env value is an error, not a fallback to the key file.
    assert!(!dir.path().join(KEY_FILE).exists());
}

#[test]
fn non_utf8_env_key_is_refused() {
    use std::os::unix::ffi::OsStringExt;
    let dir = tempfile::tempdir().unwrap();
    let err =
        SecretKey::load_with(Some(OsString::from_vec(vec![0xff, 0xfe])), dir.path()).unwrap_err();
    assert_eq!(err.code(), "secret_key_invalid");
}

#[test]
fn env_key_wins_over_the_key_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = STANDARD.encode([9u8; 32]);
    let (k, source) = SecretKey::load_with(Some(OsString::from(&text)), dir.path()).unwrap();
    assert_eq!(source, KeySource::Env);
    assert!(!dir.path().join(KEY_FILE).exists());
    let sealed = Cipher::new(&k).seal("v", &place("f")).unwrap();
    let same = SecretKey::from_text(&text).unwrap();
    assert_eq!(
        Cipher::new(&same)
            .open(&sealed, &place("f"))
            .unwrap()
            .as_str(),
        "v"
    );
}

#[test]
fn key_file_is_created_private_once_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nested/data");
    let (first, source) = SecretKey::load_with(None, &data).unwrap();
    let path = data.join(KEY_FILE);
    assert_eq!(
        source,
        KeySource::File {
            path: path.clone(),
            created: true
        }
    );
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let sealed = Cipher::new(&first).seal("v", &place("f")).unwrap();
    let (second, source) = SecretKey::load_with(None, &data).unwrap();
    assert_eq!(
        source,
        KeySource::File {
            path,
            created: false
        }
    );
    assert_eq!(
        Cipher::new(&second)
            .open(&sealed, &place("f"))
            .unwrap()
            .as_str(),
        "v"
    );
    // No temporary files are left behind.
    let names: Vec<_> = fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![OsString::from(KEY_FILE)]);
}

#[test]
fn concurrent_first_starts_agree_on_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KEY_FILE);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || SecretKey::load_or_create_file(&path).unwrap())
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|(_, created)| *created).count(), 1);
    let sealed = Cipher::new(&results[0].0).seal("v", &place("f")).unwrap();
    for (k, _) in &results {
        assert_eq!(
            Cipher::new(k).open(&sealed, &place("f")).unwrap().as_str(),
            "v"
        );
    }
}

#[test]
fn a_key_file_others_can_read_or_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KEY_FILE);
    SecretKey::load_or_create_file(&path).unwrap();
    for mode in [0o640, 0o604, 0o644, 0o620, 0o602, 0o660, 0o700 | 0o007] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let err = SecretKey::load_or_create_file(&path).unwrap_err();
        assert_eq!(err.code(), "secret_key_file_refused", "{mode:o}");
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }
    for mode in [0o600, 0o400] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        SecretKey::load_or_create_file(&path).unwrap();
    }
}

#[test]
fn a_key_file_that_is_not_a_plain_key_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, content: &[u8]| {
        let p = dir.path().join(name);
        fs::write(&p, content).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        p
    };
    let cases = [
        write("empty.key", b""),
        write("short.key", STANDARD.encode([1u8; 16]).as_bytes()),
        write("garbage.key", b"\x00\xff\xfe binary"),
        write("huge.key", &vec![b'A'; 10_000]),
        write(
            "two.key",
            format!(
                "{}\n{}\n",
                STANDARD.encode([1u8; 32]),
                STANDARD.encode([2u8; 32])
            )
            .as_bytes(),
        ),
    ];
    for path in cases {
        let before = fs::read(&path).unwrap();
        let err = SecretKey::load_or_create_file(&path).unwrap_err();
        assert_eq!(err.code(), "secret_key_file_refused", "{}", path.display());
        assert_eq!(fs::read(&path).unwrap(), before);
    }
    // A directory and a symlink (even to a good key file) are refused.
    let good = dir.path().join("good.key");
    SecretKey::load_or_create_file(&good).unwrap();
    let link = dir.path().join("link.key");
    std::os::unix::fs::symlink(&good, &link).unwrap();
    assert_eq!(
        SecretKey::load_or_create_file(&link).unwrap_err().code(),
        "secret_key_file_refused"
    );
    let sub = dir.path().join("dir.key");
    fs::create_dir(&sub).unwrap();
    assert_eq!(
        SecretKey::load_or_create_file(&sub).unwrap_err().code(),
        "secret_key_file_refused"
    );
}

/// The checks apply to the file that was opened: a FIFO in the key's place is refused at once
/// (opening it never waits for a writer), like any file that is not a regular file.
#[test]
fn a_fifo_in_place_of_the_key_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("secret.key");
    let made = std::process::Command::new("mkfifo")
        .arg("-m")
        .arg("600")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let err = SecretKey::load_or_create_file(&fifo).unwrap_err();
    assert_eq!(err.code(), "secret_key_file_refused", "{err}");
    assert!(matches!(
        SecretKey::find_with(None, dir.path()),
        Err(SecretError::BadKeyFile { .. })
    ));
}

/// `find` never creates a key file; it reports the path it looked at.
#[test]
fn find_reports_a_missing_key_without_creating_one() {
    let dir = tempfile::tempdir().unwrap();
    match SecretKey::find_with(None, dir.path()).unwrap() {
        crate::KeyLookup::Missing { path } => assert_eq!(path, dir.path().join(KEY_FILE)),
        other => panic!("expected Missing, got {other:?}"),
    }
    assert!(!dir.path().join(KEY_FILE).exists());
}

#[test]
fn debug_output_never_shows_key_material() {
    let text = STANDARD.encode([0xabu8; 32]);
    let k = SecretKey::from_text(&text).unwrap();
    let shown = format!("{k:?} {:?}", Cipher::new(&k));
    assert!(!shown.contains(&text));
    assert!(!shown.to_lowercase().contains("abab"));
    assert!(shown.contains("redacted"));
}

#[test]
fn masking_reveals_at_most_a_prefix_and_the_last_four() {
    assert_eq!(mask(""), MASK);
    assert_eq!(mask("short"), MASK);
    assert_eq!(mask("elevenchars"), MASK);
    assert_eq!(mask("twelve_chars"), "…hars");
    assert_eq!(mask("sk-abcdefghijklmnopqrstuvwxyz"), "sk-…wxyz");
    assert_eq!(mask(&format!("{}WXYZ", "a".repeat(19))), "…WXYZ");
    // Characters, not bytes: never cut inside a multi-byte character.
    assert_eq!(mask(&"é".repeat(30)), "ééé…éééé");
    assert_eq!(mask("🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑🔑"), MASK);
    // The hidden part is never shorter than the shown part.
    for n in 0..200 {
        let s: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let shown = mask(&s).chars().filter(|c| *c != '…' && *c != '•').count();
        assert!(shown <= 7 && (shown == 0 || n >= 12), "{n}");
        assert!(n - shown >= n / 2, "{n}");
    }
}
