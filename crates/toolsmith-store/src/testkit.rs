//! A private PostgreSQL cluster for tests: started from the installed server binaries in a
//! temporary directory, listening on a free loopback port (and a unix socket inside that
//! directory), and stopped and deleted when the [`PgCluster`] is dropped.
//!
//! The binaries are found on `PATH` (`initdb`, `pg_ctl`) or under `/usr/lib/postgresql/*/bin`
//! (Debian's layout; the newest version wins). `initdb` runs once per machine and PostgreSQL
//! version into a template directory under the system temp dir; each cluster starts from a copy
//! of it (about half a second instead of two). PostgreSQL refuses to run as root: under root the
//! cluster's directory is given to `nobody` and the binaries run through `setpriv`.
//!
//! When the binaries are missing, [`PgCluster::start`] says why; [`pg_or_skip`] turns that into
//! the workspace's one rule for a missing prerequisite ([`toolsmith_core::testkit`]): a failure,
//! or a recorded skip with `TOOLSMITH_ALLOW_SKIP=1`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// The uid and gid PostgreSQL runs as when the tests run as root (`nobody` on Debian).
const NOBODY: u32 = 65534;

/// Why no cluster could be started.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The server binaries are not installed.
    #[error(
        "the PostgreSQL server binaries (initdb, pg_ctl) are not on PATH nor under \
         /usr/lib/postgresql/*/bin; install them with `bash scripts/install-system-deps.sh` \
         (Debian package postgresql)"
    )]
    Missing,
    /// They are installed but the cluster did not come up.
    #[error("the test PostgreSQL cluster did not start: {0}")]
    Failed(String),
}

/// A running private cluster. Dropping it stops the server and deletes its files.
#[derive(Debug)]
pub struct PgCluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    as_nobody: bool,
    databases: AtomicU32,
}

