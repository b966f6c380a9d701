//! The `mcp` content builders (issue 34): a value they made, returned as the result, is a
//! result of MCP content blocks (`ContentForm::Blocks`); anything else — an object of the same
//! shape included — stays plain JSON; bad blocks are refused naming the fix.

use serde_json::json;
use toolsmith_core::{ContentForm, ErrorKind};

use crate::support::*;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn every_builder_makes_the_block_mcp_sends() {
    let res = run(&format!(
        r#"return mcp.result({{
            content: [
                mcp.text('a red dot', {{annotations: {{audience: ['user'], priority: 0.5}}}}),
                mcp.image('{PNG}', 'image/png', {{_meta: {{origin: 'tool'}}}}),
                mcp.audio('UklGRiQAAABXQVZF', 'audio/wav'),
                mcp.resource({{uri: 'test://notes/1', mimeType: 'text/plain', text: 'first note'}}),
                mcp.resource({{uri: 'test://blobs/1', blob: 'AAECAw=='}}),
                mcp.resourceLink({{uri: 'file:///readme.md', name: 'readme.md', mimeType: 'text/markdown'}}),
            ],
            structuredContent: {{dots: 1}},
            _meta: {{trace: 'x'}},
        }});"#
    ))
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.form, ContentForm::Blocks);
    assert_eq!(
        res.content,
        json!({
            "content": [
                {"type": "text", "text": "a red dot", "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "image", "data": PNG, "mimeType": "image/png", "_meta": {"origin": "tool"}},
                {"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "test://notes/1", "mimeType": "text/plain", "text": "first note"}},
                {"type": "resource", "resource": {"uri": "test://blobs/1", "blob": "AAECAw=="}},
                {"type": "resource_link", "uri": "file:///readme.md", "name": "readme.md", "mimeType": "text/markdown"}
            ],
            "structuredContent": {"dots": 1},
            "_meta": {"trace": "x"}
        })
    );
}

#[tokio::test]
async fn a_block_or_a_list_of_blocks_is_a_result_and_structured_content_alone_gets_its_text() {
    let one = run(&format!("return mcp.image('{PNG}', 'image/png');")).await;
    assert_eq!(one.form, ContentForm::Blocks);
    assert_eq!(one.content["content"][0]["type"], "image");
    let list = run("return [mcp.text('a'), mcp.text('b')];").await;
    assert_eq!(list.form, ContentForm::Blocks);
    assert_eq!(list.content["content"][1]["text"], "b");
    let structured = run("return mcp.result({structuredContent: {n: 1}});").await;
    assert_eq!(
        structured.content,
        json!({"content": [{"type": "text", "text": "{\"n\":1}"}], "structuredContent": {"n": 1}})
    );
    let failed = run("return mcp.result({content: 'it broke', isError: true});").await;
    assert!(failed.is_error);
    assert_eq!(failed.error_kind(), Some(ErrorKind::ExecutionError));
    assert_eq!(failed.error_message(), Some("it broke"));
}

/// The rule: only what the builders made counts; the same shape written by hand, a copy of a
/// made block, or a made block inside another value is plain JSON.
#[tokio::test]
async fn a_plain_object_of_the_same_shape_stays_plain_json() {
    for code in [
        "return {content: [{type: 'text', text: 'x'}], structuredContent: {a: 1}};",
        "mcp.text('made but not returned'); return {content: [{type: 'image', data: 'AAAA', mimeType: 'image/png'}]};",
        "return JSON.parse(JSON.stringify(mcp.result({content: 'copied'})));",
        "return {wrapped: mcp.text('inside')};",
        "return [mcp.text('a'), {type: 'text', text: 'plain'}];",
    ] {
        let res = run(code).await;
        assert!(!res.is_error, "{code}: {}", res.content);
        assert_eq!(res.form, ContentForm::Json, "{code}: {}", res.content);
    }
}

#[tokio::test]
async fn bad_blocks_are_refused_naming_the_fix() {
    let cases = [
        (
            "return mcp.image('not base64!', 'image/png');",
            "must be base64 text",
        ),
        ("return mcp.image('AAAA');", "mimeType must be a string"),
        ("return mcp.text(5);", "the text must be a string"),
        (
            "return mcp.resource({uri: 'u'});",
            "exactly one of text and blob",
        ),
        (
            "return mcp.resourceLink({uri: 'u'});",
            "name must be a string",
        ),
        (
            "return mcp.result({content: [{text: 'no type'}]});",
            "is not a content block",
        ),
        ("return mcp.result({});", "give content"),
        (
            "return mcp.result({content: 'x', isError: 'yes'});",
            "isError must be true or false",
        ),
        (
            "return mcp.result({content: [{type: 'video', data: 'AAAA'}]});",
            "not one of text, image",
        ),
        (
            "return mcp.text('t', {annotations: {priority: 7}});",
            "from 0 to 1",
        ),
    ];
    for (code, expected) in cases {
        let res = run(code).await;
        let message = failed(&res, ErrorKind::ExecutionError);
        assert!(message.contains(expected), "{code}: {message}");
    }
}

#[tokio::test]
async fn a_content_result_over_the_output_limit_is_refused_whole() {
    let limits = small_limits();
    let code = format!(
        "return mcp.text('x'.repeat({}));",
        limits.max_output_bytes + 1
    );
    let res = shared()
        .run(job_with(
            &code,
            json!({}),
            limits,
            std::sync::Arc::new(NoHost),
        ))
        .await;
    failed(&res, ErrorKind::OutputTooLarge);
}
