use super::*;

#[test]
fn uris_name_workspace_files_and_tool_sources_and_nothing_else() {
    assert_eq!(
        ResourceRef::parse("toolsmith://workspace/notes/todo.md"),
        Some(ResourceRef::WorkspaceFile("notes/todo.md".into()))
    );
    assert_eq!(
        ResourceRef::parse("toolsmith://workspace/a%20b.txt"),
        Some(ResourceRef::WorkspaceFile("a b.txt".into()))
    );
    assert_eq!(
        ResourceRef::parse("toolsmith://tools/add/source"),
        Some(ResourceRef::ToolSource("add".into()))
    );
    assert_eq!(ResourceRef::parse("toolsmith://tools/add"), None);
    assert_eq!(ResourceRef::parse("file:///etc/passwd"), None);
    // A malformed escape is kept as written, for the workspace's path checks to judge.
    assert_eq!(percent_decode("a%zz%4"), "a%zz%4");
    for r in [
        ResourceRef::WorkspaceFile("x/y.json".into()),
        ResourceRef::ToolSource("t".into()),
    ] {
        assert_eq!(ResourceRef::parse(&r.uri()), Some(r));
    }
}

#[test]
fn mime_types_follow_the_extension_and_binary_ones_are_blobs() {
    assert_eq!(mime_of("a/b.MD"), Some("text/markdown"));
    assert_eq!(mime_of("x.png"), Some("image/png"));
    assert_eq!(mime_of("Makefile"), None);
    assert!(binary_mime(mime_of("x.png")));
    assert!(!binary_mime(mime_of("x.svg")));
    assert!(!binary_mime(None));
    assert_eq!(
        source_mime(ToolKind::Http, " {\"a\":1}"),
        "application/json"
    );
    assert_eq!(source_mime(ToolKind::Http, "name: x"), "application/yaml");
}
