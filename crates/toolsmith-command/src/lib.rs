//! Shell-command tools: a `command` template with `{{.param}}` placeholders, rendered in one pass
//! with every value single-quoted, screened by deny patterns, and run inside a bubblewrap sandbox.
//!
//! The flow the integrator wires up for `ToolKind::Command`:
//!
//! 1. At registration: [`CommandToolSpec::validate`] (template parses, placeholders sit where
//!    quoting is sound, env names are safe, timeout in range, the template itself passes the deny
//!    patterns).
//! 2. At start: [`CommandSandbox::probe`] — if bubblewrap cannot run on this host, command tools
//!    are unavailable with the returned reason. There is no unsandboxed fallback.
//! 3. Per call: [`render`] the template with the call's arguments, [`check_denied`] the rendered
//!    command, then [`CommandSandbox::run`] it.
//!
//! This crate depends on no other Toolsmith crate; it knows nothing of the registry or the store.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod deny;
mod output;
mod quote;
mod sandbox;
mod spec;
mod template;

pub use deny::{Denied, DenyCategory, check_denied, normalize_for_matching};
pub use quote::shell_quote;
pub use sandbox::{
    CommandOutput, CommandSandbox, DEFAULT_OUTPUT_CAP, EXEC_ARGS, PROGRAM_DIR, PROXY_SOCKET,
    RunError, RunRequest, SandboxLimits, SandboxUnavailable,
};
pub use spec::{
    CommandToolSpec, DEFAULT_TIMEOUT_SECONDS, EnvNames, MAX_TIMEOUT_SECONDS, SpecError,
    SpecViolation,
};
pub use template::{MAX_RENDERED_LEN, RenderError, Template, TemplateError, render};
