//! Exit codes and the errors of the CLI itself, and how any error maps to a code.
//!
//! Scripts rely on these numbers (docs/cli.md, `toolsmith --help`): they never change meaning.

use toolsmith_core::ErrorKind;
use toolsmith_service::ServiceError;
use toolsmith_store::StoreError;

pub const SUCCESS: u8 = 0;
/// The tool ran but returned an error (`isError`).
pub const TOOL_ERROR: u8 = 1;
/// Usage error: clap's own exit code.
pub const USAGE: u8 = 2;
pub const VALIDATION: u8 = 3;
pub const NOT_FOUND: u8 = 4;
pub const CONFLICT: u8 = 5;
pub const FORBIDDEN: u8 = 6;
/// The tool ran, but its result was withheld (it could not be scrubbed): running it again
/// runs it twice.
pub const WITHHELD: u8 = 7;
pub const INTERNAL: u8 = 10;

/// Errors the CLI raises before or around the service.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input: an unreadable or malformed file, malformed JSON arguments.
    #[error("{0}")]
    Input(String),
    /// The database cannot be reached or used.
    #[error("{0}")]
    Store(String),
    /// Something named on the command line does not exist (other than a tool).
    #[error("{0}")]
    NotFound(String),
    /// The state of something named on the command line forbids the operation (a database
    /// to copy into that is not empty).
    #[error("{0}")]
    Conflict(String),
}

/// How an error is reported: exit code and the machine-readable code of `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class {
    pub exit: u8,
    pub code: &'static str,
}

/// The class of the first error in the chain that has one; internal otherwise.
pub fn classify(err: &anyhow::Error) -> Class {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<ServiceError>() {
            return of_service(e);
        }
        if cause.downcast_ref::<StoreError>().is_some() {
            return Class {
                exit: INTERNAL,
                code: "store_error",
            };
        }
        if cause
            .downcast_ref::<crate::settings::ConfigError>()
            .is_some()
        {
            return Class {
                exit: USAGE,
                code: "config_error",
            };
        }
        if let Some(e) = cause.downcast_ref::<CliError>() {
            return match e {
                CliError::Input(_) => Class {
                    exit: VALIDATION,
                    code: "validation_error",
                },
                CliError::Store(_) => Class {
                    exit: INTERNAL,
                    code: "store_error",
                },
                CliError::NotFound(_) => Class {
                    exit: NOT_FOUND,
                    code: "not_found",
                },
                CliError::Conflict(_) => Class {
                    exit: CONFLICT,
                    code: "conflict",
                },
            };
        }
    }
    Class {
        exit: INTERNAL,
        code: "internal_error",
    }
}

fn of_service(e: &ServiceError) -> Class {
    let exit = match e {
        ServiceError::Validation(_) | ServiceError::TooLarge(_) | ServiceError::NameTaken(_) => {
            VALIDATION
        }
        ServiceError::NotFound(_) => NOT_FOUND,
        ServiceError::RevisionConflict { .. } | ServiceError::InvalidState(_) => CONFLICT,
        ServiceError::Forbidden(_)
        | ServiceError::ConfirmationRequired(_)
        | ServiceError::LimitReached(_) => FORBIDDEN,
        ServiceError::Store(_) => INTERNAL,
    };
    Class {
        exit,
        code: e.code(),
    }
}

/// The exit code of a failed tool call: 1 when the tool ran and failed; the lifecycle codes
/// when the call was refused before it ran.
pub fn of_tool_error(kind: Option<ErrorKind>) -> u8 {
    match kind {
        Some(ErrorKind::InvalidArguments) => VALIDATION,
        Some(ErrorKind::NotFound) => NOT_FOUND,
        Some(ErrorKind::Denied | ErrorKind::RateLimited | ErrorKind::ApprovalRequired) => FORBIDDEN,
        Some(ErrorKind::Internal) => INTERNAL,
        Some(ErrorKind::ResultWithheld) => WITHHELD,
        _ => TOOL_ERROR,
    }
}

#[cfg(test)]
mod tests {
    use anyhow::Context as _;

    use super::*;

    #[test]
    fn classes_survive_context() {
        let err = anyhow::Error::new(ServiceError::RevisionConflict {
            expected: 1,
            actual: 2,
        })
        .context("updating");
        assert_eq!(
            classify(&err),
            Class {
                exit: CONFLICT,
                code: "revision_conflict"
            }
        );
        let err = Err::<(), _>(CliError::Input("bad".into()))
            .context("x")
            .unwrap_err();
        assert_eq!(classify(&err).exit, VALIDATION);
        assert_eq!(classify(&anyhow::anyhow!("boom")).exit, INTERNAL);
        assert_eq!(
            classify(&anyhow::Error::new(ServiceError::NotFound("x".into()))).exit,
            NOT_FOUND
        );
    }

    #[test]
    fn tool_errors() {
        assert_eq!(of_tool_error(Some(ErrorKind::ExecutionError)), TOOL_ERROR);
        assert_eq!(of_tool_error(Some(ErrorKind::Timeout)), TOOL_ERROR);
        assert_eq!(of_tool_error(Some(ErrorKind::InvalidArguments)), VALIDATION);
        assert_eq!(of_tool_error(Some(ErrorKind::NotFound)), NOT_FOUND);
        assert_eq!(of_tool_error(None), TOOL_ERROR);
        assert_eq!(of_tool_error(Some(ErrorKind::ResultWithheld)), WITHHELD);
    }
}
