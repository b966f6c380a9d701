//! The hostile path corpus: paths that try to leave the workspace (`..` in every position,
//! absolute, encoded, NUL, very long, `/proc` magic links), and links, special files and a
//! symlink swapped in between check and use, made inside the workspace by something other
//! than the file tools. Every case must fail with a clear error (or stay inside), and the
//! canary outside must never be read or changed: `Fixture::call_as` fails any call whose
//! output holds its content, and `assert_outside_intact` checks it after each case.

use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use toolsmith_builtins::workspace::WriteOptions;

use super::{Fixture, SECRET};

/// Paths refused before the disk is touched; each is tried with every tool that takes a path.
fn refused_paths(fx: &Fixture) -> Vec<String> {
    let outside = fx.outside.display().to_string();
    let root = fx.root.display().to_string();
    let mut paths: Vec<String> = [
        "..",
        "../",
        "../canary.txt",
        "../../canary.txt",
        "../../../outside/canary.txt",
        "../../../../../../../../etc/passwd",
        "./../canary.txt",
        "a/../../canary.txt",
        "a/b/../../../canary.txt",
        "a/..",
        "notes/../..",
        "a/./../..//canary.txt",
        "/etc/passwd",
        "/",
        "//etc/passwd",
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd/canary.txt",
        "/proc/self/fd/0",
        "/dev/zero",
        "/dev/null",
        "/tmp",
        "a\0b",
        "canary.txt\0.png",
        "\0",
        "a\nb",
        "a\r/x",
        "\u{1b}[2J",
        ".toolsmith",
        ".toolsmith/state.json",
        "./.toolsmith/x",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    paths.extend([
        format!("{outside}/canary.txt"),
        format!("{outside}/dir"),
        format!("{root}/bob/workspace/secret.txt"),
        format!("{root}/alice/workspace/../../bob/workspace/secret.txt"),
        format!("{root}/alice/workspace2/x"),
        format!("{root}/alice"),
        "a/".repeat(600),
        "x".repeat(300),
        "d/".repeat(40) + "f",
        format!("{}/../canary.txt", "a/".repeat(10)),
    ]);
    paths
}

/// Paths that look like escapes but are plain names inside the workspace: they resolve there
/// (to nothing, or to a file of the workspace), never outside.
const INSIDE_LOOKALIKES: &[&str] = &[
    "%2e%2e/canary.txt",
    "%2e%2e%2fcanary.txt",
    "..%2fcanary.txt",
    "..%252f..%252fcanary.txt",
    "..\\..\\canary.txt",
    "\u{ff0e}\u{ff0e}/canary.txt",
    "\u{2025}/canary.txt",
    "...",
    "~/canary.txt",
    "$HOME/canary.txt",
    "file:///etc/passwd",
    "proc/self/root/etc/passwd",
    "dev/zero",
];

/// Every tool, called with `path` in each of its path arguments.
fn calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        (
            "read_file",
            json!({"path": path, "startLine": 1, "endLine": 2}),
        ),
        ("write_file", json!({"path": path, "content": "pwned"})),
        (
            "edit_file",
            json!({"path": path, "oldText": SECRET, "newText": "pwned"}),
        ),
        ("list_directory", json!({"path": path, "recursive": true})),
        ("search_files", json!({"query": "CANARY", "path": path})),
        ("glob", json!({"pattern": "**", "path": path})),
        ("file_info", json!({"path": path})),
        ("delete_file", json!({"path": path, "recursive": true})),
        (
            "copy_file",
            json!({"source": path, "destination": "copied"}),
        ),
        (
            "copy_file",
            json!({"source": "seed.txt", "destination": path, "overwrite": true}),
        ),
        ("move_file", json!({"source": path, "destination": "moved"})),
        (
            "move_file",
            json!({"source": "seed.txt", "destination": path, "overwrite": true}),
        ),
        ("create_folder", json!({"path": path})),
    ]
}

#[tokio::test]
async fn paths_that_leave_the_workspace_are_refused_by_every_tool() {
    let fx = Fixture::new();
    fx.ok("write_file", json!({"path": "seed.txt", "content": "seed"}))
        .await;
    let paths = refused_paths(&fx);
    assert!(paths.len() >= 40, "{} refused paths", paths.len());
    for path in &paths {
        for (tool, args) in calls(path) {
            let res = fx.call(tool, args.clone()).await;
            assert!(res.is_error, "{tool} {args}: succeeded: {:?}", res.content);
            let msg = res.error_message().unwrap();
            assert!(
                msg.starts_with("invalid path") || msg.contains("reserved"),
                "{tool} {path:?}: {msg}"
            );
            assert!(msg.len() < 600, "{tool}: the message is bounded: {msg}");
            fx.assert_outside_intact();
        }
    }
    assert_eq!(super::names(&fx.dir("alice")), ["seed.txt"]);
}

