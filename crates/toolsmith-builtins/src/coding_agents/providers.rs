//! The coding agents `run_coding_task` knows (003 §26: `claude-code`, `codex`, `gemini-cli`,
//! `custom:{name}`): the program each runs, the Config Center service holding its key, the
//! variable the key reaches it as, the one API host its run may reach, how the operator
//! installs it, and its command line for one task without a terminal.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One of the named providers.
#[derive(Debug)]
pub struct Provider {
    /// As `provider` names it: `claude-code`.
    pub id: &'static str,
    /// Its product's name: "Claude Code".
    pub name: &'static str,
    /// Its program: `claude`.
    pub program: &'static str,
    /// The caller's Config Center service holding its key (field `api_key`).
    pub service: &'static str,
    /// The variable the key reaches the program as, and only as.
    pub key_env: &'static str,
    /// The one host its run reaches (HTTPS), through the run's proxy.
    pub api_host: &'static str,
    /// How the operator installs it.
    pub install: &'static str,
}

/// The named providers.
pub const PROVIDERS: &[Provider] = &[
    Provider {
        id: "claude-code",
        name: "Claude Code",
        program: "claude",
        service: "claude_code",
        key_env: "ANTHROPIC_API_KEY",
        api_host: "api.anthropic.com",
        install: "npm install -g @anthropic-ai/claude-code",
    },
    Provider {
        id: "codex",
        name: "Codex CLI",
        program: "codex",
        service: "codex",
        key_env: "OPENAI_API_KEY",
        api_host: "api.openai.com",
        install: "npm install -g @openai/codex",
    },
    Provider {
        id: "gemini-cli",
        name: "Gemini CLI",
        program: "gemini",
        service: "gemini_cli",
        key_env: "GEMINI_API_KEY",
        api_host: "generativelanguage.googleapis.com",
        install: "npm install -g @google/gemini-cli",
    },
];

/// The prefix of a custom agent: `custom:aider` runs the program `aider`.
pub const CUSTOM: &str = "custom:";

/// A provider as one call uses it: a named one, or a custom program.
#[derive(Debug, Clone)]
pub struct Agent {
    /// As `provider` names it.
    pub id: String,
    pub name: String,
    pub program: String,
    pub service: String,
    /// `None`: a custom agent whose service names no variable (it gets no key).
    pub key_env: Option<String>,
    /// `None`: a custom agent whose service names no host (its run has no network).
    pub api_host: Option<String>,
    pub install: String,
    /// The field of the policy service (`coding_agents`) that sets this agent's policy.
    pub policy_field: String,
    /// Whether it is one of [`PROVIDERS`].
    pub named: bool,
}

impl Agent {
    fn of(provider: &Provider) -> Agent {
        Agent {
            id: provider.id.to_owned(),
            name: provider.name.to_owned(),
            program: provider.program.to_owned(),
            service: provider.service.to_owned(),
            key_env: Some(provider.key_env.to_owned()),
            api_host: Some(provider.api_host.to_owned()),
            install: provider.install.to_owned(),
            policy_field: provider.service.to_owned(),
            named: true,
        }
    }

    /// Every named provider.
    pub fn named() -> Vec<Agent> {
        PROVIDERS.iter().map(Agent::of).collect()
    }

    /// The agent `provider` names, or what is wrong with the name.
    pub fn parse(provider: &str) -> Result<Agent, String> {
        let provider = provider.trim();
        if let Some(known) = PROVIDERS.iter().find(|p| p.id == provider) {
            return Ok(Agent::of(known));
        }
        let Some(name) = provider.strip_prefix(CUSTOM) else {
            return Err(format!(
                "'{provider}' is not a coding agent: use claude-code, codex, gemini-cli or \
                 custom:<program> (list_coding_agents shows them)"
            ));
        };
        let plain = !name.is_empty()
            && name.len() <= 32
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
            && !name.starts_with('-');
        if !plain {
            return Err(format!(
                "'{provider}': a custom agent is custom:<program>, the program's name in \
                 lowercase letters, digits, '-' and '_' (at most 32), e.g. custom:aider"
            ));
        }
        let field = format!("custom_{}", name.replace('-', "_"));
        Ok(Agent {
            id: provider.to_owned(),
            name: name.to_owned(),
            program: name.to_owned(),
            service: format!("coding_agent_{}", name.replace('-', "_")),
            key_env: None,
            api_host: None,
            install: format!(
                "install '{name}' on the server (the operator's job: Toolsmith installs no program)"
            ),
            policy_field: field,
            named: false,
        })
    }

