//! The one way out of a `package_manager` run (issue 31): the registry proxy.
//!
//! An install runs in the command sandbox with a network namespace of its own and no route
//! out (bubblewrap without `--share-net`), so nothing in it — pip, npm, a package's scripts —
//! reaches the host's loopback, a private network or a metadata address at the kernel level.
//! What it has instead:
//! - **On the host**, per run, [`PackageRegistries::open`] serves an HTTP proxy on a Unix
//!   socket in a fresh private folder, bound into the sandbox at
//!   [`toolsmith_command::PROXY_SOCKET`]. It answers only `CONNECT host:443` (HTTPS tunnels;
//!   hyper reads the requests) for a host in the operator's `package_registries` list (default
//!   [`DEFAULT_REGISTRIES`]), resolved and checked by the egress guard, so a registry name
//!   that resolves to a loopback, private or metadata address is refused like any tool's
//!   request; the connection goes to the addresses that were checked. Everything else is
//!   refused with a `403` (`405` for another method) whose text says why and what to change.
//!   The proxy, and every tunnel, ends with the run.
//! - **In the sandbox**, a relay listens on `127.0.0.1:`[`RELAY_PORT`] of the sandbox's own
//!   loopback and copies each connection to that socket ([`relayed`]): pip and npm speak to an
//!   HTTP proxy over TCP only. It is written in the language of the manager the run starts
//!   (Python for pip, Node.js for npm), so it needs nothing the run does not need anyway; it
//!   starts the manager once it listens and exits with its status. It is no boundary: the
//!   code in the sandbox could reach the socket itself; the proxy is what decides.
//! - [`proxy_env`] points pip and npm at the relay.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use toolsmith_command::CommandSandbox;
use toolsmith_egress::EgressGuard;

/// The package registries an install reaches unless the operator says otherwise: PyPI (its
/// index and its file host) and the npm registry.
pub const DEFAULT_REGISTRIES: &[&str] =
    &["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"];
/// The port of the relay on the sandbox's own loopback.
pub const RELAY_PORT: u16 = 3128;
/// Most connections to the proxy open at once in one run (npm opens about 15).
const MAX_CONNECTIONS: usize = 32;
/// How long connecting to a registry may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The relay for pip runs: `python3 -c RELAY_PY COMMAND…`.
const RELAY_PY: &str = r#"import socket, subprocess, sys, threading
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(client):
    up = socket.socket(socket.AF_UNIX)
    try:
        up.connect(__SOCKET__)
    except OSError:
        client.close()
        return
    threading.Thread(target=pipe, args=(up, client), daemon=True).start()
    pipe(client, up)
def accept(listener):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()
listener = socket.create_server(("127.0.0.1", __PORT__))
threading.Thread(target=accept, args=(listener,), daemon=True).start()
code = subprocess.call(sys.argv[1:])
sys.exit(code if code >= 0 else 128 - code)
"#;

/// The relay for npm runs: `node -e RELAY_JS -- COMMAND…`.
const RELAY_JS: &str = r#"const net = require('net'), cp = require('child_process'), os = require('os');
const server = net.createServer(client => {
  const up = net.connect(__SOCKET__);
  client.pipe(up); up.pipe(client);
  client.on('error', () => up.destroy()); up.on('error', () => client.destroy());
});
server.on('error', e => { console.error('registry relay: ' + e.message); process.exit(1); });
server.listen(__PORT__, '127.0.0.1', () => {
  const [program, ...args] = process.argv.slice(1);
  const child = cp.spawn(program, args, {stdio: 'inherit'});
  child.on('error', e => { console.error(e.message); process.exit(127); });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] || 0)));
});
"#;

/// Where installs may connect: the registry hosts and the egress guard that resolves them.
/// The same proxy serves a coding agent's run, whose one host is its provider's API
/// ([`PackageRegistries::labelled`] words its refusals for that).
#[derive(Clone)]
pub struct PackageRegistries {
    hosts: Arc<Vec<String>>,
    guard: EgressGuard,
    label: ProxyLabel,
}

/// How the proxy's refusals name what it lets through, who asked and what to change.
#[derive(Debug, Clone, Copy)]
pub struct ProxyLabel {
    /// One host it lets through: "package registry".
    pub what: &'static str,
    /// Who its runs are: "package installs".
    pub who: &'static str,
    /// Where the list of hosts comes from: "the operator's package_registries setting".
    pub from: &'static str,
}

/// The label of `package_manager`'s proxy.
const PACKAGES: ProxyLabel = ProxyLabel {
    what: "package registry",
    who: "package installs",
    from: "the operator's package_registries setting",
};

