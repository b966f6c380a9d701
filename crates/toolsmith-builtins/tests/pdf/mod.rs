//! The PDF tools end to end through a real `Pipeline` on a real workspace (the file tools'
//! fixture): `create_pdf` → `read_pdf` → `pdf_info` round trips, the arguments refused with
//! the fix, and hostile files (not a PDF, truncated, garbage, encrypted, decompression bomb,
//! deep nesting, a cyclic page tree, too large) answered with a clear error, never a panic.

mod hostile;

use serde_json::{Value, json};
use toolsmith_core::ErrorKind;

use crate::files::Fixture;

const EXEC: ErrorKind = ErrorKind::ExecutionError;
const ARGS: ErrorKind = ErrorKind::InvalidArguments;

const REPORT: &str = "# Quarterly Report\n\n\
Revenue grew by **12 percent** while costs stayed *flat*; see `summary.csv`.\n\n\
## Highlights\n\n\
- New customers in Lisbon\n\
- Café openings: 3\n\n\
1. First step\n\
2. Second step\n\n\
| Region | Sales |\n|---|---|\n| North | 120 |\n\n\
```\nlet total = 42;\n```\n\n\
> A quoted remark.\n\n---\n\nThe end.\n";

#[tokio::test]
async fn a_markdown_document_round_trips_through_create_read_and_info() {
    let fx = Fixture::new();
    let made = fx
        .ok(
            "create_pdf",
            json!({"content": REPORT, "outputPath": "reports/q3.pdf", "title": "Q3 Report",
                   "author": "Ada Lovelace", "subject": "Sales"}),
        )
        .await;
    assert_eq!(made["path"], "reports/q3.pdf");
    assert_eq!(made["pageCount"], 1);
    assert_eq!(made["created"], true);
    assert!(made.get("unsupportedCharacters").is_none(), "{made}");
    let on_disk = std::fs::read(fx.dir("alice").join("reports/q3.pdf")).unwrap();
    assert!(on_disk.starts_with(b"%PDF-1.7"));
    assert_eq!(made["bytes"], on_disk.len());

    let read = fx.ok("read_pdf", json!({"path": "reports/q3.pdf"})).await;
    let text = read["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for want in [
        "Quarterly Report",
        "Revenue grew by 12 percent while costs stayed flat; see summary.csv.",
        "Highlights",
        "• New customers in Lisbon",
        "• Café openings: 3",
        "1. First step",
        "2. Second step",
        "Region | Sales",
        "North | 120",
        "let total = 42;",
        "A quoted remark.",
        "The end.",
    ] {
        assert!(
            lines.iter().any(|l| squash(l) == squash(want)),
            "{want:?} not a line of {text:?}"
        );
    }
    assert_eq!(read["pageCount"], 1);
    assert_eq!(read["truncated"], false);
    assert_eq!(read["characters"], text.chars().count());

    let info = fx.ok("pdf_info", json!({"path": "reports/q3.pdf"})).await;
    assert_eq!(info["pageCount"], 1);
    assert_eq!(info["title"], "Q3 Report");
    assert_eq!(info["author"], "Ada Lovelace");
    assert_eq!(info["subject"], "Sales");
    assert_eq!(info["producer"], "Toolsmith create_pdf");
    assert_eq!(info["encrypted"], false);
    assert_eq!(info["version"], "1.7");
    assert_eq!(info["size"], on_disk.len());
    assert_eq!(
        info["pageSize"],
        json!({"width": 595.0, "height": 842.0, "unit": "pt"})
    );
    assert!(
        info["creationDate"].as_str().unwrap().starts_with("D:20"),
        "{info}"
    );
    fx.assert_outside_intact();
}

/// Spaces collapsed, so a run boundary's spacing does not matter.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn long_documents_span_pages_and_are_read_a_range_at_a_time() {
    let fx = Fixture::new();
    let content: String = (1..=400).map(|i| format!("Line number {i}\n")).collect();
    let made = fx
        .ok(
            "create_pdf",
            json!({"content": content, "outputPath": "long.pdf", "format": "text",
                   "pageSize": "Letter", "fontSize": 10}),
        )
        .await;
    let pages = made["pageCount"].as_u64().unwrap();
    assert!(pages >= 5, "{made}");
    let info = fx.ok("pdf_info", json!({"path": "long.pdf"})).await;
    assert_eq!(info["pageCount"], pages);
    assert_eq!(info["pageSize"]["width"], 612.0);

    let all = fx.ok("read_pdf", json!({"path": "long.pdf"})).await;
    let lines: Vec<&str> = all["text"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .collect();
    let want: Vec<String> = (1..=400).map(|i| format!("Line number {i}")).collect();
    assert_eq!(lines, want);

    let second = fx
        .ok(
            "read_pdf",
            json!({"path": "long.pdf", "startPage": 2, "endPage": 2, "byPage": true}),
        )
        .await;
    assert_eq!(second["startPage"], 2);
    assert_eq!(second["endPage"], 2);
    let page_text = second["pages"][0]["text"].as_str().unwrap();
    assert_eq!(second["pages"][0]["page"], 2);
    assert!(!page_text.contains("Line number 1\n"), "{page_text}");
    assert!(second.get("text").is_none());
}

