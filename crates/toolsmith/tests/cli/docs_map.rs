//! The map is true: every path, type and crate edge that `ARCHITECTURE.md` and `CONTRIBUTING.md`
//! name exists in the repository.
//!
//! - Paths: every backticked token that looks like a repository path (it contains `/` and ends in
//!   a source or document extension or in `/`, or starts with `crates/`, `docs/`, `scripts/`,
//!   `tests/` or `bench/`) must exist, either from the repository root or below a crate (a map
//!   names a crate's files relative to the crate or to a module folder of it, as
//!   `sqlite/schema.rs`). A bare `name.rs` must be a file somewhere under `crates/`.
//!   Placeholders (`<crate>`, `…`, `*`) are not paths.
//! - Types: every backticked `CamelCase` name, and the `Type` of every `Type::item`, must be a
//!   `struct`, `enum`, `trait` or `type` defined in the workspace's crates, unless it is one of
//!   the foreign names below (JavaScript built-ins, other crates' types, protocol names).
//! - Crates: every `### \`crates/<name>\`` heading of ARCHITECTURE.md is a crate, and the
//!   `crate-graph` block of its code map lists exactly the workspace-crate dependencies of every
//!   crate's `[dependencies]` (the format is described above the block).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Names the two documents use that are not Rust types of this workspace, and why.
const FOREIGN: &[&str] = &[
    // JavaScript built-ins and the sandbox's script-side names.
    "WeakRef",
    "FinalizationRegistry",
    "Map",
    "Set",
    "Date",
    "ReferenceError",
    // MCP protocol names and rmcp's types (not types of ours).
    "InputRequiredResult",
    "ServerHandler",
    "ServerConfig",
    "CreateTaskResult",
    // HTTP header names.
    "Authorization",
    // Cargo / Rust names.
    "Cargo",
    "Debug",
    "Serialize",
    "Value",
    "Result",
    "Option",
    "String",
    "Arc",
    "None",
    "Some",
    "Ok",
    "Err",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(doc: &str) -> String {
    std::fs::read_to_string(root().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"))
}

/// Every backticked token of `text` (inline code; fenced blocks are skipped).
fn backticked(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(code), Some(_)) = (parts.next(), parts.next()) {
            tokens.push(code.to_owned());
        }
    }
    tokens
}

fn looks_like_path(token: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".rs", ".md", ".toml", ".sh", ".js", ".mjs", ".py", ".json", ".html", ".css",
    ];
    const TOP: &[&str] = &["crates/", "docs/", "scripts/", "tests/", "bench/"];
    let plain = token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    plain
        && !token.starts_with('/')
        && !token.starts_with('.')
        && token.contains('/')
        && (EXTENSIONS.iter().any(|e| token.ends_with(e))
            || token.ends_with('/')
            || TOP.iter().any(|t| token.starts_with(t)))
}

fn is_bare_source_file(token: &str) -> bool {
    token.ends_with(".rs")
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Every directory a relative path may start from: the root, `crates/`, each crate and every
/// folder below a crate's `src/`, `tests/` and `ui/`.
fn bases() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push(path.clone());
                walk(&path, out);
            }
        }
    }
    let root = root();
    let mut out = vec![root.clone(), root.join("crates")];
    for krate in crate_dirs() {
        out.push(krate.clone());
        for sub in ["src", "tests", "ui", "benches", "examples"] {
            let dir = krate.join(sub);
            if dir.is_dir() {
                out.push(dir.clone());
                walk(&dir, &mut out);
            }
        }
    }
    out
}

fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Every `.rs` file under `crates/` (sources, tests, benches, examples).
fn rust_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for krate in crate_dirs() {
        for sub in ["src", "tests", "benches", "examples"] {
            walk(&krate.join(sub), &mut out);
        }
    }
    out
}

