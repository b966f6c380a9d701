//! Each file tool: what it does, the arguments it refuses (with the fix in the message) and
//! the limits it keeps.

use serde_json::json;
use toolsmith_builtins::BuiltinEnv;
use toolsmith_core::{ErrorKind, Permission, ToolContext, ToolOrigin, ToolRegistry};

use super::Fixture;

const EXEC: ErrorKind = ErrorKind::ExecutionError;
const ARGS: ErrorKind = ErrorKind::InvalidArguments;

/// A file in alice's denied `.toolsmith` folder, made by the host (the tools refuse it).
fn plant_denied(fx: &Fixture, name: &str, content: &str) {
    let dir = fx.dir("alice").join(".toolsmith");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), content).unwrap();
}

#[tokio::test]
async fn without_a_workspace_every_file_tool_names_the_setting() {
    let registry = ToolRegistry::default();
    toolsmith_builtins::register_all(&registry, &BuiltinEnv::default()).unwrap();
    let pipeline = toolsmith_core::Pipeline::new(
        std::sync::Arc::new(registry),
        toolsmith_core::PipelineLimits::default(),
    );
    let res = pipeline
        .execute(
            "read_file",
            r#"{"path":"a.txt"}"#,
            ToolContext::new("alice"),
        )
        .await;
    assert!(res.is_error);
    assert!(
        res.error_message().unwrap().contains("workspace_dir"),
        "{:?}",
        res.content
    );
}

#[test]
fn every_file_tool_is_described_and_holds_filesystem() {
    let tools = toolsmith_builtins::files::tools(&BuiltinEnv::default());
    let mut names: Vec<_> = tools.iter().map(|t| t.name().to_owned()).collect();
    names.sort();
    let group = toolsmith_builtins::groups::find("fs").unwrap();
    let mut expected: Vec<_> = group.tools.iter().map(|t| (*t).to_owned()).collect();
    expected.sort();
    assert_eq!(names, expected);
    for tool in &tools {
        let name = tool.name();
        assert_eq!(tool.definition.category.as_deref(), Some("File System"));
        assert!(!tool.definition.tags.is_empty(), "{name}");
        assert_eq!(
            tool.permissions.iter().copied().collect::<Vec<_>>(),
            [Permission::Filesystem]
        );
        assert_eq!(
            tool.origin,
            ToolOrigin::BuiltIn {
                provider: "filesystem".into()
            }
        );
        let params = &tool.definition.parameters;
        assert_eq!(params["additionalProperties"], false, "{name}");
        for (prop, schema) in params["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{name}.{prop}");
        }
    }
    // The two pairs of names are one tool each, and each description names the other.
    let description = |n: &str| {
        tools
            .iter()
            .find(|t| t.name() == n)
            .unwrap()
            .definition
            .clone()
    };
    for (a, b) in [("list_directory", "list_files"), ("search_files", "search")] {
        let (a, b) = (description(a), description(b));
        assert_eq!(a.parameters, b.parameters);
        assert!(a.description.contains(&b.name), "{}", a.description);
        assert!(b.description.contains(&a.name), "{}", b.description);
    }
    assert!(description("delete_file").requires_confirmation);
}

