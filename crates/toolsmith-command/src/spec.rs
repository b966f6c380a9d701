//! The stored definition of a command tool (`CommandToolSpec`) and its registration-time checks.
//!
//! Parameters (the JSON Schema), name and status belong to the caller's tool model; this type
//! holds only what is particular to the `command` kind, including its scope (spec 001 §13: a
//! global tool, or one that exists for a single agent).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::deny::{Denied, check_denied};
use crate::template::{Template, TemplateError};

/// The timeout when a definition gives none.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 60;
/// The longest timeout a definition may ask for.
pub const MAX_TIMEOUT_SECONDS: u64 = 600;
/// The most environment variables a definition may set.
const MAX_ENV_VARS: usize = 64;
/// The longest environment value accepted, in bytes.
const MAX_ENV_VALUE_LEN: usize = 32 * 1024;
/// The longest working directory accepted, in bytes.
const MAX_WORKING_DIR_LEN: usize = 256;

/// Variables the sandbox sets itself, or that change how the shell, the loader or libc behave.
const RESERVED_ENV_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "SHELL",
    "USER",
    "LOGNAME",
    "IFS",
    "ENV",
    "BASH_ENV",
    "CDPATH",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "GLIBC_TUNABLES",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "RES_OPTIONS",
    "LOCALDOMAIN",
    "TMPDIR",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "NODE_OPTIONS",
];
/// Prefixes of variables refused for the same reasons (`LD_PRELOAD`, `BASH_FUNC_x%%` …).
const RESERVED_ENV_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_", "MALLOC_"];

/// The `command`-kind part of a tool definition. Its `Debug` names the env variables, never
/// their values (they are secrets).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandToolSpec {
    /// The shell template, with `{{.param}}` placeholders.
    pub command: String,
    /// A directory inside the sandbox's private workspace (relative, no `..`), created empty
    /// for each run; `None` runs in the workspace root `/tmp/work`.
    #[serde(
        default,
        alias = "working_dir",
        skip_serializing_if = "Option::is_none"
    )]
    pub working_dir: Option<String>,
    /// Wall-clock limit of one run, 1 to [`MAX_TIMEOUT_SECONDS`].
    #[serde(default = "default_timeout", alias = "timeout_seconds")]
    pub timeout_seconds: u64,
    /// Variables given to the command; values are secrets (encrypted at rest by the caller).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Whether the command may use the host's network.
    #[serde(default)]
    pub network: bool,
    /// `"global"` (the default: every agent of the owner sees the tool) or `"agent:<id>"` (only
    /// that agent sees and may call it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for CommandToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandToolSpec")
            .field("command", &self.command)
            .field("working_dir", &self.working_dir)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("env", &EnvNames(&self.env))
            .field("network", &self.network)
            .field("scope", &self.scope)
            .finish()
    }
}

/// An env map as `Debug` may show it: the names, each with `<redacted>` for its value.
pub struct EnvNames<'a>(pub &'a BTreeMap<String, String>);

impl std::fmt::Debug for EnvNames<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|name| (name, "<redacted>")))
            .finish()
    }
}

/// The longest agent id a scope may name.
const MAX_AGENT_ID_LEN: usize = 128;

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECONDS
}

/// One reason a [`CommandToolSpec`] is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecViolation {
    #[error("command: {0}")]
    Template(#[from] TemplateError),
    #[error("command: {0}")]
    Denied(#[from] Denied),
    #[error(
        "command: placeholder `{{{{.{name}}}}}` is the code `{program}` runs, so a caller's value would run as a script (refused like `eval`); pass the value as an argument of a fixed script instead, e.g. `sh -c 'printf \"%s\\n\" \"$1\"' _ {{{{.{name}}}}}`"
    )]
    PlaceholderIsCode { name: String, program: String },
    #[error("timeoutSeconds: {value} is out of range 1..={max}")]
    Timeout { value: u64, max: u64 },
    #[error("workingDir: `{value}` must be a relative path of plain names inside the workspace")]
    WorkingDir { value: String },
    #[error(
        "env: `{name}` is not a valid variable name (letters, digits, `_`, not starting with a digit)"
    )]
    EnvName { name: String },
    #[error(
        "env: `{name}` is reserved: it is set by the sandbox or changes how the shell or loader behave"
    )]
    EnvReserved { name: String },
    #[error("env: the value of `{name}` contains a NUL byte or is longer than {max} bytes")]
    EnvValue { name: String, max: usize },
    #[error("env: {count} variables; the maximum is {max}")]
    TooManyEnvVars { count: usize, max: usize },
    #[error(
        "scope: `{value}` must be \"global\" or \"agent:<id>\" (an id of letters, digits, `_`, `-`, `.`, `:`, at most 128)"
    )]
    Scope { value: String },
}

