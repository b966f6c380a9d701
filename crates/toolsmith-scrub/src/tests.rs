//! Tests of the scrubber: a corpus of secrets that must go (with key names kept), a corpus of
//! innocent text that must stay, known secrets in every encoding, JSON, isolation between requests,
//! and huge or pathological input.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::json;

use crate::{REDACTED, ScrubError, Scrubber, is_credential_key};

fn patterns() -> Scrubber {
    Scrubber::patterns_only().unwrap()
}

#[track_caller]
fn check(input: &str, expected: &str) {
    let scrubbed = patterns().scrub_str(input).into_owned();
    assert_eq!(scrubbed, expected, "input: {input}");
}

/// (input, expected output): every secret shape the patterns must catch.
const SECRET_CORPUS: &[(&str, &str)] = &[
    // OpenAI and Anthropic.
    (
        "key is sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ here",
        "key is [REDACTED] here",
    ),
    (
        "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345-_abcDEF",
        "[REDACTED]",
    ),
    ("sk-svcacct-9a8b7c6d5e4f3g2h1i0jKLMNOPQR", "[REDACTED]"),
    (
        "ANTHROPIC=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv-12345_xyzXYZ-AA",
        "ANTHROPIC=[REDACTED]",
    ),
    ("(sk-ant-admin01-zzzzzzzzzzzzzzzzzzzz9999)", "([REDACTED])"),
    // GitHub.
    (
        "token ghp_0123456789abcdefghijABCDEFGHIJ012345 used",
        "token [REDACTED] used",
    ),
    ("gho_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij", "[REDACTED]"),
    ("ghu_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
    ("ghs_1234567890123456789012345678901234567", "[REDACTED]"),
    ("ghr_abcdefghijABCDEFGHIJ0123456789abcdef", "[REDACTED]"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
        "[REDACTED]",
    ),
    // AWS.
    (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id = [REDACTED]",
    ),
    (
        "ASIAY34FZKBOKMUTVV7A was the session key",
        "[REDACTED] was the session key",
    ),
    (
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key=[REDACTED]",
    ),
    (
        "AWS_SECRET_ACCESS_KEY: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
        "AWS_SECRET_ACCESS_KEY: \"[REDACTED]\"",
    ),
    // Slack, Google, Stripe, other vendors.
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "[REDACTED]",
    ),
    ("xoxp-1111111111-2222222222-abcdefabcdef", "[REDACTED]"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED]"),
    (
        "stripe: sk_live_51HxYzABCDEFGHIJ0123456789",
        "stripe: [REDACTED]",
    ),
    ("rk_test_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED]"),
    ("whsec_abcdefghijklmnopqrstuvwxyz012345", "[REDACTED]"),
    ("glpat-xxxxYYYYzzzz0000aaaa1", "[REDACTED]"),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
    (
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "[REDACTED]",
    ),
    // JWT.
    (
        "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        "jwt [REDACTED] end",
    ),
    // Authorization and bearer.
    (
        "Authorization: Bearer abc123def456ghi789",
        "Authorization: Bearer [REDACTED]",
    ),
    (
        "authorization: Basic dXNlcjpodW50ZXIy",
        "authorization: Basic [REDACTED]",
    ),
    (
        "{\"Authorization\": \"Bearer tok_9f8e7d6c5b4a\"}",
        "{\"Authorization\": \"Bearer [REDACTED]\"}",
    ),
    (
        "Proxy-Authorization: Digest q1w2e3r4t5",
        "Proxy-Authorization: Digest [REDACTED]",
    ),
    (
        "curl -H 'Authorization: token 0123abcd4567'",
        "curl -H 'Authorization: token [REDACTED]'",
    ),
    (
        "sent Bearer 4f3c2b1a0f9e8d7c6b5a4f3c",
        "sent Bearer [REDACTED]",
    ),
    // Generic key=value, key: value, JSON.
    ("api_key=abc123", "api_key=[REDACTED]"),
    ("API-KEY: zzTopSecret99", "API-KEY: [REDACTED]"),
    ("apiKey=\"q9w8e7r6\"", "apiKey=\"[REDACTED]\""),
    (
        "{\"password\": \"hunter2\"}",
        "{\"password\": \"[REDACTED]\"}",
    ),
    (
        "{\"password\":\"hunter2\",\"user\":\"bob\"}",
        "{\"password\":\"[REDACTED]\",\"user\":\"bob\"}",
    ),
    (
        "{\"client_secret\": \"a\\\"quoted\\\"secret\"}",
        "{\"client_secret\": \"[REDACTED]\"}",
    ),
    ("DB_PASSWORD='p@ss w0rd!'", "DB_PASSWORD='[REDACTED]'"),
    ("passwd=letmein", "passwd=[REDACTED]"),
    ("secret: s3cr3t-value", "secret: [REDACTED]"),
    (
        "export GITHUB_TOKEN=notAPatternButSecret",
        "export GITHUB_TOKEN=[REDACTED]",
    ),
    (
        "https://api.example.com/v1?access_token=abc.def.ghi&page=2",
        "https://api.example.com/v1?access_token=[REDACTED]&page=2",
    ),
    ("refresh_token: 1//0gAbCdEf", "refresh_token: [REDACTED]"),
    ("private_key=MIIEvQIBADANBg", "private_key=[REDACTED]"),
    (
        "--password=hunter22 --user=root",
        "--password=[REDACTED] --user=root",
    ),
    ("client.secret = xyz987", "client.secret = [REDACTED]"),
    ("passphrase: correct horse", "passphrase: [REDACTED] horse"),
    ("credentials=YWxhZGRpbjpvcGVu", "credentials=[REDACTED]"),
    (
        "{\\\"api_key\\\":\\\"inner-secret\\\"}",
        "{\\\"api_key\\\":\\\"[REDACTED]\\\"}",
    ),
    ("signing_key = 'k3y-material'", "signing_key = '[REDACTED]'"),
    // Connection URLs: only the password.
    (
        "postgres://admin:s3cret@db.internal:5432/app",
        "postgres://admin:[REDACTED]@db.internal:5432/app",
    ),
    (
        "redis://:hunter2@cache:6379/0",
        "redis://:[REDACTED]@cache:6379/0",
    ),
    (
        "mongodb+srv://user:p%40ss@cluster0.example.net/db",
        "mongodb+srv://user:[REDACTED]@cluster0.example.net/db",
    ),
    (
        "amqp://guest:guest123@rabbit/",
        "amqp://guest:[REDACTED]@rabbit/",
    ),
    // PEM private keys: armour kept, body gone, even when cut off.
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabcDEF==\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----",
    ),
    (
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI",
        "-----BEGIN PRIVATE KEY-----[REDACTED]",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\n",
    ),
    (
        "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES\n\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----[REDACTED]-----END EC PRIVATE KEY-----",
    ),
];

