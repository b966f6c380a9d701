//! The command line of one sandboxed run: `[setpriv …] bwrap … -- prlimit … -- /bin/sh -c CMD`,
//! and under root with a workspace, `unshare --mount … sh -c STAGE_SCRIPT` before it: root
//! bind-mounts the workspace at `/mnt/ws` in that private namespace, then drops to `nobody`,
//! and bubblewrap binds `/mnt/ws` at `/tmp/work`.
//!
//! Nothing secret goes on this command line (it is visible in the host's process list): the
//! tool's env reaches the command through the environment bubblewrap inherits.

use std::ffi::OsString;
use std::path::Path;

use super::{CommandSandbox, NOBODY, PROGRAM_DIR, PROXY_SOCKET, RunRequest, STAGE};

/// Where the private workspace is inside the sandbox; also `HOME`.
pub(crate) const WORKSPACE: &str = "/tmp/work";
/// The fixed `PATH` inside the sandbox.
pub(crate) const SANDBOX_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// Top-level host directories that may be real directories or merged-`/usr` symlinks.
const SYSTEM_ROOTS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/// The only parts of the host's `/etc` a command sees: name resolution, TLS roots, the dynamic
/// loader's cache, time zone, and `alternatives` (many `/usr/bin` entries link through it).
/// Account files (`passwd`, `shadow`, `group`, `sudoers`) are deliberately absent.
const ETC_ENTRIES: &[&str] = &[
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "gai.conf",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
];

/// Run by `sh -c` as root inside a fresh private mount namespace: `$1` is the workspace, `$2`
/// the `mount` binary, the rest the command to run once it is staged. The tmpfs keeps the
/// host's `/mnt` untouched and the bind mount private to this run.
const STAGE_SCRIPT: &str = r#"ws="$1"; mount="$2"; shift 2 && "$mount" -t tmpfs -o size=16k,mode=0755,nosuid,nodev,noexec toolsmith-stage /mnt && mkdir /mnt/ws && "$mount" --bind "$ws" /mnt/ws && exec "$@""#;

/// One planned run: the program and its arguments.
pub(crate) struct Invocation {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
}

