//! The credential patterns: one combined regex compiled once per process, and the rule table it is
//! built from.
//!
//! Each rule says which part of its match is the secret (a named group, or the whole match), so a
//! `key=value` match redacts only the value and the key name stays readable.
//! Known secret values are not here; they live in `secrets.rs`, per request.

use std::ops::Range;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};

/// An ASCII word boundary.
/// The Unicode one would make the lazy DFA give up on non-ASCII input and fall back to a slower
/// engine.
const B: &str = r"(?-u:\b)";

/// Words a key name must END with to count as credential-like (matched case-insensitively, with an
/// optional `_`, `-` or `.` between the parts).
/// A bare `key` is deliberately absent: it made the reference redact `monkey=bananas123`.
/// `pwd` is absent too: it is the shell's working directory far more often than a password.
/// `authorization` has its own rule, which keeps the scheme (`Bearer`) and redacts the credential.
pub(crate) const CREDENTIAL_KEY_SUFFIXES: &str = r"(?:api[_.-]?key|secret[_.-]?key|access[_.-]?key|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|secret|token|password|passwd|passphrase|credentials?)";

/// One credential pattern.
struct Rule {
    /// A short name, used only in tests and debugging.
    name: &'static str,
    /// The regex; groups named `v…` hold the part to redact (the first that matched wins); a rule
    /// without such groups redacts its whole match.
    pattern: String,
    /// Whether a match is really a secret; `false` drops the match.
    accept: fn(&str) -> bool,
}

/// The compiled rule set: a [`RegexSet`] that says in one pass which rules occur at all, and one
/// regex per rule to locate them.
///
/// One regex per rule, rather than one alternation of all rules, keeps every search linear: in an
/// alternation a higher-priority rule that is still alive (a long run of key-name characters) makes
/// the engine read far past a shorter match of another rule, again for every match.
pub(crate) struct Patterns {
    set: RegexSet,
    rules: Vec<CompiledRule>,
}

struct CompiledRule {
    name: &'static str,
    regex: Regex,
    /// Indices of the groups holding the secret; empty means the whole match.
    values: Vec<usize>,
    accept: fn(&str) -> bool,
}

/// One redaction found by the patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) span: Range<usize>,
    pub(crate) rule: &'static str,
}

/// The process-wide rule set, compiled on first use.
pub(crate) static PATTERNS: LazyLock<Result<Patterns, regex::Error>> =
    LazyLock::new(Patterns::compile);

impl Patterns {
    fn compile() -> Result<Self, regex::Error> {
        let rules = rules();
        let set = RegexSet::new(rules.iter().map(|rule| rule.pattern.as_str()))?;
        let mut compiled = Vec::with_capacity(rules.len());
        for rule in rules {
            let regex = Regex::new(&rule.pattern)?;
            let values = regex
                .capture_names()
                .enumerate()
                .filter(|(_, name)| name.is_some_and(|n| n.starts_with('v')))
                .map(|(idx, _)| idx)
                .collect();
            compiled.push(CompiledRule {
                name: rule.name,
                regex,
                values,
                accept: rule.accept,
            });
        }
        Ok(Self {
            set,
            rules: compiled,
        })
    }

    /// Every credential found in `text`; spans of different rules may overlap.
    pub(crate) fn find(&self, text: &str, hits: &mut Vec<Hit>) {
        for rule_idx in self.set.matches(text).iter() {
            let Some(rule) = self.rules.get(rule_idx) else {
                continue;
            };
            for caps in rule.regex.captures_iter(text) {
                let secret = rule
                    .values
                    .iter()
                    .find_map(|idx| caps.get(*idx))
                    .or_else(|| caps.get(0));
                let Some(secret) = secret else { continue };
                // A pagination cursor under a `…token` key is not a credential.
                if caps
                    .name("k")
                    .is_some_and(|key| is_cursor_key(key.as_str()))
                {
                    continue;
                }
                if (rule.accept)(secret.as_str()) {
                    hits.push(Hit {
                        span: secret.range(),
                        rule: rule.name,
                    });
                }
            }
        }
    }
}

/// Whether a JSON object key (or any key name) is credential-like: it ends with one of
/// [`CREDENTIAL_KEY_SUFFIXES`] or is an `Authorization` header name.
pub(crate) fn is_credential_key(key: &str) -> bool {
    if is_cursor_key(key) {
        return false;
    }
    static KEY: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(&format!(
            r"(?i)^(?:[A-Za-z0-9_.\- ]*{CREDENTIAL_KEY_SUFFIXES}|(?:proxy-)?authorization)$"
        ))
        .ok()
    });
    KEY.as_ref().is_some_and(|re| re.is_match(key))
}

/// Key names that end with `token` but name a pagination cursor, not a credential
/// (`nextPageToken`, `page_token`, `NextToken`, `continuationToken`, `syncToken`): redacting
/// them would leave a client unable to page through an upstream's results. Compared without
/// case and without `_`, `-`, `.` and spaces.
const CURSOR_KEY_SUFFIXES: &[&str] = &[
    "pagetoken",
    "nexttoken",
    "continuationtoken",
    "cursortoken",
    "synctoken",
    "resumptiontoken",
];

