//! Server-sent events as both providers stream them: events separated by a blank line, each
//! with an optional `event:` name and `data:` lines (joined with `\n`); comments and other
//! fields are skipped.

/// One event: its name (`""` when none) and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub name: String,
    pub data: String,
}

/// The events of a whole stream, in order.
pub(crate) fn events(text: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut name = String::new();
    let mut data: Vec<&str> = Vec::new();
    for line in text.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                out.push(Event {
                    name: std::mem::take(&mut name),
                    data: data.join("\n"),
                });
            }
            name.clear();
            data.clear();
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        } else if let Some(rest) = line.strip_prefix("event:") {
            rest.strip_prefix(' ').unwrap_or(rest).clone_into(&mut name);
        }
    }
    out
}
