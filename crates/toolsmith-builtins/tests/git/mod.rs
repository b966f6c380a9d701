//! The git tools end to end: a real workspace, the real command sandbox (bubblewrap) and the
//! host's git inside it. A repository is made in the workspace, then each tool works on it;
//! bad arguments get the fix; a hostile `.git/config` (fsmonitor, hooks, pager, external diff)
//! runs nothing on the host. Without bubblewrap these tests fail, or skip with
//! `TOOLSMITH_ALLOW_SKIP=1` (`toolsmith_core::testkit`).

mod hostile;

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_builtins::git::SandboxSource;
use toolsmith_command::{CommandSandbox, RunRequest};
use toolsmith_core::ErrorKind;

use crate::files::Fixture;

const EXEC: ErrorKind = ErrorKind::ExecutionError;
const ARGS: ErrorKind = ErrorKind::InvalidArguments;

/// The probed sandbox, shared as the service shares its own.
#[derive(Debug)]
struct Probed(Arc<CommandSandbox>);

#[async_trait::async_trait]
impl SandboxSource for Probed {
    async fn sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        Ok(self.0.clone())
    }
}

/// A source with no sandbox, and why.
#[derive(Debug)]
struct Missing;

#[async_trait::async_trait]
impl SandboxSource for Missing {
    async fn sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        Err("bubblewrap (bwrap) was not found".into())
    }
}

async fn sandbox() -> Option<Arc<CommandSandbox>> {
    toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        CommandSandbox::probe().await.map(Arc::new),
    )
}

/// A fixture whose git tools run in `sandbox`, with workspaces owned as the service owns them.
fn fixture(sandbox: &Arc<CommandSandbox>) -> Fixture {
    let source: Arc<dyn SandboxSource> = Arc::new(Probed(sandbox.clone()));
    Fixture::with_env(
        |c| c.owner = CommandSandbox::workspace_owner(),
        |env| env.sandbox = Some(source),
    )
}

/// `git init` of `folder` in alice's workspace, run in the sandbox as a person's own code
/// would (the git tools have no init of their own: the spec's seven).
async fn init_repo(fx: &Fixture, sandbox: &CommandSandbox, folder: &str) {
    fx.ok("create_folder", json!({"path": folder})).await;
    let root = fx.dir("alice");
    let argv = ["git", "-c", "init.defaultBranch=main", "init", "-q", folder];
    let mut request = RunRequest::argv(&argv);
    request.workspace = Some(&root);
    let out = sandbox.run(&request).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "git init: {}", out.stderr);
}

