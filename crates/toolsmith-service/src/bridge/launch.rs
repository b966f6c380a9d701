//! Which programs a server registered at run time (REST, CLI) may start: only executables the
//! operator allowed in `mcp_allowed_commands` — exact files, or every executable inside a listed
//! directory — checked on the resolved, canonical path (symlinks and `..` followed), so no
//! spelling of a command gets around it. No substring blocklist: what is not allowed is refused,
//! whatever its name. The arguments are a vector handed to the program itself; no shell ever
//! reads them. Servers of the configuration file are the operator's own and are not checked.
//!
//! The same holds for a registered server's environment: a variable can change what an allowed
//! program runs (`LD_PRELOAD`, `PYTHONPATH`, `NODE_OPTIONS`, `BASH_ENV`, `PATH` …), so only names
//! on an allowlist may be set — credential-like names (`…_TOKEN`, `…_API_KEY`, `…_SECRET`,
//! `…_PASSWORD`: data, given as Config Center references) and those the operator lists in
//! `mcp_allowed_env` — checked at registration and again at every launch.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The setting's name, for the messages that tell the operator what to change.
pub const SETTING: &str = "mcp_allowed_commands";

/// The setting that extends the names a registered server's `env` may set.
pub const ENV_SETTING: &str = "mcp_allowed_env";

/// The canonical allowed files and directories, and the environment names allowed beyond the
/// credential-like ones.
#[derive(Debug, Clone, Default)]
pub struct LaunchPolicy {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    /// Exact names, and prefixes (an entry ending in `*`), from `mcp_allowed_env`.
    env_names: Vec<String>,
    env_prefixes: Vec<String>,
}

impl LaunchPolicy {
    /// Reads the operator's list. Entries must be absolute; one that does not exist is skipped
    /// with a warning (a program installed later is allowed once it is there and the server
    /// restarts).
    pub fn new(entries: &[PathBuf]) -> Result<LaunchPolicy, String> {
        let mut policy = LaunchPolicy::default();
        for entry in entries {
            if !entry.is_absolute() {
                return Err(format!(
                    "{SETTING}: '{}' is not an absolute path; list programs and directories by their full path",
                    entry.display()
                ));
            }
            match std::fs::canonicalize(entry) {
                Ok(path) if path.is_dir() => policy.dirs.push(path),
                Ok(path) => policy.files.push(path),
                Err(e) => {
                    tracing::warn!(entry = %entry.display(), error = %e, "{SETTING}: entry skipped");
                }
            }
        }
        Ok(policy)
    }

    /// Adds the operator's `mcp_allowed_env`: exact variable names (`LOG_LEVEL`), or prefixes
    /// ending in `*` (`MYAPP_*`). A lone `*` is refused: it would let an API admin set
    /// `LD_PRELOAD` and run any code with an allowed program.
    pub fn with_env(mut self, entries: &[String]) -> Result<LaunchPolicy, String> {
        for entry in entries {
            let (name, prefix) = match entry.strip_suffix('*') {
                Some(stem) => (stem, true),
                None => (entry.as_str(), false),
            };
            let valid =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !valid {
                return Err(format!(
                    "{ENV_SETTING}: '{entry}' must be a variable name (letters, digits, '_'), \
                     optionally ending in '*' for every name with that prefix (a lone '*' is not \
                     allowed: it would let an API admin set LD_PRELOAD)"
                ));
            }
            if prefix {
                self.env_prefixes.push(name.to_owned());
            } else {
                self.env_names.push(name.to_owned());
            }
        }
        Ok(self)
    }

    /// Whether a server registered at run time may set the variable `name`: a credential-like
    /// name (its value is then a Config Center reference, checked elsewhere), or one the
    /// operator listed. The error names the variable and the setting.
    pub fn check_env(&self, name: &str) -> Result<(), String> {
        if toolsmith_scrub::is_credential_key(name)
            || self.env_names.iter().any(|n| n == name)
            || self
                .env_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
        {
            return Ok(());
        }
        Err(format!(
            "env '{name}' may not be set by a server registered through the API: a variable can \
             change what the program runs (LD_PRELOAD, PYTHONPATH, NODE_OPTIONS, PATH …), so only \
             credential-like names (…_TOKEN, …_API_KEY, …_SECRET, …_PASSWORD, as {{{{config.…}}}} \
             references) and the names the operator lists in {ENV_SETTING} are allowed; ask the \
             operator to add '{name}' to {ENV_SETTING} if the program needs it"
        ))
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty()
    }