pub(crate) fn invocation(
    sandbox: &CommandSandbox,
    request: &RunRequest<'_>,
    cpu_seconds: u64,
) -> Invocation {
    // The whole line, program first; split at the end.
    let mut args: Vec<OsString> = Vec::new();
    let staged = request.workspace.zip(sandbox.stage.as_ref());
    if let Some((workspace, stage)) = staged {
        args.push(stage.unshare.clone().into_os_string());
        push(
            &mut args,
            &["--mount", "--propagation", "private", "--", "/bin/sh", "-c"],
        );
        push(&mut args, &[STAGE_SCRIPT, "toolsmith-stage"]);
        args.push(workspace.as_os_str().to_owned());
        args.push(stage.mount.clone().into_os_string());
    }
    if let Some(setpriv) = &sandbox.setpriv {
        args.push(setpriv.clone().into_os_string());
        let nobody = NOBODY.to_string();
        push(&mut args, &["--reuid", &nobody, "--regid", &nobody]);
        push(
            &mut args,
            &["--clear-groups", "--inh-caps=-all", "--no-new-privs", "--"],
        );
    }
    args.push(sandbox.bwrap.clone().into_os_string());
    push(&mut args, &["--unshare-all", "--unshare-user"]);
    if request.network {
        push(&mut args, &["--share-net"]);
    }
    push(
        &mut args,
        &["--disable-userns", "--die-with-parent", "--new-session"],
    );
    if sandbox.seccomp.is_some() {
        // The filter arrives on stdin; bubblewrap reads it and closes fd 0, and the wrapper
        // before the command gives it /dev/null as stdin again.
        push(&mut args, &["--seccomp", "0"]);
    }
    push(
        &mut args,
        &["--uid", &NOBODY.to_string(), "--gid", &NOBODY.to_string()],
    );
    push(&mut args, &["--hostname", "toolsmith"]);
    push(&mut args, &["--ro-bind", "/usr", "/usr"]);
    for root in SYSTEM_ROOTS {
        let path = Path::new(root);
        if let Ok(target) = std::fs::read_link(path) {
            args.push("--symlink".into());
            args.push(target.into_os_string());
            args.push(root.into());
        } else if path.is_dir() {
            push(&mut args, &["--ro-bind", root, root]);
        }
    }
    for entry in ETC_ENTRIES {
        let path = format!("/etc/{entry}");
        push(&mut args, &["--ro-bind-try", &path, &path]);
    }
    // Every writable mount is bounded (issue 31): bubblewrap's `/dev` is a tmpfs of the
    // kernel's default size (half the host's RAM), so it is made read-only once `/dev/shm` has
    // a sized tmpfs of its own; the device nodes are bind mounts, which stay writable.
    push(&mut args, &["--proc", "/proc", "--dev", "/dev"]);
    let shm_size = sandbox.limits.shm_bytes.to_string();
    push(&mut args, &["--size", &shm_size, "--tmpfs", "/dev/shm"]);
    push(&mut args, &["--remount-ro", "/dev"]);
    let tmp_size = sandbox.limits.workspace_bytes.to_string();
    push(&mut args, &["--size", &tmp_size, "--tmpfs", "/tmp"]);
    let cwd = match request.working_dir {
        Some(dir) => format!("{WORKSPACE}/{dir}"),
        None => WORKSPACE.to_owned(),
    };
    match request.workspace {
        Some(workspace) => {
            // Bound, not created: bubblewrap never walks the caller's folder on the host.
            let source = match staged {
                Some(_) => OsString::from(format!("{STAGE}/ws")),
                None => workspace.as_os_str().to_owned(),
            };
            args.push("--bind".into());
            args.push(source);
            args.push(WORKSPACE.into());
            hide(&mut args, workspace, request.hidden);
        }
        None => push(&mut args, &["--dir", WORKSPACE, "--dir", &cwd]),
    }
    if let Some(socket) = request.proxy_socket {
        args.push("--ro-bind".into());
        args.push(socket.as_os_str().to_owned());
        args.push(PROXY_SOCKET.into());
    }
    if let Some(program) = request.program
        && let Some(name) = program.file_name()
    {
        args.push("--ro-bind".into());
        args.push(program.as_os_str().to_owned());
        let mut dest = OsString::from(format!("{PROGRAM_DIR}/"));
        dest.push(name);
        args.push(dest);
    }
    // The root is bubblewrap's own tmpfs; nothing outside `/tmp` needs to be writable.
    push(&mut args, &["--remount-ro", "/", "--chdir", &cwd, "--"]);
    if sandbox.seccomp.is_some() {
        push(
            &mut args,
            &[
                "/bin/sh",
                "-c",
                "exec </dev/null && exec \"$@\"",
                "toolsmith-sandbox",
            ],
        );
    }
    args.push(sandbox.prlimit.clone().into_os_string());
    let limits = &sandbox.limits;
    push(
        &mut args,
        &[
            &format!("--cpu={cpu_seconds}"),
            &format!("--as={}", limits.address_space_bytes),
            &format!("--nproc={}", limits.max_processes),
            &format!(
                "--fsize={}",
                request
                    .max_file_size
                    .map_or(limits.max_file_size_bytes, |max| max
                        .min(limits.max_file_size_bytes))
            ),
            &format!("--nofile={}", limits.max_open_files),
            "--core=0",
            "--",
            "/bin/sh",
            "-c",
            request.command,
            "toolsmith-run",
        ],
    );
    push(&mut args, request.args);
    let program = args.remove(0);
    Invocation { program, args }
}

/// Covers each of `hidden` that exists in `workspace` (checked without following a final
/// link): a folder with an empty read-only tmpfs, a file or other entry with `/dev/null`. A
/// link is left alone: what it points at inside the sandbox is already all the command can
/// reach, and covering it would cover its target. Paths were checked by `check_request`.
fn hide(args: &mut Vec<OsString>, workspace: &Path, hidden: &[String]) {
    for path in hidden {
        let path = path.trim_end_matches('/');
        let Ok(meta) = std::fs::symlink_metadata(workspace.join(path)) else {
            continue;
        };
        let dest = format!("{WORKSPACE}/{path}");
        if meta.is_dir() {
            push(
                args,
                &["--size", "4096", "--tmpfs", &dest, "--remount-ro", &dest],
            );
        } else if !meta.file_type().is_symlink() {
            push(args, &["--ro-bind", "/dev/null", &dest]);
        }
    }
}

fn push(args: &mut Vec<OsString>, items: &[&str]) {
    args.extend(items.iter().map(OsString::from));
}
