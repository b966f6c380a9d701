//! The SSRF corpus: URL spellings and names that must never be reached, checked through
//! `resolve_checked` (classification and a test resolver; nothing is connected to).

use toolsmith_egress::{EgressPolicy, check_url};

use crate::support::hostile_guard;

/// (URL, expected error code).
const CORPUS: &[(&str, &str)] = &[
    // Loopback in every spelling the URL parser accepts.
    ("http://127.0.0.1/", "address_refused"),
    ("http://127.0.0.1:8080/admin", "address_refused"),
    ("https://127.0.0.1:443/", "address_refused"),
    ("http://127.1/", "address_refused"),
    ("http://127.0.1/", "address_refused"),
    ("http://2130706433/", "address_refused"),
    ("http://0177.0.0.1/", "address_refused"),
    ("http://0x7f.0.0.1/", "address_refused"),
    ("http://0x7f000001/", "address_refused"),
    ("http://0x7f.1/", "address_refused"),
    ("http://017700000001/", "address_refused"),
    ("http://127.0.0.1./", "address_refused"),
    ("http://%31%32%37.0.0.1/", "address_refused"),
    ("http://127\u{3002}0\u{3002}0\u{3002}1/", "address_refused"),
    ("http://a@127.0.0.1/", "address_refused"),
    ("http://user:pass@127.0.0.1:80/", "address_refused"),
    ("http://public.test@127.0.0.1/", "address_refused"),
    ("http://localhost/", "address_refused"),
    ("http://LOCALHOST./", "address_refused"),
    ("http://api.localhost/", "address_refused"),
    ("http://0/", "address_refused"),
    ("http://0.0.0.0/", "address_refused"),
    // IPv6.
    ("http://[::1]/", "address_refused"),
    ("http://[::]/", "address_refused"),
    ("http://[0:0:0:0:0:0:0:1]/", "address_refused"),
    ("http://[::ffff:127.0.0.1]/", "address_refused"),
    ("http://[::ffff:7f00:1]/", "address_refused"),
    ("http://[0:0:0:0:0:ffff:127.0.0.1]/", "address_refused"),
    ("http://[::127.0.0.1]/", "address_refused"),
    ("http://[64:ff9b::127.0.0.1]/", "address_refused"),
    ("http://[64:ff9b::a9fe:a9fe]/", "address_refused"),
    ("http://[2002:7f00:1::1]/", "address_refused"),
    ("http://[fc00::1]/", "address_refused"),
    ("http://[fd12:3456::1]/", "address_refused"),
    ("http://[fe80::1]/", "address_refused"),
    ("http://[ff02::1]/", "address_refused"),
    ("http://[2001:db8::1]/", "address_refused"),
    ("http://[::ffff:169.254.169.254]/", "address_refused"),
    // Private, link-local (cloud metadata), CGNAT, multicast, broadcast, reserved.
    ("http://10.0.0.1/", "address_refused"),
    ("http://10.255.255.255/", "address_refused"),
    ("http://172.16.0.1/", "address_refused"),
    ("http://172.31.255.254/", "address_refused"),
    ("http://192.168.1.1/", "address_refused"),
    (
        "http://169.254.169.254/latest/meta-data/",
        "address_refused",
    ),
    ("http://169.254.169.254./", "address_refused"),
    ("http://0xa9fea9fe/", "address_refused"),
    ("http://2852039166/", "address_refused"),
    ("http://0251.0376.0251.0376/", "address_refused"),
    ("http://100.64.0.1/", "address_refused"),
    ("http://224.0.0.1/", "address_refused"),
    ("http://239.255.255.250:1900/", "address_refused"),
    ("http://255.255.255.255/", "address_refused"),
    ("http://192.0.2.1/", "address_refused"),
    ("http://198.18.0.1/", "address_refused"),
    ("http://240.0.0.1/", "address_refused"),
    // Names that resolve to refused addresses.
    ("http://evil.test/", "address_refused"),
    ("http://EVIL.test./", "address_refused"),
    ("http://metadata.test/latest/meta-data/", "address_refused"),
    ("http://private.test/", "address_refused"),
    ("http://mixed.test/", "address_refused"),
    ("http://mapped.test/", "address_refused"),
    ("http://ula.test/", "address_refused"),
    ("http://cgnat.test/", "address_refused"),
    ("http://empty.test/", "dns_failed"),
    ("http://no-such-name.test/", "dns_failed"),
    // Other schemes and broken URLs.
    ("file:///etc/passwd", "scheme_not_allowed"),
    ("gopher://127.0.0.1:70/_payload", "scheme_not_allowed"),
    ("ftp://public.test/", "scheme_not_allowed"),
    ("dict://127.0.0.1:11211/", "scheme_not_allowed"),
    ("ws://public.test/", "scheme_not_allowed"),
    ("javascript:alert(1)", "scheme_not_allowed"),
    ("data:text/plain,hello", "scheme_not_allowed"),
    ("http://[fe80::1%25eth0]/", "invalid_url"),
    ("http://", "invalid_url"),
    ("//127.0.0.1/", "invalid_url"),
    ("127.0.0.1", "invalid_url"),
    ("http://256.0.0.1/", "invalid_url"),
];

