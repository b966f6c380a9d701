//! The code execution tools and sandbox sessions end to end: each tool through a real
//! `Pipeline`, in the real command sandbox (bubblewrap), on real workspaces in a temp dir laid
//! out like the server's data dir (mode 0700, a secret key file, two users). Without
//! bubblewrap these tests fail, or skip with `TOOLSMITH_ALLOW_SKIP=1` (`toolsmith_core::testkit`).
//! `execute_javascript` needs the server's JS sandbox: the service's tests run it.

mod sessions;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_builtins::BuiltinEnv;
use toolsmith_builtins::exec::{CodeHost, SessionSettings, Sessions};
use toolsmith_builtins::workspace::{WorkspaceSettings, Workspaces};
use toolsmith_command::CommandSandbox;
use toolsmith_core::{ErrorKind, Pipeline, PipelineLimits, ToolContext, ToolRegistry, ToolResult};

/// In the data dir's secret key file: no run may ever print it.
const KEY: &str = "SECRET-KEY-5d1e-never-leaves";
/// In bob's workspace: alice's runs never print it.
const BOB: &str = "BOB-PRIVATE-91c2";

/// The command sandbox, or (with `TOOLSMITH_ALLOW_SKIP=1`) `None` after recording the skip.
async fn sandbox() -> Option<Arc<CommandSandbox>> {
    toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        CommandSandbox::probe().await.map(Arc::new),
    )
}

/// The test's [`CodeHost`]: the probed sandbox (or a reason), no JS sandbox.
#[derive(Debug)]
struct Host(Result<Arc<CommandSandbox>, String>);

#[async_trait]
impl CodeHost for Host {
    async fn command_sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        self.0.clone()
    }

    async fn run_js(&self, _: &str, _: Value, _: &ToolContext, _: Duration) -> ToolResult {
        ToolResult::error(ErrorKind::Internal, "no JS sandbox in these tests")
    }
}

pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub data: PathBuf,
    pub workspaces: Arc<Workspaces>,
    pub sessions: Arc<Sessions>,
    pipeline: Pipeline,
}

impl Fixture {
    /// With a working sandbox, or `None` (skip) when there is none outside CI.
    pub async fn new() -> Option<Fixture> {
        let sandbox = sandbox().await?;
        Some(Fixture::with_host(Ok(sandbox), SessionSettings::default()))
    }

    pub async fn with_sessions(settings: SessionSettings) -> Option<Fixture> {
        let sandbox = sandbox().await?;
        Some(Fixture::with_host(Ok(sandbox), settings))
    }

    /// With a working sandbox and the workspaces' settings changed by `configure`.
    pub async fn with_workspaces(
        configure: impl FnOnce(&mut WorkspaceSettings),
    ) -> Option<Fixture> {
        let sandbox = sandbox().await?;
        Some(Fixture::build(
            Ok(sandbox),
            SessionSettings::default(),
            configure,
        ))
    }

    /// A server whose sandbox does not work, for `why`.
    pub fn without_sandbox(why: &str) -> Fixture {
        Fixture::with_host(Err(why.to_owned()), SessionSettings::default())
    }

    fn with_host(host: Result<Arc<CommandSandbox>, String>, settings: SessionSettings) -> Fixture {
        Fixture::build(host, settings, |_| {})
    }

    fn build(
        host: Result<Arc<CommandSandbox>, String>,
        settings: SessionSettings,
        configure: impl FnOnce(&mut WorkspaceSettings),
    ) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().canonicalize().unwrap();
        std::fs::write(data.join("secret.key"), KEY).unwrap();
        let mut config = WorkspaceSettings::new(data.join("workspaces"));
        config.owner = CommandSandbox::workspace_owner();
        configure(&mut config);
        let workspaces = Arc::new(Workspaces::open(config).unwrap());
        let sessions = Sessions::new(workspaces.clone(), settings);
        let registry = ToolRegistry::default();
        let env = BuiltinEnv {
            workspaces: Some(workspaces.clone()),
            code: Some(Arc::new(Host(host))),
            sessions: Some(sessions.clone()),
            ..BuiltinEnv::default()
        };
        toolsmith_builtins::register_all(&registry, &env).unwrap();
        let fixture = Fixture {
            _tmp: tmp,
            data,
            workspaces,
            sessions,
            pipeline: Pipeline::new(Arc::new(registry), PipelineLimits::default()),
        };
        std::fs::write(fixture.dir("bob").join("notes.txt"), BOB).unwrap();
        fixture
    }

    /// The host folder of `user`'s workspace (created by the first call).
    pub fn dir(&self, user: &str) -> PathBuf {
        self.workspaces
            .for_owner(user, None)
            .unwrap()
            .root_path()
            .to_path_buf()
    }

    pub async fn call_as(&self, user: &str, tool: &str, args: Value) -> ToolResult {
        let res = self
            .pipeline
            .execute(tool, &args.to_string(), ToolContext::new(user))
            .await;
        let text = serde_json::to_string(&res.content).unwrap();
        assert!(!text.contains(KEY), "{tool} {args}: the key leaked: {text}");
        if user != "bob" {
            assert!(
                !text.contains(BOB),
                "{tool} {args}: bob's file leaked: {text}"
            );
        }
        res
    }

    /// A call of `user` acting as `agent`.
    pub async fn call_as_agent(
        &self,
        user: &str,
        agent: &str,
        tool: &str,
        args: Value,
    ) -> ToolResult {
        let mut ctx = ToolContext::new(user);
        ctx.agent_id = Some(agent.to_owned());
        self.pipeline.execute(tool, &args.to_string(), ctx).await
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_as("alice", tool, args).await
    }
}
