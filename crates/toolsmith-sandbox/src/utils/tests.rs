//! Unit tests of the native helpers.

use super::*;

#[test]
fn hashes_are_lowercase_hex_of_utf8() {
    assert_eq!(
        hash("abc", "sha256").as_deref(),
        Ok("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    );
    assert_eq!(
        hash("abc", "SHA-1").as_deref(),
        Ok("a9993e364706816aba3e25717850c26c9cd0d89d")
    );
    assert_eq!(
        hash("", "md5").as_deref(),
        Ok("d41d8cd98f00b204e9800998ecf8427e")
    );
    assert_eq!(
        hash("abc", "whirlpool"),
        Err("utils.hash: unsupported algorithm 'whirlpool' (use sha256, sha384, sha512, sha1 or md5)".to_owned())
    );
}

#[test]
fn passwords_have_the_length_and_every_class() {
    let p = password(16).unwrap();
    assert_eq!(p.chars().count(), 16);
    assert!(p.bytes().any(|b| LOWER.contains(&b)));
    assert!(p.bytes().any(|b| UPPER.contains(&b)));
    assert!(p.bytes().any(|b| DIGITS.contains(&b)));
    assert!(p.bytes().any(|b| SYMBOLS.contains(&b)));
    assert_eq!(password(2).map(|p| p.len()), Ok(2));
    assert_eq!(
        password(0),
        Err("utils.generatePassword: length must be between 1 and 1024".to_owned())
    );
    assert_eq!(
        password(MAX_PASSWORD_LENGTH + 1),
        Err("utils.generatePassword: length must be between 1 and 1024".to_owned())
    );
    assert_ne!(password(32), password(32));
}

#[test]
fn base64_round_trips_utf8_in_either_alphabet() {
    assert_eq!(base64_encode("héllo"), "aMOpbGxv");
    assert_eq!(base64_decode("aMOpbGxv").as_deref(), Ok("héllo"));
    assert_eq!(base64_decode("aGk=").as_deref(), Ok("hi"));
    assert_eq!(base64_decode("aGk").as_deref(), Ok("hi"));
    assert_eq!(base64_decode(" aM Op\nbGxv ").as_deref(), Ok("héllo"));
    assert_eq!(base64_decode("-_8").as_deref(), Ok("\u{fffd}\u{fffd}"));
    assert_eq!(
        base64_decode("a"),
        Err(
            "utils.base64Decode: the input is not valid Base64 (Invalid input length: 1)"
                .to_owned()
        )
    );
}

#[test]
fn hex_round_trips_utf8() {
    assert_eq!(hex_encode("é!"), "c3a921");
    assert_eq!(hex_decode("c3a921").as_deref(), Ok("é!"));
    assert_eq!(hex_decode(" 6869 ").as_deref(), Ok("hi"));
    assert_eq!(
        hex_decode("abc"),
        Err("utils.hexDecode: the input is not valid hex (Odd number of digits)".to_owned())
    );
}
