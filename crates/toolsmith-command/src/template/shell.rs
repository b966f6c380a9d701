//! The template checker against a real shell: generated templates, and whenever the checker
//! accepts one, hostile values rendered into it must never run (`/bin/sh` and bash; a missing
//! bash fails, see `toolsmith_core::testkit`). Plus the desynchronisations found so far, as
//! fixed cases.

use std::path::Path;
use std::process::{Command, Stdio};

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::Template;

/// Pieces templates are built from: words, separators, every quoting and expansion construct
/// the checker models, and the placeholder. No `>` (a template must not create files itself)
/// and no loops.
const PIECES: &[&str] = &[
    " ",
    " ",
    "\n",
    "echo",
    "x",
    ";",
    "'",
    "'",
    "\"",
    "\"",
    "`",
    "#",
    "# it's",
    "\\",
    "$(",
    ")",
    "(",
    "${",
    "}",
    "${v:-",
    "$((",
    "))",
    "$'",
    "<<",
    "|",
    "&&",
    "case a in a) ",
    ";; esac",
    "$",
    "a#b",
    ":",
    "-",
    "{{.v}}",
    "{{.v}}",
    "{{.v}}",
];

/// Values that run `touch MARKER` if any shell context but one inert word reads them.
fn hostile_values(marker: &Path) -> Vec<String> {
    let m = marker.display();
    vec![
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("'$(touch {m})'"),
        format!("\"$(touch {m})\""),
        format!("'; touch {m}; '"),
        format!("\"; touch {m}; \""),
        format!("x'\ntouch {m}\n#"),
        format!(")\ntouch {m}\n("),
    ]
}

fn shells() -> Vec<&'static str> {
    let mut res = vec!["/bin/sh"];
    // bash too: a missing one fails, or (TOOLSMITH_ALLOW_SKIP=1) is left out, recorded once.
    static HAS_BASH: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *HAS_BASH
        .get_or_init(|| toolsmith_core::testkit::require_path("bash", Path::new("/bin/bash")))
    {
        res.push("/bin/bash");
    }
    res
}

/// Runs `script` with `shell -c` in `dir` (five seconds at most); returns whether `marker`
/// appeared.
fn runs_marker(shell: &str, script: &str, dir: &Path, marker: &Path) -> bool {
    let _ = std::fs::remove_file(marker);
    let status = Command::new("timeout")
        .args(["5", shell, "-c", script])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(status.is_ok(), "cannot run {shell}: {status:?}");
    marker.exists()
}

/// Renders `template` with every hostile value and runs it in every shell; panics on the
/// first value that ran.
fn assert_inert(template: &Template, source: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("pwned");
    for value in hostile_values(&marker) {
        let mut args = Map::new();
        args.insert("v".to_owned(), Value::String(value.clone()));
        let Ok(script) = template.render(&args) else {
            continue;
        };
        for shell in shells() {
            assert!(
                !runs_marker(shell, &script, dir.path(), &marker),
                "{shell} ran a value the checker accepted\ntemplate: {source:?}\nvalue: {value:?}\nrendered: {script:?}"
            );
        }
    }
}

/// The harness itself can see an execution: an unquoted value does run.
#[test]
fn the_harness_detects_a_value_that_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let marker = dir.path().join("pwned");
    let value = &hostile_values(&marker)[0];
    assert!(runs_marker(
        "/bin/sh",
        &format!("echo {value}"),
        dir.path(),
        &marker
    ));
}

/// Each template here fooled an earlier checker (a quote in a comment, a nested double quote
/// in `$(…)` inside double quotes); now each is refused, or renders inert.
#[test]
fn known_desynchronisations_are_refused_or_inert() {
    for source in [
        "echo hi # don't\necho \"Hello '{{.v}}'\"",
        "# it's\necho \"Hello '{{.v}}'\"",
        "echo \"$(echo \"{{.v}}\")\"",
        "echo \"$(case a in a) echo \"{{.v}}\";; esac)\"",
        "echo $(#'\n'{{.v}}')",
        "echo \"${v:-\"{{.v}}\"}\"",
        "echo $'\\'' {{.v}} '",
        "echo `echo \"` {{.v}} `\"`",
    ] {
        match Template::parse(source) {
            Ok(template) => assert_inert(&template, source),
            Err(e) => assert!(
                matches!(
                    e.code(),
                    "template_placeholder_in_quotes"
                        | "template_quoting_unclear"
                        | "template_unterminated_quote"
                ),
                "{source:?}: {e}"
            ),
        }
    }
    // The first one, the reported attack, is refused outright.
    assert!(Template::parse("echo hi # don't\necho \"Hello '{{.v}}'\"").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 400,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn whatever_the_checker_accepts_keeps_values_inert(
        pieces in proptest::collection::vec(proptest::sample::select(PIECES), 1..14)
    ) {
        let source: String = pieces.concat();
        if let Ok(template) = Template::parse(&source)
            && !template.placeholders().is_empty()
        {
            assert_inert(&template, &source);
        }
    }
}