#[tokio::test]
async fn lookalike_paths_stay_inside_the_workspace() {
    let fx = Fixture::new();
    for path in INSIDE_LOOKALIKES {
        fx.ok("write_file", json!({"path": "seed.txt", "content": "seed"}))
            .await;
        for (tool, args) in calls(path) {
            // Success or failure, only the workspace may change.
            fx.call(tool, args).await;
            fx.assert_outside_intact();
        }
    }
    // What was created is under alice's workspace and nowhere else.
    assert_eq!(super::names(&fx.root), ["alice"]);
    assert_eq!(super::names(&fx.root.join("alice")), ["workspace"]);
}

/// A workspace with links and special files made by something else (code, git, a person).
fn plant(fx: &Fixture) -> std::path::PathBuf {
    let ws = fx.dir("alice");
    symlink(&fx.canary, ws.join("abs-link")).unwrap();
    symlink("../../../outside/canary.txt", ws.join("rel-link")).unwrap();
    symlink(fx.outside.join("dir"), ws.join("dir-link")).unwrap();
    symlink("/proc/self/root", ws.join("proc-root")).unwrap();
    symlink("/etc/passwd", ws.join("passwd")).unwrap();
    std::fs::create_dir(ws.join("real")).unwrap();
    symlink(fx.outside.join("dir"), ws.join("real/inner-link")).unwrap();
    std::fs::write(ws.join("real/ok.txt"), "fine").unwrap();
    std::fs::hard_link(&fx.canary, ws.join("hard-link")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.join("fifo").as_path(),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(ws.join("socket")).unwrap();
    match rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.join("zero-device").as_path(),
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 5),
    ) {
        Ok(()) => {}
        // Only root may make a device file: without it the device-file case is left out.
        Err(e) => toolsmith_core::testkit::missing(
            "root (mknod of a device file, for the device-file case)",
            format_args!("mknod failed ({e}); run the tests as root, as CI does"),
        ),
    }
    ws
}

/// The planted names through which nothing may be read or written.
const PLANTED: &[&str] = &[
    "abs-link",
    "rel-link",
    "dir-link/canary.txt",
    "dir-link",
    "proc-root/etc/passwd",
    "proc-root",
    "passwd",
    "real/inner-link/canary.txt",
    "real/inner-link",
    "hard-link",
    "fifo",
    "socket",
    "zero-device",
];