#[test]
fn every_path_architecture_and_contributing_name_exists() {
    let bases = bases();
    let file_names: BTreeSet<String> = rust_files()
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in ["ARCHITECTURE.md", "CONTRIBUTING.md"] {
        for token in backticked(&read(doc)) {
            if looks_like_path(&token) {
                checked += 1;
                let relative = token.trim_end_matches('/');
                if !bases.iter().any(|base| base.join(relative).exists()) {
                    missing.push(format!("{doc}: `{token}`"));
                }
            } else if is_bare_source_file(&token) {
                checked += 1;
                if !file_names.contains(&token) {
                    missing.push(format!("{doc}: `{token}` (no such file under crates/)"));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} paths found: is the extraction broken?"
    );
    assert!(
        missing.is_empty(),
        "paths named in the docs that do not exist (fix the doc or the path):\n{}",
        missing.join("\n")
    );
}

/// A backticked `CamelCase` name (or the type of `Type::item`), if the token is one.
fn type_name(token: &str) -> Option<&str> {
    let head = token.split("::").next()?;
    let head = head.split(['<', '(', ' ']).next()?;
    let mut chars = head.chars();
    let first = chars.next()?;
    let camel = first.is_ascii_uppercase()
        && head.chars().all(|c| c.is_ascii_alphanumeric())
        && head.chars().any(|c| c.is_ascii_lowercase());
    camel.then_some(head)
}

fn defined_types() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for file in rust_files() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let words: Vec<&str> = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            for pair in words.windows(2) {
                if matches!(pair[0], "struct" | "enum" | "trait" | "type" | "union") {
                    names.insert(pair[1].to_owned());
                }
            }
        }
    }
    names
}

#[test]
fn every_type_architecture_and_contributing_name_is_defined() {
    let defined = defined_types();
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    for doc in ["ARCHITECTURE.md", "CONTRIBUTING.md"] {
        for token in backticked(&read(doc)) {
            if let Some(name) = type_name(&token) {
                checked += 1;
                if !defined.contains(name) && !FOREIGN.contains(&name) {
                    missing.insert(format!("{doc}: `{name}` (in `{token}`)"));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} types found: is the extraction broken?"
    );
    assert!(
        missing.is_empty(),
        "types named in the docs that no crate defines (fix the doc, or list a foreign name \
         in docs_map.rs's FOREIGN with its reason):\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// `toolsmith-x` → `x`; the binary `toolsmith` stays itself.
fn short(name: &str) -> String {
    name.strip_prefix("toolsmith-").unwrap_or(name).to_owned()
}

/// Each crate's normal dependencies on workspace crates, from its `Cargo.toml`.
fn cargo_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for dir in crate_dirs() {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let manifest: toml::Table = toml::from_str(&text).unwrap();
        let name = manifest["package"]["name"].as_str().unwrap().to_owned();
        let deps = manifest
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|d| {
                d.keys()
                    .filter(|k| k.starts_with("toolsmith"))
                    .map(|k| short(k))
                    .collect()
            })
            .unwrap_or_default();
        graph.insert(short(&name), deps);
    }
    graph
}

/// The `crate-graph` block of ARCHITECTURE.md: `name -> dep, dep` or `name -> (none)`.
fn documented_graph(architecture: &str) -> BTreeMap<String, BTreeSet<String>> {
    let start = architecture
        .find("```crate-graph\n")
        .expect("ARCHITECTURE.md's code map has a ```crate-graph block");
    let body = &architecture[start + "```crate-graph\n".len()..];
    let body = &body[..body.find("```").expect("the crate-graph block is closed")];
    let mut graph = BTreeMap::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let (name, deps) = line
            .split_once("->")
            .unwrap_or_else(|| panic!("crate-graph line without `->`: {line}"));
        let deps: BTreeSet<String> = match deps.trim() {
            "(none)" => BTreeSet::new(),
            list => list.split(',').map(|d| d.trim().to_owned()).collect(),
        };
        let previous = graph.insert(name.trim().to_owned(), deps);
        assert!(previous.is_none(), "crate-graph names {name} twice");
    }
    graph
}

#[test]
fn the_crate_graph_in_architecture_is_the_cargo_graph() {
    let architecture = read("ARCHITECTURE.md");
    let documented = documented_graph(&architecture);
    let actual = cargo_graph();
    let mut wrong = Vec::new();
    for (name, deps) in &actual {
        match documented.get(name) {
            None => wrong.push(format!("{name}: no line in the crate-graph block")),
            Some(listed) if listed != deps => wrong.push(format!(
                "{name}: the map says -> {listed:?}, its Cargo.toml [dependencies] say -> {deps:?}"
            )),
            Some(_) => {}
        }
    }
    for name in documented.keys().filter(|n| !actual.contains_key(*n)) {
        wrong.push(format!(
            "{name}: in the crate-graph block, but no such crate"
        ));
    }
    for line in architecture.lines() {
        if let Some(rest) = line.strip_prefix("### `crates/") {
            let krate = rest.split('`').next().unwrap_or_default();
            if !root()
                .join("crates")
                .join(krate)
                .join("Cargo.toml")
                .is_file()
            {
                wrong.push(format!("heading `crates/{krate}`: no such crate"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md's code map is not the workspace's crate graph:\n{}",
        wrong.join("\n")
    );
}