impl std::fmt::Debug for PackageRegistries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageRegistries")
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

impl PackageRegistries {
    /// The registries `hosts` (host names, compared without case and a final dot), each
    /// resolved and checked by `guard`.
    ///
    /// # Errors
    /// A host that is not a plain name (a scheme, a port, a path, an IP literal), naming it.
    pub fn new(
        hosts: impl IntoIterator<Item = String>,
        guard: EgressGuard,
    ) -> Result<PackageRegistries, String> {
        let mut names = Vec::new();
        for host in hosts {
            let name = normalize(&host);
            let plain = !name.is_empty()
                && name.len() <= 253
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && name.parse::<std::net::Ipv4Addr>().is_err();
            if !plain {
                return Err(format!(
                    "package registry '{host}' is not a host name; list names only, like \
                     \"pypi.org\" (no scheme, port, path or IP address)"
                ));
            }
            names.push(name);
        }
        Ok(PackageRegistries {
            hosts: Arc::new(names),
            guard,
            label: PACKAGES,
        })
    }

    /// The same proxy, its refusals worded by `label`.
    #[must_use]
    pub fn labelled(mut self, label: ProxyLabel) -> PackageRegistries {
        self.label = label;
        self
    }

    /// The registry hosts.
    #[must_use]
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Starts the proxy of one run; it stops when the [`OpenProxy`] is dropped.
    pub(crate) fn open(&self) -> std::io::Result<OpenProxy> {
        let dir = std::env::temp_dir().join(format!(
            "toolsmith-registry-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let open = |dir: &Path| -> std::io::Result<(PathBuf, UnixListener)> {
            let socket = dir.join("proxy.sock");
            let listener = UnixListener::bind(&socket)?;
            // Under root the run is `nobody`, which must reach the socket (and only it can:
            // the folder is its own, mode 0700).
            if let Some((uid, gid)) = CommandSandbox::workspace_owner() {
                std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
                std::os::unix::fs::chown(&socket, Some(uid), Some(gid))?;
            }
            Ok((socket, listener))
        };
        let (socket, listener) = match open(&dir) {
            Ok(opened) => opened,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let (stop, stopped) = watch::channel(());
        let accept = tokio::spawn(accept_loop(listener, self.clone(), stopped)).abort_handle();
        Ok(OpenProxy {
            dir,
            socket,
            _stop: stop,
            accept,
        })
    }

    /// A connection to `host:port` for a tunnel, or why not (the status and the text).
    async fn connect(&self, host: &str, port: Option<u16>) -> Result<TcpStream, Refusal> {
        let name = normalize(host);
        let ProxyLabel { what, who, from } = self.label;
        if !self.hosts.contains(&name) {
            return Err(refused(format!(
                "'{host}' is not a {what}: {who} reach only {} ({from})",
                self.hosts.join(", ")
            )));
        }
        if port != Some(443) {
            return Err(refused(format!(
                "'{host}:{}': {who} reach {} over HTTPS only (port 443)",
                port.map_or_else(|| "no port".to_owned(), |p| p.to_string()),
                self.hosts.join(", ")
            )));
        }
        let checked = self
            .guard
            .resolve_checked(&format!("https://{name}/"))
            .await
            .map_err(|e| {
                refused(format!(
                    "the egress guard refused {what} '{host}': {e} (a network that reaches it \
                     through a private address lists it in [egress] allowed_private_hosts, \
                     e.g. \"{name}:443\")"
                ))
            })?;
        let mut last = String::from("it has no addresses");
        for ip in checked.addrs {
            let addr = SocketAddr::new(ip, 443);
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
            }
        }
        Err(Refusal {
            status: StatusCode::BAD_GATEWAY,
            message: format!("could not connect to {what} '{host}': {last}"),
        })
    }
}

/// A running proxy: its socket, and the tasks that end when it is dropped.
pub(crate) struct OpenProxy {
    dir: PathBuf,
    socket: PathBuf,
    /// Dropped with the proxy: every connection and tunnel then ends.
    _stop: watch::Sender<()>,
    accept: tokio::task::AbortHandle,
}

impl OpenProxy {
    /// The host path of the proxy's socket (for [`toolsmith_command::RunRequest::proxy_socket`]).
    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for OpenProxy {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The variables that point pip and npm at the relay (and so at the proxy).
pub(crate) fn proxy_env() -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{RELAY_PORT}");
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
    ]
    .into_iter()
    .map(|name| (name.to_owned(), url.clone()))
    .collect()
}

/// `argv` (any program) started by the Python relay once it listens: a coding agent's run.
pub(crate) fn relayed_by_python(argv: Vec<String>) -> Vec<String> {
    let mut line = vec!["python3".to_owned(), "-c".to_owned(), fill_relay(RELAY_PY)];
    line.extend(argv);
    line
}

fn fill_relay(code: &str) -> String {
    code.replace(
        "__SOCKET__",
        &format!("'{}'", toolsmith_command::PROXY_SOCKET),
    )
    .replace("__PORT__", &RELAY_PORT.to_string())
}

/// `argv` (a pip run starting with `python3`, or an npm run) started by the relay of its own
/// language once the relay listens.
pub(crate) fn relayed(argv: Vec<String>) -> Vec<String> {
    let mut line = match argv.first().map(String::as_str) {
        Some("python3") => return relayed_by_python(argv),
        _ => vec![
            "node".to_owned(),
            "-e".to_owned(),
            fill_relay(RELAY_JS),
            "--".to_owned(),
        ],
    };
    line.extend(argv);
    line
}

fn normalize(host: &str) -> String {
    host.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// A refused request: its status and the text that says why.
struct Refusal {
    status: StatusCode,
    message: String,
}

fn refused(message: String) -> Refusal {
    Refusal {
        status: StatusCode::FORBIDDEN,
        message,
    }
}

async fn accept_loop(
    listener: UnixListener,
    registries: PackageRegistries,
    stopped: watch::Receiver<()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // A listener that fails stays failed: the run's connections are refused.
            return;
        };
        // Past the cap the connection is closed at once; the run's own retries wait.
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue;
        };
        tokio::spawn(serve(
            stream,
            registries.clone(),
            stopped.clone(),
            Arc::new(slot),
        ));
    }
}

