//! One running browser: Chromium headless in a fresh profile, driven over its debugging pipe,
//! reaching the network only through its own guard proxy; and [`Browsers`], which keeps one per
//! caller (user and agent), under a cap, each closed when idle or past its lifetime.

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use toolsmith_egress::{DomainPattern, EgressGuard};

use super::cdp::Cdp;
use super::proxy::Proxy;

/// Where Chromium is looked for when the settings name none.
pub const CHROMIUM_PATHS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
];

/// How long one protocol command may take.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The browser tool's settings.
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    /// The Chromium binary; `None` looks in [`CHROMIUM_PATHS`].
    pub chromium: Option<PathBuf>,
    /// Most browsers running at once on this server (one per user and agent).
    pub max_browsers: usize,
    /// A browser no call used for this long is closed.
    pub idle_timeout: Duration,
    /// A browser is closed this long after it started, used or not.
    pub max_lifetime: Duration,
}

impl Default for BrowserSettings {
    fn default() -> Self {
        BrowserSettings {
            chromium: None,
            max_browsers: 4,
            idle_timeout: Duration::from_secs(300),
            max_lifetime: Duration::from_secs(1800),
        }
    }
}

/// Who a browser is for: a user, and the agent calling for them (`""` for none).
pub(crate) type Owner = (String, String);

/// Every running browser of the server.
pub struct Browsers {
    settings: BrowserSettings,
    guard: EgressGuard,
    owner_domains: HashMap<String, Vec<DomainPattern>>,
    live: tokio::sync::Mutex<HashMap<Owner, Arc<tokio::sync::Mutex<Browser>>>>,
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Browsers {
    /// Browsers reaching the network through `guard`, narrowed per owner by `owner_domains`
    /// (as the web tools are).
    #[must_use]
    pub fn new(
        settings: BrowserSettings,
        guard: EgressGuard,
        owner_domains: HashMap<String, Vec<DomainPattern>>,
    ) -> Arc<Browsers> {
        Arc::new(Browsers {
            settings,
            guard,
            owner_domains,
            live: tokio::sync::Mutex::default(),
        })
    }

    /// The guard for `user`'s requests.
    pub(crate) fn guard_for(&self, user: &str) -> EgressGuard {
        match self.owner_domains.get(user) {
            Some(domains) => self.guard.for_owner(domains.clone()),
            None => self.guard.clone(),
        }
    }

    /// The owner's browser if it runs.
    pub(crate) async fn running(&self, owner: &Owner) -> Option<Arc<tokio::sync::Mutex<Browser>>> {
        self.live.lock().await.get(owner).cloned()
    }

    /// The owner's browser, started if it does not run.
    pub(crate) async fn open(
        self: &Arc<Self>,
        owner: &Owner,
    ) -> Result<Arc<tokio::sync::Mutex<Browser>>, String> {
        let mut live = self.live.lock().await;
        if let Some(browser) = live.get(owner) {
            let alive = browser.lock().await.alive();
            if alive {
                return Ok(browser.clone());
            }
            live.remove(owner);
        }
        if live.len() >= self.settings.max_browsers {
            return Err(format!(
                "{} browsers are open on this server, its limit: close yours with action \
                 'close' when done, or wait until an idle one closes (after {} s unused)",
                live.len(),
                self.settings.idle_timeout.as_secs()
            ));
        }
        let browser = Browser::launch(&self.settings, self.guard_for(&owner.0)).await?;
        let browser = Arc::new(tokio::sync::Mutex::new(browser));
        live.insert(owner.clone(), browser.clone());
        tokio::spawn(watch(
            Arc::downgrade(self),
            owner.clone(),
            Arc::downgrade(&browser),
            self.settings.idle_timeout,
            Instant::now() + self.settings.max_lifetime,
        ));
        Ok(browser)
    }

    /// Closes the owner's browser; whether one ran.
    pub(crate) async fn close(&self, owner: &Owner) -> bool {
        let browser = self.live.lock().await.remove(owner);
        match browser {
            Some(browser) => {
                browser.lock().await.shut().await;
                true
            }
            None => false,
        }
    }

    /// How many browsers run.
    pub async fn count(&self) -> usize {
        self.live.lock().await.len()
    }
}

/// Closes `owner`'s browser once it has been idle for `idle` or at `end`.
async fn watch(
    browsers: Weak<Browsers>,
    owner: Owner,
    browser: Weak<tokio::sync::Mutex<Browser>>,
    idle: Duration,
    end: Instant,
) {
    loop {
        let Some(current) = browser.upgrade() else {
            return;
        };
        let last = current.lock().await.last_used;
        drop(current);
        let due = (last + idle).min(end);
        if Instant::now() >= due {
            break;
        }
        tokio::time::sleep_until(due.into()).await;
    }
    let Some(browsers) = browsers.upgrade() else {
        return;
    };
    let mut live = browsers.live.lock().await;
    let same = live
        .get(&owner)
        .is_some_and(|b| browser.upgrade().is_some_and(|w| Arc::ptr_eq(b, &w)));
    if same && let Some(b) = live.remove(&owner) {
        drop(live);
        b.lock().await.shut().await;
    }
}

/// One running Chromium and its page.
pub(crate) struct Browser {
    pub(crate) cdp: Cdp,
    /// The page's protocol session.
    pub(crate) session: String,
    pub(crate) proxy: Proxy,
    child: Child,
    profile: PathBuf,
    pub(crate) last_used: Instant,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// The Chromium binary of `settings`.
pub fn chromium(settings: &BrowserSettings) -> Result<PathBuf, String> {
    if let Some(path) = &settings.chromium {
        return Ok(path.clone());
    }
    CHROMIUM_PATHS
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            "the browser tool needs Chromium, which is not installed on this server: install \
             Debian's `chromium` package (scripts/install-system-deps.sh does)"
                .to_owned()
        })
}

