//! Workspace paths as the file tools' callers write them, and user/agent ids as folder names:
//! parts `path`, `id`.
//!
//! Asserts: no panic; a checked path is plain names (no `.`, `..`, empty or `/`-holding name),
//! within the limits, and reads back as itself; an id's folder is one plain name; resolving a
//! path in a real workspace never follows a symlink (the workspace holds `out -> /` and
//! `d/up -> ..`), so the one file a read can return is the workspace's own `a.txt`.
#![no_main]

#[path = "../common.rs"]
mod common;

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolsmith_builtins::workspace::ids::folder_name;
use toolsmith_builtins::workspace::{FileLimits, WorkspaceSettings, Workspaces, WsPath};

const ROOT: &str = "/data/ws/alice/workspace";
const INSIDE: &[u8] = b"inside";

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: toolsmith_builtins::workspace::Workspace,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("a temp dir: {e}"));
        let workspaces = Workspaces::open(WorkspaceSettings::new(dir.path().join("ws")))
            .unwrap_or_else(|e| panic!("the workspaces: {e}"));
        let workspace = workspaces
            .for_owner("alice", None)
            .unwrap_or_else(|e| panic!("alice's workspace: {e}"));
        let root = workspace.root_path().to_path_buf();
        let setup = || -> std::io::Result<()> {
            std::fs::write(root.join("a.txt"), INSIDE)?;
            std::fs::create_dir(root.join("d"))?;
            std::os::unix::fs::symlink("/", root.join("out"))?;
            std::os::unix::fs::symlink("..", root.join("d/up"))?;
            std::fs::create_dir(root.join(".toolsmith"))?;
            std::fs::write(root.join(".toolsmith/secret"), b"denied")
        };
        setup().unwrap_or_else(|e| panic!("the workspace's files: {e}"));
        Fixture {
            _dir: dir,
            workspace,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let raw = common::part(&parts, 0);
    let limits = FileLimits::default();
    if let Ok(path) = WsPath::parse(raw, Path::new(ROOT), &limits) {
        assert!(path.names().len() <= limits.max_depth);
        for name in path.names() {
            assert!(
                !matches!(name.as_str(), "" | "." | ".."),
                "{raw:?} kept {name:?}"
            );
            assert!(
                !name.contains('/') && !name.contains('\0'),
                "{raw:?} kept {name:?}"
            );
        }
        let again = WsPath::parse(&path.as_relative(), Path::new(ROOT), &limits);
        assert_eq!(
            again.ok().as_ref(),
            Some(&path),
            "{raw:?} does not read back"
        );
    }
    let folder = folder_name(common::part(&parts, 1));
    assert!(!matches!(folder.as_str(), "" | "." | "..") && !folder.contains('/'));

    let workspace = &fixture().workspace;
    if let Ok(path) = workspace.path(raw) {
        assert!(path.names().first().map(String::as_str) != Some(".toolsmith"));
        let _ = workspace.stat(&path);
        if let Ok(bytes) = workspace.read(&path, 1024) {
            assert_eq!(
                bytes, INSIDE,
                "{raw:?} read something outside the workspace"
            );
        }
    }
});