/// One connection to the proxy: its requests, then (after a `CONNECT` it allowed) the tunnel.
async fn serve(
    stream: UnixStream,
    registries: PackageRegistries,
    mut stopped: watch::Receiver<()>,
    slot: Arc<OwnedSemaphorePermit>,
) {
    let stop = stopped.clone();
    let service =
        service_fn(move |request| answer(registries.clone(), request, stop.clone(), slot.clone()));
    let connection = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::select! {
        _ = connection => {}
        _ = stopped.changed() => {}
    }
}

async fn answer(
    registries: PackageRegistries,
    request: Request<Incoming>,
    mut stopped: watch::Receiver<()>,
    slot: Arc<OwnedSemaphorePermit>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::CONNECT {
        return Ok(response(&Refusal {
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: format!(
                "{} {}: {} reach {} over HTTPS only (CONNECT to port 443)",
                request.method(),
                request.uri(),
                registries.label.who,
                registries.hosts.join(", ")
            ),
        }));
    }
    let Some(authority) = request.uri().authority().cloned() else {
        return Ok(response(&Refusal {
            status: StatusCode::BAD_REQUEST,
            message: "CONNECT needs host:port".to_owned(),
        }));
    };
    let mut upstream = match registries
        .connect(authority.host(), authority.port_u16())
        .await
    {
        Ok(upstream) => upstream,
        Err(refusal) => {
            // A host the run named is logged only when it is a listed registry: code in the
            // sandbox chooses the others, and what it chooses stays out of the log.
            if registries.hosts.contains(&normalize(authority.host())) {
                tracing::info!(
                    status = %refusal.status,
                    reason = %refusal.message,
                    "registry proxy refused a tunnel"
                );
            } else {
                tracing::info!(
                    status = %refusal.status,
                    "registry proxy refused a tunnel to a host that is not a listed registry"
                );
            }
            return Ok(response(&refusal));
        }
    };
    tokio::spawn(async move {
        let _slot = slot;
        let tunnel = async {
            let upgraded = hyper::upgrade::on(request).await.ok()?;
            let mut client = TokioIo::new(upgraded);
            tokio::io::copy_bidirectional(&mut client, &mut upstream)
                .await
                .ok()
        };
        tokio::select! {
            _ = tunnel => {}
            _ = stopped.changed() => {}
        }
    });
    Ok(Response::new(Full::new(Bytes::new())))
}

fn response(refusal: &Refusal) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{}\n", refusal.message))));
    *response.status_mut() = refusal.status;
    // The reason in the status line too: pip shows only that line of a refused tunnel.
    if let Ok(phrase) = hyper::ext::ReasonPhrase::try_from(refusal.message.clone().into_bytes()) {
        response.extensions_mut().insert(phrase);
    }
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

#[cfg(test)]
mod tests;