    /// The program `command` stands for (found in `PATH` when it has no `/`), if the operator
    /// allowed it; the error says why not and what to change. The check is on the canonical
    /// path; the path returned is the one found (not its symlink target), because a program
    /// such as a virtualenv's `python` finds its environment through the path it was started
    /// by. Only someone who may write to an allowed place could swap what it points to.
    pub fn check(&self, command: &str) -> Result<PathBuf, String> {
        if self.is_empty() {
            return Err(format!(
                "registering stdio MCP servers through the API is off: no program is allowed \
                 until the operator lists programs or directories in {SETTING} (the \
                 configuration file's [[mcp_servers]] are not affected)"
            ));
        }
        let found = locate(command)?;
        let canonical =
            std::fs::canonicalize(&found).map_err(|e| format!("command '{command}': {e}"))?;
        let meta =
            std::fs::metadata(&canonical).map_err(|e| format!("command '{command}': {e}"))?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return Err(format!(
                "command '{command}' ({}) is not an executable file",
                canonical.display()
            ));
        }
        let allowed =
            self.files.contains(&canonical) || self.dirs.iter().any(|d| canonical.starts_with(d));
        if allowed {
            Ok(found)
        } else {
            Err(format!(
                "command '{command}' ({}) is not among the programs the operator allowed; add it, \
                 or its directory, to {SETTING}",
                canonical.display()
            ))
        }
    }
}

/// `command` as a path: itself when it holds a `/` (then it must be absolute), else the first
/// match in `PATH`.
fn locate(command: &str) -> Result<PathBuf, String> {
    if command.contains('/') {
        let path = Path::new(command);
        if !path.is_absolute() {
            return Err(format!(
                "command '{command}' is a relative path; give the program's absolute path or its bare name"
            ));
        }
        return Ok(path.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("command '{command}' is not found in PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn only_allowed_programs_pass_whatever_their_spelling() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let other = root.path().join("other");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let server = executable(&bin, "mcp-files");
        let single = executable(&other, "mcp-db");
        let stray = executable(&other, "evil");
        let data = bin.join("notes.txt");
        std::fs::write(&data, "x").unwrap();
        std::os::unix::fs::symlink(&stray, bin.join("link-to-evil")).unwrap();

        let empty = LaunchPolicy::new(&[]).unwrap();
        let err = empty.check(server.to_str().unwrap()).unwrap_err();
        assert!(err.contains(SETTING), "{err}");

        let policy = LaunchPolicy::new(&[bin.clone(), single.clone()]).unwrap();
        assert!(policy.check(server.to_str().unwrap()).is_ok());
        assert!(policy.check(single.to_str().unwrap()).is_ok());
        // Another file of a directory holding an allowed file is not allowed.
        let err = policy.check(stray.to_str().unwrap()).unwrap_err();
        assert!(err.contains(SETTING), "{err}");
        // `..` and symlinks are followed before the check.
        let dotted = format!("{}/../other/evil", bin.display());
        assert!(policy.check(&dotted).is_err());
        assert!(
            policy
                .check(bin.join("link-to-evil").to_str().unwrap())
                .is_err()
        );
        // Not executable, relative, missing.
        assert!(
            policy
                .check(data.to_str().unwrap())
                .unwrap_err()
                .contains("not an executable")
        );
        assert!(
            policy
                .check("bin/mcp-files")
                .unwrap_err()
                .contains("relative")
        );
        assert!(
            policy
                .check("no-such-program-anywhere")
                .unwrap_err()
                .contains("PATH")
        );
        // A name with shell syntax is just a name that is not found.
        assert!(policy.check("mcp-files; rm -rf /").is_err());
        assert!(LaunchPolicy::new(&[PathBuf::from("relative/dir")]).is_err());
    }

    #[test]
    fn only_credential_like_and_listed_env_names_pass() {
        let policy = LaunchPolicy::default()
            .with_env(&["LOG_LEVEL".to_owned(), "MYAPP_*".to_owned()])
            .unwrap();
        for allowed in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "UPSTREAM_SECRET",
            "DB_PASSWORD",
            "LOG_LEVEL",
            "MYAPP_MODE",
        ] {
            assert!(policy.check_env(allowed).is_ok(), "{allowed}");
        }
        for refused in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5LIB",
            "RUBYOPT",
            "BASH_ENV",
            "PATH",
            "HOME",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "JAVA_TOOL_OPTIONS",
            "NPM_CONFIG_NODE_OPTIONS",
            "log_level",
            "MYAPP",
        ] {
            let err = policy.check_env(refused).unwrap_err();
            assert!(err.contains(refused) && err.contains(ENV_SETTING), "{err}");
        }
        for bad in ["*", "", "A B", "LD-*"] {
            let err = LaunchPolicy::default()
                .with_env(&[bad.to_owned()])
                .unwrap_err();
            assert!(err.contains(ENV_SETTING), "{err}");
        }
    }
}