impl Browser {
    async fn launch(settings: &BrowserSettings, guard: EgressGuard) -> Result<Browser, String> {
        let binary = chromium(settings)?;
        let proxy = Proxy::start(guard)
            .await
            .map_err(|e| format!("could not start the browser's proxy: {e}"))?;
        let profile = std::env::temp_dir().join(format!(
            "toolsmith-browser-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&profile)
            .map_err(|e| format!("could not make the browser's profile folder: {e}"))?;
        let owner = toolsmith_command::CommandSandbox::workspace_owner();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&profile, Some(uid), Some(gid))
                .map_err(|e| format!("could not give the profile folder to nobody: {e}"))?;
        }
        let mut argv: Vec<String> = Vec::new();
        if let Some((uid, gid)) = owner {
            // Under root the browser runs as `nobody`, with Chromium's own sandbox on.
            argv.extend([
                "/usr/bin/setpriv".to_owned(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".to_owned(),
                "--".to_owned(),
            ]);
        }
        argv.push(binary.display().to_string());
        argv.extend(flags(&profile, proxy.port()));
        // The debugging pipe is the browser's fd 3 (commands in) and fd 4 (answers out): the
        // shell moves our stdin and stdout there, with no code of ours between fork and exec.
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 </dev/null >/dev/null")
            .args(&argv)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &profile)
            .env("XDG_CONFIG_HOME", profile.join(".config"))
            .env("XDG_CACHE_HOME", profile.join(".cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let cleanup = |e: String| {
            let _ = std::fs::remove_dir_all(&profile);
            e
        };
        let mut child = command.spawn().map_err(|e| {
            cleanup(format!(
                "could not start Chromium ({}): {e}",
                binary.display()
            ))
        })?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(cleanup("could not open the browser's pipe".to_owned()));
        };
        // What Chromium says on stderr is kept (the last 4 KiB) for a failed start.
        let said = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let said_in = said.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut chunk).await {
                let Some(read) = chunk.get(..n).filter(|r| !r.is_empty()) else {
                    break;
                };
                if let Ok(mut said) = said_in.lock() {
                    said.extend_from_slice(read);
                    let excess = said.len().saturating_sub(4096);
                    said.drain(..excess);
                }
            }
        });
        let cdp = Cdp::new(stdin, stdout);
        let mut browser = Browser {
            cdp,
            session: String::new(),
            proxy,
            child,
            profile,
            last_used: Instant::now(),
        };
        if let Err(e) = browser.open_page().await {
            let said = said
                .lock()
                .map(|s| String::from_utf8_lossy(&s).into_owned())
                .unwrap_or_default();
            let last: Vec<&str> = said
                .lines()
                .filter(|l| !l.contains("dbus"))
                .rev()
                .take(5)
                .collect();
            browser.shut().await;
            return Err(format!(
                "Chromium did not start: {e}{}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (it said: {})",
                        last.into_iter().rev().collect::<Vec<_>>().join(" | ")
                    )
                }
            ));
        }
        Ok(browser)
    }

    /// Opens the page the tool drives, downloads denied.
    async fn open_page(&mut self) -> Result<(), String> {
        let call = |method: &'static str, params: Value| {
            self.cdp.call(None, method, params, COMMAND_TIMEOUT)
        };
        call("Browser.setDownloadBehavior", json!({"behavior": "deny"})).await?;
        let target = call("Target.createTarget", json!({"url": "about:blank"})).await?;
        let target_id = target
            .get("targetId")
            .and_then(Value::as_str)
            .ok_or("the browser made no page")?
            .to_owned();
        let attached = call(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        )
        .await?;
        self.session = attached
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or("the browser gave no session for its page")?
            .to_owned();
        self.page("Page.enable", json!({})).await?;
        self.page("Runtime.enable", json!({})).await?;
        Ok(())
    }

    /// Sends `method` to the page.
    pub(crate) async fn page(&self, method: &str, params: Value) -> Result<Value, String> {
        self.cdp
            .call(Some(&self.session), method, params, COMMAND_TIMEOUT)
            .await
    }

    /// Whether the browser process still runs.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Closes the browser: asked politely, then killed.
    pub(crate) async fn shut(&mut self) {
        let _ = self
            .cdp
            .call(None, "Browser.close", json!({}), Duration::from_secs(5))
            .await;
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.start_kill();
            let _ = self.child.wait().await;
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// Chromium's command line: headless, the debugging pipe, a fresh profile, nothing running
/// in the background, every request through the proxy and no name resolved by the browser.
fn flags(profile: &Path, proxy_port: u16) -> Vec<String> {
    [
        "--headless",
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-component-extensions-with-background-pages",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-features=BackForwardCache,Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,InterestFeedContentSuggestions",
        "--no-pings",
        "--disable-quic",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--mute-audio",
        "--disable-gpu",
        "--hide-scrollbars",
        "--password-store=basic",
        "--use-mock-keychain",
        "--window-size=1280,800",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        format!("--user-data-dir={}", profile.display()),
        format!("--proxy-server=http://127.0.0.1:{proxy_port}"),
        "about:blank".to_owned(),
    ])
    .collect()
}
