//! What a script writes with `console.log` / `warn` / `error`: kept as data in the result's
//! metadata, capped in total size, and never written to the server's own log (a script could
//! otherwise forge log lines with newlines or terminal escapes).
//!
//! Formatting of the arguments happens inside the sandbox (`support.js`), under the script's
//! limits; this side only receives one string per call and keeps what fits.

use std::cell::RefCell;

use toolsmith_core::{ConsoleEntry, ConsoleLevel};

/// The console of one execution.
pub(crate) struct ConsoleBuffer {
    inner: RefCell<Inner>,
}

struct Inner {
    entries: Vec<ConsoleEntry>,
    used: usize,
    max: usize,
    truncated: bool,
}

impl ConsoleBuffer {
    pub(crate) fn new(max_bytes: usize) -> Self {
        ConsoleBuffer {
            inner: RefCell::new(Inner {
                entries: Vec::new(),
                used: 0,
                max: max_bytes,
                truncated: false,
            }),
        }
    }

    /// Keeps as much of `message` as fits; returns whether later messages can still be kept.
    pub(crate) fn write(&self, level: ConsoleLevel, message: &str) -> bool {
        let mut inner = self.inner.borrow_mut();
        if inner.truncated {
            return false;
        }
        let room = inner.max - inner.used;
        if message.len() <= room {
            inner.used += message.len();
            inner.entries.push(ConsoleEntry {
                level,
                message: message.to_owned(),
            });
            return true;
        }
        let mut cut = room;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        let kept = message.get(..cut).unwrap_or_default();
        if !kept.is_empty() {
            inner.entries.push(ConsoleEntry {
                level,
                message: kept.to_owned(),
            });
        }
        inner.used = inner.max;
        inner.truncated = true;
        false
    }

    /// The entries kept, and whether anything was cut.
    pub(crate) fn take(&self) -> (Vec<ConsoleEntry>, bool) {
        let mut inner = self.inner.borrow_mut();
        (std::mem::take(&mut inner.entries), inner.truncated)
    }
}

/// The level of a `console` method name passed from `support.js`.
pub(crate) fn level(name: &str) -> ConsoleLevel {
    match name {
        "warn" => ConsoleLevel::Warn,
        "error" => ConsoleLevel::Error,
        _ => ConsoleLevel::Log,
    }
}

#[cfg(test)]
mod tests;
