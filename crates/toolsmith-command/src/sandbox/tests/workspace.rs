//! Runs with a host folder mounted as the workspace ([`RunRequest::workspace`]): the folder is
//! readable and writable, and nothing else of the host (the data dir around it, another user's
//! workspace, `/etc/shadow`, the network) is.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::sandbox;
use crate::{CommandSandbox, RunRequest};

/// A data dir laid out like the server's: mode 0700, a secret key, two users' workspaces,
/// each owned as the sandbox needs ([`CommandSandbox::workspace_owner`]).
struct DataDir {
    dir: tempfile::TempDir,
}

impl DataDir {
    fn new() -> DataDir {
        let dir = tempfile::Builder::new()
            .prefix("toolsmith-data")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(dir.path().join("secret.key"), "KEY-MATERIAL-7f3a").unwrap();
        std::fs::set_permissions(
            dir.path().join("secret.key"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let data = DataDir { dir };
        for user in ["alice", "bob"] {
            let ws = data.workspace(user);
            std::fs::create_dir_all(&ws).unwrap();
            std::fs::write(ws.join("note.txt"), format!("{user}-PRIVATE-NOTE\n")).unwrap();
            std::fs::create_dir(ws.join("sub")).unwrap();
            if let Some((uid, gid)) = CommandSandbox::workspace_owner() {
                for path in [ws.clone(), ws.join("note.txt"), ws.join("sub")] {
                    std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
                }
            }
        }
        data
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn workspace(&self, user: &str) -> PathBuf {
        self.dir
            .path()
            .join("workspaces")
            .join(user)
            .join("workspace")
    }
}

#[tokio::test]
async fn the_bound_folder_is_read_and_written_as_the_sandbox_user() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let data = DataDir::new();
    let alice = data.workspace("alice");
    let mut request = RunRequest::shell(
        "id -u; pwd; echo $HOME; cat note.txt; echo appended >> note.txt; echo made > made.txt; mkdir -p out/deep && echo x > out/deep/f; ls",
    );
    request.workspace = Some(&alice);
    let out = sandbox.run(&request).await.unwrap();
    assert_eq!(
        out.stdout,
        "65534\n/tmp/work\n/tmp/work\nalice-PRIVATE-NOTE\nmade.txt\nnote.txt\nout\nsub\n",
        "{out:?}"
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(alice.join("note.txt")).unwrap(),
        "alice-PRIVATE-NOTE\nappended\n"
    );
    assert_eq!(
        std::fs::read_to_string(alice.join("out/deep/f")).unwrap(),
        "x\n"
    );
    // What the sandbox made belongs to the workspace's owner, so the server and later runs
    // can both change it.
    let expected_uid = CommandSandbox::workspace_owner()
        .map_or_else(|| rustix::process::geteuid().as_raw(), |(uid, _)| uid);
    let made = std::fs::metadata(alice.join("made.txt")).unwrap();
    assert_eq!(made.uid(), expected_uid);
}

#[tokio::test]
async fn the_data_dir_another_workspace_and_host_secrets_stay_out_of_reach() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let data = DataDir::new();
    let alice = data.workspace("alice");
    let bob = data.workspace("bob");
    // A link planted in the workspace pointing out resolves inside the sandbox's own view.
    std::os::unix::fs::symlink(data.path(), alice.join("to-data")).unwrap();
    std::os::unix::fs::symlink(&bob, alice.join("to-bob")).unwrap();
    let command = format!(
        "cat {key} {bob_note} /etc/shadow to-data/secret.key to-bob/note.txt ../../bob/workspace/note.txt 2>&1; \
         ls {data} 2>&1; cat /proc/1/root{key} 2>&1; \
         grep -rs -e KEY-MATERIAL -e bob-PRIVATE /tmp /etc /run /var /home /root /mnt /dev/shm; echo done",
        key = data.path().join("secret.key").display(),
        bob_note = bob.join("note.txt").display(),
        data = data.path().display(),
    );
    let mut request = RunRequest::shell(&command);
    request.workspace = Some(&alice);
    let out = sandbox.run(&request).await.unwrap();
    assert!(out.stdout.ends_with("done\n"), "{out:?}");
    assert!(!out.stdout.contains("KEY-MATERIAL"), "{out:?}");
    assert!(!out.stdout.contains("bob-PRIVATE"), "{out:?}");
    assert!(out.stdout.contains("No such file or directory"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(bob.join("note.txt")).unwrap(),
        "bob-PRIVATE-NOTE\n"
    );
}

#[tokio::test]
async fn no_network_in_a_workspace_run_unless_asked() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let data = DataDir::new();
    let alice = data.workspace("alice");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected || echo refused"
    );
    let mut request = RunRequest::shell(&command);
    request.workspace = Some(&alice);
    let out = sandbox.run(&request).await.unwrap();
    assert_eq!(out.stdout, "refused\n", "{out:?}");

    request.network = true;
    let (out, accepted) = tokio::join!(sandbox.run(&request), listener.accept());
    assert_eq!(out.unwrap().stdout, "connected\n");
    assert!(accepted.is_ok());
}

#[tokio::test]
async fn an_argv_run_passes_arguments_untouched_in_an_existing_working_dir() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let data = DataDir::new();
    let alice = data.workspace("alice");
    let argv = ["printf", "%s|", "a b", "$(id)", "'; rm -rf ~ #", "pwd"];
    let mut request = RunRequest::argv(&argv);
    request.workspace = Some(&alice);
    request.working_dir = Some("sub");
    let out = sandbox.run(&request).await.unwrap();
    assert_eq!(out.stdout, "a b|$(id)|'; rm -rf ~ #|pwd|", "{out:?}");
    assert!(alice.join("note.txt").exists());

    let pwd = ["pwd"];
    let mut request = RunRequest::argv(&pwd);
    request.workspace = Some(&alice);
    request.working_dir = Some("sub");
    let out = sandbox.run(&request).await.unwrap();
    assert_eq!(out.stdout, "/tmp/work/sub\n", "{out:?}");

    // With a workspace, the working dir is entered, never created on the host.
    request.working_dir = Some("missing");
    let out = sandbox.run(&request).await.unwrap();
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(!alice.join("missing").exists());
}

#[tokio::test]
async fn a_relative_or_missing_workspace_and_an_empty_argv_are_refused() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    for bad in [
        Path::new("relative/ws"),
        Path::new("/nonexistent/toolsmith-ws"),
    ] {
        let mut request = RunRequest::shell("true");
        request.workspace = Some(bad);
        let err = sandbox.run(&request).await.unwrap_err();
        assert_eq!(err.code(), "invalid_run_request", "{bad:?}");
    }
    let err = sandbox.run(&RunRequest::argv(&[])).await.unwrap_err();
    assert_eq!(err.code(), "invalid_run_request");
}