/// Text that looks a little like a secret and must come out unchanged.
const INNOCENT_CORPUS: &[&str] = &[
    "monkey=bananas123",
    "turkey: roasted45",
    "token_count=5",
    "max_tokens: 4096",
    "{\"tokens\": 1234, \"token_type\": \"Bearer\"}",
    "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  file.tar.gz",
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "md5: d41d8cd98f00b204e9800998ecf8427e",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "https://example.com/path?query=1&page=2",
    "https://user@example.com/repo.git",
    "http://localhost:8080/api/v1",
    "Please enter your password to continue.",
    "The password field must not be empty.",
    "password=",
    "password: null",
    "token:\nname: build",
    "authorization:\n  required: true",
    "api_key=${OPENAI_API_KEY}",
    "token: [REDACTED]",
    "secret=***",
    "Authorization: Bearer",
    "the bearer of bad news",
    "sk-learn-is-a-python-machine-learning-library",
    "task-0123456789abcdefghij done",
    "ghp_short",
    "AKIA is a prefix",
    "keyboard=qwerty and hockey=fun",
    "pwd=/home/user/project",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "a.b.c eyJ but not a jwt",
    "{\"user\": \"alice\", \"role\": \"admin\"}",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
];

#[test]
fn secret_corpus_is_redacted_with_key_names_kept() {
    assert!(
        SECRET_CORPUS.len() >= 50,
        "corpus has {} entries",
        SECRET_CORPUS.len()
    );
    for (input, expected) in SECRET_CORPUS {
        check(input, expected);
    }
}

#[test]
fn innocent_corpus_is_left_intact() {
    assert!(
        INNOCENT_CORPUS.len() >= 25,
        "corpus has {} entries",
        INNOCENT_CORPUS.len()
    );
    let scrubber = patterns();
    for input in INNOCENT_CORPUS {
        let (scrubbed, n) = scrubber.scrub_counted(input);
        assert_eq!(
            (scrubbed.as_ref(), n),
            (*input, 0),
            "rules hit: {:?}",
            scrubber.rules_hit(input)
        );
    }
    assert_eq!(scrubber.redactions(), 0);
}

