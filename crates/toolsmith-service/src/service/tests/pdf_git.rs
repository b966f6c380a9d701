//! The PDF and git families as the service wires them: off until their group is enabled, then
//! working on the caller's workspace; git runs in the service's own command sandbox (the one
//! command tools use) with the commit author from the settings.

use super::*;

/// A service with workspaces under a temp dir and the groups `pdf` and `git` enabled.
async fn service() -> (Fixture, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().unwrap();
    let mut config = ToolServiceSettings {
        workspace: Some(crate::WorkspaceSettings::new(workspaces.path().join("ws"))),
        ..ToolServiceSettings::default()
    };
    config.git.default_author = "Service Bot <bot@example.org>".into();
    let f = fixture_with(config).await;
    (f, workspaces)
}

#[tokio::test]
async fn pdf_tools_work_once_their_group_is_on() {
    let (f, _ws) = service().await;
    let args = json!({"content": "# Title\n\nBody text.", "outputPath": "a.pdf"});
    let off = run(&f.service, "create_pdf", args.clone()).await;
    assert_eq!(off.error_kind(), Some(ErrorKind::NotFound), "{off:?}");
    f.service
        .set_tool_group(&user(), "pdf", true)
        .await
        .unwrap();
    let made = run(&f.service, "create_pdf", args).await;
    assert!(!made.is_error, "{made:?}");
    let read = run(&f.service, "read_pdf", json!({"path": "a.pdf"})).await;
    assert_eq!(read.content["text"], "Title\nBody text.", "{read:?}");
}

#[tokio::test]
async fn git_tools_run_in_the_services_sandbox_with_the_configured_author() {
    let (f, _ws) = service().await;
    if let Err(why) = f.service.command_runtime().sandbox().await {
        return toolsmith_core::testkit::missing("bubblewrap (the command sandbox)", why);
    }
    f.service
        .set_tool_group(&user(), "git", true)
        .await
        .unwrap();
    run(&f.service, "create_folder", json!({"path": "plain"})).await;
    let res = run(&f.service, "git_status", json!({"path": "plain"})).await;
    assert!(
        res.error_message()
            .unwrap_or_default()
            .contains("not a git repository"),
        "{res:?}"
    );
    // A repository made the way a person's own code would, in the same sandbox.
    let sandbox = f.service.command_runtime().sandbox().await.unwrap();
    let root = f
        .service
        .workspaces()
        .unwrap()
        .for_owner("default", None)
        .unwrap()
        .root_path()
        .to_path_buf();
    let argv = ["git", "init", "-q", "repo"];
    let mut request = toolsmith_command::RunRequest::argv(&argv);
    request.workspace = Some(&root);
    assert_eq!(sandbox.run(&request).await.unwrap().exit_code, Some(0));
    run(
        &f.service,
        "write_file",
        json!({"path": "repo/a.txt", "content": "a"}),
    )
    .await;
    let add = run(
        &f.service,
        "git_add",
        json!({"path": "repo", "files": ["a.txt"]}),
    )
    .await;
    assert!(!add.is_error, "{add:?}");
    let commit = run(
        &f.service,
        "git_commit",
        json!({"path": "repo", "message": "one"}),
    )
    .await;
    assert_eq!(
        commit.content["commit"]["author"], "Service Bot",
        "{commit:?}"
    );
    assert_eq!(commit.content["commit"]["email"], "bot@example.org");
}