impl PgCluster {
    /// Starts a fresh cluster (trust authentication for the superuser `postgres`).
    pub fn start() -> Result<PgCluster, ClusterError> {
        let bin = find_bin_dir().ok_or(ClusterError::Missing)?;
        let as_nobody = rustix::process::geteuid().is_root();
        let template = template_dir(&bin, as_nobody)?;
        let dir = tempfile::Builder::new()
            .prefix("toolsmith-pg-")
            .tempdir()
            .map_err(|e| ClusterError::Failed(format!("cannot create a temp dir: {e}")))?;
        if as_nobody {
            give_to_nobody(dir.path())?;
        }
        let data = dir.path().join("data");
        run_ok(
            Command::new("cp").arg("-a").arg(&template).arg(&data),
            "copy the template cluster",
        )?;
        let mut cluster = PgCluster {
            bin,
            dir,
            port: 0,
            as_nobody,
            databases: AtomicU32::new(0),
        };
        // A port found free can be taken by someone else before the server binds it: retry.
        let mut last = String::new();
        for _ in 0..5 {
            cluster.port = free_port()?;
            match cluster.pg_ctl_start() {
                Ok(()) => return Ok(cluster),
                Err(e) => last = e.to_string(),
            }
        }
        Err(ClusterError::Failed(last))
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the server's unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A URL of database `db` on this cluster, over TCP to 127.0.0.1.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates a new, empty database and returns its URL.
    pub fn create_database(&self) -> Result<String, ClusterError> {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("toolsmith_test_{n}");
        self.psql(&format!("CREATE DATABASE {name}"))?;
        Ok(self.url(&name))
    }

    /// Runs one SQL command as the superuser against database `postgres`.
    pub fn psql(&self, sql: &str) -> Result<String, ClusterError> {
        self.psql_in("postgres", sql)
    }

    /// Runs one SQL command as the superuser against database `db`; its output, unaligned,
    /// without headers (one row a line).
    pub fn psql_in(&self, db: &str, sql: &str) -> Result<String, ClusterError> {
        let mut psql = Command::new(self.bin.join("psql"));
        psql.args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.dir.path())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                db,
                "-c",
            ])
            .arg(sql);
        let out = output(self.as_server_user(&mut psql), "psql")?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Turns TLS on: the server presents `cert` (PEM, with its chain) with `key` and asks
    /// client certificates (where `pg_hba.conf` says `cert`) to lead to `ca`. Applied by a
    /// reload, as PostgreSQL allows for its TLS settings.
    pub fn enable_tls(&self, cert: &str, key: &str, ca: &str) -> Result<(), ClusterError> {
        let tls = self.dir.path().join("tls");
        let write = |name: &str, text: &str| -> Result<PathBuf, ClusterError> {
            let path = tls.join(name);
            std::fs::write(&path, text).map_err(|e| {
                ClusterError::Failed(format!("cannot write {}: {e}", path.display()))
            })?;
            // The server refuses a key others can read.
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .map_err(|e| {
                    ClusterError::Failed(format!("cannot chmod {}: {e}", path.display()))
                })?;
            if self.as_nobody {
                give_to_nobody(&path)?;
            }
            Ok(path)
        };
        std::fs::create_dir_all(&tls)
            .map_err(|e| ClusterError::Failed(format!("cannot create {}: {e}", tls.display())))?;
        if self.as_nobody {
            give_to_nobody(&tls)?;
        }
        let settings = format!(
            "\nssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nssl_ca_file = '{}'\n",
            write("server.crt", cert)?.display(),
            write("server.key", key)?.display(),
            write("ca.crt", ca)?.display()
        );
        self.append_file("postgresql.conf", &settings)?;
        self.reload()
    }

    /// Replaces `pg_hba.conf` (who may connect, how) and reloads.
    pub fn set_hba(&self, text: &str) -> Result<(), ClusterError> {
        let path = self.dir.path().join("data").join("pg_hba.conf");
        std::fs::write(&path, text)
            .map_err(|e| ClusterError::Failed(format!("cannot write {}: {e}", path.display())))?;
        self.reload()
    }

    fn append_file(&self, name: &str, text: &str) -> Result<(), ClusterError> {
        use std::io::Write as _;
        let path = self.dir.path().join("data").join(name);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| ClusterError::Failed(format!("cannot append to {}: {e}", path.display())))
    }

    /// Makes the server re-read its configuration files.
    pub fn reload(&self) -> Result<(), ClusterError> {
        // pg_ctl reload only signals: wait until a new session sees a later load time.
        let loaded = "SELECT pg_conf_load_time()";
        let before = self.psql(loaded)?;
        self.pg_ctl(&["reload"])?;
        for _ in 0..200 {
            if self.psql(loaded)? != before {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        Err(ClusterError::Failed(
            "the server did not re-read its configuration within 5 s of a reload".to_owned(),
        ))
    }

    /// Stops the server (fast shutdown: sessions are ended, commits kept).
    pub fn stop(&self) -> Result<(), ClusterError> {
        self.pg_ctl(&["stop", "-m", "fast", "-w"])
    }

    /// Starts the server again on the same port, with the same data.
    pub fn restart(&self) -> Result<(), ClusterError> {
        self.pg_ctl_start()
    }

    fn pg_ctl_start(&self) -> Result<(), ClusterError> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off \
             -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log");
        self.pg_ctl(&[
            "start",
            "-w",
            "-t",
            "60",
            "-o",
            &options,
            "-l",
            &log.display().to_string(),
        ])
        .map_err(|e| {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            ClusterError::Failed(format!("{e}; server log: {}", tail.join(" | ")))
        })
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), ClusterError> {
        let data = self.dir.path().join("data");
        let mut pg_ctl = Command::new(self.bin.join("pg_ctl"));
        pg_ctl.arg("-D").arg(&data).args(args);
        run_ok(self.as_server_user(&mut pg_ctl), "pg_ctl")
    }

    fn as_server_user<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        if self.as_nobody {
            wrap_as_nobody(cmd);
        }
        cmd
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        // Immediate: nothing of a test cluster needs to reach the disk.
        let _ = self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }
}