#[test]
fn scrubbing_is_idempotent() {
    let scrubber = patterns();
    for (input, _) in SECRET_CORPUS {
        let once = scrubber.scrub_str(input).into_owned();
        assert_eq!(scrubber.scrub_str(&once), once, "input: {input}");
    }
}

#[test]
fn unchanged_text_is_borrowed() {
    let scrubber = patterns();
    assert!(matches!(
        scrubber.scrub_str("nothing to see"),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn several_secrets_in_one_text_are_counted() {
    let scrubber = patterns();
    let input = "a=1 password=x1 then AKIAIOSFODNN7EXAMPLE and postgres://u:pw@h/db";
    let (scrubbed, n) = scrubber.scrub_counted(input);
    assert_eq!(
        scrubbed,
        "a=1 password=[REDACTED] then [REDACTED] and postgres://u:[REDACTED]@h/db"
    );
    assert_eq!(n, 3);
    assert_eq!(scrubber.redactions(), 3);
}

const SECRET: &str = "Zq7-pLm!x9 vR";

#[test]
fn known_secret_is_redacted_in_every_form() {
    let scrubber = Scrubber::new([SECRET.to_owned()]).unwrap();
    let forms = [
        SECRET.to_owned(),
        "Zq7-pLm%21x9%20vR".to_owned(),
        "Zq7-pLm%21x9+vR".to_owned(),
        STANDARD.encode(SECRET),
        URL_SAFE_NO_PAD.encode(SECRET),
    ];
    for form in forms {
        let input = format!("before {form} after");
        assert_eq!(
            scrubber.scrub_str(&input),
            "before [REDACTED] after",
            "form: {form}"
        );
    }
}

#[test]
fn known_secret_is_redacted_percent_encoded_in_either_hex_case() {
    let scrubber = Scrubber::new(["k3y/v4l?x=y~z".to_owned()]).unwrap();
    for form in ["k3y%2Fv4l%3Fx%3Dy~z", "k3y%2fv4l%3fx%3dy~z"] {
        assert_eq!(
            scrubber.scrub_str(&format!("url=https://h/?t={form}&n=1")),
            "url=https://h/?t=[REDACTED]&n=1",
            "form: {form}"
        );
    }
}

#[test]
fn known_secret_is_found_inside_longer_base64() {
    let scrubber = Scrubber::new([SECRET.to_owned()]).unwrap();
    for prefix in ["", "u", "us", "user:"] {
        let encoded = STANDARD.encode(format!("{prefix}{SECRET}:trailing"));
        let scrubbed = scrubber.scrub_str(&encoded);
        assert!(scrubbed.contains(REDACTED), "prefix {prefix:?}: {scrubbed}");
        // At most two characters on each side of the cut can carry bits of the secret.
        let kept = scrubbed.replace(REDACTED, "");
        assert!(
            kept.len() + 16 <= encoded.len(),
            "prefix {prefix:?}: {scrubbed}"
        );
    }
}

#[test]
fn known_secret_is_found_json_escaped() {
    let secret = "quo\"te\\back";
    let scrubber = Scrubber::new([secret.to_owned()]).unwrap();
    let text = serde_json::to_string(&json!({ "note": secret })).unwrap();
    assert_eq!(scrubber.scrub_str(&text), "{\"note\":\"[REDACTED]\"}");
}

#[test]
fn short_secrets_are_ignored_and_long_ones_refused() {
    let scrubber = Scrubber::new(["12345".to_owned(), "admin".to_owned()]).unwrap();
    assert_eq!(scrubber.n_secret_forms(), 0);
    assert_eq!(scrubber.scrub_str("12345 admin"), "12345 admin");
    let err = Scrubber::new(["x".repeat(crate::MAX_SECRET_LEN + 1)])
        .err()
        .unwrap();
    assert!(matches!(err, ScrubError::SecretTooLong { .. }));
    assert_eq!(err.code(), "secret_too_long");
}

#[test]
fn secrets_of_one_request_never_reach_another() {
    let alice = Scrubber::new(["alice-secret-value".to_owned()]).unwrap();
    let bob = Scrubber::new(["bob-secret-value".to_owned()]).unwrap();
    let text = "alice-secret-value bob-secret-value";
    assert_eq!(alice.scrub_str(text), "[REDACTED] bob-secret-value");
    assert_eq!(bob.scrub_str(text), "alice-secret-value [REDACTED]");
    assert_eq!((alice.redactions(), bob.redactions()), (1, 1));
}

#[test]
fn overlapping_pattern_and_secret_become_one_redaction() {
    let scrubber = Scrubber::new(["hunter2-long".to_owned()]).unwrap();
    let (scrubbed, n) = scrubber.scrub_counted("password=hunter2-long!");
    assert_eq!((scrubbed.as_ref(), n), ("password=[REDACTED]", 1));
}

#[test]
fn json_values_and_credential_keys_are_scrubbed() {
    let scrubber = Scrubber::new(["known-secret-1".to_owned()]).unwrap();
    let mut value = json!({
        "password": "hunter2",
        "apiKey": 123456,
        "token_count": 5,
        "max_tokens": 100,
        "access_token": "",
        "client_secret": null,
        "credentials": { "user": "bob", "passwd": "pw-1" },
        "log": ["connected with postgres://u:pw@h/db", "saw known-secret-1"],
        "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "known-secret-1": "key is a secret",
        "nested": { "Authorization": "Bearer abcdefgh12345678" },
    });
    let n = scrubber.scrub_json(&mut value);
    assert_eq!(
        value,
        json!({
            "password": "[REDACTED]",
            "apiKey": "[REDACTED]",
            "token_count": 5,
            "max_tokens": 100,
            "access_token": "",
            "client_secret": null,
            "credentials": { "user": "bob", "passwd": "[REDACTED]" },
            "log": ["connected with postgres://u:[REDACTED]@h/db", "saw [REDACTED]"],
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "[REDACTED]": "key is a secret",
            "nested": { "Authorization": "[REDACTED]" },
        })
    );
    assert_eq!(n, 7);
    assert_eq!(scrubber.redactions(), 7);
}

#[test]
fn credential_key_names() {
    for key in [
        "password",
        "API_KEY",
        "apiKey",
        "x-api-key",
        "clientSecret",
        "DB_PASSWORD",
        "access_token",
        "Authorization",
        "aws_secret_access_key",
        "credentials",
    ] {
        assert!(is_credential_key(key), "{key}");
    }
    for key in [
        "monkey",
        "key",
        "token_count",
        "max_tokens",
        "tokens",
        "password_hint",
        "secretName",
        "author",
        "pwd",
        "token_type",
    ] {
        assert!(!is_credential_key(key), "{key}");
    }
}

#[test]
fn megabytes_of_output_are_scrubbed() {
    let scrubber = Scrubber::new(["known-secret-1".to_owned()]).unwrap();
    let line = "INFO request ok sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ñandú\n";
    let mut text = String::new();
    let mut n_secrets = 0;
    for line_idx in 0..40_000 {
        text.push_str(line);
        if line_idx % 1000 == 0 {
            text.push_str("api_key=abc123 known-secret-1\n");
            n_secrets += 2;
        }
    }
    assert!(text.len() > 3_000_000);
    let (scrubbed, n) = scrubber.scrub_counted(&text);
    assert_eq!(n, n_secrets);
    assert!(!scrubbed.contains("abc123") && !scrubbed.contains("known-secret-1"));
    assert_eq!(
        scrubbed.len(),
        text.len() - (6 + 14) * (n_secrets / 2) + REDACTED.len() * n_secrets
    );
}

#[test]
fn pathological_inputs_complete() {
    // Each of these defeats a backtracking engine, or made one alternation of all rules re-read the
    // rest of the input after every match (the `eyJ…` case took minutes); here each is linear.
    let scrubber = Scrubber::new(["aaaaaaaaab".to_owned()]).unwrap();
    let cases: Vec<(String, usize)> = vec![
        ("a".repeat(2_000_000), 0),
        ("password=".repeat(200_000), 1),
        ("sk-".repeat(300_000), 0),
        ("-----BEGIN RSA PRIVATE KEY-----".repeat(50_000), 0),
        ("eyJhbGci.".repeat(200_000), 66_667),
        (format!("{}!", "x://u:".repeat(200_000)), 0),
        ("\"password\": \"\\\\\\".repeat(100_000), 50_000),
        ("Authorization: Bearer ".repeat(100_000), 50_000),
    ];
    for (input, expected) in cases {
        let (_, n) = scrubber.scrub_counted(&input);
        assert_eq!(
            n,
            expected,
            "input starting {:?}",
            &input[..40.min(input.len())]
        );
    }
}

#[test]
fn unicode_secrets_and_text() {
    let secret = "pässwört-ünïcode";
    let scrubber = Scrubber::new([secret.to_owned()]).unwrap();
    let encoded = "p%C3%A4ssw%C3%B6rt-%C3%BCn%C3%AFcode";
    let input = format!("ñ {secret} 日本 {encoded} {}", STANDARD.encode(secret));
    assert_eq!(
        scrubber.scrub_str(&input),
        "ñ [REDACTED] 日本 [REDACTED] [REDACTED]"
    );
    assert_eq!(
        patterns().scrub_str("contraseña: 秘密の値 ok"),
        "contraseña: 秘密の値 ok"
    );
    assert_eq!(
        patterns().scrub_str("password: 秘密の値 ok"),
        "password: [REDACTED] ok"
    );
}

#[test]
fn known_secret_is_redacted_as_hex_and_as_javascript_encodes_it() {
    let secret = "k3y/v4l ü!";
    let scrubber = Scrubber::new([secret.to_owned()]).unwrap();
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    for form in [
        hex.clone(),
        hex.to_ascii_uppercase(),
        // encodeURI keeps `/` and `!`; encodeURIComponent keeps `!` only.
        "k3y/v4l%20%C3%BC!".to_owned(),
        "k3y%2Fv4l%20%C3%BC!".to_owned(),
    ] {
        assert_eq!(
            scrubber.scrub_str(&format!("before {form} after")),
            "before [REDACTED] after",
            "form: {form}"
        );
    }
}

#[test]
fn numeric_secret_returned_as_a_json_number_is_redacted() {
    let scrubber = Scrubber::new(["4929117345".to_owned()]).unwrap();
    let mut value = json!({"account": 4929117345u64, "padded": 914929117345u64, "count": 42});
    assert_eq!(scrubber.scrub_json(&mut value), 2);
    assert_eq!(
        value,
        json!({"account": "[REDACTED]", "padded": "[REDACTED]", "count": 42})
    );
}

/// A deterministic stream of pseudo-random words (splitmix64), for generated innocent text.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The false-positive rate of the encoded known-secret forms (hex and the JavaScript URI
/// encodings included): realistic secrets of every shape, over the innocent corpus, the secret corpus
/// (other people's secrets are innocent to this scrubber's known values) and 20,000 generated
/// digests, ids and numbers. Nothing may be redacted by the known-secret forms.
#[test]
fn known_secret_forms_leave_innocent_text_alone() {
    let secrets = [
        "123456",
        "4929117345",
        "hunter22",
        "admin-password",
        "deadbeefcafe",
        "Zq7-pLm!x9 vR",
        "sk-live-0123456789abcdef",
        "p@ss:w/rd?x=1",
        "correct horse battery staple",
        "ü-geheim-ß",
    ];
    let known = Scrubber::new(secrets.map(str::to_owned)).unwrap();
    let baseline = patterns();
    let mut state = 7u64;
    let mut generated = Vec::new();
    for _ in 0..5_000 {
        let (a, b) = (splitmix(&mut state), splitmix(&mut state));
        generated.push(format!("sha {a:016x}{b:016x}{:016x}", a ^ b));
        generated.push(format!(
            "id {:08x}-{:04x}-4{:03x}",
            a >> 32,
            b >> 48,
            a & 0xfff
        ));
        generated.push(format!("{}", a % 10_000_000_000_000));
        generated.push(format!("order {}.{:02} EUR", b % 100_000, a % 100));
    }
    let corpus: Vec<&str> = INNOCENT_CORPUS
        .iter()
        .copied()
        .chain(SECRET_CORPUS.iter().map(|(input, _)| *input))
        .chain(generated.iter().map(String::as_str))
        .collect();
    let mut false_positives = Vec::new();
    for text in &corpus {
        // Only what the encoded forms add counts: the patterns alone are the baseline, and a text
        // holding a secret verbatim (`123456` inside `task-0123456789…`) is the exact form's hit.
        let verbatim = secrets.iter().any(|secret| text.contains(secret));
        if !verbatim && known.scrub_counted(text).1 != baseline.scrub_counted(text).1 {
            false_positives.push(*text);
        }
    }
    assert!(corpus.len() > 20_000, "{}", corpus.len());
    assert_eq!(
        false_positives,
        Vec::<&str>::new(),
        "{} false positives in {} texts",
        false_positives.len(),
        corpus.len()
    );
}

#[test]
fn pagination_cursors_under_token_keys_stay() {
    // Issue 31: a bridged upstream's cursor was redacted, so clients could not page through it.
    let scrubber = patterns();
    for key in [
        "nextPageToken",
        "next_page_token",
        "pageToken",
        "page_token",
        "NextToken",
        "continuationToken",
        "syncToken",
    ] {
        let mut value = json!({ key: "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3", "items": [] });
        let before = value.clone();
        assert_eq!(scrubber.scrub_json(&mut value), 0, "{key}");
        assert_eq!(value, before, "{key}");
        let text = format!("{key}=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3 more");
        assert_eq!(scrubber.scrub_str(&text), text, "{key}");
        assert!(!is_credential_key(key), "{key}");
    }
    // Real credentials under keys that merely contain the words still go.
    check("access_token=abc123secret", "access_token=[REDACTED]");
    check(
        "\"refresh_token\": \"abc123secret\"",
        "\"refresh_token\": \"[REDACTED]\"",
    );
    assert!(is_credential_key("page_secret"));
}

#[test]
fn a_secrets_only_scrubber_redacts_known_secrets_and_nothing_else() {
    let known = "Correct-Horse-Battery-9";
    let scrubber = Scrubber::secrets_only([known.to_owned()]).unwrap();
    assert!(!scrubber.applies_patterns());
    // The user's own credential-looking text stays byte for byte ...
    for (input, _) in SECRET_CORPUS {
        assert_eq!(scrubber.scrub_str(input), *input);
    }
    let mut value =
        json!({"password": "hunter2-long", "apiKey": 123_456_789, "note": "wifi password: x9"});
    let before = value.clone();
    assert_eq!(scrubber.scrub_json(&mut value), 0);
    assert_eq!(value, before);
    // ... while a platform secret still never leaves, in any of its forms.
    let encoded = STANDARD.encode(known);
    let text = format!("db={known} b64={encoded}");
    assert_eq!(
        scrubber.scrub_str(&text),
        format!("db={REDACTED} b64={REDACTED}")
    );
    let mut value = json!({"password": known});
    assert_eq!(scrubber.scrub_json(&mut value), 1);
    assert_eq!(value, json!({"password": REDACTED}));
}

/// Content blocks: text is scrubbed, base64 is never rewritten (a pattern inside it by chance
/// stays), and a block whose bytes hold a known secret is withheld whole.
#[test]
fn content_blocks_keep_binary_data_and_withhold_a_block_holding_a_secret() {
    let secret = "hunter2-correct-horse-battery";
    let scrubber = Scrubber::new([secret.to_owned()]).unwrap();
    // Looks like an AWS key id to the patterns, but it is the middle of an image's base64.
    let image = "iVBORw0KGgo+AKIAIOSFODNN7EXAMPLE/AAAANSUhEUgAAAAEAAAAB";
    assert_ne!(
        patterns().scrub_str(image),
        image,
        "the patterns see a key in it"
    );
    let leaked = STANDARD.encode(format!("\u{89}PNG....{secret}....").as_bytes());
    let mut result = json!({
        "content": [
            {"type": "text", "text": format!("the key is {secret}")},
            {"type": "image", "data": image, "mimeType": "image/png", "annotations": {"audience": ["user"]}},
            {"type": "audio", "data": leaked, "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "test://blob", "blob": image}},
            {"type": "resource", "resource": {"uri": format!("test://{secret}"), "text": secret}},
        ],
        "structuredContent": {"note": secret},
    });
    let n = scrubber.scrub_blocks(&mut result);
    assert_eq!(n, 5, "{result}");
    let blocks = result["content"].as_array().unwrap();
    assert_eq!(blocks[0]["text"], format!("the key is {REDACTED}"));
    assert_eq!(blocks[1]["data"], image, "base64 is never rewritten");
    assert_eq!(blocks[1]["annotations"]["audience"][0], "user");
    assert_eq!(blocks[2]["type"], "text", "{}", blocks[2]);
    assert!(
        blocks[2]["text"]
            .as_str()
            .unwrap()
            .contains("withheld whole")
    );
    assert!(!blocks[2].to_string().contains(&leaked));
    assert_eq!(blocks[3]["resource"]["blob"], image);
    assert_eq!(blocks[4]["resource"]["text"], REDACTED);
    assert_eq!(blocks[4]["resource"]["uri"], format!("test://{REDACTED}"));
    assert_eq!(result["structuredContent"]["note"], REDACTED);
}
