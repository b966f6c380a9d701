//! `package_manager`: `pip` or `npm` in the command sandbox, into the caller's workspace
//! (`pip install --user` lands in `/tmp/work/.local`, which `execute_python` finds as the
//! user site; `npm install` in `/tmp/work/node_modules`). It needs the package registries, so
//! the tool requires a person's approval (`requiresConfirmation`); the other code tools never
//! have a network.
//!
//! What the person approving sees is what runs (issue 31): the arguments, and nothing in the
//! workspace changes what they mean.
//! - **No install-time code** unless the call says `allowScripts: true` (shown in the approval
//!   and bound to it): npm runs with `--ignore-scripts`, pip with `--only-binary=:all:` (no
//!   `setup.py` of an sdist) and without local folders, archives or editable installs, which
//!   pip builds whatever `--only-binary` says.
//! - **Only the default registries** (PyPI, the npm registry): index, registry, proxy and
//!   config options are refused on the command line and in requirement files alike (each file
//!   named with `-r`/`-c` is read here, nested ones too, and a refused line is named); direct
//!   URL, VCS and GitHub-shorthand requirements are refused; no configuration file of the
//!   workspace is read (`PIP_CONFIG_FILE=/dev/null`; a `.npmrc` refuses the run; git, which npm
//!   may start, reads no `~/.gitconfig`).
//! - **Only the registries, by the kernel too**: the run has a network namespace of its own
//!   with no route out; its one way out is the registry proxy ([`registry_proxy`]: HTTPS
//!   tunnels to the operator's `package_registries` only, resolved by the egress guard), so
//!   neither the manager nor, with `allowScripts: true`, a script reaches the host's loopback,
//!   a private network or a metadata address.
//!
//! The command is parsed here, never by a shell: the manager, an allowed subcommand, allowed
//! options and plain words (package names, versions).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::object;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{
    Deps, ExecError, code_arg, program_missing, registry_proxy, run_in, timeout_arg, timeout_schema,
};
use crate::workspace::{Workspace, WsPath};

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
/// pip's options that take no value and change neither where packages come from nor what runs.
const PIP_FLAGS: &[&str] = &[
    "-U",
    "--upgrade",
    "--no-deps",
    "--pre",
    "--force-reinstall",
    "-I",
    "--ignore-installed",
    "--no-cache-dir",
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "-y",
    "--yes",
    "--user",
    "--dry-run",
    "--prefer-binary",
    "--require-hashes",
    "--no-color",
    "-o",
    "--outdated",
    "-u",
    "--uptodate",
    "--not-required",
    "-l",
    "--local",
    "--all",
    "-f",
    "--files",
    "--exclude-editable",
    "--include-editable",
];
/// pip's options with a value, allowed as `--name=value` (the value a plain word).
const PIP_VALUED: &[&str] = &[
    "--upgrade-strategy",
    "--format",
    "--dest",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--only-binary",
];
/// npm's options allowed (`--name` or `--name=value`).
const NPM_OPTIONS: &[&str] = &[
    "--save",
    "-S",
    "--save-prod",
    "-P",
    "--save-dev",
    "-D",
    "--save-optional",
    "-O",
    "--save-peer",
    "--save-exact",
    "-E",
    "--no-save",
    "--omit",
    "--include",
    "--production",
    "--legacy-peer-deps",
    "--strict-peer-deps",
    "--no-package-lock",
    "--package-lock-only",
    "--dry-run",
    "--json",
    "--long",
    "-l",
    "--parseable",
    "-p",
    "--all",
    "-a",
    "--depth",
    "--yes",
    "-y",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    "--prefer-online",
    "--offline",
    "--silent",
    "-s",
    "--quiet",
    "-q",
    "--loglevel",
    "--force",
];
/// Options a requirement file may hold (pip's own list is longer; the rest choose an index,
/// links, hosts or build settings, or run a build).
const REQUIREMENT_FILE_OPTIONS: &[&str] = &["--pre", "--prefer-binary", "--require-hashes"];
/// A requirement file and everything it names may be at most this large, each.
const MAX_REQUIREMENT_FILE_BYTES: u64 = 1024 * 1024;
/// Most requirement files one command reads (nested ones included).
const MAX_REQUIREMENT_FILES: usize = 32;
/// Archive suffixes pip installs from a local file (an sdist it would build).
const SDIST_SUFFIXES: &[&str] = &[
    ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz",
];

