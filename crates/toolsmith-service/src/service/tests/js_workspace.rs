//! A JS tool's `fs` (permission `filesystem`) against the real workspace and sandbox: it works on
//! the caller's own workspace through the file tools, with their path security; it exists only
//! with the permission; every file operation, by `fs` or `utils.callTool`, spends the run's
//! `js_max_fs_operations`; a disabled `filesystem` group is named with the way to enable it.

use super::*;

/// A service whose users have workspaces under a temp dir, with `fs_budget` file operations
/// per JS run and the tool groups in `disabled` off.
async fn service_with(fs_budget: u32, disabled: &[&str]) -> (Fixture, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().unwrap();
    let mut policy = toolsmith_policy::PolicyDocument::default();
    policy.tool_groups.disable = disabled.iter().map(|g| (*g).to_owned()).collect();
    let f = fixture_with(ToolServiceSettings {
        workspace: Some(crate::WorkspaceSettings::new(workspaces.path().join("ws"))),
        js_max_fs_operations: fs_budget,
        policy: (!disabled.is_empty()).then_some(policy),
        ..ToolServiceSettings::default()
    })
    .await;
    (f, workspaces)
}

/// Creates `owner`'s JS tool holding `filesystem` that runs `code`.
async fn fs_tool_of(f: &Fixture, owner: &str, name: &str, code: &str) {
    f.service
        .create(
            &Actor::user(owner),
            with_perms(tool(name, code), &[Permission::Filesystem]),
        )
        .await
        .unwrap();
}

/// Creates the default user's JS tool holding `filesystem` that runs `code`.
async fn fs_tool(f: &Fixture, name: &str, code: &str) {
    fs_tool_of(f, "default", name, code).await;
}

async fn run_as(f: &Fixture, user: &str, name: &str) -> ToolResult {
    f.service
        .execute(name, json!({}), ToolContext::new(user))
        .await
}

#[tokio::test]
async fn fs_reads_writes_lists_and_removes_in_the_callers_own_workspace() {
    let (f, _dirs) = service_with(100, &[]).await;
    let code = r#"
        const written = await fs.writeFile('notes/today.md', '# ' + context.userId);
        const text = await fs.readFile('notes/today.md');
        const names = await fs.readdir('notes');
        const info = await fs.stat('notes/today.md');
        await fs.mkdir('empty/inner');
        await fs.rm('empty', {recursive: true});
        const root = await fs.readdir();
        const b64 = await fs.readFile('notes/today.md', 'base64');
        return {bytes: written.bytes ?? written.size, text, names, type: info.type, size: info.size, root, b64};
    "#;
    for owner in ["alice", "bob"] {
        fs_tool_of(&f, owner, "notebook", code).await;
    }
    let res = run_as(&f, "alice", "notebook").await;
    assert!(!res.is_error, "{res:?}");
    assert_eq!(res.content["text"], "# alice");
    assert_eq!(res.content["names"], json!(["today.md"]));
    assert_eq!(res.content["type"], "file");
    assert_eq!(res.content["size"], 7);
    assert_eq!(res.content["root"], json!(["notes"]));
    assert_eq!(res.content["b64"], "IyBhbGljZQ==");

    // The file is alice's: the file tools find it for her, not for bob.
    let read = |who: &'static str| {
        f.service.execute(
            "read_file",
            json!({"path": "notes/today.md"}),
            ToolContext::new(who),
        )
    };
    assert_eq!(read("alice").await.content["content"], "# alice");
    assert!(read("bob").await.is_error);
    // Bob's copy of the tool writes his own file.
    let res = run_as(&f, "bob", "notebook").await;
    assert_eq!(res.content["text"], "# bob", "{res:?}");
    assert_eq!(read("alice").await.content["content"], "# alice");
}

