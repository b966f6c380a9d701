//! `package_manager`: `pip` or `npm` in the command sandbox, into the caller's workspace
//! (`pip install --user` lands in `/tmp/work/.local`, which `execute_python` finds as the
//! user site; `npm install` in `/tmp/work/node_modules`). It needs the network, so the run
//! shares the host's network (not the egress guard) and the tool requires a person's approval
//! (`requiresConfirmation`); the other code tools never have the network.
//!
//! The command is parsed here, never by a shell: the manager, an allowed subcommand, and plain
//! words (package names, versions, flags).

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{Deps, ExecError, code_arg, program_missing, run_in, timeout_arg, timeout_schema};

/// The subcommands allowed per manager.
const PIP: &[&str] = &["install", "uninstall", "list", "show", "freeze", "download"];
const NPM: &[&str] = &[
    "install",
    "i",
    "uninstall",
    "remove",
    "list",
    "ls",
    "init",
    "view",
    "outdated",
    "update",
];
/// Most words in one command.
const MAX_WORDS: usize = 64;

pub fn definition() -> ToolDefinition {
    let mut d = ToolDefinition::new(
        "package_manager",
        "Run a package manager command (pip or npm) in the sandbox, installing into your \
         workspace: e.g. \"pip install requests\" (then import it from execute_python) or \
         \"npm install lodash\". Needs the network, so a person approves each run. Plain words \
         only: no shell syntax. At most 30 seconds.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "e.g. \"pip install requests==2.32.3\", \"pip list\", \"npm install lodash\"."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["package", "packages", "install", "pip", "npm", "dependency", "dependencies", "library", "module", "pypi", "requirements", "uninstall"]);
    d.requires_confirmation = true;
    d
}

pub(crate) async fn run(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let command = code_arg(args, "command", "e.g. \"pip install requests\"")?;
    let argv = parse(command)?;
    let timeout = timeout_arg(args, ctx)?;
    let ws = deps.workspace(ctx)?;
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let env = std::collections::BTreeMap::from([
        ("PIP_USER".to_owned(), "1".to_owned()),
        ("PIP_BREAK_SYSTEM_PACKAGES".to_owned(), "1".to_owned()),
        ("PIP_DISABLE_PIP_VERSION_CHECK".to_owned(), "1".to_owned()),
        ("PIP_NO_INPUT".to_owned(), "1".to_owned()),
        ("npm_config_update_notifier".to_owned(), "false".to_owned()),
        ("npm_config_fund".to_owned(), "false".to_owned()),
        ("npm_config_audit".to_owned(), "false".to_owned()),
    ]);
    let mut request = RunRequest::argv(&argv);
    request.env = &env;
    request.network = true;
    request.timeout = timeout;
    let out = run_in(deps, &ws, request).await?;
    if program_missing(&out) {
        return Err(ExecError::Unavailable(format!(
            "`{}` is not installed on this host (the sandbox uses the host's /usr/bin); install \
             it (apt-get install python3-pip, or nodejs and npm)",
            argv.first().copied().unwrap_or("the package manager")
        )));
    }
    Ok(out)
}

/// The argv for `command`: `python3 -m pip …` or `npm …`, or why it is refused.
pub(crate) fn parse(command: &str) -> Result<Vec<String>, ExecError> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.len() > MAX_WORDS {
        return Err(ExecError::Args(format!(
            "the command has {} words; at most {MAX_WORDS}",
            words.len()
        )));
    }
    let plain = |w: &str| {
        w.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    '-' | '_'
                        | '.'
                        | '='
                        | '<'
                        | '>'
                        | '~'
                        | '^'
                        | '@'
                        | '/'
                        | ':'
                        | ','
                        | '['
                        | ']'
                        | '+'
                        | '!'
                )
        })
    };
    if let Some(bad) = words.iter().find(|w| !plain(w)) {
        return Err(ExecError::Args(format!(
            "'{bad}' is not a plain word; package_manager takes a command like \"pip install \
             requests\" without shell syntax (no quotes, $, ;, |, & or backticks)"
        )));
    }
    let (manager, rest) = match words.split_first() {
        Some((manager, rest)) => (*manager, rest),
        None => return Err(ExecError::Args("'command' is empty".into())),
    };
    let sub = rest.first().copied().unwrap_or_default();
    let (allowed, mut argv) = match manager {
        "pip" | "pip3" => (
            PIP,
            vec!["python3".to_owned(), "-m".to_owned(), "pip".to_owned()],
        ),
        "npm" => (NPM, vec!["npm".to_owned()]),
        other => {
            return Err(ExecError::Args(format!(
                "'{other}' is not a supported package manager; start the command with pip or npm"
            )));
        }
    };
    if !allowed.contains(&sub) {
        return Err(ExecError::Args(format!(
            "'{manager} {sub}' is not allowed; use one of: {}",
            allowed
                .iter()
                .map(|s| format!("{manager} {s}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if rest.iter().any(|w| {
        w.starts_with("--index-url")
            || w.starts_with("--prefix")
            || w.starts_with("--target")
            || w.starts_with("--root")
            || w == &"-g"
            || w.starts_with("--global")
    }) {
        return Err(ExecError::Args(
            "options that install outside your workspace or change the package index \
             (--target, --prefix, --root, --index-url, -g) are not allowed"
                .into(),
        ));
    }
    argv.extend(rest.iter().map(|w| (*w).to_owned()));
    Ok(argv)
}
