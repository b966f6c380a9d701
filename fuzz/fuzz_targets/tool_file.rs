//! Tool files as `toolsmith tool create FILE` and `tool update FILE` read them: the binary's
//! own loader (`crates/toolsmith/src/input.rs`, compiled in here: the binary has no library),
//! then what the service checks of a definition without a store (name, parameters schema, the
//! kind's code). Parts: `file text`, `extension` (`json`, `yaml`, anything else: sniffed).
//! The tool file may name `codeFile: code.js`, which exists beside it.
//!
//! Asserts: no panic; a file the loader accepts is an object definition with code.
#![no_main]

#[path = "../common.rs"]
mod common;

/// The binary's error type, as far as its loader uses it.
mod exit {
    #[allow(dead_code)]
    #[derive(Debug)]
    pub enum CliError {
        Input(String),
    }
}

#[allow(dead_code)]
#[path = "../../crates/toolsmith/src/input.rs"]
mod input;

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_command::CommandToolSpec;
use toolsmith_core::ToolKind;
use toolsmith_core::name::validate_custom_name;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_service::ToolPatch;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir()
            .unwrap_or_else(|e| panic!("a temp dir: {e}"))
            .keep();
        std::fs::write(dir.join("code.js"), "return args.a;\n")
            .unwrap_or_else(|e| panic!("code.js: {e}"));
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let ext = match common::part(&parts, 1) {
        "json" => "json",
        "yaml" => "yaml",
        _ => "tool",
    };
    let path = dir().join(format!("tool.{ext}"));
    if std::fs::write(&path, common::part(&parts, 0)).is_err() {
        return;
    }
    let _ = input::read_tool_file::<ToolPatch>(&path);
    let Ok((tool, _enabled)) = input::read_new_tool_file(&path) else {
        return;
    };
    let _ = validate_custom_name(&tool.name);
    let parameters = match &tool.parameters {
        Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        other => other.clone(),
    };
    let _ = CompiledSchema::compile(&parameters);
    match tool.kind {
        ToolKind::Command => {
            if let Ok(spec) = serde_json::from_str::<CommandToolSpec>(&tool.code) {
                let _ = spec.validate();
            }
        }
        ToolKind::Http => {
            let _ = toolsmith_httptool::load_definition(&tool.code);
        }
        ToolKind::Js => {}
    }
});
