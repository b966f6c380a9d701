//! The write-back guard: what the scrubber leaves in place of a secret (`[REDACTED]`) is never
//! written back over the value it hid.
//!
//! Results of the data built-ins are scrubbed of the caller's exact platform secrets only
//! (`ResultSource::UserData`), so a note or a file holding one reads back with `[REDACTED]` in
//! its place. A model that edits what it read and writes the whole text back would store the
//! placeholder for good. Every write that replaces stored text (a record's fields, a whole
//! file) goes through [`check_overwrite`]: more placeholders after than before means a secret
//! would be lost, and the write is refused with the way to make it.

use toolsmith_scrub::REDACTED;

/// Refuses replacing `old` by `new` when `new` holds more `[REDACTED]` placeholders than `old`
/// did; `what` names the stored thing in the message ("the note 'n_1'", "'config/.env'").
///
/// # Errors
/// The message a model needs to write the change without destroying the hidden value.
pub fn check_overwrite(what: &str, old: &str, new: &str) -> Result<(), String> {
    let before = old.matches(REDACTED).count();
    let after = new.matches(REDACTED).count();
    if after <= before {
        return Ok(());
    }
    Err(format!(
        "refused: the new text of {what} holds {REDACTED} {after} time(s) where the stored text \
         has it {before} time(s). {REDACTED} is what the server shows in place of a secret it \
         hides; writing it back would replace the real value for good. Change only the part you \
         mean to change (edit_file's oldText/newText, or only the fields to update), or write the \
         real value"
    ))
}

#[cfg(test)]
mod tests {
    use super::check_overwrite;

    #[test]
    fn a_placeholder_written_over_a_value_is_refused_and_one_already_stored_is_not() {
        assert!(check_overwrite("x", "A=secret-value\nB=1", "A=[REDACTED]\nB=2").is_err());
        assert!(check_overwrite("x", "A=[REDACTED]\nB=1", "A=[REDACTED]\nB=2").is_ok());
        assert!(check_overwrite("x", "", "plain text").is_ok());
        let message = check_overwrite("the note 'n1'", "p", "[REDACTED]").unwrap_err();
        assert!(message.contains("the note 'n1'"), "{message}");
        assert!(message.contains("edit_file"), "{message}");
    }
}
