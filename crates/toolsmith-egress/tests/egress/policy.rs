//! The policy: domain allowlists with wildcards (operator and owner), private hosts with
//! ports, and plain http. Checked through `check_url` and `resolve_checked`, never sent.

use toolsmith_egress::{DomainPattern, EgressGuard, EgressPolicy, PrivateHost, check_url};

use crate::support::hostile_resolver;

fn domains(list: &[&str]) -> Vec<DomainPattern> {
    list.iter().map(|d| d.parse().unwrap()).collect()
}

#[test]
fn wildcards_match_subdomains_only() {
    let pattern: DomainPattern = "*.Example.com.".parse().unwrap();
    assert_eq!(pattern.to_string(), "*.example.com");
    assert!(pattern.matches("api.example.com"));
    assert!(pattern.matches("a.b.example.com"));
    assert!(!pattern.matches("example.com"));
    assert!(!pattern.matches("evil-example.com"));
    assert!(!pattern.matches("example.com.evil.org"));
    let exact: DomainPattern = "api.example.com".parse().unwrap();
    assert!(exact.matches("api.example.com"));
    assert!(!exact.matches("x.api.example.com"));
}

#[test]
fn bad_patterns_are_refused() {
    for bad in [
        "",
        "*",
        "*.",
        "a..b",
        "exa mple.com",
        "*.*.example.com",
        "http://x.com",
        "a/b",
    ] {
        let err = bad.parse::<DomainPattern>().unwrap_err();
        assert_eq!(err.code(), "invalid_policy", "{bad}");
    }
}

#[tokio::test]
async fn the_operator_allowlist_admits_nothing_else() {
    let policy = EgressPolicy {
        allowed_domains: domains(&["*.example.com", "public.test"]),
        ..EgressPolicy::default()
    };
    let guard = EgressGuard::with_resolver(policy, hostile_resolver()).unwrap();
    for ok in [
        "https://api.example.com/",
        "https://a.b.example.com/x",
        "https://public.test/",
    ] {
        assert!(guard.resolve_checked(ok).await.is_ok(), "{ok}");
    }
    for refused in [
        "https://example.com/",
        "https://evil-example.com/",
        "https://93.184.216.34/",
        "https://evil.test/",
    ] {
        let err = guard.resolve_checked(refused).await.unwrap_err();
        assert_eq!(err.code(), "domain_not_allowed", "{refused}: {err}");
    }
}

#[tokio::test]
async fn an_owner_can_narrow_but_not_widen() {
    let policy = EgressPolicy {
        allowed_domains: domains(&["*.example.com"]),
        ..EgressPolicy::default()
    };
    let guard = EgressGuard::with_resolver(policy, hostile_resolver()).unwrap();
    let owner = guard.for_owner(domains(&["api.example.com", "public.test"]));
    assert!(
        owner
            .resolve_checked("https://api.example.com/")
            .await
            .is_ok()
    );
    let narrowed = owner
        .resolve_checked("https://a.b.example.com/")
        .await
        .unwrap_err();
    assert_eq!(narrowed.code(), "domain_not_allowed");
    let widened = owner
        .resolve_checked("https://public.test/")
        .await
        .unwrap_err();
    assert_eq!(widened.code(), "domain_not_allowed");
    // The guard it came from is unchanged.
    assert!(
        guard
            .resolve_checked("https://a.b.example.com/")
            .await
            .is_ok()
    );

    let open = EgressGuard::with_resolver(EgressPolicy::default(), hostile_resolver()).unwrap();
    let owner = open.for_owner(domains(&["public.test"]));
    assert!(owner.resolve_checked("https://public.test/").await.is_ok());
    let err = owner
        .resolve_checked("https://api.example.com/")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "domain_not_allowed");
}

#[test]
fn plain_http_can_be_switched_off() {
    let policy = EgressPolicy {
        allow_plain_http: false,
        ..EgressPolicy::default()
    };
    let err = check_url("http://public.test/", &policy).unwrap_err();
    assert_eq!(err.code(), "scheme_not_allowed");
    assert!(check_url("https://public.test/", &policy).is_ok());
}

#[test]
fn private_hosts_parse() {
    for (text, shown) in [
        ("intranet.corp", "intranet.corp"),
        ("Intranet.Corp.:8443", "intranet.corp:8443"),
        ("10.0.0.5:80", "10.0.0.5:80"),
        ("[fd00::1]:443", "[fd00::1]:443"),
        ("[FD00:0::1]", "fd00::1"),
        ("127.0.0.1", "127.0.0.1"),
    ] {
        let host: PrivateHost = text.parse().unwrap();
        assert_eq!(host.to_string(), shown, "{text}");
    }
    for bad in [
        "",
        "a b",
        "host:port",
        "host:99999",
        "[fd00::1",
        "[fd00::1]x",
        "http://x",
    ] {
        let err = bad.parse::<PrivateHost>().unwrap_err();
        assert_eq!(err.code(), "invalid_policy", "{bad}");
    }
}

#[tokio::test]
async fn a_private_host_opens_only_itself_and_its_port() {
    let policy = EgressPolicy {
        allowed_private_hosts: vec![
            "private.test".parse().unwrap(),
            "127.0.0.1:8080".parse().unwrap(),
        ],
        ..EgressPolicy::default()
    };
    let guard = EgressGuard::with_resolver(policy, hostile_resolver()).unwrap();
    assert!(guard.resolve_checked("http://private.test/").await.is_ok());
    assert!(
        guard
            .resolve_checked("http://private.test:9999/")
            .await
            .is_ok()
    );
    assert!(
        guard
            .resolve_checked("http://127.0.0.1:8080/")
            .await
            .is_ok()
    );
    for refused in [
        "http://127.0.0.1:8081/",
        "http://127.0.0.1/",
        "http://127.0.0.2:8080/",
        "http://evil.test/",
        "http://localhost:8080/",
        "http://[::1]:8080/",
    ] {
        let err = guard.resolve_checked(refused).await.unwrap_err();
        assert_eq!(err.code(), "address_refused", "{refused}: {err}");
    }
}
