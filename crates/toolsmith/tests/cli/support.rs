//! Runs the real `toolsmith` binary on a private data directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// A fresh data directory (and scratch space for files) for one test.
pub struct Env {
    dir: tempfile::TempDir,
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// stdout as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts the exit code, showing everything if it differs.
    #[track_caller]
    pub fn expect(self, code: i32) -> Out {
        assert_eq!(
            self.code, code,
            "exit code {} instead of {code}\nstdout: {}\nstderr: {}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// The `{"error": {"code", "message"}}` document of a `--json` failure.
    #[track_caller]
    pub fn error_doc(&self) -> (String, String) {
        let doc = self.json();
        let code = doc["error"]["code"]
            .as_str()
            .expect("error.code")
            .to_owned();
        let message = doc["error"]["message"]
            .as_str()
            .expect("error.message")
            .to_owned();
        (code, message)
    }
}

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools")
}

pub fn example(name: &str) -> String {
    examples_dir().join(name).display().to_string()
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn db_file(&self) -> PathBuf {
        self.data_dir().join("toolsmith.db")
    }

    /// A file in the scratch space.
    pub fn write(&self, name: &str, content: impl AsRef<[u8]>) -> String {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write file");
        path.display().to_string()
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_via(&[], args)
    }

    /// The binary started through `prefix` (e.g. `setpriv …`), on this data directory.
    fn command_via(&self, prefix: &[&str], args: &[&str]) -> Command {
        let mut cmd = match prefix.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(env!("CARGO_BIN_EXE_toolsmith"));
                cmd
            }
            None => Command::new(env!("CARGO_BIN_EXE_toolsmith")),
        };
        for var in [
            "TOOLSMITH_DATABASE_URL",
            "TOOLSMITH_USER",
            "TOOLSMITH_MAX_TOOLS_PER_OWNER",
            "TOOLSMITH_LOG",
            "RUST_LOG",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("TOOLSMITH_DATA_DIR", self.data_dir())
            .current_dir(self.dir.path())
            .args(args);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Out {
        self.run_with_stdin(args, None)
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: Option<&[u8]>) -> Out {
        self.run_with_env(args, stdin, &[])
    }

    /// Runs as user and group `nobody` (65534) through `setpriv` (for tests run as root, where
    /// file permissions do not apply).
    pub fn run_as_nobody(&self, args: &[&str]) -> Out {
        let cmd = self.command_via(
            &[
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
            ],
            args,
        );
        Self::finish(cmd, None)
    }

    pub fn run_with_env(&self, args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Out {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        Self::finish(cmd, stdin)
    }

    fn finish(mut cmd: Command, stdin: Option<&[u8]>) -> Out {
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start toolsmith");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin");
            pipe.write_all(input).expect("write stdin");
        }
        let out = child.wait_with_output().expect("wait for toolsmith");
        Out {
            code: out.status.code().expect("exit code (not a signal)"),
            stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
        }
    }

    /// Runs with `--json`, expects success, returns the document.
    #[track_caller]
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).expect(0).json()
    }

    /// Creates the two example tools of the spec.
    pub fn create_examples(&self) -> (Value, Value) {
        let words = self.json(&["tool", "create", "--file", &example("word_frequency.yaml")]);
        let csv = self.json(&["tool", "create", "--file", &example("csv_analyzer.json")]);
        (words, csv)
    }

    /// Creates a tool from a JSON value.
    pub fn create(&self, tool: &Value) -> Value {
        let name = tool["name"].as_str().expect("name");
        let file = self.write(&format!("{name}.json"), tool.to_string());
        self.json(&["tool", "create", "--file", &file])
    }
}