impl SpecViolation {
    /// A stable machine code for this violation.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Template(err) => err.code(),
            Self::Denied(_) => "command_denied",
            Self::PlaceholderIsCode { .. } => "placeholder_is_code",
            Self::Timeout { .. } => "timeout_out_of_range",
            Self::WorkingDir { .. } => "working_dir_invalid",
            Self::EnvName { .. } => "env_name_invalid",
            Self::EnvReserved { .. } => "env_name_reserved",
            Self::EnvValue { .. } => "env_value_invalid",
            Self::TooManyEnvVars { .. } => "env_too_many",
            Self::Scope { .. } => "scope_invalid",
        }
    }
}

/// Every reason a [`CommandToolSpec`] is refused (never empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    pub violations: Vec<SpecViolation>,
}

impl SpecError {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        "invalid_command_tool"
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid command tool: ")?;
        for (idx, violation) in self.violations.iter().enumerate() {
            if idx > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

impl CommandToolSpec {
    /// Checks the definition and returns the parsed template, or every violation found.
    pub fn validate(&self) -> Result<Template, SpecError> {
        let mut violations = Vec::new();
        let template = match Template::parse(&self.command) {
            Ok(template) => {
                if let Err(denied) = check_denied(&template.skeleton()) {
                    violations.push(SpecViolation::Denied(denied));
                }
                for (name, program) in template.code_placeholders() {
                    violations.push(SpecViolation::PlaceholderIsCode { name, program });
                }
                Some(template)
            }
            Err(err) => {
                violations.push(SpecViolation::Template(err));
                None
            }
        };
        if !(1..=MAX_TIMEOUT_SECONDS).contains(&self.timeout_seconds) {
            violations.push(SpecViolation::Timeout {
                value: self.timeout_seconds,
                max: MAX_TIMEOUT_SECONDS,
            });
        }
        if let Some(dir) = &self.working_dir
            && !is_valid_working_dir(dir)
        {
            violations.push(SpecViolation::WorkingDir { value: dir.clone() });
        }
        if self.env.len() > MAX_ENV_VARS {
            violations.push(SpecViolation::TooManyEnvVars {
                count: self.env.len(),
                max: MAX_ENV_VARS,
            });
        }
        for (name, value) in &self.env {
            if let Some(violation) = env_violation(name, value) {
                violations.push(violation);
            }
        }
        if let Some(scope) = &self.scope
            && parse_scope(scope).is_none()
        {
            violations.push(SpecViolation::Scope {
                value: scope.chars().take(200).collect(),
            });
        }
        match template {
            Some(template) if violations.is_empty() => Ok(template),
            _ => Err(SpecError { violations }),
        }
    }
}

impl CommandToolSpec {
    /// The agent this tool exists for, or `None` for a global tool (or an invalid scope, which
    /// [`CommandToolSpec::validate`] refuses).
    #[must_use]
    pub fn agent_scope(&self) -> Option<&str> {
        self.scope.as_deref().and_then(parse_scope).flatten()
    }
}

/// `Some(None)` for the global scope, `Some(Some(agent))` for a per-agent one, `None` if invalid.
fn parse_scope(scope: &str) -> Option<Option<&str>> {
    if scope == "global" {
        return Some(None);
    }
    let agent = scope.strip_prefix("agent:")?;
    let well_formed = !agent.is_empty()
        && agent.len() <= MAX_AGENT_ID_LEN
        && agent
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    well_formed.then_some(Some(agent))
}

/// Whether `dir` is a relative path of plain names (no `.`, `..`, empty parts or odd bytes).
pub(crate) fn is_valid_working_dir(dir: &str) -> bool {
    !dir.is_empty()
        && dir.len() <= MAX_WORKING_DIR_LEN
        && dir.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        })
}

/// Why an environment variable is refused, if it is.
pub(crate) fn env_violation(name: &str, value: &str) -> Option<SpecViolation> {
    let mut chars = name.chars();
    let well_formed = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128;
    if !well_formed {
        return Some(SpecViolation::EnvName {
            name: name.to_owned(),
        });
    }
    let upper = name.to_ascii_uppercase();
    if RESERVED_ENV_NAMES.contains(&upper.as_str())
        || RESERVED_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
    {
        return Some(SpecViolation::EnvReserved {
            name: name.to_owned(),
        });
    }
    if value.contains('\0') || value.len() > MAX_ENV_VALUE_LEN {
        return Some(SpecViolation::EnvValue {
            name: name.to_owned(),
            max: MAX_ENV_VALUE_LEN,
        });
    }
    None
}

#[cfg(test)]
mod tests;