#[tokio::test]
async fn write_then_read_whole_by_range_and_in_base64() {
    let fx = Fixture::new();
    let out = fx
        .ok(
            "write_file",
            json!({"path": "notes/todo.md", "content": "one\ntwo\nthree\n"}),
        )
        .await;
    assert_eq!(
        out,
        json!({"path": "notes/todo.md", "bytes": 14, "created": true})
    );
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("notes/todo.md")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let out = fx
        .ok("read_file", json!({"path": "./notes//todo.md"}))
        .await;
    assert_eq!(out["content"], "one\ntwo\nthree\n");
    assert_eq!(out["totalLines"], 3);
    let out = fx
        .ok(
            "read_file",
            json!({"path": "notes/todo.md", "startLine": 2, "endLine": 3, "lineNumbers": true}),
        )
        .await;
    assert_eq!(out["content"], "2\ttwo\n3\tthree");
    assert_eq!(
        (
            out["startLine"].clone(),
            out["endLine"].clone(),
            out["totalLines"].clone()
        ),
        (json!(2), json!(3), json!(3))
    );
    let out = fx
        .ok(
            "read_file",
            json!({"path": "notes/todo.md", "startLine": 9}),
        )
        .await;
    assert_eq!(out["content"], "");
    // Replacing needs nothing by default; overwrite false refuses.
    let out = fx
        .ok(
            "write_file",
            json!({"path": "notes/todo.md", "content": "x"}),
        )
        .await;
    assert_eq!(out["created"], false);
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "notes/todo.md", "content": "y", "overwrite": false}),
            EXEC,
        )
        .await;
    assert!(msg.contains("overwrite: true"), "{msg}");
    // Binary content round-trips through base64; as text it is refused with the fix.
    fx.ok(
        "write_file",
        json!({"path": "bin", "content": "AP8A", "encoding": "base64"}),
    )
    .await;
    assert_eq!(
        std::fs::read(fx.dir("alice").join("bin")).unwrap(),
        [0, 255, 0]
    );
    let out = fx
        .ok("read_file", json!({"path": "bin", "encoding": "base64"}))
        .await;
    assert_eq!(out["content"], "AP8A");
    let msg = fx.fails("read_file", json!({"path": "bin"}), ARGS).await;
    assert!(msg.contains("encoding: base64"), "{msg}");
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "b2", "content": "%%%", "encoding": "base64"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("base64"), "{msg}");
}

#[tokio::test]
async fn read_file_refuses_what_it_cannot_do_and_names_the_fix() {
    let fx = Fixture::with(|c| c.limits.max_read_bytes = 64);
    let msg = fx
        .fails("read_file", json!({"path": "missing.txt"}), EXEC)
        .await;
    assert!(
        msg.contains("does not exist") && msg.contains("list_directory"),
        "{msg}"
    );
    let msg = fx.fails("read_file", json!({}), ARGS).await;
    assert!(msg.contains("path"), "{msg}");
    let msg = fx.fails("read_file", json!({"path": "."}), EXEC).await;
    assert!(msg.contains("list_directory"), "{msg}");
    let big: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    fx.ok("write_file", json!({"path": "big.txt", "content": big}))
        .await;
    let msg = fx
        .fails("read_file", json!({"path": "big.txt"}), EXEC)
        .await;
    assert!(
        msg.contains("startLine") && msg.contains("more than 64 bytes"),
        "{msg}"
    );
    // A range of a large file is read and the total is counted.
    let out = fx
        .ok(
            "read_file",
            json!({"path": "big.txt", "startLine": 50, "endLine": 52}),
        )
        .await;
    assert_eq!(out["content"], "line 50\nline 51\nline 52");
    assert_eq!(out["totalLines"], 100);
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "big.txt", "startLine": 1, "endLine": 50}),
            ARGS,
        )
        .await;
    assert!(msg.contains("ask for fewer lines"), "{msg}");
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "big.txt", "startLine": 5, "endLine": 2}),
            ARGS,
        )
        .await;
    assert!(msg.contains("endLine >= startLine"), "{msg}");
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "big.txt", "startLine": 0}),
            ARGS,
        )
        .await;
    assert!(msg.contains("startLine"), "{msg}");
}