#[tokio::test]
async fn every_corpus_entry_is_refused_with_its_code() {
    let guard = hostile_guard();
    assert!(CORPUS.len() >= 40);
    let mut wrong = Vec::new();
    for (url, code) in CORPUS {
        match guard.resolve_checked(url).await {
            Ok(checked) => wrong.push(format!("{url}: allowed ({:?})", checked.addrs)),
            Err(e) if e.code() != *code => wrong.push(format!("{url}: {} ({e})", e.code())),
            Err(_) => {}
        }
    }
    assert!(wrong.is_empty(), "wrong outcomes:\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn literal_refusals_need_no_resolution() {
    let policy = EgressPolicy::default();
    for (url, code) in CORPUS {
        if url.contains(".test") || *code == "dns_failed" {
            continue;
        }
        let result = check_url(url, &policy);
        let err = result.expect_err(url);
        assert_eq!(err.code(), *code, "{url}: {err}");
    }
}

#[tokio::test]
async fn messages_name_the_class_never_the_resolved_address() {
    let guard = hostile_guard();
    let err = guard
        .resolve_checked("http://evil.test/")
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("evil.test"), "{text}");
    assert!(text.contains("loopback"), "{text}");
    assert!(!text.contains("127.0.0.1"), "{text}");
    let err = guard
        .resolve_checked("http://metadata.test/")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("link-local"), "{err}");
    assert!(!err.to_string().contains("169.254"), "{err}");
}

#[tokio::test]
async fn public_addresses_and_names_pass() {
    let guard = hostile_guard();
    for url in [
        "http://93.184.216.34/",
        "https://public.test/path?q=1",
        "https://[2606:4700:4700::1111]/",
        "http://[::ffff:8.8.8.8]/",
        "https://PUBLIC.test./",
    ] {
        let checked = guard.resolve_checked(url).await;
        assert!(checked.is_ok(), "{url}: {checked:?}");
    }
}

#[tokio::test]
async fn localhost_is_refused_by_name_with_the_system_resolver() {
    // Refused before any lookup: no resolver is asked about a name that is loopback by
    // definition. (Names that *resolve* to refused addresses are covered through the test
    // resolver above and through the DNS hook in `send.rs`.)
    let guard = toolsmith_egress::EgressGuard::new(EgressPolicy::default()).unwrap();
    for url in [
        "http://localhost:9/",
        "http://localhost.:9/",
        "http://x.y.localhost/",
    ] {
        let err = guard.resolve_checked(url).await.unwrap_err();
        assert_eq!(err.code(), "address_refused", "{url}");
    }
}

#[test]
fn huge_urls_are_refused() {
    let url = format!("https://public.test/{}", "a".repeat(10_000));
    let err = check_url(&url, &EgressPolicy::default()).unwrap_err();
    assert_eq!(err.code(), "invalid_url");
}
