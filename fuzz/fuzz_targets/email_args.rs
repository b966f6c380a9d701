//! The email tools' arguments (`toolsmith_builtins::email::fuzzing`): the recipients, subject and
//! body `send_email` builds a mail from (lettre's `Message`, formatted as sent), the `UID SEARCH`
//! line `search_emails` sends, a folder name, and the file name a received attachment is saved
//! under. Parts: the arguments (JSON), an attachment's name.
//!
//! Asserts: no panic; a mail's header section holds only the headers the tool writes, each line
//! ending in CRLF (no caller's text starts a header of its own); a search line holds no CR, LF
//! or NUL; a folder holds no control character; a saved attachment's name is one plain name
//! (no `/` or `\`, no control character, not hidden, never `..`).
#![no_main]

#[path = "../common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_builtins::email::fuzzing;

/// The headers a mail of `send_email` may have.
const HEADERS: &[&str] = &[
    "from",
    "to",
    "cc",
    "bcc",
    "subject",
    "message-id",
    "user-agent",
    "date",
    "mime-version",
    "content-type",
    "content-transfer-encoding",
];

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let name = common::part(&parts, 1);
    let saved = fuzzing::file_name(name);
    assert!(
        !saved.is_empty()
            && !saved.contains(['/', '\\'])
            && !saved.chars().any(char::is_control)
            && !saved.starts_with('.'),
        "{name:?} saved as {saved:?}"
    );
    let Ok(args) = serde_json::from_str::<Value>(common::part(&parts, 0)) else {
        return;
    };
    if let Ok(line) = fuzzing::search(&args) {
        assert!(!line.contains(['\r', '\n', '\0']), "{line:?}");
    }
    if let Ok(folder) = fuzzing::folder(&args) {
        assert!(!folder.chars().any(char::is_control), "{folder:?}");
    }
    let Ok(mail) = fuzzing::mail(&args, "Toolsmith <me@example.com>") else {
        return;
    };
    let end = mail
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "a mail without a body: {:?}",
                String::from_utf8_lossy(&mail)
            )
        });
    let head = String::from_utf8_lossy(mail.get(..end).unwrap_or_default()).into_owned();
    for line in head.split("\r\n") {
        assert!(
            !line.contains(['\r', '\n']),
            "a bare line break in {head:?}"
        );
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let header = line.split_once(':').map(|(n, _)| n.to_ascii_lowercase());
        assert!(
            header.as_deref().is_some_and(|h| HEADERS.contains(&h)),
            "a header the tool does not write: {line:?} in {head:?}"
        );
    }
});