#[tokio::test]
async fn write_file_limits_quota_and_folders() {
    let fx = Fixture::with(|c| {
        c.quota_bytes = 100;
        c.max_entries = 5;
        c.limits.max_write_bytes = 80;
    });
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "a", "content": "x".repeat(81)}),
            EXEC,
        )
        .await;
    assert!(
        msg.contains("more than 80 bytes") && msg.contains("write less"),
        "{msg}"
    );
    fx.ok(
        "write_file",
        json!({"path": "a", "content": "x".repeat(60)}),
    )
    .await;
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "b", "content": "x".repeat(50)}),
            EXEC,
        )
        .await;
    assert!(
        msg.contains("quota")
            && msg.contains("uses 60 of 100 bytes")
            && msg.contains("delete_file"),
        "{msg}"
    );
    // Replacing a file counts only the difference.
    fx.ok(
        "write_file",
        json!({"path": "a", "content": "x".repeat(80)}),
    )
    .await;
    fx.ok(
        "write_file",
        json!({"path": "c", "content": "x".repeat(20)}),
    )
    .await;
    let msg = fx
        .fails("write_file", json!({"path": "d/e/f", "content": ""}), EXEC)
        .await;
    assert!(
        msg.contains("files and folders") && msg.contains("most it may hold is 5"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "no/such/x", "content": "", "createParents": false}),
            EXEC,
        )
        .await;
    assert!(msg.contains("'no/such' does not exist"), "{msg}");
    fx.ok("create_folder", json!({"path": "dir"})).await;
    let msg = fx
        .fails("write_file", json!({"path": "dir", "content": ""}), EXEC)
        .await;
    assert!(msg.contains("is a folder"), "{msg}");
    let msg = fx
        .fails("write_file", json!({"path": ".", "content": ""}), ARGS)
        .await;
    assert!(msg.contains("name a file"), "{msg}");
    let msg = fx.fails("write_file", json!({"path": "a"}), ARGS).await;
    assert!(msg.contains("content"), "{msg}");
    // Nothing of a refused or finished write is left behind.
    let usage = fx.ok("file_info", json!({"path": "."})).await["workspace"].clone();
    assert_eq!(usage["bytes"], 100);
}

