//! The process's log: stderr only, at the level of `TOOLSMITH_LOG`, else `RUST_LOG`, else `warn`,
//! and never a request's payload, whatever the level.
//!
//! Toolsmith's own events (targets `toolsmith*`) carry names, ids, sizes and error codes by
//! construction, and are printed as they are. Events of the libraries underneath are not under
//! our control: at `debug` rmcp logs every JSON-RPC request and response with its arguments
//! (`?request`, `?result`), and at `warn` every error answer (`?error`, whose message may quote
//! an invalid argument). For those, [`ThirdPartyRedacted`] prints the level, the target and the
//! message, but
//! - a field that holds a payload ([`PAYLOAD_FIELDS`]: `request`, `result`, `error`,
//!   `notification` …) is replaced by its size, `request=<redacted: 412 bytes>`;
//! - in the message and in the other fields, quoted text (`"…"`, `` `…` ``, `'…'`) is blanked to
//!   `"…"`: that is where serde and most libraries put the value they could not accept.

use std::fmt::{self, Write as _};
use std::io::IsTerminal as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::output;

/// Fields of other crates' events that carry a message's content: only their size is logged.
pub const PAYLOAD_FIELDS: &[&str] = &[
    "request",
    "result",
    "response",
    "error",
    "notification",
    "message",
    "evt",
    "event",
    "params",
    "arguments",
    "args",
    "body",
    "data",
    "payload",
    "value",
    "peer_info",
    "reason",
    "quit_reason",
];

/// Installs the subscriber (once, at start).
pub fn init() {
    let spec = ["TOOLSMITH_LOG", "RUST_LOG"]
        .into_iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.trim().is_empty()));
    let filter = match spec {
        Some(spec) => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            output::stderr(&format!(
                "warning: ignoring the log filter '{spec}': {e}; logging warnings only\n"
            ));
            EnvFilter::new("warn")
        }),
        None => EnvFilter::new("warn"),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .event_format(ThirdPartyRedacted::default())
        .init();
}

/// Whether `target` is Toolsmith's own code (printed as is).
fn is_ours(target: &str) -> bool {
    target == "toolsmith" || target.starts_with("toolsmith_") || target.starts_with("toolsmith::")
}

/// The event format: the default one for Toolsmith's events, a payload-free one for the rest.
#[derive(Default)]
pub struct ThirdPartyRedacted {
    ours: Format<Full, SystemTime>,
}

impl<S, N> FormatEvent<S, N> for ThirdPartyRedacted
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        if is_ours(meta.target()) {
            return self.ours.format_event(ctx, writer, event);
        }
        SystemTime.format_time(&mut writer)?;
        write!(writer, " {:>5} {}:", meta.level(), meta.target())?;
        let mut line = String::new();
        event.record(&mut Redactor {
            out: &mut line,
            seen_message: false,
        });
        writeln!(writer, "{line}")
    }
}

/// Writes an event's fields without their payloads (see the module comment).
struct Redactor<'a> {
    out: &'a mut String,
    seen_message: bool,
}

impl Visit for Redactor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = format!("{value:?}");
        let name = field.name();
        // The event's own text comes first as `message`; a second `message` is a field.
        if name == "message" && !self.seen_message {
            self.seen_message = true;
            let _ = write!(self.out, " {}", blank_quoted(&text));
        } else if PAYLOAD_FIELDS.contains(&name) {
            let _ = write!(self.out, " {name}=<redacted: {} bytes>", text.len());
        } else {
            let _ = write!(self.out, " {name}={}", blank_quoted(&text));
        }
    }
}

/// `text` with the content of every quoted span (`"…"`, `` `…` ``, `'…'`) replaced by `…`.
/// An unclosed quote blanks the rest of the text.
pub fn blank_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match open {
            None => {
                out.push(c);
                if matches!(c, '"' | '`' | '\'') && !is_apostrophe(&out) {
                    open = Some(c);
                    out.push('…');
                }
            }
            Some(quote) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == quote {
                    out.push(c);
                    open = None;
                }
            }
        }
    }
    out
}

/// A `'` right after a letter is an apostrophe (`don't`, `server's`), not a quote.
fn is_apostrophe(out: &str) -> bool {
    let mut chars = out.chars().rev();
    chars.next() == Some('\'') && chars.next().is_some_and(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_are_blanked_and_words_kept() {
        assert_eq!(
            blank_quoted(r#"invalid type: string "sk-live-123", expected u32"#),
            r#"invalid type: string "…", expected u32"#
        );
        assert_eq!(
            blank_quoted("invalid type: integer `424242`, expected a string"),
            "invalid type: integer `…`, expected a string"
        );
        assert_eq!(
            blank_quoted(r#"message: "a \"quoted\" secret" and more"#),
            r#"message: "…" and more"#
        );
        assert_eq!(
            blank_quoted("tool 'work2' isn't here"),
            "tool '…' isn't here"
        );
        assert_eq!(blank_quoted(r#"unclosed "sk-live"#), r#"unclosed "…"#);
        assert_eq!(blank_quoted("client initialized"), "client initialized");
    }

    #[test]
    fn only_toolsmith_targets_are_ours() {
        assert!(is_ours("toolsmith"));
        assert!(is_ours("toolsmith_server::mcp::handler"));
        assert!(is_ours("toolsmith::commands::serve"));
        assert!(!is_ours("rmcp::service"));
        assert!(!is_ours("toolsmithery"));
        assert!(!is_ours("hyper::proto"));
    }
}

/// Installs the panic hook: a panic is logged with its thread and source location and **never
/// its message**, which may quote what a caller or a tool sent (a string slice cut inside a
/// character prints the whole string). Called once, at start, after [`init`].
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let thread = thread.name().unwrap_or("unnamed");
        let location = info.location().map_or_else(
            || "an unknown location".to_owned(),
            |at| format!("{}:{}:{}", at.file(), at.line(), at.column()),
        );
        tracing::error!(
            target: "toolsmith::panic",
            thread,
            location = %location,
            "a panic at {location} (its message is not logged: it may hold what a caller sent); \
             the call or task it hit failed, and the server goes on"
        );
    }));
}

/// The line [`install_panic_hook`] logs, for its test: the location and never the payload.
#[cfg(test)]
mod panic_tests {
    #[test]
    fn the_panic_hook_names_the_location_and_never_the_message() {
        use std::sync::{Arc, Mutex};
        let seen = Arc::new(Mutex::new(String::new()));
        let writer = {
            let seen = seen.clone();
            move || SeenWriter(seen.clone())
        };
        let subscriber = tracing_subscriber::fmt()
            .with_writer(writer)
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            super::install_panic_hook();
            let caught = std::panic::catch_unwind(|| {
                let text = "secret-argument-\u{20ac}";
                #[allow(clippy::string_slice)]
                let cut = &text[..text.len() - 1];
                cut.len()
            });
            let _ = std::panic::take_hook();
            assert!(caught.is_err());
        });
        let seen = seen.lock().unwrap().clone();
        assert!(seen.contains("logging.rs"), "{seen}");
        assert!(!seen.contains("secret-argument"), "{seen}");
    }

    struct SeenWriter(std::sync::Arc<std::sync::Mutex<String>>);

    impl std::io::Write for SeenWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut seen) = self.0.lock() {
                seen.push_str(&String::from_utf8_lossy(buf));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