#[tokio::test]
async fn links_and_special_files_inside_never_reach_outside() {
    let fx = Fixture::new();
    let ws = plant(&fx);
    let device = ws.join("zero-device").exists();
    for path in PLANTED {
        if *path == "zero-device" && !device {
            continue;
        }
        for (tool, args) in [
            ("read_file", json!({"path": path})),
            ("read_file", json!({"path": path, "encoding": "base64"})),
            ("read_file", json!({"path": path, "startLine": 1})),
            (
                "edit_file",
                json!({"path": path, "oldText": SECRET, "newText": "pwned"}),
            ),
            ("copy_file", json!({"source": path, "destination": "copy"})),
            ("list_directory", json!({"path": path})),
            ("search_files", json!({"query": "CANARY", "path": path})),
            ("glob", json!({"pattern": "**", "path": path})),
            ("create_folder", json!({"path": format!("{path}/sub")})),
            (
                "write_file",
                json!({"path": format!("{path}/new.txt"), "content": "pwned"}),
            ),
        ] {
            let res = fx.call(tool, args.clone()).await;
            assert!(res.is_error, "{tool} {args}: succeeded: {:?}", res.content);
            fx.assert_outside_intact();
        }
        // Writing over a planted name is refused, except for a hard link, whose name is
        // replaced by a new file while the linked content stays as it was.
        for (tool, args) in [
            ("write_file", json!({"path": path, "content": "pwned"})),
            (
                "copy_file",
                json!({"source": "real/ok.txt", "destination": path, "overwrite": true}),
            ),
        ] {
            let res = fx.call(tool, args).await;
            assert_eq!(
                res.is_error,
                *path != "hard-link",
                "{tool} {path}: {:?}",
                res.content
            );
            fx.assert_outside_intact();
        }
    }
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "abs-link"}),
            toolsmith_core::ErrorKind::ExecutionError,
        )
        .await;
    assert!(
        msg.contains("symbolic link") && msg.contains("never follow"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "fifo"}),
            toolsmith_core::ErrorKind::ExecutionError,
        )
        .await;
    assert!(
        msg.contains("named pipe") && msg.contains("regular files only"),
        "{msg}"
    );
    // The hard link was replaced by the write above; make a new one to check the message.
    std::fs::remove_file(ws.join("hard-link")).unwrap();
    std::fs::hard_link(&fx.canary, ws.join("hard-link")).unwrap();
    let msg = fx
        .fails(
            "read_file",
            json!({"path": "hard-link"}),
            toolsmith_core::ErrorKind::ExecutionError,
        )
        .await;
    assert!(
        msg.contains("2 hard links") && msg.contains("outside your workspace"),
        "{msg}"
    );

    // Walks list links and special files without entering or reading them.
    let out = fx.ok("list_directory", json!({"recursive": true})).await;
    let listed: Vec<_> = out["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        listed.contains(&"dir-link".to_owned())
            && !listed.iter().any(|p| p.starts_with("dir-link/"))
    );
    assert!(!listed.iter().any(|p| p.starts_with("real/inner-link/")));
    let out = fx
        .ok("search_files", json!({"query": "CANARY|root:"}))
        .await;
    assert_eq!(out["count"], 0, "{out}");
    let out = fx.ok("glob", json!({"pattern": "**/canary.txt"})).await;
    assert_eq!(out["count"], 0, "{out}");

    // Moving and deleting links moves and deletes the links, never their targets.
    fx.ok(
        "move_file",
        json!({"source": "abs-link", "destination": "moved-link"}),
    )
    .await;
    fx.ok("write_file", json!({"path": "seed", "content": "s"}))
        .await;
    fx.ok(
        "move_file",
        json!({"source": "seed", "destination": "rel-link", "overwrite": true}),
    )
    .await;
    for path in [
        "moved-link",
        "dir-link",
        "hard-link",
        "fifo",
        "socket",
        "proc-root",
    ] {
        fx.ok("delete_file", json!({"path": path})).await;
    }
    fx.ok("delete_file", json!({"path": "real", "recursive": true}))
        .await;
    fx.assert_outside_intact();
}

/// A path flipped between a regular file and a symlink to the canary while another thread
/// reads and writes it: the check and the use are one `openat2`/`renameat`, so no interleaving
/// reads or changes the canary.
#[test]
fn a_symlink_swapped_in_between_check_and_use_never_reaches_the_canary() {
    let fx = Fixture::new();
    let ws_dir = fx.dir("alice");
    let workspace = fx.workspaces.for_owner("alice", None).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Each name has a twin: a real entry and a link to the outside, exchanged atomically
    // (renameat2 RENAME_EXCHANGE) as fast as the thread can.
    std::fs::write(ws_dir.join("swap.txt"), "inside").unwrap();
    symlink(&fx.canary, ws_dir.join("swap.alt")).unwrap();
    std::fs::create_dir(ws_dir.join("swapdir")).unwrap();
    symlink(fx.outside.join("dir"), ws_dir.join("swapdir.alt")).unwrap();
    let flipper = {
        let (stop, ws_dir) = (stop.clone(), ws_dir.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for (a, b) in [("swap.txt", "swap.alt"), ("swapdir", "swapdir.alt")] {
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        ws_dir.join(a).as_path(),
                        rustix::fs::CWD,
                        ws_dir.join(b).as_path(),
                        rustix::fs::RenameFlags::EXCHANGE,
                    )
                    .unwrap();
                }
                flips += 1;
            }
            flips
        })
    };
    let (mut reads, mut writes) = (0, 0);
    let file = workspace.path("swap.txt").unwrap();
    let in_dir = workspace.path("swapdir/canary.txt").unwrap();
    let options = WriteOptions {
        overwrite: true,
        create_parents: false,
    };
    for _ in 0..3000 {
        if let Ok(bytes) = workspace.read(&file, 1024) {
            assert_ne!(bytes, SECRET.as_bytes());
            reads += 1;
        }
        if let Ok(bytes) = workspace.read(&in_dir, 1024) {
            assert_ne!(bytes, SECRET.as_bytes());
        }
        if workspace.write(&file, b"inside", options).is_ok() {
            writes += 1;
        }
        let _ = workspace.write(&in_dir, b"pwned", options);
        let _ = workspace.remove(&in_dir, false);
        assert_eq!(std::fs::read_to_string(&fx.canary).unwrap(), SECRET);
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 100, "the race ran ({flips} flips)");
    assert!(reads + writes > 0, "some operations met the regular file");
    fx.assert_outside_intact();
}
