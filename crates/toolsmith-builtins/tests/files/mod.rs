//! The file tools end to end: each tool through a real `Pipeline` on a real workspace in a
//! temp dir (`tools`), and the hostile path corpus (`hostile`), with a canary file outside the
//! workspaces that must never be read or changed.

mod hostile;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolsmith_builtins::BuiltinEnv;
use toolsmith_builtins::workspace::{WorkspaceSettings, Workspaces};
use toolsmith_core::{ErrorKind, Pipeline, PipelineLimits, ToolContext, ToolRegistry, ToolResult};

/// The canary's content: no tool output may ever contain it.
const SECRET: &str = "CANARY-7f3a-never-leaves";

/// A temp dir with the workspaces' root and, beside it, `outside/` holding the canary.
pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub canary: PathBuf,
    pub workspaces: Arc<Workspaces>,
    pipeline: Pipeline,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with(|_| {})
    }

    /// A fixture whose workspace settings `change` adjusts.
    pub fn with(change: impl FnOnce(&mut WorkspaceSettings)) -> Fixture {
        Fixture::with_env(change, |_| {})
    }

    /// A fixture whose workspace settings `change` and built-ins' environment `env` adjust.
    pub fn with_env(
        change: impl FnOnce(&mut WorkspaceSettings),
        env: impl FnOnce(&mut BuiltinEnv),
    ) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let outside = base.join("outside");
        std::fs::create_dir_all(outside.join("dir")).unwrap();
        let canary = outside.join("canary.txt");
        std::fs::write(&canary, SECRET).unwrap();
        std::fs::write(outside.join("dir").join("canary.txt"), SECRET).unwrap();
        let mut config = WorkspaceSettings::new(base.join("workspaces"));
        change(&mut config);
        let workspaces = Arc::new(Workspaces::open(config).unwrap());
        let registry = ToolRegistry::default();
        let mut builtins = BuiltinEnv {
            workspaces: Some(workspaces.clone()),
            ..BuiltinEnv::default()
        };
        env(&mut builtins);
        toolsmith_builtins::register_all(&registry, &builtins).unwrap();
        Fixture {
            root: base.join("workspaces"),
            _tmp: tmp,
            outside,
            canary,
            workspaces,
            pipeline: Pipeline::new(Arc::new(registry), PipelineLimits::default()),
        }
    }

    /// The host folder of `user`'s own workspace (created by the first call).
    pub fn dir(&self, user: &str) -> PathBuf {
        self.workspaces.for_owner(user, None).unwrap();
        self.root.join(user).join("workspace")
    }

    pub async fn call_as(&self, ctx: ToolContext, tool: &str, args: Value) -> ToolResult {
        let res = self.pipeline.execute(tool, &args.to_string(), ctx).await;
        let text = serde_json::to_string(&res.content).unwrap();
        assert!(
            !text.contains(SECRET),
            "{tool} {args}: the canary leaked: {text}"
        );
        res
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.call_as(ToolContext::new("alice"), tool, args).await
    }

    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let res = self.call(tool, args.clone()).await;
        crate::support::succeeded(tool, &args, res)
    }

    /// The call fails with `kind`; its message.
    pub async fn fails(&self, tool: &str, args: Value, kind: ErrorKind) -> String {
        let res = self.call(tool, args.clone()).await;
        crate::support::failed(tool, &args, &res, kind)
    }

    /// The canary and everything else outside the workspaces is as the fixture made it.
    pub fn assert_outside_intact(&self) {
        assert_eq!(std::fs::read_to_string(&self.canary).unwrap(), SECRET);
        assert_eq!(
            std::fs::read_to_string(self.outside.join("dir").join("canary.txt")).unwrap(),
            SECRET
        );
        assert_eq!(names(&self.outside), ["canary.txt", "dir"]);
        assert_eq!(names(&self.outside.join("dir")), ["canary.txt"]);
        let base = self.root.parent().unwrap();
        assert_eq!(names(base), ["outside", "workspaces"]);
    }
}

/// The sorted names in `dir`.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