#[tokio::test]
async fn characters_the_fonts_cannot_show_are_counted() {
    let fx = Fixture::new();
    let made = fx
        .ok(
            "create_pdf",
            json!({"content": "Price: 5 € — naïve 日本", "outputPath": "u.pdf"}),
        )
        .await;
    assert_eq!(made["unsupportedCharacters"], 2);
    assert!(made["hint"].as_str().unwrap().contains("'?'"));
    let read = fx.ok("read_pdf", json!({"path": "u.pdf"})).await;
    assert_eq!(read["text"], "Price: 5 € — naïve ??");
}

#[tokio::test]
async fn bad_arguments_are_refused_with_the_fix() {
    let fx = Fixture::new();
    let msg = fx
        .fails("read_pdf", json!({"path": "missing.pdf"}), EXEC)
        .await;
    assert!(msg.contains("list_directory"), "{msg}");
    let msg = fx
        .fails(
            "create_pdf",
            json!({"content": "x", "outputPath": "../escape.pdf"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("outside") || msg.contains(".."), "{msg}");
    fx.fails("create_pdf", json!({"content": "x"}), ARGS).await;
    fx.fails("read_pdf", json!({"path": "a.pdf", "startPage": 0}), ARGS)
        .await;

    fx.ok(
        "create_pdf",
        json!({"content": "one page", "outputPath": "one.pdf"}),
    )
    .await;
    let msg = fx
        .fails(
            "read_pdf",
            json!({"path": "one.pdf", "startPage": 3, "endPage": 2}),
            ARGS,
        )
        .await;
    assert!(msg.contains("endPage >= startPage"), "{msg}");
    let msg = fx
        .fails("read_pdf", json!({"path": "one.pdf", "startPage": 5}), ARGS)
        .await;
    assert!(msg.contains("has 1 pages"), "{msg}");
    let msg = fx
        .fails(
            "create_pdf",
            json!({"content": "again", "outputPath": "one.pdf", "overwrite": false}),
            EXEC,
        )
        .await;
    assert!(msg.contains("overwrite: true"), "{msg}");
    fx.assert_outside_intact();
}

#[tokio::test]
async fn create_pdf_keeps_its_limits_and_the_quota() {
    let fx = Fixture::new();
    let huge = "a".repeat(toolsmith_builtins::pdf::create::MAX_CONTENT_BYTES + 1);
    let msg = fx
        .fails(
            "create_pdf",
            json!({"content": huge, "outputPath": "big.pdf"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("split it"), "{msg}");
    // 600 pages of short lines: over the page cap, refused before anything is written.
    let many: String = "line\n".repeat(60 * 600);
    let msg = fx
        .fails(
            "create_pdf",
            json!({"content": many, "outputPath": "many.pdf", "format": "text"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("500 pages"), "{msg}");
    assert!(!fx.dir("alice").join("many.pdf").exists());

    let tiny = Fixture::with(|c| c.quota_bytes = 1000);
    let msg = tiny
        .fails(
            "create_pdf",
            json!({"content": REPORT, "outputPath": "q.pdf"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("quota"), "{msg}");
}

#[test]
fn every_pdf_tool_is_in_the_pdf_group_and_holds_filesystem() {
    let tools = toolsmith_builtins::pdf::tools(&toolsmith_builtins::BuiltinEnv::default());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["read_pdf", "create_pdf", "pdf_info"]);
    for tool in &tools {
        assert_eq!(tool.definition.category.as_deref(), Some("PDF"));
        assert_eq!(
            tool.origin,
            toolsmith_core::ToolOrigin::BuiltIn {
                provider: "pdf".into()
            }
        );
        assert_eq!(
            tool.permissions.iter().copied().collect::<Vec<_>>(),
            [toolsmith_core::Permission::Filesystem]
        );
        let params: &Value = &tool.definition.parameters;
        for (prop, schema) in params["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{prop}");
        }
    }
}