#[tokio::test]
async fn fs_refuses_paths_out_of_the_workspace_and_bad_arguments_with_the_fix() {
    let (f, dirs) = service_with(100, &[]).await;
    let outside = dirs.path().join("outside.txt");
    std::fs::write(&outside, "host secret").unwrap();
    let code = r#"
        const attempts = [
            () => fs.readFile('../../outside.txt'),
            () => fs.readFile('/etc/passwd'),
            () => fs.writeFile('../escape.txt', 'x'),
            () => fs.writeFile('a/../../escape.txt', 'x'),
            () => fs.readFile('notes/\u0000.txt'),
            () => fs.readFile(''),
            () => fs.readFile(42),
            () => fs.writeFile('ok.txt', {not: 'a string'}),
            () => fs.readFile('ok.txt', 7),
            () => fs.stat('missing.txt'),
        ];
        const out = [];
        for (const attempt of attempts) {
            try { out.push('ok: ' + JSON.stringify(await attempt())); }
            catch (e) { out.push(e.message); }
        }
        return out;
    "#;
    fs_tool_of(&f, "mallory", "prober", code).await;
    let res = run_as(&f, "mallory", "prober").await;
    assert!(!res.is_error, "{res:?}");
    let out: Vec<String> = serde_json::from_value(res.content.clone()).unwrap();
    assert_eq!(out.len(), 10, "{out:?}");
    for message in &out {
        assert!(
            !message.starts_with("ok: "),
            "an attempt succeeded: {out:?}"
        );
        assert!(!message.contains("host secret"), "{out:?}");
        assert!(message.starts_with("fs."), "no method named: {out:?}");
    }
    assert!(
        out[5].contains("non-empty string relative to the workspace root"),
        "{out:?}"
    );
    assert!(
        out[6].contains("non-empty string relative to the workspace root"),
        "{out:?}"
    );
    assert!(out[7].contains("JSON.stringify"), "{out:?}");
    assert!(out[8].contains("options must be an object"), "{out:?}");
    assert!(out[9].contains("does not exist"), "{out:?}");
    assert!(!dirs.path().join("escape.txt").exists());
    assert!(!dirs.path().join("ws").join("escape.txt").exists());
}

#[tokio::test]
async fn fs_exists_only_with_the_filesystem_permission() {
    let (f, _dirs) = service_with(100, &[]).await;
    f.service
        .create(&user(), tool("no_fs", "return await fs.readFile('a.txt')"))
        .await
        .unwrap();
    let res = run(&f.service, "no_fs", json!({})).await;
    assert_eq!(
        res.error_message(),
        Some(
            "ReferenceError: fs is not defined: fs exists only in tools that declare permissions: [\"filesystem\"] (set it with create_tool or update_custom_tool)"
        ),
        "{res:?}"
    );
    fs_tool(
        &f,
        "with_fs",
        "return [typeof fs, typeof fs.readFile, typeof shell]",
    )
    .await;
    let res = run(&f.service, "with_fs", json!({})).await;
    assert_eq!(
        res.content,
        json!(["object", "function", "undefined"]),
        "{res:?}"
    );
}

#[tokio::test]
async fn every_file_operation_spends_the_runs_budget_whichever_way_it_is_made() {
    let (f, _dirs) = service_with(5, &[]).await;
    let code = r#"
        await fs.writeFile('a.txt', 'a');                          // 1
        await utils.callTool('read_file', {path: 'a.txt'});        // 2
        await utils.callTool('calculate', {expression: '1+1'});    // not a file operation
        await fs.stat('a.txt');                                    // 3
        await fs.readdir();                                        // 4
        await fs.readFile('a.txt');                                // 5
        try { await utils.callTool('file_info', {path: 'a.txt'}); return 'a sixth operation ran'; }
        catch (e) { return e.message; }
    "#;
    fs_tool(&f, "spender", code).await;
    let res = run(&f.service, "spender", json!({})).await;
    let message = res.content.as_str().unwrap_or_default();
    assert!(
        message.contains("used its 5 file operations") && message.contains("js_max_fs_operations"),
        "{res:?}"
    );
    // The budget is per run: the next run has all five again.
    let res = run(&f.service, "spender", json!({})).await;
    assert!(
        res.content
            .as_str()
            .unwrap_or_default()
            .contains("used its 5"),
        "{res:?}"
    );
}

#[tokio::test]
async fn a_disabled_filesystem_group_is_named_with_the_way_to_enable_it() {
    let (f, _dirs) = service_with(100, &["filesystem"]).await;
    fs_tool(
        &f,
        "reader",
        "try { return await fs.readFile('a.txt') } catch (e) { return e.message }",
    )
    .await;
    let res = run(&f.service, "reader", json!({})).await;
    let message = res.content.as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "fs.readFile: tool 'read_file' is in the tool group 'filesystem', which is disabled"
        ) && message.contains("toolsmith groups enable filesystem"),
        "{res:?}"
    );
}
