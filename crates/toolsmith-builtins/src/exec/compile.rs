//! `compile_code`: compiles (or, for interpreted languages, syntax-checks) source code with
//! the host's own compilers inside the command sandbox, in a private scratch folder (not the
//! workspace), and reports the diagnostics. Which languages work depends on the host: a
//! language whose compiler is not installed answers so, with the list of those that are.

use std::path::Path;

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{Deps, ExecError, code_arg, run_request, timeout_arg, timeout_schema};

/// One language: its names, the source file, the compiler and the command that checks it
/// (`$2` is the source file).
struct Language {
    id: &'static str,
    aliases: &'static [&'static str],
    file: &'static str,
    program: &'static str,
    check: &'static str,
}

const LANGUAGES: &[Language] = &[
    Language {
        id: "c",
        aliases: &[],
        file: "main.c",
        program: "gcc",
        check: "gcc -std=c17 -Wall -c \"$2\" -o main.o",
    },
    Language {
        id: "cpp",
        aliases: &["c++", "cxx"],
        file: "main.cpp",
        program: "g++",
        check: "g++ -std=c++17 -Wall -c \"$2\" -o main.o",
    },
    Language {
        id: "java",
        aliases: &[],
        file: "Main.java",
        program: "javac",
        check: "mkdir -p classes && javac -J-Xmx256m -d classes \"$2\"",
    },
    Language {
        id: "python",
        aliases: &["py", "python3"],
        file: "main.py",
        program: "python3",
        check: "python3 -m py_compile \"$2\"",
    },
    Language {
        id: "javascript",
        aliases: &["js", "node"],
        file: "main.js",
        program: "node",
        check: "node --check \"$2\"",
    },
    Language {
        id: "go",
        aliases: &["golang"],
        file: "main.go",
        program: "go",
        check: "GOCACHE=/tmp/gocache go vet \"$2\"",
    },
    Language {
        id: "rust",
        aliases: &["rs"],
        file: "main.rs",
        program: "rustc",
        check: "rustc --edition 2021 --emit=metadata -o main.rmeta \"$2\"",
    },
];

/// Where the sandbox finds programs (its `PATH`, minus the `sbin`s).
const PROGRAM_DIRS: &[&str] = &["/usr/local/bin", "/usr/bin", "/bin"];

fn installed(program: &str) -> bool {
    PROGRAM_DIRS
        .iter()
        .any(|dir| Path::new(dir).join(program).is_file())
}

/// The languages whose compiler this host has.
#[must_use]
pub fn available() -> Vec<&'static str> {
    LANGUAGES
        .iter()
        .filter(|l| installed(l.program))
        .map(|l| l.id)
        .collect()
}

pub fn definition() -> ToolDefinition {
    let ids: Vec<&str> = LANGUAGES.iter().map(|l| l.id).collect();
    let here = available();
    ToolDefinition::new(
        "compile_code",
        format!(
            "Compile source code (or syntax-check it, for Python and JavaScript) in a sandbox and \
             get the compiler's errors and warnings. Nothing is run. Languages: {}; installed on \
             this host: {}. Returns success, language, compiler, diagnostics, exitCode.",
            ids.join(", "),
            if here.is_empty() { "none".to_owned() } else { here.join(", ") }
        ),
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The source code (one file)."},
                "language": {"type": "string", "description": format!("One of {} (aliases: c++, js, py, rs, golang).", ids.join(", "))},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["code", "language"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["compile", "compiler", "build", "syntax", "check", "lint", "gcc", "javac", "rustc", "errors", "warnings", "typecheck", "c", "cpp", "java"])
}

pub(crate) async fn run(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let code = code_arg(args, "code", "the source code to compile")?;
    let asked = args
        .get("language")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let ids: Vec<&str> = LANGUAGES.iter().map(|l| l.id).collect();
    let language = LANGUAGES
        .iter()
        .find(|l| l.id == asked || l.aliases.contains(&asked.as_str()))
        .ok_or_else(|| {
            ExecError::Args(format!(
                "'language' must be one of {}; got '{asked}'",
                ids.join(", ")
            ))
        })?;
    if !installed(language.program) {
        let here = available();
        return Err(ExecError::Unavailable(format!(
            "{} cannot be compiled here: its compiler `{}` is not installed on this host (the \
             sandbox uses the host's /usr/bin). Languages available here: {}",
            language.id,
            language.program,
            if here.is_empty() {
                "none".to_owned()
            } else {
                here.join(", ")
            }
        )));
    }
    let file = match language.id {
        "java" => java_file(code),
        _ => language.file.to_owned(),
    };
    let timeout = timeout_arg(args, ctx)?;
    let script = format!("printf '%s' \"$1\" > \"$2\" && {}", language.check);
    let argv = [code, file.as_str()];
    let mut request = RunRequest::shell(&script);
    request.args = &argv;
    request.timeout = timeout;
    let out = run_request(deps, request).await?;
    Ok(json!({
        "success": out.get("success"),
        "language": language.id,
        "compiler": language.program,
        "exitCode": out.get("exitCode"),
        "diagnostics": out.get("stderr"),
        "stdout": out.get("stdout"),
        "timedOut": out.get("timedOut"),
        "truncated": out.get("truncated"),
        "durationMs": out.get("durationMs"),
    }))
}

/// The file a Java source must be in: its public class's name.
fn java_file(code: &str) -> String {
    let class = regex::Regex::new(r"public\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+([A-Za-z_][A-Za-z0-9_]{0,63})")
        .ok()
        .and_then(|re| re.captures(code).and_then(|c| c.get(1)).map(|m| m.as_str().to_owned()));
    format!("{}.java", class.unwrap_or_else(|| "Main".to_owned()))
}
