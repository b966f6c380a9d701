//! What the web UI's code editor completes (`crates/toolsmith-server/ui/js/sandbox_api.js`),
//! read from the sandbox's own JavaScript sources, so the list cannot drift from what a tool
//! really gets: the `utils` object (`utils.js`), `console` (`support.js`), `fetch`, `fs` and
//! `shell` (`io.js`), and `mcp` (`mcp.js`). The test fails when the committed file differs;
//! `TOOLSMITH_UPDATE_SANDBOX_API=1 cargo test -p toolsmith-sandbox --lib ui_api` rewrites it.

use std::path::Path;

use serde_json::{Value, json};

const UTILS_JS: &str = include_str!("utils.js");
const SUPPORT_JS: &str = include_str!("support.js");
const IO_JS: &str = include_str!("io.js");
const MCP_JS: &str = include_str!("mcp.js");

/// The lines of the object literal opened by the line `opener` (the first after `anchor`), up
/// to the line that closes it at the opener's indentation.
fn block<'a>(src: &'a str, anchor: &str, opener: &str) -> Vec<&'a str> {
    let start = src.find(anchor).unwrap_or_else(|| panic!("no '{anchor}'"));
    let indent = opener.len() - opener.trim_start().len();
    let closer = format!("{}}}", " ".repeat(indent));
    let mut out = Vec::new();
    let mut inside = false;
    for line in src[start..].lines() {
        if !inside {
            inside = line == opener;
            continue;
        }
        if line.starts_with(&closer) {
            return out;
        }
        out.push(line);
    }
    panic!("'{opener}' after '{anchor}' is not closed");
}

/// The `/** … */` comment that ends on the line before `at`, as one line of text.
fn doc(lines: &[&str], at: usize) -> Option<String> {
    let end = at.checked_sub(1)?;
    if !lines[end].trim_end().ends_with("*/") {
        return None;
    }
    let mut start = end;
    while !lines[start].trim_start().starts_with("/**") {
        start = start.checked_sub(1)?;
    }
    let text: Vec<&str> = lines[start..=end]
        .iter()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_end_matches("*/")
                .trim_start_matches('*')
                .trim()
        })
        .filter(|l| !l.is_empty())
        .collect();
    Some(text.join(" "))
}

/// The members of an object literal's lines (at 8 spaces): `name(params) {`, and the
/// `name: method('name', 'tool', 'arg', [options] …)` and `name: freeze(write(…))` forms.
fn members(lines: &[&str]) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("        ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let after = &rest[name.len()..];
        let params = if let Some(p) = after.strip_prefix('(') {
            if !after.trim_end().ends_with('{') {
                continue;
            }
            p.split(')').next().unwrap_or_default().to_owned()
        } else if let Some(p) = after.strip_prefix(": method(") {
            let args: Vec<&str> = p.splitn(5, ", ").collect();
            let arg = args.get(2).map_or("", |a| a.trim_matches('\''));
            let options = args.get(3).is_some_and(|o| !o.starts_with("[]"));
            match (arg, options) {
                (a, true) => format!("{a}, options"),
                (a, false) => a.to_owned(),
            }
        } else if after.starts_with(": freeze(write(") {
            "...values".to_owned()
        } else {
            continue;
        };
        out.push((name, params, doc(lines, i)));
    }
    out
}