pub fn definition() -> ToolDefinition {
    let mut d = ToolDefinition::new(
        "package_manager",
        "Run a package manager command (pip or npm) in the sandbox, installing into your \
         workspace: e.g. \"pip install requests\" (then import it from execute_python) or \
         \"npm install lodash\". Needs the network, so a person approves each run. Plain words \
         only: no shell syntax. Installs come from PyPI or the npm registry only, and install \
         scripts (npm lifecycle scripts, building pip source packages or local folders) do not \
         run unless allowScripts is true, which the person approving sees. At most 30 seconds.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "e.g. \"pip install requests==2.32.3\", \"pip install -r requirements.txt\", \"pip list\", \"npm install lodash\"."},
                "allowScripts": {"type": "boolean", "default": false, "description": "Let the install run the packages' own code: npm lifecycle scripts (preinstall, install, postinstall, prepare) and pip builds of source packages, local folders and editable installs. Like the install, they reach the package registries and nothing else. Off by default; ask for it only when an install needs it."},
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
    let allow_scripts = match args.get("allowScripts") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(allow)) => *allow,
        Some(_) => {
            return Err(ExecError::Args(
                "'allowScripts' must be true or false".into(),
            ));
        }
    };
    let plan = parse_plan(command, allow_scripts)?;
    let timeout = timeout_arg(args, ctx)?;
    let ws = deps.workspace(ctx)?;
    check_workspace(&ws, &plan)?;
    let program = plan.argv.first().cloned().unwrap_or_default();
    let mut env = BTreeMap::from([
        ("PIP_USER".to_owned(), "1".to_owned()),
        ("PIP_BREAK_SYSTEM_PACKAGES".to_owned(), "1".to_owned()),
        ("PIP_DISABLE_PIP_VERSION_CHECK".to_owned(), "1".to_owned()),
        ("PIP_NO_INPUT".to_owned(), "1".to_owned()),
        // No pip.conf of the workspace (HOME is the workspace) or elsewhere is read.
        ("PIP_CONFIG_FILE".to_owned(), "/dev/null".to_owned()),
        ("npm_config_update_notifier".to_owned(), "false".to_owned()),
        ("npm_config_fund".to_owned(), "false".to_owned()),
        ("npm_config_audit".to_owned(), "false".to_owned()),
        ("npm_config_userconfig".to_owned(), "/dev/null".to_owned()),
        (
            "npm_config_registry".to_owned(),
            "https://registry.npmjs.org/".to_owned(),
        ),
        (
            "npm_config_ignore_scripts".to_owned(),
            (!allow_scripts).to_string(),
        ),
        // git (which npm starts for a git dependency) reads no configuration file.
        ("GIT_CONFIG_NOSYSTEM".to_owned(), "1".to_owned()),
        ("GIT_CONFIG_GLOBAL".to_owned(), "/dev/null".to_owned()),
    ]);
    // The run has no network of its own (issue 31): its one way out is the registry proxy,
    // reached through a relay on the sandbox's loopback. Without registries configured it has
    // no way out at all.
    let proxy = match &deps.registries {
        Some(registries) => Some(registries.open().map_err(|e| {
            ExecError::Run(format!(
                "the package registry proxy could not start: {e}; nothing was run"
            ))
        })?),
        None => None,
    };
    let line = match &proxy {
        Some(_) => {
            env.extend(registry_proxy::proxy_env());
            registry_proxy::relayed(plan.argv.clone())
        }
        None => plan.argv.clone(),
    };
    let argv: Vec<&str> = line.iter().map(String::as_str).collect();
    let mut request = RunRequest::argv(&argv);
    request.env = &env;
    request.proxy_socket = proxy.as_ref().map(|proxy| proxy.socket());
    request.timeout = timeout;
    let mut out = run_in(deps, &ws, request).await?;
    drop(proxy);
    if program_missing(&out) {
        return Err(ExecError::Unavailable(format!(
            "`{program}` is not installed on this host (the sandbox uses the host's /usr/bin); \
             install it (apt-get install python3-pip, or nodejs and npm)"
        )));
    }
    object::set(
        &mut out,
        "scripts",
        json!(if allow_scripts { "allowed" } else { "off" }),
    );
    Ok(out)
}