#[tokio::test]
async fn edit_file_replaces_one_exact_piece_or_says_why_not() {
    let fx = Fixture::new();
    fx.ok(
        "write_file",
        json!({"path": "f.txt", "content": "alpha\nbeta\nalpha\ngamma\n"}),
    )
    .await;
    let out = fx
        .ok(
            "edit_file",
            json!({"path": "f.txt", "oldText": "beta", "newText": "BETA"}),
        )
        .await;
    assert_eq!(out["replacements"], 1);
    let msg = fx
        .fails(
            "edit_file",
            json!({"path": "f.txt", "oldText": "alpha", "newText": "A"}),
            ARGS,
        )
        .await;
    assert!(
        msg.contains("occurs 2 times") && msg.contains("lines 1, 3") && msg.contains("replaceAll"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "edit_file",
            json!({"path": "f.txt", "oldText": "delta", "newText": "D"}),
            ARGS,
        )
        .await;
    assert!(
        msg.contains("was not found") && msg.contains("read_file"),
        "{msg}"
    );
    let out = fx
        .ok(
            "edit_file",
            json!({"path": "f.txt", "oldText": "alpha", "newText": "A", "replaceAll": true}),
        )
        .await;
    assert_eq!(out["replacements"], 2);
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("f.txt")).unwrap(),
        "A\nBETA\nA\ngamma\n"
    );
    fx.fails(
        "edit_file",
        json!({"path": "f.txt", "oldText": "", "newText": "x"}),
        ARGS,
    )
    .await;
    let msg = fx
        .fails(
            "edit_file",
            json!({"path": "nope.txt", "oldText": "a", "newText": "b"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("does not exist"), "{msg}");
}

#[tokio::test]
async fn edit_file_is_bounded_by_the_write_limit() {
    let fx = Fixture::with(|c| c.limits.max_write_bytes = 32);
    fx.ok(
        "write_file",
        json!({"path": "f", "content": "a".repeat(30)}),
    )
    .await;
    let msg = fx
        .fails(
            "edit_file",
            json!({"path": "f", "oldText": "a", "newText": "bb", "replaceAll": true}),
            EXEC,
        )
        .await;
    assert!(msg.contains("more than 32 bytes"), "{msg}");
}

#[tokio::test]
async fn list_directory_and_list_files_are_one_bounded_tool() {
    let fx = Fixture::new();
    for path in ["b.txt", "a/one.txt", "a/deep/two.txt"] {
        fx.ok("write_file", json!({"path": path, "content": "x"}))
            .await;
    }
    plant_denied(&fx, "state.json", "x");
    let out = fx.ok("list_directory", json!({})).await;
    assert_eq!(out, fx.ok("list_files", json!({"path": "."})).await);
    let paths: Vec<_> = out["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths, ["a", "b.txt"], "the denied .toolsmith is not listed");
    assert_eq!(out["entries"][0]["type"], "directory");
    assert_eq!(out["entries"][1]["type"], "file");
    assert_eq!(out["entries"][1]["size"], 1);
    let out = fx.ok("list_directory", json!({"recursive": true})).await;
    assert_eq!(out["count"], 5);
    let out = fx
        .ok("list_directory", json!({"recursive": true, "maxDepth": 2}))
        .await;
    assert_eq!(out["count"], 4);
    assert_eq!(out["depthLimited"], true);
    let out = fx
        .ok(
            "list_directory",
            json!({"recursive": true, "maxEntries": 2}),
        )
        .await;
    assert_eq!(
        (out["count"].clone(), out["truncated"].clone()),
        (json!(2), json!(true))
    );
    let msg = fx
        .fails("list_directory", json!({"path": "b.txt"}), EXEC)
        .await;
    assert!(msg.contains("not a folder"), "{msg}");
    let msg = fx
        .fails("list_directory", json!({"path": ".toolsmith"}), ARGS)
        .await;
    assert!(msg.contains("reserved"), "{msg}");
    fx.fails("list_directory", json!({"maxEntries": 0}), ARGS)
        .await;
}

#[tokio::test]
async fn list_directory_caps_entries_at_the_limit() {
    let fx = Fixture::with(|c| c.limits.max_list_entries = 3);
    for n in 0..5 {
        fx.ok(
            "write_file",
            json!({"path": format!("f{n}"), "content": ""}),
        )
        .await;
    }
    let out = fx.ok("list_directory", json!({"maxEntries": 1000})).await;
    assert_eq!(
        (out["count"].clone(), out["truncated"].clone()),
        (json!(3), json!(true))
    );
}

#[tokio::test]
async fn search_files_and_search_match_names_and_lines() {
    let fx = Fixture::new();
    fx.ok(
        "write_file",
        json!({"path": "docs/guide.md", "content": "Intro\nthe TODO list\nend\n"}),
    )
    .await;
    fx.ok(
        "write_file",
        json!({"path": "src/todo.rs", "content": "fn main() {}\n"}),
    )
    .await;
    plant_denied(&fx, "hidden.md", "todo\n");
    fx.ok(
        "write_file",
        json!({"path": "bin.dat", "content": "AHRvZG8=", "encoding": "base64"}),
    )
    .await;
    let out = fx.ok("search_files", json!({"query": "todo"})).await;
    assert_eq!(out, fx.ok("search", json!({"query": "todo"})).await);
    assert_eq!(
        out["results"],
        json!([
            {"path": "docs/guide.md", "match": "content", "line": 2, "text": "the TODO list"},
            {"path": "src/todo.rs", "match": "name"}
        ])
    );
    assert_eq!(out["filesSkipped"], 1, "the binary file");
    let out = fx
        .ok(
            "search_files",
            json!({"query": "todo", "caseSensitive": true}),
        )
        .await;
    assert_eq!(out["count"], 1);
    let out = fx
        .ok("search_files", json!({"query": "o", "include": "**/*.md"}))
        .await;
    assert!(
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"] == "docs/guide.md")
    );
    let out = fx
        .ok("search_files", json!({"query": "TODO", "path": "src"}))
        .await;
    assert_eq!(out["count"], 1);
    let msg = fx
        .fails("search_files", json!({"query": "(unclosed"}), ARGS)
        .await;
    assert!(
        msg.contains("invalid regular expression") && msg.contains("escape"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "search_files",
            json!({"query": "a", "include": "[z-a]"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("include"), "{msg}");
    fx.fails("search_files", json!({}), ARGS).await;
}

#[tokio::test]
async fn search_results_follow_the_spec_limits_and_patterns_run_in_linear_time() {
    let fx = Fixture::new();
    let lines: String = (0..300).map(|n| format!("match {n}\n")).collect();
    fx.ok("write_file", json!({"path": "many.txt", "content": lines}))
        .await;
    let out = fx.ok("search_files", json!({"query": "match"})).await;
    assert_eq!(
        (out["count"].clone(), out["truncated"].clone()),
        (json!(50), json!(true))
    );
    let out = fx
        .ok(
            "search_files",
            json!({"query": "match", "maxResults": 5000}),
        )
        .await;
    assert_eq!(out["count"], 100, "maxResults is capped at the spec's 100");
    // A pattern that is catastrophic for backtracking engines finishes at once here.
    fx.ok(
        "write_file",
        json!({"path": "evil.txt", "content": format!("{}!", "a".repeat(20_000))}),
    )
    .await;
    let out = fx
        .ok(
            "search_files",
            json!({"query": "(a+)+$", "include": "evil.txt"}),
        )
        .await;
    assert_eq!(out["count"], 0);
}

#[tokio::test]
async fn glob_matches_paths_with_separators_respected() {
    let fx = Fixture::new();
    for path in ["a.md", "b.txt", "docs/c.md", "docs/deep/d.md"] {
        fx.ok("write_file", json!({"path": path, "content": ""}))
            .await;
    }
    plant_denied(&fx, "e.md", "");
    let paths = |out: &serde_json::Value| {
        out["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let out = fx.ok("glob", json!({"pattern": "*.md"})).await;
    assert_eq!(paths(&out), ["a.md"]);
    let out = fx.ok("glob", json!({"pattern": "**/*.md"})).await;
    assert_eq!(paths(&out), ["a.md", "docs/c.md", "docs/deep/d.md"]);
    let out = fx
        .ok("glob", json!({"pattern": "*.{md,txt}", "path": "."}))
        .await;
    assert_eq!(paths(&out), ["a.md", "b.txt"]);
    let out = fx
        .ok("glob", json!({"pattern": "*.md", "path": "docs"}))
        .await;
    assert_eq!(paths(&out), ["docs/c.md"]);
    let out = fx
        .ok("glob", json!({"pattern": "**", "maxResults": 2}))
        .await;
    assert_eq!(
        (out["count"].clone(), out["truncated"].clone()),
        (json!(2), json!(true))
    );
    let msg = fx.fails("glob", json!({"pattern": "a[b"}), ARGS).await;
    assert!(
        msg.contains("invalid glob pattern") && msg.contains("**/*.md"),
        "{msg}"
    );
    let msg = fx
        .fails("glob", json!({"pattern": "x".repeat(2000)}), ARGS)
        .await;
    assert!(msg.contains("shorter"), "{msg}");
    fx.fails("glob", json!({}), ARGS).await;
}

#[tokio::test]
async fn file_info_reports_metadata_and_the_quota_at_the_root() {
    let fx = Fixture::with(|c| c.quota_bytes = 1000);
    fx.ok("write_file", json!({"path": "f.txt", "content": "hello"}))
        .await;
    let out = fx.ok("file_info", json!({"path": "f.txt"})).await;
    assert_eq!(out["type"], "file");
    assert_eq!(out["size"], 5);
    assert_eq!(out["permissions"], "0644");
    assert_eq!(out["links"], 1);
    assert!(out["modified"].as_str().unwrap().ends_with('Z'));
    assert!(out.get("workspace").is_none());
    let out = fx.ok("file_info", json!({})).await;
    assert_eq!(out["type"], "directory");
    assert_eq!(out["workspace"]["bytes"], 5);
    assert_eq!(out["workspace"]["quotaBytes"], 1000);
    let msg = fx.fails("file_info", json!({"path": "nope"}), EXEC).await;
    assert!(msg.contains("does not exist"), "{msg}");
    fx.fails("file_info", json!({"path": 7}), ARGS).await;
}

#[tokio::test]
async fn delete_file_removes_files_links_and_folders_only_when_asked() {
    let fx = Fixture::new();
    fx.ok("write_file", json!({"path": "d/x/y.txt", "content": "1"}))
        .await;
    fx.ok("write_file", json!({"path": "f.txt", "content": "1"}))
        .await;
    let out = fx.ok("delete_file", json!({"path": "f.txt"})).await;
    assert_eq!(out["deleted"], json!({"files": 1, "folders": 0}));
    let msg = fx.fails("delete_file", json!({"path": "d"}), EXEC).await;
    assert!(msg.contains("recursive: true"), "{msg}");
    let out = fx
        .ok("delete_file", json!({"path": "d", "recursive": true}))
        .await;
    assert_eq!(out["deleted"], json!({"files": 1, "folders": 2}));
    assert!(!fx.dir("alice").join("d").exists());
    let msg = fx.fails("delete_file", json!({"path": "."}), ARGS).await;
    assert!(msg.contains("root itself cannot be deleted"), "{msg}");
    let msg = fx.fails("delete_file", json!({"path": "gone"}), EXEC).await;
    assert!(msg.contains("does not exist"), "{msg}");
    fx.fails("delete_file", json!({}), ARGS).await;
}

#[tokio::test]
async fn copy_file_copies_within_the_quota_and_refuses_folders_and_clobbering() {
    let fx = Fixture::with(|c| c.quota_bytes = 100);
    fx.ok(
        "write_file",
        json!({"path": "a.txt", "content": "x".repeat(40)}),
    )
    .await;
    let out = fx
        .ok(
            "copy_file",
            json!({"source": "a.txt", "destination": "b/a.txt"}),
        )
        .await;
    assert_eq!(
        out,
        json!({"source": "a.txt", "destination": "b/a.txt", "bytes": 40})
    );
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("b/a.txt")).unwrap(),
        "x".repeat(40)
    );
    let msg = fx
        .fails(
            "copy_file",
            json!({"source": "a.txt", "destination": "b/a.txt"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("overwrite: true"), "{msg}");
    fx.ok(
        "copy_file",
        json!({"source": "a.txt", "destination": "b/a.txt", "overwrite": true}),
    )
    .await;
    let msg = fx
        .fails(
            "copy_file",
            json!({"source": "a.txt", "destination": "c.txt"}),
            EXEC,
        )
        .await;
    assert!(
        msg.contains("quota") && msg.contains("uses 80 of 100"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "copy_file",
            json!({"source": "b", "destination": "c"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("is a folder"), "{msg}");
    let msg = fx
        .fails(
            "copy_file",
            json!({"source": "zz", "destination": "c"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("does not exist"), "{msg}");
    fx.fails("copy_file", json!({"source": "a.txt"}), ARGS)
        .await;
}

#[tokio::test]
async fn move_file_renames_files_and_folders() {
    let fx = Fixture::new();
    fx.ok("write_file", json!({"path": "a.txt", "content": "1"}))
        .await;
    fx.ok("write_file", json!({"path": "b.txt", "content": "2"}))
        .await;
    fx.ok(
        "move_file",
        json!({"source": "a.txt", "destination": "x/y/a2.txt"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("x/y/a2.txt")).unwrap(),
        "1"
    );
    let msg = fx
        .fails(
            "move_file",
            json!({"source": "b.txt", "destination": "x/y/a2.txt"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("overwrite: true"), "{msg}");
    fx.ok(
        "move_file",
        json!({"source": "b.txt", "destination": "x/y/a2.txt", "overwrite": true}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("x/y/a2.txt")).unwrap(),
        "2"
    );
    fx.ok("move_file", json!({"source": "x", "destination": "z"}))
        .await;
    assert!(fx.dir("alice").join("z/y/a2.txt").exists());
    let msg = fx
        .fails(
            "move_file",
            json!({"source": "z", "destination": "z/inner"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("into itself"), "{msg}");
    let msg = fx
        .fails(
            "move_file",
            json!({"source": "nope", "destination": "q"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("does not exist"), "{msg}");
    let msg = fx
        .fails(
            "move_file",
            json!({"source": ".", "destination": "q"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("root"), "{msg}");
    fx.fails("move_file", json!({"destination": "q"}), ARGS)
        .await;
}

#[tokio::test]
async fn create_folder_with_and_without_parents() {
    let fx = Fixture::with(|c| c.max_entries = 4);
    let out = fx.ok("create_folder", json!({"path": "p/q"})).await;
    assert_eq!(out, json!({"path": "p/q", "created": true}));
    assert_eq!(
        fx.ok("create_folder", json!({"path": "p/q"})).await["created"],
        false
    );
    let msg = fx
        .fails(
            "create_folder",
            json!({"path": "p/q", "parents": false}),
            EXEC,
        )
        .await;
    assert!(msg.contains("already exists"), "{msg}");
    let msg = fx
        .fails(
            "create_folder",
            json!({"path": "r/s", "parents": false}),
            EXEC,
        )
        .await;
    assert!(msg.contains("'r' does not exist"), "{msg}");
    fx.ok("write_file", json!({"path": "f", "content": ""}))
        .await;
    let msg = fx.fails("create_folder", json!({"path": "f"}), EXEC).await;
    assert!(msg.contains("already exists"), "{msg}");
    // workspace + p + q + f = 4 entries: the cap.
    let msg = fx.fails("create_folder", json!({"path": "t"}), EXEC).await;
    assert!(msg.contains("most it may hold is 4"), "{msg}");
    fx.fails("create_folder", json!({}), ARGS).await;
}

#[tokio::test]
async fn users_and_agents_have_separate_workspaces() {
    let fx = Fixture::with(|c| c.per_agent = true);
    fx.ok(
        "write_file",
        json!({"path": "mine.txt", "content": "alice's"}),
    )
    .await;
    let bob = ToolContext::new("bob");
    let res = fx
        .call_as(bob.clone(), "read_file", json!({"path": "mine.txt"}))
        .await;
    assert!(res.is_error);
    let res = fx.call_as(bob, "list_directory", json!({})).await;
    assert_eq!(res.content["count"], 0);
    // Alice's agent has its own workspace; Alice without an agent keeps hers.
    let mut agent = ToolContext::new("alice");
    agent.agent_id = Some("helper".into());
    let res = fx.call_as(agent.clone(), "list_directory", json!({})).await;
    assert_eq!(res.content["count"], 0);
    fx.call_as(
        agent,
        "write_file",
        json!({"path": "agent.txt", "content": "a"}),
    )
    .await;
    assert!(fx.root.join("alice/agents/helper/agent.txt").exists());
    assert_eq!(fx.ok("list_directory", json!({})).await["count"], 1);
    // An id that looks like a path names a hashed folder of its own.
    let hostile = ToolContext::new("../bob");
    let res = fx
        .call_as(hostile, "write_file", json!({"path": "x", "content": "1"}))
        .await;
    assert!(!res.is_error);
    assert!(!fx.root.join("bob").exists() || !fx.root.join("bob/workspace/x").exists());
    fx.assert_outside_intact();
}

#[tokio::test]
async fn without_per_agent_an_agent_uses_its_users_workspace() {
    let fx = Fixture::new();
    let mut agent = ToolContext::new("alice");
    agent.agent_id = Some("helper".into());
    fx.call_as(
        agent,
        "write_file",
        json!({"path": "a.txt", "content": "1"}),
    )
    .await;
    assert!(fx.dir("alice").join("a.txt").exists());
}

#[tokio::test]
async fn new_agent_workspaces_count_against_the_users_entries() {
    let fx = Fixture::with(|c| {
        c.per_agent = true;
        c.max_entries = 5;
    });
    for (agent, refused) in [("a1", false), ("a2", false), ("a3", false), ("a4", true)] {
        let mut ctx = ToolContext::new("alice");
        ctx.agent_id = Some(agent.into());
        let res = fx.call_as(ctx, "list_directory", json!({})).await;
        assert_eq!(res.is_error, refused, "{agent}: {:?}", res.content);
        if refused {
            let msg = res.error_message().unwrap();
            assert!(msg.contains("most it may hold is 5"), "{msg}");
        }
    }
    assert_eq!(
        super::names(&fx.root.join("alice/agents")),
        ["a1", "a2", "a3"]
    );
}

#[tokio::test]
async fn the_largest_whole_read_fits_the_pipelines_output_cap() {
    let fx = Fixture::new();
    let text = "0123456789abcdef".repeat(512 * 1024 / 16);
    fx.ok("write_file", json!({"path": "half.txt", "content": text}))
        .await;
    let out = fx.ok("read_file", json!({"path": "half.txt"})).await;
    assert_eq!(out["content"].as_str().unwrap().len(), 512 * 1024);
    let out = fx
        .ok(
            "read_file",
            json!({"path": "half.txt", "encoding": "base64"}),
        )
        .await;
    assert_eq!(out["size"], 512 * 1024);
    fx.ok(
        "write_file",
        json!({"path": "more.txt", "content": format!("{text}x")}),
    )
    .await;
    let msg = fx
        .fails("read_file", json!({"path": "more.txt"}), EXEC)
        .await;
    assert!(msg.contains("startLine"), "{msg}");
}

#[tokio::test]
async fn denied_prefixes_of_several_names_cannot_be_reached_by_moves() {
    let fx = Fixture::with(|c| c.denied_prefixes = vec!["keep/out".into()]);
    fx.ok("write_file", json!({"path": "x/out/f", "content": "1"}))
        .await;
    fx.ok("write_file", json!({"path": "keep/f", "content": "1"}))
        .await;
    for (source, destination) in [("x", "keep"), ("keep", "y")] {
        let msg = fx
            .fails(
                "move_file",
                json!({"source": source, "destination": destination, "overwrite": true}),
                ARGS,
            )
            .await;
        assert!(msg.contains("reserved"), "{msg}");
    }
    let msg = fx
        .fails(
            "delete_file",
            json!({"path": "keep", "recursive": true}),
            ARGS,
        )
        .await;
    assert!(msg.contains("reserved"), "{msg}");
    let msg = fx
        .fails(
            "write_file",
            json!({"path": "keep/out/f", "content": ""}),
            ARGS,
        )
        .await;
    assert!(msg.contains("reserved"), "{msg}");
    // The names of writes in progress are reserved as well.
    let msg = fx
        .fails(
            "write_file",
            json!({"path": ".toolsmith-write-x", "content": ""}),
            ARGS,
        )
        .await;
    assert!(msg.contains("reserved"), "{msg}");
}

#[tokio::test]
async fn walks_stop_at_the_visit_cap_and_searches_at_the_byte_budget() {
    let fx = Fixture::with(|c| {
        c.limits.max_walk_entries = 4;
        c.limits.max_search_bytes = 10;
    });
    for n in 0..6 {
        fx.ok(
            "write_file",
            json!({"path": format!("d/f{n}.txt"), "content": "needle"}),
        )
        .await;
    }
    for (tool, args) in [
        ("list_directory", json!({"recursive": true})),
        ("glob", json!({"pattern": "**"})),
        ("search_files", json!({"query": "needle"})),
    ] {
        let out = fx.ok(tool, args).await;
        assert_eq!(out["truncated"], true, "{tool}: {out}");
    }
    // 6 bytes per file, 10 bytes in all: the first file is read, the next ones skipped.
    let out = fx
        .ok(
            "search_files",
            json!({"query": "needle", "include": "d/f[0-2].txt"}),
        )
        .await;
    assert_eq!(
        (out["count"].clone(), out["filesSkipped"].clone()),
        (json!(1), json!(2)),
        "{out}"
    );
}