/// A fresh cluster. A missing PostgreSQL fails the test (with how to install it), or, with
/// `TOOLSMITH_ALLOW_SKIP=1`, is recorded as a skip and gives `None` ([`toolsmith_core::testkit`]).
#[track_caller]
#[allow(clippy::panic)] // Test support: the panic is the test's failure.
pub fn pg_or_skip() -> Option<PgCluster> {
    match PgCluster::start() {
        Ok(cluster) => Some(cluster),
        Err(e @ ClusterError::Missing) => {
            toolsmith_core::testkit::missing("PostgreSQL", e);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// The directory of `initdb`, `pg_ctl` and `postgres`.
fn find_bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("initdb"))
            .find(|p| p.is_file())
    });
    if let Some(initdb) = on_path {
        // Follow symlinks (/usr/local/bin/initdb → /usr/lib/postgresql/15/bin/initdb): pg_ctl
        // and postgres live next to the real file.
        let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
        if let Some(dir) = real.parent()
            && dir.join("pg_ctl").is_file()
            && dir.join("postgres").is_file()
        {
            return Some(dir.to_path_buf());
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The initialised template cluster for these binaries, created on first use. Several test
/// processes may race to create it: each builds its own and renames it into place; the losers
/// delete theirs.
fn template_dir(bin: &Path, as_nobody: bool) -> Result<PathBuf, ClusterError> {
    let version = bin
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("pg")
        .to_owned();
    let user = if as_nobody { "nobody" } else { "self" };
    let root = std::env::temp_dir().join(format!("toolsmith-pg-template-{version}-{user}"));
    let done = root.join("data").join("PG_VERSION");
    if done.is_file() {
        return Ok(root.join("data"));
    }
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-pg-initdb-")
        .tempdir()
        .map_err(|e| ClusterError::Failed(format!("cannot create a temp dir: {e}")))?;
    if as_nobody {
        give_to_nobody(scratch.path())?;
    }
    let data = scratch.path().join("data");
    let mut initdb = Command::new(bin.join("initdb"));
    initdb
        .arg("-D")
        .arg(&data)
        .args([
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ])
        // initdb reads the locale of its environment for the messages; keep it neutral.
        .env("LC_ALL", "C.UTF-8");
    if as_nobody {
        wrap_as_nobody(&mut initdb);
    }
    run_ok(&mut initdb, "initdb")?;
    let scratch = scratch.keep();
    if as_nobody {
        give_to_nobody(&scratch)?;
    }
    match std::fs::rename(&scratch, &root) {
        Ok(()) => {}
        Err(_) if done.is_file() => {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(ClusterError::Failed(format!(
                "cannot move the template cluster to {}: {e}",
                root.display()
            )));
        }
    }
    Ok(root.join("data"))
}

/// Runs a command as `nobody` (PostgreSQL refuses to run as root).
fn wrap_as_nobody(cmd: &mut Command) {
    let program = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(ToOwned::to_owned).collect();
    let envs: Vec<_> = cmd
        .get_envs()
        .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
        .collect();
    let mut wrapped = Command::new("setpriv");
    wrapped
        .arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups")
        .arg(program)
        .args(args)
        .current_dir("/");
    for (k, v) in envs {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    *cmd = wrapped;
}

fn give_to_nobody(path: &Path) -> Result<(), ClusterError> {
    std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY))
        .map_err(|e| ClusterError::Failed(format!("cannot chown {}: {e}", path.display())))
}

fn free_port() -> Result<u16, ClusterError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .map_err(|e| ClusterError::Failed(format!("no free loopback port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| ClusterError::Failed(e.to_string()))
}

fn output(cmd: &mut Command, what: &str) -> Result<Output, ClusterError> {
    let out = cmd
        .output()
        .map_err(|e| ClusterError::Failed(format!("cannot run {what}: {e}")))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(ClusterError::Failed(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        )))
    }
}

fn run_ok(cmd: &mut Command, what: &str) -> Result<(), ClusterError> {
    output(cmd, what).map(drop)
}