/// Whether a key name is a pagination cursor's ([`CURSOR_KEY_SUFFIXES`]).
pub(crate) fn is_cursor_key(key: &str) -> bool {
    let folded: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    CURSOR_KEY_SUFFIXES
        .iter()
        .any(|suffix| folded.ends_with(suffix))
}

/// Accepts every match.
fn any(_: &str) -> bool {
    true
}

/// Accepts a token holding at least one ASCII digit and one ASCII letter: real keys are random,
/// hyphenated English (`sk-learn-…`) is not.
fn mixed(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) && token.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Accepts a value after a credential-like key unless it is empty, already redacted, or a
/// placeholder (`null`, `true`, `${VAR}`, `***` …), none of which is a secret.
fn real_value(value: &str) -> bool {
    let trimmed = value.trim();
    if trimmed.is_empty() || trimmed.starts_with(crate::REDACTED) {
        return false;
    }
    let lower = trimmed.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "null"
            | "none"
            | "nil"
            | "true"
            | "false"
            | "undefined"
            | "empty"
            | "required"
            | "optional"
    ) {
        return false;
    }
    if trimmed.starts_with('$') || trimmed.starts_with('<') || trimmed.starts_with("{{") {
        return false;
    }
    !trimmed
        .chars()
        .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.' || c == '•')
}

/// Accepts an `Authorization` credential: a real value that is not just a scheme name left without
/// its credential (`Authorization: Bearer` at the end of a line).
fn auth_credential(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    real_value(value)
        && !matches!(
            lower.as_str(),
            "bearer" | "basic" | "token" | "digest" | "negotiate"
        )
}

/// The rule table, most specific first: at one start position the first alternative wins.
fn rules() -> Vec<Rule> {
    // The value after a key: an escaped-quoted string inside JSON text, a double- or single-quoted
    // string, or a bare run up to whitespace or a delimiter.
    let value = r#"(?:\\"(?P<v_e>[^"\\\r\n]*)\\"|"(?P<v_d>(?:[^"\\\r\n]|\\.)*)"|'(?P<v_s>[^'\r\n]*)'|(?P<v_b>[^\s"'\\,;&<>\[\]{}()]+))"#;
    vec![
        Rule {
            name: "pem_private_key",
            pattern: r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?P<v>(?:[^-]|-[^-])+)"
                .to_owned(),
            accept: any,
        },
        Rule {
            name: "authorization_header",
            // `Authorization: Bearer x`, `"authorization": "Basic x"`: the scheme stays, the
            // credential goes.
            pattern: format!(
                r#"{B}(?i:(?:proxy-)?authorization)(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:(?i:bearer|basic|token|digest|negotiate|apikey|bot)\s+)?(?P<v>[^\s"'\\,;]+)"#
            ),
            accept: auth_credential,
        },
        Rule {
            name: "bearer_token",
            pattern: format!(r"{B}(?i:bearer)\s+(?P<v>[A-Za-z0-9\-._~+/]{{16,}}=*)"),
            accept: mixed,
        },
        Rule {
            name: "credential_key_value",
            pattern: format!(
                r#"(?i){B}(?P<k>[A-Za-z0-9_.\-]*{CREDENTIAL_KEY_SUFFIXES})(?:\\?["'])?[ \t]*[:=][ \t]*{value}"#
            ),
            accept: real_value,
        },
        Rule {
            name: "url_password",
            // `scheme://user:password@host`: only the password goes.
            pattern: format!(r"(?i){B}[a-z][a-z0-9+.\-]*://[^\s:/?#@]*:(?P<v>[^\s/?#@]+)@"),
            accept: any,
        },
        Rule {
            name: "jwt",
            pattern: format!(
                r"{B}eyJ[A-Za-z0-9_\-]{{4,}}\.eyJ[A-Za-z0-9_\-]{{4,}}\.[A-Za-z0-9_\-]*"
            ),
            accept: any,
        },
        Rule {
            name: "openai_anthropic_key",
            // `sk-…`, `sk-proj-…`, `sk-ant-api03-…`, `sk-svcacct-…`.
            pattern: format!(r"{B}sk-[A-Za-z0-9_\-]{{20,}}"),
            accept: mixed,
        },
        Rule {
            name: "github_token",
            pattern: format!(
                r"{B}(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{22,}})"
            ),
            accept: any,
        },
        Rule {
            name: "aws_access_key_id",
            pattern: format!(r"{B}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{B}"),
            accept: any,
        },
        Rule {
            name: "slack_token",
            pattern: format!(r"{B}xox[abposre]-[A-Za-z0-9\-]{{10,}}"),
            accept: mixed,
        },
        Rule {
            name: "google_api_key",
            pattern: format!(r"{B}AIza[0-9A-Za-z_\-]{{35}}"),
            accept: any,
        },
        Rule {
            name: "stripe_key",
            pattern: format!(
                r"{B}(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{{16,}}|{B}whsec_[0-9A-Za-z]{{24,}}"
            ),
            accept: any,
        },
        Rule {
            name: "other_vendor_token",
            // GitLab, npm, Hugging Face, SendGrid.
            pattern: format!(
                r"{B}(?:glpat-[A-Za-z0-9_\-]{{20,}}|npm_[A-Za-z0-9]{{36}}|hf_[A-Za-z]{{34,}}|SG\.[A-Za-z0-9_\-]{{22}}\.[A-Za-z0-9_\-]{{43}})"
            ),
            accept: any,
        },
    ]
}