/// Which package manager a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Manager {
    Pip,
    Npm,
}

/// A checked command: the argv to run, and the requirement files it names (workspace paths,
/// read and checked before the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) manager: Manager,
    pub(crate) argv: Vec<String>,
    pub(crate) requirement_files: Vec<String>,
    pub(crate) allow_scripts: bool,
}

/// The plan for `command`, or why it is refused.
pub(crate) fn parse_plan(command: &str, allow_scripts: bool) -> Result<Plan, ExecError> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.len() > MAX_WORDS {
        return Err(ExecError::Args(format!(
            "the command has {} words; at most {MAX_WORDS}",
            words.len()
        )));
    }
    if let Some(bad) = words.iter().find(|w| !is_plain(w)) {
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
    let (kind, allowed, mut argv) = match manager {
        "pip" | "pip3" => (
            Manager::Pip,
            PIP,
            vec!["python3".to_owned(), "-m".to_owned(), "pip".to_owned()],
        ),
        "npm" => (Manager::Npm, NPM, vec!["npm".to_owned()]),
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
    if let Some(word) = rest.iter().find(|w| leaves_workspace(w)) {
        return Err(ExecError::Args(format!(
            "'{word}': options that install outside your workspace (--target, --prefix, --root, \
             -g, --global) are not allowed"
        )));
    }
    let mut requirement_files = Vec::new();
    let words = rest.get(1..).unwrap_or_default();
    match kind {
        Manager::Pip => pip_words(words, sub, allow_scripts, &mut requirement_files)?,
        Manager::Npm => npm_words(words, sub, allow_scripts)?,
    }
    argv.extend(rest.iter().map(|w| (*w).to_owned()));
    if !allow_scripts {
        match kind {
            Manager::Pip if matches!(sub, "install" | "download") => {
                argv.push("--only-binary=:all:".to_owned());
            }
            Manager::Npm if matches!(sub, "install" | "i" | "update" | "uninstall" | "remove") => {
                argv.push("--ignore-scripts".to_owned());
            }
            _ => {}
        }
    }
    Ok(Plan {
        manager: kind,
        argv,
        requirement_files,
        allow_scripts,
    })
}

fn is_plain(word: &str) -> bool {
    word.chars().all(|c| {
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
}

fn leaves_workspace(word: &str) -> bool {
    word.starts_with("--prefix")
        || word.starts_with("--target")
        || word.starts_with("-t")
        || word.starts_with("--root")
        || word == "-g"
        || word.starts_with("--global")
        || word.starts_with("--location")
}

/// What an option of a manager's command line or requirement file may not be, in one line.
const INDEX_RULE: &str = "package_manager installs only from PyPI or the npm registry, with no \
                          index, registry, proxy, host or config option";

/// Checks pip's words after the subcommand, collecting the requirement files named.
fn pip_words(
    words: &[&str],
    sub: &str,
    allow_scripts: bool,
    files: &mut Vec<String>,
) -> Result<(), ExecError> {
    let mut iter = words.iter().copied();
    while let Some(word) = iter.next() {
        let file_option = ["-r", "--requirement", "-c", "--constraint"]
            .iter()
            .find_map(|opt| {
                if word == *opt {
                    Some(None)
                } else if let Some(value) = word.strip_prefix(&format!("{opt}=")) {
                    Some(Some(value))
                } else if opt.len() == 2
                    && let Some(value) = word.strip_prefix(*opt)
                    && !value.is_empty()
                {
                    Some(Some(value))
                } else {
                    None
                }
            });
        if let Some(value) = file_option {
            let file = match value {
                Some(file) => file,
                None => iter.next().ok_or_else(|| {
                    ExecError::Args(format!("'{word}' needs a file of your workspace after it"))
                })?,
            };
            files.push(file.to_owned());
            continue;
        }
        if matches!(word, "-e" | "--editable") || word.starts_with("--editable=") {
            if !allow_scripts {
                return Err(scripts_needed(
                    word,
                    "an editable install builds the project",
                ));
            }
            if word.contains('=') {
                continue;
            }
            let target = iter
                .next()
                .ok_or_else(|| ExecError::Args(format!("'{word}' needs a folder after it")))?;
            check_pip_requirement(target, allow_scripts, None)?;
            continue;
        }
        if word.starts_with("--no-binary") && allow_scripts {
            continue;
        }
        if word.starts_with('-') {
            let name = word.split('=').next().unwrap_or(word);
            let valued = word.contains('=') && PIP_VALUED.contains(&name);
            if PIP_FLAGS.contains(&word) || valued {
                continue;
            }
            return Err(ExecError::Args(format!(
                "pip option '{word}' is not allowed: {INDEX_RULE}, and no build unless \
                 allowScripts is true. Allowed: {}, {} (as --name=value), -r/-c FILE",
                PIP_FLAGS.join(" "),
                PIP_VALUED.join(" ")
            )));
        }
        if matches!(sub, "install" | "download") {
            check_pip_requirement(word, allow_scripts, None)?;
        }
    }
    Ok(())
}

/// Why `word` needs `allowScripts`.
fn scripts_needed(word: &str, why: &str) -> ExecError {
    ExecError::Args(format!(
        "'{word}': {why}, which runs the package's own code; set allowScripts to true if it \
         must (the person approving sees it), or install a published wheel by name"
    ))
}

/// A requirement (a command-line word, or a requirement file's line without its markers and
/// options): a name from the index, with extras and versions; a local folder or archive only
/// with `allowScripts` (pip builds them); never a URL. `at` names the file line.
fn check_pip_requirement(
    requirement: &str,
    allow_scripts: bool,
    at: Option<&str>,
) -> Result<(), ExecError> {
    let place = at.map(|at| format!(" ({at})")).unwrap_or_default();
    let lower = requirement.to_ascii_lowercase();
    if lower.contains("://") || lower.contains('@') || lower.starts_with("git+") {
        return Err(ExecError::Args(format!(
            "'{requirement}'{place}: direct URL and VCS requirements are refused; \
             {INDEX_RULE}: name the package (e.g. requests==2.32.3)"
        )));
    }
    let local = requirement.contains('/')
        || requirement.starts_with('.')
        || SDIST_SUFFIXES.iter().any(|suffix| lower.ends_with(suffix));
    if local && !allow_scripts {
        return Err(ExecError::Args(format!(
            "'{requirement}'{place}: pip builds a local folder or archive, which runs the \
             package's own code; set allowScripts to true if it must (the person approving \
             sees it), or install a published wheel by name"
        )));
    }
    Ok(())
}

/// Checks npm's words after the subcommand.
fn npm_words(words: &[&str], sub: &str, allow_scripts: bool) -> Result<(), ExecError> {
    for word in words {
        if word.starts_with('-') {
            let name = word.split('=').next().unwrap_or(word);
            if NPM_OPTIONS.contains(&name) {
                continue;
            }
            return Err(ExecError::Args(format!(
                "npm option '{word}' is not allowed: {INDEX_RULE}, and install scripts are set \
                 by allowScripts. Allowed: {}",
                NPM_OPTIONS.join(" ")
            )));
        }
        if sub == "init" && !allow_scripts {
            return Err(scripts_needed(
                word,
                "`npm init <initializer>` downloads and runs a create- package",
            ));
        }
        let lower = word.to_ascii_lowercase();
        let scoped = lower.starts_with('@') && lower.matches('/').count() == 1;
        let local = lower.starts_with("./") || lower.starts_with("../") || lower == ".";
        let remote = lower.contains(':') || (lower.contains('/') && !scoped && !local);
        if remote {
            return Err(ExecError::Args(format!(
                "'{word}': URL, git, GitHub and alias specs are refused; {INDEX_RULE}: name the \
                 package (e.g. lodash@4.17.21 or @scope/name)"
            )));
        }
    }
    Ok(())
}

/// What a run depends on in the workspace: no `.npmrc` for npm, and every requirement file
/// (nested ones too) filtered like the command line.
fn check_workspace(ws: &Workspace, plan: &Plan) -> Result<(), ExecError> {
    if plan.manager == Manager::Npm {
        let npmrc = ws.path(".npmrc")?;
        if ws.stat(&npmrc).is_ok() {
            return Err(ExecError::Args(
                "your workspace has a .npmrc, which could point npm at another registry or \
                 program; package_manager does not read it: delete or rename it (delete_file, \
                 move_file) and run again"
                    .into(),
            ));
        }
    }
    if plan.manager == Manager::Npm {
        check_npm_manifests(ws)?;
    }
    let mut queue: Vec<WsPath> = Vec::new();
    for file in &plan.requirement_files {
        queue.push(requirement_path(ws, None, file)?);
    }
    let mut seen: Vec<WsPath> = Vec::new();
    while let Some(path) = queue.pop() {
        if seen.contains(&path) {
            continue;
        }
        if seen.len() == MAX_REQUIREMENT_FILES {
            return Err(ExecError::Args(format!(
                "the requirement files name more than {MAX_REQUIREMENT_FILES} files; merge them"
            )));
        }
        let bytes = ws.read(&path, MAX_REQUIREMENT_FILE_BYTES)?;
        let text = String::from_utf8_lossy(&bytes);
        for nested in check_requirement_file(&path.to_string(), &text, plan.allow_scripts)? {
            queue.push(requirement_path(ws, Some(&path), &nested)?);
        }
        seen.push(path);
    }
    Ok(())
}

/// The npm registry every package comes from.
const NPM_REGISTRY: &str = "https://registry.npmjs.org/";

/// Refuses a `package.json` dependency or a `package-lock.json` `resolved` URL at the
/// workspace root that would have npm fetch from another host (a URL, git, a GitHub
/// shorthand); local `file:`/`link:` specs and `npm:` aliases (the registry) are fine.
fn check_npm_manifests(ws: &Workspace) -> Result<(), ExecError> {
    let read = |name: &str| -> Result<Option<Value>, ExecError> {
        let path = ws.path(name)?;
        if ws.stat(&path).is_err() {
            return Ok(None);
        }
        let bytes = ws.read(&path, MAX_REQUIREMENT_FILE_BYTES)?;
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            ExecError::Args(format!(
                "{name} is not valid JSON ({e}); fix it before installing"
            ))
        })
    };
    if let Some(manifest) = read("package.json")? {
        for section in [
            "dependencies",
            "devDependencies",
            "optionalDependencies",
            "peerDependencies",
        ] {
            let Some(deps) = manifest.get(section).and_then(Value::as_object) else {
                continue;
            };
            for (name, spec) in deps {
                let spec = spec.as_str().unwrap_or_default();
                if npm_spec_is_remote(spec) {
                    return Err(ExecError::Args(format!(
                        "package.json {section}.{name} is '{spec}', which npm would fetch from \
                         another host; {INDEX_RULE}: use a version range from the registry \
                         (e.g. \"^1.2.0\")"
                    )));
                }
            }
        }
    }
    if let Some(lock) = read("package-lock.json")? {
        let entries = lock
            .get("packages")
            .and_then(Value::as_object)
            .into_iter()
            .flatten();
        for (name, entry) in entries {
            let Some(resolved) = entry.get("resolved").and_then(Value::as_str) else {
                continue;
            };
            let remote = resolved.contains("://") || resolved.starts_with("git");
            if remote && !resolved.starts_with(NPM_REGISTRY) {
                return Err(ExecError::Args(format!(
                    "package-lock.json resolves '{name}' to '{resolved}', not the npm registry; \
                     {INDEX_RULE}: delete package-lock.json (npm writes a new one)"
                )));
            }
        }
    }
    Ok(())
}

/// Whether a `package.json` dependency spec names something off the registry.
fn npm_spec_is_remote(spec: &str) -> bool {
    let lower = spec.trim().to_ascii_lowercase();
    let local_or_alias = ["file:", "link:", "npm:", "workspace:"]
        .iter()
        .any(|prefix| lower.starts_with(prefix));
    !local_or_alias && (lower.contains(':') || lower.contains('/'))
}

/// The workspace path of a requirement file named in `from` (relative to its folder), or on
/// the command line (relative to the workspace root).
fn requirement_path(
    ws: &Workspace,
    from: Option<&WsPath>,
    file: &str,
) -> Result<WsPath, ExecError> {
    if file.contains("://") {
        return Err(ExecError::Args(format!(
            "requirement file '{file}' is a URL; {INDEX_RULE}: put the file in your workspace"
        )));
    }
    let joined = match from.and_then(WsPath::parent) {
        Some(parent) if !file.starts_with('/') && !parent.is_root() => {
            format!("{parent}/{file}")
        }
        _ => file.to_owned(),
    };
    Ok(ws.path(&joined)?)
}

/// Checks one requirement file's text as pip reads it (continuations joined, comments
/// dropped), naming the line of the first refused option or requirement; returns the files it
/// names with `-r`/`-c`.
pub(crate) fn check_requirement_file(
    name: &str,
    text: &str,
    allow_scripts: bool,
) -> Result<Vec<String>, ExecError> {
    let mut nested = Vec::new();
    let mut logical = String::new();
    let mut first_line = 0;
    for (idx, raw) in text.lines().enumerate() {
        if logical.is_empty() {
            first_line = idx + 1;
        }
        if let Some(head) = raw.strip_suffix('\\') {
            logical.push_str(head);
            logical.push(' ');
            continue;
        }
        logical.push_str(raw);
        let line = std::mem::take(&mut logical);
        check_requirement_line(name, first_line, &line, allow_scripts, &mut nested)?;
    }
    if !logical.is_empty() {
        check_requirement_line(name, first_line, &logical, allow_scripts, &mut nested)?;
    }
    Ok(nested)
}

fn check_requirement_line(
    name: &str,
    number: usize,
    line: &str,
    allow_scripts: bool,
    nested: &mut Vec<String>,
) -> Result<(), ExecError> {
    let at = format!("{name} line {number}");
    // A comment starts at a `#` at the start of the line or after whitespace.
    let content = match line.char_indices().find(|&(i, c)| {
        c == '#'
            && (i == 0
                || line
                    .get(..i)
                    .is_some_and(|b| b.ends_with(char::is_whitespace)))
    }) {
        Some((i, _)) => line.get(..i).unwrap_or(line),
        None => line,
    };
    let content = content.trim();
    if content.is_empty() {
        return Ok(());
    }
    let refuse = |what: &str| {
        ExecError::Args(format!(
            "{at}: '{what}' is not allowed in a requirement file: {INDEX_RULE} (the command \
             line's rules hold for requirement files too); remove the line"
        ))
    };
    if content.contains("${") {
        return Err(refuse(content));
    }
    if content.starts_with('-') {
        let mut words = content.split_whitespace();
        let option = words.next().unwrap_or_default();
        let (flag, inline) = match option.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            // `-rfile`: the flag is the dash and one character, which may be more than one byte.
            None if !option.starts_with("--") => match option
                .char_indices()
                .nth(2)
                .and_then(|(at, _)| option.split_at_checked(at))
            {
                Some((flag, value)) => (flag, Some(value)),
                None => (option, None),
            },
            None => (option, None),
        };
        if matches!(flag, "-r" | "--requirement" | "-c" | "--constraint") {
            let file = inline
                .map(str::to_owned)
                .or_else(|| words.next().map(str::to_owned))
                .ok_or_else(|| refuse(content))?;
            nested.push(file);
            return Ok(());
        }
        if matches!(flag, "-e" | "--editable") {
            if !allow_scripts {
                return Err(scripts_needed(
                    &format!("{at}: {content}"),
                    "an editable install builds the project",
                ));
            }
            let target = inline.or_else(|| words.next()).unwrap_or_default();
            return check_pip_requirement(target, allow_scripts, Some(&at));
        }
        if REQUIREMENT_FILE_OPTIONS.contains(&option) {
            return Ok(());
        }
        return Err(refuse(option));
    }
    // A requirement, then its environment markers (`; python_version < "3.9"`) and options.
    let (requirement, _markers) = content.split_once(';').unwrap_or((content, ""));
    let mut parts = requirement.split_whitespace().peekable();
    let mut spec = String::new();
    while let Some(part) = parts.next() {
        if part.starts_with("--") {
            if part.starts_with("--hash") {
                if !part.contains('=') {
                    parts.next();
                }
                continue;
            }
            return Err(refuse(part));
        }
        spec.push_str(part);
    }
    check_pip_requirement(&spec, allow_scripts, Some(&at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<impl std::fmt::Debug, ExecError>) -> String {
        match result {
            Ok(ok) => panic!("accepted: {ok:?}"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn scripts_are_off_unless_asked_for() {
        let npm = parse_plan("npm install lodash", false).unwrap();
        assert_eq!(npm.argv, ["npm", "install", "lodash", "--ignore-scripts"]);
        let npm = parse_plan("npm install lodash", true).unwrap();
        assert_eq!(npm.argv, ["npm", "install", "lodash"]);
        let pip = parse_plan("pip install requests", false).unwrap();
        assert_eq!(
            pip.argv,
            [
                "python3",
                "-m",
                "pip",
                "install",
                "requests",
                "--only-binary=:all:"
            ]
        );
        assert_eq!(
            parse_plan("pip list", false).unwrap().argv,
            ["python3", "-m", "pip", "list"]
        );
        for command in [
            "pip install .",
            "pip install ./pkg",
            "pip install pkg-1.0.tar.gz",
            "pip install -e .",
            "npm init react-app",
        ] {
            assert!(
                message(parse_plan(command, false)).contains("allowScripts"),
                "{command}"
            );
        }
        assert!(parse_plan("pip install -e .", true).is_ok());
    }

    #[test]
    fn index_options_and_urls_are_refused_on_the_command_line() {
        for command in [
            "pip install -i http://127.0.0.1/simple x",
            "pip install --index-url=http://x/simple x",
            "pip install --extra-index-url http://x x",
            "pip install --find-links http://x x",
            "pip install --trusted-host x x",
            "pip install --config-settings a=b x",
            "npm install --registry=http://127.0.0.1 x",
            "npm install --ignore-scripts=false x",
            "npm install --script-shell=/bin/sh x",
        ] {
            assert!(
                message(parse_plan(command, true)).contains("not allowed"),
                "{command}"
            );
        }
        for command in [
            "pip install x@http://169.254.169.254/x.whl",
            "pip install git+https://example.com/x",
            "npm install http://127.0.0.1/x.tgz",
            "npm install user/repo",
            "npm install github:user/repo",
        ] {
            assert!(
                message(parse_plan(command, true)).contains("refused"),
                "{command}"
            );
        }
        assert!(parse_plan("npm install @types/node@20 -D", false).is_ok());
        assert!(parse_plan("pip install requests==2.32.3 -U --no-deps", false).is_ok());
        let plan = parse_plan("pip install -r req.txt -cconstraints.txt", false).unwrap();
        assert_eq!(plan.requirement_files, ["req.txt", "constraints.txt"]);
    }

    #[test]
    fn package_json_specs_off_the_registry_are_remote() {
        for spec in [
            "http://127.0.0.1/x.tgz",
            "git+ssh://h/x",
            "github:u/r",
            "u/r#main",
            "git://h/x",
        ] {
            assert!(npm_spec_is_remote(spec), "{spec}");
        }
        for spec in [
            "^1.2.3",
            ">=1 <2",
            "latest",
            "1.x",
            "file:../x",
            "npm:lodash@4",
            "*",
        ] {
            assert!(!npm_spec_is_remote(spec), "{spec}");
        }
    }

    #[test]
    fn requirement_files_are_filtered_like_the_command_line_naming_the_line() {
        let text = "requests==2.32.3  # pinned\nnumpy>=1.26 ; python_version >= \"3.9\"\n-r more.txt\n--pre\nflask \\\n  ==3.0\nx --hash=sha256:abc\n";
        assert_eq!(
            check_requirement_file("req.txt", text, false).unwrap(),
            ["more.txt"]
        );
        for (text, line) in [
            ("ok\n--index-url http://127.0.0.1/simple\n", 2),
            ("-i http://x/simple\n", 1),
            ("ok\nok\n--extra-index-url=http://x\n", 3),
            ("--find-links http://x\n", 1),
            ("-f http://x\n", 1),
            ("--trusted-host x\n", 1),
            ("x --global-option=y\n", 1),
            ("--index-url \\\n http://x\n", 1),
            ("x @ http://169.254.169.254/x.whl\n", 1),
            ("-e .\n", 1),
            ("./local\n", 1),
            ("${EVIL}\n", 1),
        ] {
            let msg = message(check_requirement_file("req.txt", text, false));
            assert!(
                msg.contains(&format!("req.txt line {line}")),
                "{text}: {msg}"
            );
        }
    }
}