#[tokio::test]
async fn a_repository_lives_through_every_git_tool() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let fx = fixture(&sandbox);
    init_repo(&fx, &sandbox, "proj").await;
    let repo = |extra: Value| {
        let mut args = json!({"path": "proj"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };

    let empty = fx.ok("git_log", repo(json!({}))).await;
    assert_eq!(empty["count"], 0);
    assert!(empty["hint"].as_str().unwrap().contains("git_commit"));

    fx.ok(
        "write_file",
        json!({"path": "proj/README.md", "content": "hello\n"}),
    )
    .await;
    let status = fx.ok("git_status", repo(json!({}))).await;
    assert_eq!(status["branch"], "main");
    assert_eq!(status["untracked"], json!(["README.md"]));
    assert_eq!(status["clean"], false);

    let added = fx
        .ok("git_add", repo(json!({"files": ["README.md"]})))
        .await;
    assert_eq!(
        added["staged"],
        json!([{"path": "README.md", "status": "added"}])
    );
    let first = fx
        .ok("git_commit", repo(json!({"message": "Add the readme"})))
        .await;
    assert_eq!(first["commit"]["message"], "Add the readme");
    assert_eq!(first["commit"]["author"], "Toolsmith Agent");
    assert_eq!(first["commit"]["email"], "agent@toolsmith.local");
    assert_eq!(first["filesChanged"], 1);
    assert_eq!(fx.ok("git_status", repo(json!({}))).await["clean"], true);

    fx.ok(
        "write_file",
        json!({"path": "proj/README.md", "content": "hello\nworld\n"}),
    )
    .await;
    let diff = fx.ok("git_diff", repo(json!({}))).await;
    assert_eq!(
        diff["files"],
        json!([{"path": "README.md", "additions": 1, "deletions": 0, "binary": false}])
    );
    assert!(
        diff["diff"].as_str().unwrap().contains("\n+world"),
        "{diff}"
    );
    let staged = fx.ok("git_diff", repo(json!({"staged": true}))).await;
    assert_eq!(staged["files"], json!([]));

    let second = fx
        .ok(
            "git_commit",
            repo(json!({"message": "Say world", "all": true, "author": "Ada Lovelace <ada@example.org>"})),
        )
        .await;
    assert_eq!(second["commit"]["author"], "Ada Lovelace");
    let log = fx.ok("git_log", repo(json!({}))).await;
    let messages: Vec<&str> = log["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Say world", "Add the readme"]);
    assert_eq!(
        fx.ok("git_log", repo(json!({"limit": 1}))).await["count"],
        1
    );
    let against = fx
        .ok("git_diff", repo(json!({"ref": "HEAD~1", "statOnly": true})))
        .await;
    assert_eq!(against["files"][0]["additions"], 1);
    assert!(against.get("diff").is_none());

    // Branches: create, list, switch, commit there, switch back, delete.
    fx.ok(
        "git_branch",
        repo(json!({"action": "create", "name": "feature/x"})),
    )
    .await;
    let list = fx.ok("git_branch", repo(json!({}))).await;
    assert_eq!(list["current"], "main");
    let names: Vec<&str> = list["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["feature/x", "main"]);
    let switched = fx
        .ok("git_checkout", repo(json!({"target": "feature/x"})))
        .await;
    assert_eq!(switched["branch"], "feature/x");
    fx.ok(
        "write_file",
        json!({"path": "proj/new.txt", "content": "on a branch\n"}),
    )
    .await;
    fx.ok("git_add", repo(json!({"files": ["."]}))).await;
    fx.ok("git_commit", repo(json!({"message": "Branch work"})))
        .await;
    fx.ok("git_checkout", repo(json!({"target": "main"}))).await;
    assert!(!fx.dir("alice").join("proj/new.txt").exists());
    let msg = fx
        .fails(
            "git_branch",
            repo(json!({"action": "delete", "name": "feature/x"})),
            EXEC,
        )
        .await;
    assert!(msg.contains("force: true"), "{msg}");
    fx.ok(
        "git_branch",
        repo(json!({"action": "delete", "name": "feature/x", "force": true})),
    )
    .await;

    // A new branch in one step, and a file restored from HEAD.
    let made = fx
        .ok(
            "git_checkout",
            repo(json!({"target": "topic", "create": true})),
        )
        .await;
    assert_eq!(
        (made["branch"].clone(), made["created"].clone()),
        (json!("topic"), json!(true))
    );
    fx.ok(
        "write_file",
        json!({"path": "proj/README.md", "content": "scribbled\n"}),
    )
    .await;
    fx.ok(
        "git_checkout",
        repo(json!({"target": "HEAD", "files": ["README.md"]})),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("proj/README.md")).unwrap(),
        "hello\nworld\n"
    );
    fx.assert_outside_intact();
}