    /// A custom agent's variable and host, from its service's fields `api_key_env` and
    /// `api_host`, checked.
    pub fn with_custom_fields(
        mut self,
        values: Option<&std::collections::BTreeMap<String, Value>>,
    ) -> Result<Agent, String> {
        if self.named {
            return Ok(self);
        }
        let text = |name: &str| {
            values
                .and_then(|v| v.get(name))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        if let Some(env) = text("api_key_env") {
            let ok = env.len() <= 64
                && env.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && env
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && !matches!(env.as_str(), "PATH" | "HOME" | "PWD" | "SHELL" | "USER")
                && !env.starts_with("LD_");
            if !ok {
                return Err(format!(
                    "the Config Center service '{}' has api_key_env '{env}': name a variable \
                     in capitals, digits and '_' (e.g. OPENAI_API_KEY)",
                    self.service
                ));
            }
            self.key_env = Some(env);
        }
        if let Some(host) = text("api_host") {
            let host = host.trim_end_matches('.').to_ascii_lowercase();
            let ok = host.len() <= 253
                && host.contains('.')
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && host.parse::<std::net::Ipv4Addr>().is_err();
            if !ok {
                return Err(format!(
                    "the Config Center service '{}' has api_host '{host}': give the API's host \
                     name only (e.g. api.openai.com; no scheme, port, path or IP address)",
                    self.service
                ));
            }
            self.api_host = Some(host);
        }
        Ok(self)
    }
}

/// Where the agent's program is: its file (links followed) in the first of `dirs` that has
/// it.
pub fn find(dirs: &[PathBuf], program: &str) -> Option<PathBuf> {
    dirs.iter()
        .map(|dir| dir.join(program))
        .filter(|path| path.is_file())
        .find_map(|path| std::fs::canonicalize(path).ok())
}

/// Whether the sandbox sees `path` without a bind of its own (it binds `/usr` whole).
pub fn in_usr(path: &Path) -> bool {
    path.starts_with("/usr/")
}

/// What one task asks of the agent.
#[derive(Debug, Clone, Default)]
pub struct Task {
    pub prompt: String,
    pub model: Option<String>,
    pub max_turns: Option<u64>,
    pub max_budget_usd: Option<f64>,
}

/// The agent's command line for `task`, `program` being how the sandbox runs it: print mode,
/// no terminal, no questions (the sandbox is the boundary: the workspace, and no network but
/// the provider's API).
pub fn command_line(agent: &Agent, program: &str, task: &Task) -> Vec<String> {
    let mut argv = vec![program.to_owned()];
    let mut push = |items: &[&str]| argv.extend(items.iter().map(|s| (*s).to_owned()));
    match agent.id.as_str() {
        "claude-code" => {
            push(&[
                "-p",
                "--output-format",
                "text",
                "--dangerously-skip-permissions",
            ]);
            if let Some(model) = &task.model {
                push(&["--model", model]);
            }
            if let Some(turns) = task.max_turns {
                push(&["--max-turns", &turns.to_string()]);
            }
            if let Some(budget) = task.max_budget_usd {
                push(&["--max-budget-usd", &format!("{budget}")]);
            }
            push(&["--", &task.prompt]);
        }
        "codex" => {
            push(&[
                "exec",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
            ]);
            if let Some(model) = &task.model {
                push(&["--model", model]);
            }
            push(&["--", &task.prompt]);
        }
        "gemini-cli" => {
            push(&["--yolo"]);
            if let Some(model) = &task.model {
                push(&["--model", model]);
            }
            push(&["--prompt", &task.prompt]);
        }
        _ => {
            if let Some(model) = &task.model {
                push(&["--model", model]);
            }
            push(&[&task.prompt]);
        }
    }
    argv
}