/// Every completion the editor offers, in the order of the sources.
fn api() -> Vec<Value> {
    let mut items = vec![
        json!({"name": "args", "signature": "args", "needs": null, "doc": "The call's arguments, checked against the tool's parameters."}),
        json!({"name": "context", "signature": "context", "needs": null, "doc": "Who calls: {userId, agentId, conversationId, …}."}),
        json!({"name": "utils", "signature": "utils", "needs": null, "doc": "Helpers: the Config Center, other tools, text, dates, lists, validation."}),
        json!({"name": "console", "signature": "console", "needs": null, "doc": "Captured console output, returned with the result."}),
    ];
    let entry = |prefix: &str,
                 (name, params, doc): (String, String, Option<String>),
                 needs: Option<&str>| {
        json!({
            "name": format!("{prefix}{name}"),
            "signature": format!("{prefix}{name}({params})"),
            "needs": needs,
            "doc": doc,
        })
    };
    let utils = block(UTILS_JS, "function makeUtils(", "    const utils = {");
    items.extend(
        members(&utils)
            .into_iter()
            .map(|m| entry("utils.", m, None)),
    );
    let console = block(SUPPORT_JS, "function makeConsole(", "    return freeze({");
    items.extend(
        members(&console)
            .into_iter()
            .map(|m| entry("console.", m, None)),
    );
    let globals = block(IO_JS, "export function init(", "    return {");
    for m in members(&globals) {
        if m.0 == "fetch" {
            items.push(entry("", m, Some("network")));
        }
    }
    items.push(json!({"name": "fs", "signature": "fs", "needs": "filesystem", "doc": "The caller's workspace, through the file tools."}));
    let fs = block(IO_JS, "function makeFs(", "    const fs = {");
    items.extend(
        members(&fs)
            .into_iter()
            .map(|m| entry("fs.", m, Some("filesystem"))),
    );
    items.push(json!({"name": "shell", "signature": "shell", "needs": "shell", "doc": "Commands in the command sandbox, through execute_shell."}));
    let shell = block(IO_JS, "function makeShell(", "    const shell = {");
    items.extend(
        members(&shell)
            .into_iter()
            .map(|m| entry("shell.", m, Some("shell"))),
    );
    items.push(json!({"name": "mcp", "signature": "mcp", "needs": null, "doc": "The tool's side of the conversation with the calling MCP client."}));
    let mcp = block(MCP_JS, "function makeMcp(", "    const mcp = {");
    for m in members(&mcp) {
        let needs = match m.0.as_str() {
            "sample" => Some("sampling"),
            "elicit" => Some("elicitation"),
            _ => None,
        };
        items.push(entry("mcp.", m, needs));
    }
    // The content builders: `mcp.x = function (params)` or `mcp.x = binaryBlock('x')`.
    let builders: Vec<&str> = MCP_JS.lines().collect();
    let binary = MCP_JS
        .split("function binaryBlock(")
        .nth(1)
        .and_then(|rest| rest.split("return function (").nth(1))
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("binaryBlock's returned function"));
    for (i, line) in builders.iter().enumerate() {
        let Some(rest) = line.strip_prefix("    mcp.") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(" = ") else {
            continue;
        };
        let params = if let Some(p) = value.strip_prefix("function (") {
            p.split(')').next().unwrap_or_default()
        } else if value.starts_with("binaryBlock(") {
            binary
        } else {
            continue;
        };
        items.push(entry(
            "mcp.",
            (name.to_owned(), params.to_owned(), doc(&builders, i)),
            None,
        ));
    }
    items
}

fn generated() -> String {
    let mut out = String::from(
        "// What the code editor completes: every global and helper a JavaScript tool gets in the sandbox.\n\
         // Generated from the sandbox's own sources (crates/toolsmith-sandbox/src: utils.js, support.js,\n\
         // io.js, mcp.js) by its test ui_api::the_editor_completes_what_the_sandbox_has; do not edit.\n\
         // TOOLSMITH_UPDATE_SANDBOX_API=1 cargo test -p toolsmith-sandbox --lib ui_api rewrites it.\n\
         // `needs`: the permission that adds it.\n\
         export const SANDBOX_API = [\n",
    );
    for item in api() {
        out.push_str("  ");
        out.push_str(&item.to_string());
        out.push_str(",\n");
    }
    out.push_str("];\n");
    out
}

#[test]
fn the_editor_completes_what_the_sandbox_has() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolsmith-server/ui/js/sandbox_api.js");
    let want = generated();
    if std::env::var_os("TOOLSMITH_UPDATE_SANDBOX_API").is_some() {
        std::fs::write(&path, &want).expect("write sandbox_api.js");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not what the sandbox's sources give; run `TOOLSMITH_UPDATE_SANDBOX_API=1 cargo test -p toolsmith-sandbox --lib ui_api` and commit it",
        path.display()
    );
    // Each part of the sandbox is there, so a change of the sources' shape cannot empty the list.
    for name in [
        "utils.getApiKey",
        "utils.callTool",
        "utils.groupBy",
        "console.log",
        "fetch",
        "fs.readFile",
        "fs.readdir",
        "shell.exec",
        "mcp.log",
        "mcp.sample",
        "mcp.image",
        "mcp.result",
    ] {
        assert!(
            want.contains(&format!("\"name\":\"{name}\"")),
            "{name} is missing"
        );
    }
}