#[tokio::test]
async fn bad_arguments_get_the_fix() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let fx = fixture(&sandbox);
    fx.ok("create_folder", json!({"path": "plain"})).await;
    let msg = fx.fails("git_status", json!({"path": "plain"}), EXEC).await;
    assert!(
        msg.contains("not a git repository") && msg.contains("'path'"),
        "{msg}"
    );
    let msg = fx
        .fails("git_status", json!({"path": "nowhere"}), EXEC)
        .await;
    assert!(msg.contains("list_directory"), "{msg}");
    fx.ok("write_file", json!({"path": "f.txt", "content": "x"}))
        .await;
    let msg = fx.fails("git_log", json!({"path": "f.txt"}), ARGS).await;
    assert!(msg.contains("not a folder"), "{msg}");
    fx.fails("git_status", json!({"path": "../elsewhere"}), ARGS)
        .await;

    init_repo(&fx, &sandbox, "r").await;
    let msg = fx
        .fails(
            "git_commit",
            json!({"path": "r", "message": "nothing"}),
            EXEC,
        )
        .await;
    assert!(
        msg.contains("nothing to commit") && msg.contains("git_add"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "git_commit",
            json!({"path": "r", "message": "m", "author": "just a name"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("Name <email>"), "{msg}");
    let msg = fx
        .fails(
            "git_add",
            json!({"path": "r", "files": ["missing.txt"]}),
            EXEC,
        )
        .await;
    assert!(msg.contains("git_status"), "{msg}");
    let msg = fx
        .fails("git_add", json!({"path": "r", "files": ["../../x"]}), ARGS)
        .await;
    assert!(msg.contains(".."), "{msg}");
    let msg = fx
        .fails(
            "git_log",
            json!({"path": "r", "ref": "--output=/tmp/x"}),
            ARGS,
        )
        .await;
    assert!(msg.contains("cannot start with '-'"), "{msg}");

    fx.ok("write_file", json!({"path": "r/a.txt", "content": "a"}))
        .await;
    fx.ok("git_add", json!({"path": "r", "files": ["a.txt"]}))
        .await;
    fx.ok("git_commit", json!({"path": "r", "message": "one"}))
        .await;
    let msg = fx
        .fails("git_checkout", json!({"path": "r", "target": "nope"}), EXEC)
        .await;
    assert!(
        msg.contains("git_branch") && msg.contains("create: true"),
        "{msg}"
    );
    let msg = fx
        .fails("git_log", json!({"path": "r", "ref": "nope"}), EXEC)
        .await;
    assert!(msg.contains("no branch or commit named 'nope'"), "{msg}");
    let msg = fx
        .fails("git_branch", json!({"path": "r", "action": "create"}), ARGS)
        .await;
    assert!(msg.contains("'name'"), "{msg}");
    let msg = fx
        .fails(
            "git_branch",
            json!({"path": "r", "action": "create", "name": "main"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("already exists"), "{msg}");
    let msg = fx
        .fails(
            "git_branch",
            json!({"path": "r", "action": "delete", "name": "ghost"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("no branch named 'ghost'"), "{msg}");
}

#[tokio::test]
async fn a_full_workspace_takes_no_more_from_git() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let source: Arc<dyn SandboxSource> = Arc::new(Probed(sandbox.clone()));
    let fx = Fixture::with_env(
        |c| {
            c.owner = CommandSandbox::workspace_owner();
            c.quota_bytes = 4096;
        },
        |env| env.sandbox = Some(source),
    );
    // `git init` alone (its sample hooks) fills a 4 KB quota.
    init_repo(&fx, &sandbox, "r").await;
    let status = fx.ok("git_status", json!({"path": "r"})).await;
    assert_eq!(status["clean"], true);
    for (tool, args) in [
        ("git_add", json!({"path": "r", "files": ["."]})),
        (
            "git_commit",
            json!({"path": "r", "message": "m", "all": true}),
        ),
        (
            "git_checkout",
            json!({"path": "r", "target": "x", "create": true}),
        ),
    ] {
        let msg = fx.fails(tool, args, EXEC).await;
        assert!(
            msg.contains("workspace is full") && msg.contains("delete_file"),
            "{tool}: {msg}"
        );
    }
}

#[tokio::test]
async fn without_a_sandbox_the_tools_say_why_and_run_nothing() {
    let fx = Fixture::new();
    fx.ok("create_folder", json!({"path": "r"})).await;
    let msg = fx.fails("git_status", json!({"path": "r"}), EXEC).await;
    assert!(
        msg.contains("no command sandbox") && msg.contains("bubblewrap"),
        "{msg}"
    );
    let missing: Arc<dyn SandboxSource> = Arc::new(Missing);
    let fx = Fixture::with_env(|_| {}, |env| env.sandbox = Some(missing));
    let msg = fx.fails("git_log", json!({}), EXEC).await;
    assert!(
        msg.contains("bwrap) was not found") && msg.contains("never on the host"),
        "{msg}"
    );
}

#[test]
fn every_git_tool_is_in_the_git_group_and_holds_filesystem() {
    let tools = toolsmith_builtins::git::tools(&toolsmith_builtins::BuiltinEnv::default());
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    let group = toolsmith_builtins::groups::find("git").unwrap();
    assert_eq!(names, group.tools);
    for tool in &tools {
        assert_eq!(tool.definition.category.as_deref(), Some("Git"));
        assert_eq!(
            tool.permissions.iter().copied().collect::<Vec<_>>(),
            [toolsmith_core::Permission::Filesystem]
        );
        let params = &tool.definition.parameters;
        assert_eq!(params["additionalProperties"], false);
        for (prop, schema) in params["properties"].as_object().unwrap() {
            assert!(schema["description"].is_string(), "{} {prop}", tool.name());
        }
    }
}
