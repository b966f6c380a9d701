//! The email family (issue 39) end to end through MCP against a real mail system this test
//! starts on 127.0.0.1 with its own configuration in a temp dir: Debian's dovecot (IMAP; a
//! passwd-file user, a maildir, no system service) and aiosmtpd (SMTP with AUTH, delivering
//! into that maildir), both installed by `scripts/install-system-deps.sh`. Under root both run
//! as `nobody` (setpriv). The servers are reached through the real egress guard, only once the
//! operator lists their host and port, with the caller's Config Center service `email`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::{ExecutionApproval, ToolServiceSettings};

use crate::mcp_outside::{assert_search_finds, call, configure, mcp};
use crate::rest_support::TestApp;
use axum::http::{Method, StatusCode};

const USER: &str = "anna@example.com";
const PASSWORD: &str = "s3cret-mail-pw";

/// aiosmtpd on `argv[1]:argv[2]`, requiring AUTH (PLAIN/LOGIN) as USER (argv[3], argv[4]) on
/// a plain connection, and delivering every message into the maildir argv[5]; prints `ready`.
const SMTP_SERVER: &str = r#"
import sys
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult, LoginPassword
host, port, user, password, maildir = sys.argv[1:6]
def check(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
    return AuthResult(success=ok, handled=False)
controller = Controller(Mailbox(maildir), hostname=host, port=int(port), authenticator=check,
                        auth_required=True, auth_require_tls=False)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
"#;

/// aiosmtpd over TLS on `argv[1]`: STARTTLS on port argv[2] (required before anything else,
/// the login offered only after it) and TLS from the first byte on port argv[3], both
/// requiring AUTH as USER (argv[4], argv[5]) and delivering into the maildir argv[6], with the
/// certificate and key argv[7], argv[8]; prints `ready`.
const SMTP_TLS_SERVER: &str = r#"
import sys, ssl
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import AuthResult, LoginPassword
host, port, tls_port, user, password, maildir, cert, key = sys.argv[1:9]
def check(server, session, envelope, mechanism, data):
    ok = isinstance(data, LoginPassword) and data.login.decode() == user and data.password.decode() == password
    return AuthResult(success=ok, handled=False)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
starttls = Controller(Mailbox(maildir), hostname=host, port=int(port), authenticator=check,
                      auth_required=True, tls_context=context, require_starttls=True)
# aiosmtpd 1.4 does not count TLS from the first byte as TLS for auth_require_tls (it looks
# for STARTTLS), so that port offers AUTH without the check; it has no plain connection.
implicit = Controller(Mailbox(maildir), hostname=host, port=int(tls_port), authenticator=check,
                      auth_required=True, auth_require_tls=False, ssl_context=context)
starttls.start()
implicit.start()
print("ready", flush=True)
sys.stdin.read()
starttls.stop()
implicit.stop()
"#;

/// A dovecot (IMAP) and an aiosmtpd (SMTP) on loopback ports, sharing USER's maildir.
pub struct MailServers {
    /// The servers' address: 127.0.0.1, or 127.0.0.2 for the TLS ones.
    pub host: &'static str,
    /// IMAP: plain (or STARTTLS, on the TLS servers).
    pub imap_port: u16,
    /// SMTP: plain (or STARTTLS, required, on the TLS servers).
    pub smtp_port: u16,
    /// On the TLS servers: IMAP and SMTP with TLS from the first byte.
    pub imaps_port: u16,
    pub smtps_port: u16,
    pub maildir: PathBuf,
    children: Vec<Child>,
    _dir: tempfile::TempDir,
}

/// How the test's mail servers are set up.
#[derive(Default)]
pub struct MailSetup<'a> {
    /// TLS with this certificate (a CA the test made signed it): dovecot requires TLS (a
    /// plain login is refused) and answers STARTTLS and TLS from the first byte; aiosmtpd
    /// requires STARTTLS on one port and speaks TLS from the first byte on another. They listen
    /// on 127.0.0.2, as dovecot takes a connection whose two ends share an address as secure.
    pub tls: Option<&'a MailPki>,
    /// The mailbox has no Sent and no Trash folder (else both, marked SPECIAL-USE).
    pub no_special_folders: bool,
}

/// A CA, another CA, and a certificate for 127.0.0.2 signed by the first, made with the
/// `openssl` command (installed by `scripts/install-system-deps.sh`) in a temp dir.
pub struct MailPki {
    dir: tempfile::TempDir,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (scripts/install-system-deps.sh installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl MailPki {
    pub fn new() -> MailPki {
        let pki = MailPki {
            dir: tempfile::tempdir().unwrap(),
        };
        let d = pki.dir.path();
        for ca in ["ca", "other-ca"] {
            openssl(
                d,
                &[
                    "req",
                    "-x509",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:P-256",
                    "-nodes",
                    "-days",
                    "2",
                    "-subj",
                    &format!("/CN={ca}"),
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                    "-keyout",
                    &format!("{ca}.key"),
                    "-out",
                    &format!("{ca}.crt"),
                ],
            );
        }
        std::fs::write(
            d.join("server.ext"),
            "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.2\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            d,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-subj",
                "/CN=127.0.0.2",
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
            ],
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        );
        pki
    }

    /// The PEM text of `name` (`ca.crt`, `other-ca.crt`, `server.crt`, `server.key`).
    pub fn pem(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap()
    }
}

impl Drop for MailServers {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn id(flag: &str) -> String {
    let out = Command::new("id").arg(flag).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `program args` as the user the servers run as (`nobody` under root).
fn command_as(user: Option<(&str, &str)>, program: &str) -> Command {
    match user {
        Some((user, group)) => {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={user}"),
                &format!("--regid={group}"),
                "--clear-groups",
                program,
            ]);
            c
        }
        None => Command::new(program),
    }
}

fn chown_all(path: &Path, user: &str) {
    let status = Command::new("chown")
        .args(["-R", &format!("{user}:"), &path.display().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Starts both servers, or fails (skips only under `TOOLSMITH_ALLOW_SKIP=1`) naming what to
/// install.
pub async fn mail_servers() -> Option<MailServers> {
    mail_servers_with(MailSetup::default()).await
}

/// Starts both servers as `setup` says.
pub async fn mail_servers_with(setup: MailSetup<'_>) -> Option<MailServers> {
    if !toolsmith_core::testkit::require_path(
        "dovecot (Debian's dovecot-imapd: scripts/install-system-deps.sh)",
        Path::new("/usr/sbin/dovecot"),
    ) {
        return None;
    }
    let aiosmtpd = Command::new("/usr/bin/python3")
        .args(["-c", "import aiosmtpd"])
        .status()
        .map_err(|e| e.to_string())
        .and_then(|s| {
            s.success()
                .then_some(())
                .ok_or_else(|| "python3 cannot import aiosmtpd".to_owned())
        });
    toolsmith_core::testkit::require(
        "aiosmtpd (Debian's python3-aiosmtpd: scripts/install-system-deps.sh)",
        aiosmtpd,
    )?;
    let root = is_root();
    let (user, group) = if root {
        ("nobody".to_owned(), "nogroup".to_owned())
    } else {
        (id("-un"), id("-gn"))
    };
    let run_as = root.then_some((user.as_str(), group.as_str()));
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    for sub in ["run", "state", "home/anna"] {
        std::fs::create_dir_all(base.join(sub)).unwrap();
    }
    let maildir = base.join("home/anna/Maildir");
    std::fs::write(
        base.join("passwd"),
        format!("{USER}:{{PLAIN}}{PASSWORD}::::::\n"),
    )
    .unwrap();
    let host = if setup.tls.is_some() {
        "127.0.0.2"
    } else {
        "127.0.0.1"
    };
    let free_port = || {
        std::net::TcpListener::bind((host, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let imap_port = free_port();
    let smtp_port = free_port();
    let (imaps_port, smtps_port) = if setup.tls.is_some() {
        (free_port(), free_port())
    } else {
        (0, 0)
    };
    let b = base.display();
    let ssl = match setup.tls {
        Some(pki) => {
            std::fs::write(base.join("server.crt"), pki.pem("server.crt")).unwrap();
            std::fs::write(base.join("server.key"), pki.pem("server.key")).unwrap();
            format!(
                "ssl = required\nssl_cert = <{b}/server.crt\nssl_key = <{b}/server.key\n\
                 disable_plaintext_auth = yes\n"
            )
        }
        None => "ssl = no\ndisable_plaintext_auth = no\n".to_owned(),
    };
    let folders = if setup.no_special_folders {
        ""
    } else {
        "namespace inbox {\n  inbox = yes\n  mailbox Sent {\n    special_use = \\Sent\n    auto = create\n  }\n\
         mailbox Trash {\n    special_use = \\Trash\n    auto = create\n  }\n}\n"
    };
    std::fs::write(
        base.join("dovecot.conf"),
        format!(
            "base_dir = {b}/run\nstate_dir = {b}/state\ninstance_name = toolsmith-test-{imap_port}\n\
             log_path = /dev/stderr\nprotocols = imap\nlisten = {host}\n{ssl}\
             auth_mechanisms = plain login\n\
             default_internal_user = {user}\ndefault_internal_group = {group}\ndefault_login_user = {user}\n\
             mail_location = maildir:{b}/home/%n/Maildir\n{folders}\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u {b}/passwd\n}}\n\
             userdb {{\n  driver = static\n  args = uid={user} gid={group} home={b}/home/%n\n}}\n\
             service imap-login {{\n  chroot =\n  inet_listener imap {{\n    address = {host}\n    port = {imap_port}\n  }}\n  inet_listener imaps {{\n    address = {host}\n    port = {imaps_port}\n  }}\n}}\n\
             service anvil {{\n  chroot =\n}}\n"
        ),
    )
    .unwrap();
    if root {
        chown_all(base, &user);
    }
    let mut children = Vec::new();
    let mut dovecot = command_as(run_as, "/usr/sbin/dovecot")
        .args(["-F", "-c", &format!("{b}/dovecot.conf")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = dovecot.stderr.take().unwrap();
    children.push(dovecot);
    let mut lines = BufReader::new(stderr).lines();
    loop {
        let line = lines
            .next()
            .expect("dovecot ended before starting up")
            .unwrap();
        assert!(!line.contains("Fatal"), "dovecot: {line}");
        if line.contains("starting up") {
            break;
        }
    }
    // Its log goes on to stderr; keep reading it so dovecot never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let mut smtp = command_as(run_as, "/usr/bin/python3");
    match setup.tls {
        None => smtp.args([
            "-c",
            SMTP_SERVER,
            host,
            &smtp_port.to_string(),
            USER,
            PASSWORD,
            &maildir.display().to_string(),
        ]),
        Some(_) => smtp.args([
            "-c",
            SMTP_TLS_SERVER,
            host,
            &smtp_port.to_string(),
            &smtps_port.to_string(),
            USER,
            PASSWORD,
            &maildir.display().to_string(),
            &format!("{b}/server.crt"),
            &format!("{b}/server.key"),
        ]),
    };
    let mut smtp = smtp
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = smtp.stdout.take().unwrap();
    children.push(smtp);
    let mut ready = String::new();
    BufReader::new(out).read_line(&mut ready).unwrap();
    assert_eq!(ready.trim(), "ready", "aiosmtpd did not start");
    let servers = MailServers {
        host,
        imap_port,
        smtp_port,
        imaps_port,
        smtps_port,
        maildir,
        children,
        _dir: dir,
    };
    // Dovecot's master opens its listeners before it says it is starting up; its login
    // process answers the first connection.
    let greeting = tokio::net::TcpStream::connect((host, imap_port)).await;
    assert!(
        greeting.is_ok(),
        "dovecot listens on {imap_port}: {greeting:?}"
    );
    Some(servers)
}

impl MailServers {
    /// The messages delivered into the maildir (new and seen), as raw text.
    pub fn delivered(&self) -> Vec<String> {
        let mut all = Vec::new();
        for sub in ["new", "cur"] {
            if let Ok(entries) = std::fs::read_dir(self.maildir.join(sub)) {
                for entry in entries.flatten() {
                    all.push(std::fs::read_to_string(entry.path()).unwrap_or_default());
                }
            }
        }
        all
    }

    /// Drops `raw` into the maildir as a received message, as a delivery agent would.
    pub fn deliver(&self, name: &str, raw: &str) {
        let new = self.maildir.join("new");
        std::fs::create_dir_all(&new).unwrap();
        let tmp = self.maildir.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join(name), raw).unwrap();
        std::fs::rename(tmp.join(name), new.join(name)).unwrap();
        if is_root() {
            chown_all(&self.maildir, "nobody");
        }
    }
}

/// An app with a workspace, the email group on and approvals off, whose egress may reach
/// `hosts` (`host:port` each).
async fn email_app(hosts: &[String]) -> (TestApp, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().unwrap();
    let mut settings = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        ..ToolServiceSettings::default()
    };
    settings.egress.allowed_private_hosts = hosts.iter().map(|h| h.parse().unwrap()).collect();
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/email",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    (app, workspaces)
}

async fn configure_email(app: &TestApp, imap_port: u16, smtp_port: u16, password: &str) {
    configure(
        app,
        "email",
        &[
            ("smtp_host", "text"),
            ("smtp_port", "number"),
            ("smtp_security", "text"),
            ("imap_host", "text"),
            ("imap_port", "number"),
            ("imap_security", "text"),
            ("username", "text"),
            ("password", "secret"),
            ("from_name", "text"),
        ],
        json!({
            "smtp_host": "127.0.0.1", "smtp_port": smtp_port, "smtp_security": "none",
            "imap_host": "127.0.0.1", "imap_port": imap_port, "imap_security": "none",
            "username": USER, "password": password, "from_name": "Anna Example",
        }),
    )
    .await;
}

fn ids(listing: &Value) -> Vec<String> {
    listing["emails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_is_sent_with_an_attachment_read_searched_replied_to_and_deleted_through_mcp() {
    let Some(servers) = mail_servers().await else {
        return;
    };
    let hosts = [
        format!("127.0.0.1:{}", servers.imap_port),
        format!("127.0.0.1:{}", servers.smtp_port),
    ];
    let (app, _workspaces) = email_app(&hosts).await;
    configure_email(&app, servers.imap_port, servers.smtp_port, PASSWORD).await;
    let client = mcp(&app).await;

    let report = "Quarterly figures: 42 widgets.\n";
    let (is_error, _, text) = call(
        &client,
        "write_file",
        json!({"path": "reports/q3.txt", "content": report}),
    )
    .await;
    assert!(!is_error, "{text}");

    // Sent with the attachment, through SMTP with AUTH; the mail arrives in the mailbox.
    let (is_error, sent, text) = call(
        &client,
        "send_email",
        json!({"to": "Anna <anna@example.com>", "bcc": "boss@example.com", "subject": "The Q3 report",
               "body": "Hello Anna,\nhere is the report.\n", "attachments": ["reports/q3.txt"]}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(sent["sent"], true, "{sent}");
    assert_eq!(
        sent["sentFolder"], "Sent",
        "a copy in the \\Sent folder: {sent}"
    );
    assert_eq!(sent["recipients"], 2);
    assert_eq!(sent["attachments"], json!(["q3.txt"]));
    let delivered = servers.delivered();
    assert_eq!(delivered.len(), 1, "one mail arrived");
    let raw = &delivered[0];
    assert!(raw.contains("Subject: The Q3 report"), "{raw}");
    assert!(
        raw.contains("From: \"Anna Example\" <anna@example.com>")
            || raw.contains("From: Anna Example <anna@example.com>"),
        "{raw}"
    );
    assert!(
        raw.contains("X-RcptTo: anna@example.com, boss@example.com")
            || raw.contains("boss@example.com"),
        "the bcc is a recipient: {raw}"
    );
    assert!(!raw.contains("Bcc:"), "a bcc is never a header: {raw}");
    assert!(!text.contains(PASSWORD));
    // The copy in Sent is marked read, with its attachment.
    let (is_error, sent_box, text) = call(&client, "list_emails", json!({"folder": "Sent"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(sent_box["total"], 1, "{sent_box}");
    assert_eq!(sent_box["emails"][0]["subject"], "The Q3 report");
    assert_eq!(sent_box["emails"][0]["seen"], true);

    // Listed and read back through IMAP, the attachment saved into the workspace.
    let (is_error, listing, text) = call(&client, "list_emails", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(listing["total"], 1, "{listing}");
    let first = &listing["emails"][0];
    assert_eq!(first["subject"], "The Q3 report");
    assert_eq!(first["from"]["address"], USER);
    assert_eq!(first["seen"], false);
    let id = first["id"].as_str().unwrap().to_owned();

    let (is_error, mail, text) = call(
        &client,
        "read_email",
        json!({"emailId": id, "saveAttachmentsTo": "inbox-files"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(
        mail["text"]
            .as_str()
            .unwrap()
            .contains("here is the report"),
        "{mail}"
    );
    assert_eq!(mail["attachments"][0]["name"], "q3.txt", "{mail}");
    assert_eq!(mail["attachments"][0]["savedTo"], "inbox-files/q3.txt");
    let (is_error, file, text) =
        call(&client, "read_file", json!({"path": "inbox-files/q3.txt"})).await;
    assert!(!is_error, "{text}");
    assert!(file.to_string().contains("42 widgets"), "{file}");
    // Reading did not mark it read; a second save does not replace the first file.
    let (_, listing, _) = call(&client, "list_emails", json!({"unreadOnly": true})).await;
    assert_eq!(ids(&listing), vec![id.clone()]);
    let (is_error, again, text) = call(
        &client,
        "read_email",
        json!({"emailId": id, "saveAttachmentsTo": "inbox-files"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(again["attachments"][0]["savedTo"], "inbox-files/q3-1.txt");

    // Searched by text, sender and subject; a search that matches nothing is empty.
    let (is_error, found, text) = call(
        &client,
        "search_emails",
        json!({"query": "report", "from": "anna@example.com", "since": "2000-01-01"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(ids(&found), vec![id.clone()], "{found}");
    let (_, none, _) = call(
        &client,
        "search_emails",
        json!({"query": "no such words \"here\""}),
    )
    .await;
    assert_eq!(none["total"], 0, "{none}");

    // A reply goes to the sender with Re: and the thread's references.
    let (is_error, reply, text) = call(
        &client,
        "reply_email",
        json!({"emailId": id, "body": "Thanks, received."}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(reply["subject"], "Re: The Q3 report", "{reply}");
    assert_eq!(reply["to"], json!([USER]));
    assert_eq!(reply["sentFolder"], "Sent", "{reply}");
    let (_, sent_box, _) = call(&client, "list_emails", json!({"folder": "Sent"})).await;
    assert_eq!(sent_box["total"], 2, "{sent_box}");
    let original_id = mail["messageId"].as_str().unwrap().to_owned();
    assert_eq!(reply["inReplyTo"], original_id);
    let delivered = servers.delivered();
    assert_eq!(delivered.len(), 2, "the reply arrived");
    let replied = delivered
        .iter()
        .find(|m| m.contains("Re: The Q3 report"))
        .unwrap();
    assert!(
        replied.contains(&format!("In-Reply-To: {original_id}")),
        "{replied}"
    );
    assert!(
        replied.contains("> here is the report."),
        "the original is quoted: {replied}"
    );

    // Deleted: moved to the \Trash folder, gone from the inbox; deleting it again there says
    // there is no such email.
    let (is_error, deleted, text) = call(&client, "delete_email", json!({"emailId": id})).await;
    assert!(!is_error, "{text}");
    assert_eq!(deleted["deleted"], true);
    assert_eq!(deleted["movedTo"], "Trash", "{deleted}");
    assert_eq!(deleted["permanent"], false, "{deleted}");
    let (_, listing, _) = call(&client, "list_emails", json!({})).await;
    assert!(!ids(&listing).contains(&id), "{listing}");
    assert_eq!(listing["total"], 1, "the reply is left: {listing}");
    let (is_error, _, text) = call(&client, "delete_email", json!({"emailId": id})).await;
    assert!(is_error);
    assert!(text.contains(&format!("no email with id {id}")), "{text}");
    let (_, trash, _) = call(&client, "list_emails", json!({"folder": "Trash"})).await;
    assert_eq!(trash["total"], 1, "{trash}");
    assert_eq!(trash["emails"][0]["subject"], "The Q3 report");
    // Deleting from the Trash deletes for good, and so does permanent: true anywhere.
    let trashed = ids(&trash)[0].clone();
    let (is_error, gone, text) = call(
        &client,
        "delete_email",
        json!({"emailId": trashed, "folder": "Trash"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(gone["permanent"], true, "{gone}");
    assert_eq!(gone["movedTo"], Value::Null, "{gone}");
    let reply_id = ids(&listing)[0].clone();
    let (is_error, gone, text) = call(
        &client,
        "delete_email",
        json!({"emailId": reply_id, "permanent": true}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(gone["permanent"], true, "{gone}");
    for folder in ["INBOX", "Trash"] {
        let (_, left, _) = call(&client, "list_emails", json!({"folder": folder})).await;
        assert_eq!(left["total"], 0, "{folder}: {left}");
    }
}

/// The email service for `servers` with these fields over the defaults (the plain ports,
/// security `none`).
async fn configure_email_as(app: &TestApp, servers: &MailServers, over: Value) {
    let mut values = json!({
        "smtp_host": servers.host, "smtp_port": servers.smtp_port, "smtp_security": "none",
        "imap_host": servers.host, "imap_port": servers.imap_port, "imap_security": "none",
        "username": USER, "password": PASSWORD, "from_name": "Anna Example",
    });
    for (key, value) in over.as_object().unwrap() {
        values[key] = value.clone();
    }
    configure(
        app,
        "email",
        &[
            ("smtp_host", "text"),
            ("smtp_port", "number"),
            ("smtp_security", "text"),
            ("imap_host", "text"),
            ("imap_port", "number"),
            ("imap_security", "text"),
            ("username", "text"),
            ("password", "secret"),
            ("from_name", "text"),
            ("ca_certificate", "text"),
            ("save_sent", "boolean"),
        ],
        values,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_goes_over_tls_and_starttls_trusting_the_services_ca_certificate() {
    let pki = MailPki::new();
    let Some(servers) = mail_servers_with(MailSetup {
        tls: Some(&pki),
        ..MailSetup::default()
    })
    .await
    else {
        return;
    };
    let hosts: Vec<String> = [
        servers.imap_port,
        servers.imaps_port,
        servers.smtp_port,
        servers.smtps_port,
    ]
    .iter()
    .map(|port| format!("{}:{port}", servers.host))
    .collect();
    let ca = pki.pem("ca.crt");

    // TLS from the first byte (IMAPS, SMTPS), then STARTTLS on both, each trusting the CA of
    // the service's ca_certificate: sent, saved in Sent, and read back.
    for (n, (security, smtp, imap)) in [
        ("tls", servers.smtps_port, servers.imaps_port),
        ("starttls", servers.smtp_port, servers.imap_port),
    ]
    .into_iter()
    .enumerate()
    {
        let (app, _w) = email_app(&hosts).await;
        configure_email_as(
            &app,
            &servers,
            json!({"smtp_security": security, "smtp_port": smtp, "imap_security": security,
                   "imap_port": imap, "ca_certificate": ca}),
        )
        .await;
        let client = mcp(&app).await;
        let subject = format!("over {security}");
        let (is_error, sent, text) = call(
            &client,
            "send_email",
            json!({"to": USER, "subject": subject, "body": "sealed"}),
        )
        .await;
        assert!(!is_error, "{security}: {text}");
        assert_eq!(sent["sentFolder"], "Sent", "{security}: {sent}");
        let (is_error, listing, text) = call(&client, "list_emails", json!({})).await;
        assert!(!is_error, "{security}: {text}");
        assert_eq!(listing["total"], n + 1, "{security}: {listing}");
        assert_eq!(listing["emails"][0]["subject"], subject, "{listing}");
    }

    // Another CA in the field, or none (the server's CA is no public one): refused, naming
    // the field; nothing sent.
    for ca in [Some(pki.pem("other-ca.crt")), None] {
        for security in ["tls", "starttls"] {
            let (app, _w) = email_app(&hosts).await;
            let (smtp, imap) = if security == "tls" {
                (servers.smtps_port, servers.imaps_port)
            } else {
                (servers.smtp_port, servers.imap_port)
            };
            let mut over = json!({"smtp_security": security, "smtp_port": smtp,
                                  "imap_security": security, "imap_port": imap});
            if let Some(ca) = &ca {
                over["ca_certificate"] = json!(ca);
            }
            configure_email_as(&app, &servers, over).await;
            let client = mcp(&app).await;
            let (is_error, _, text) = call(
                &client,
                "send_email",
                json!({"to": USER, "subject": "s", "body": "b"}),
            )
            .await;
            assert!(is_error, "{security} {ca:?}: {text}");
            assert!(
                text.contains("ca_certificate") && text.contains("Nothing was sent"),
                "{security}: {text}"
            );
            let (is_error, _, text) = call(&client, "list_emails", json!({})).await;
            assert!(is_error, "{security}: {text}");
            assert!(text.contains("ca_certificate"), "{security}: {text}");
        }
    }
    assert_eq!(servers.delivered().len(), 2, "only the two trusted mails");

    // Plain text (security none) on servers that take a login only over TLS: refused, naming
    // the setting to change, the password never sent in clear.
    let (app, _w) = email_app(&hosts).await;
    configure_email_as(&app, &servers, json!({"ca_certificate": ca})).await;
    let client = mcp(&app).await;
    let (is_error, _, text) = call(
        &client,
        "send_email",
        json!({"to": USER, "subject": "s", "body": "b"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("smtp_security=starttls"), "{text}");
    let (is_error, _, text) = call(&client, "list_emails", json!({})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("imap_security=starttls"), "{text}");
    // TLS asked of a port that speaks plain text first: named too.
    let (app, _w) = email_app(&hosts).await;
    configure_email_as(
        &app,
        &servers,
        json!({"ca_certificate": ca, "imap_security": "tls", "smtp_security": "tls"}),
    )
    .await;
    let client = mcp(&app).await;
    let (is_error, _, text) = call(&client, "list_emails", json!({})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("imap_security=starttls"), "{text}");

    // A field that is no certificate: refused before any connection, naming it.
    let (app, _w) = email_app(&hosts).await;
    configure_email_as(
        &app,
        &servers,
        json!({"ca_certificate": "not a certificate", "imap_security": "tls"}),
    )
    .await;
    let client = mcp(&app).await;
    let (is_error, _, text) = call(&client, "list_emails", json!({})).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("ca_certificate") && text.contains("BEGIN CERTIFICATE"),
        "{text}"
    );
    assert_eq!(servers.delivered().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_input_is_refused_with_what_to_do_and_nothing_is_sent() {
    let Some(servers) = mail_servers_with(MailSetup {
        no_special_folders: true,
        ..MailSetup::default()
    })
    .await
    else {
        return;
    };
    let hosts = [
        format!("127.0.0.1:{}", servers.imap_port),
        format!("127.0.0.1:{}", servers.smtp_port),
    ];
    let (app, workspaces) = email_app(&hosts).await;
    configure_email(&app, servers.imap_port, servers.smtp_port, PASSWORD).await;
    let client = mcp(&app).await;

    let refusals = [
        (
            json!({"to": USER, "subject": "Hi\r\nBcc: victim@example.net", "body": "x"}),
            "line break",
        ),
        (
            json!({"to": "anna@example.com\r\nBcc: victim@example.net", "subject": "Hi", "body": "x"}),
            "line break",
        ),
        (
            json!({"to": ["not an address"], "subject": "Hi", "body": "x"}),
            "not an email address",
        ),
        (
            json!({"to": USER, "subject": "Hi", "body": "x".repeat(200_001)}),
            "body",
        ),
        (
            json!({"to": USER, "subject": "Hi", "body": "x", "attachments": ["../../etc/passwd"]}),
            "..",
        ),
        (
            json!({"to": USER, "subject": "Hi", "body": "x", "attachments": ["/etc/passwd"]}),
            "relative",
        ),
    ];
    for (args, says) in refusals {
        let (is_error, _, text) = call(&client, "send_email", args.clone()).await;
        assert!(is_error, "{args}");
        assert!(text.contains(says), "{args}: {text}");
    }
    assert!(servers.delivered().is_empty(), "nothing was sent");
    let (is_error, _, text) =
        call(&client, "search_emails", json!({"query": "a\r\nA1 LOGOUT"})).await;
    assert!(is_error);
    assert!(text.contains("line break"), "{text}");

    // A received attachment named to climb out of the folder is saved inside it.
    servers.deliver(
        "1.hostile",
        "From: Mallory <mallory@example.net>\r\nTo: anna@example.com\r\nSubject: invoice\r\n\
         Message-ID: <m1@example.net>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n\
         see attached\r\n--b\r\nContent-Type: text/plain\r\n\
         Content-Disposition: attachment; filename=\"../../../outside.sh\"\r\n\r\necho pwned\r\n--b--\r\n",
    );
    let (_, listing, _) = call(&client, "list_emails", json!({})).await;
    let id = ids(&listing)[0].clone();
    let (is_error, mail, text) = call(
        &client,
        "read_email",
        json!({"emailId": id, "saveAttachmentsTo": "mail/in"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        mail["attachments"][0]["savedTo"], "mail/in/outside.sh",
        "{mail}"
    );
    assert_eq!(
        mail["attachments"][0]["originalName"],
        "../../../outside.sh"
    );
    let user_root = std::fs::read_dir(workspaces.path()).unwrap().count();
    assert!(user_root >= 1);
    let escaped: Vec<_> = walk(workspaces.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "outside.sh"))
        .collect();
    assert_eq!(escaped.len(), 1, "{escaped:?}");
    assert!(escaped[0].ends_with("mail/in/outside.sh"), "{escaped:?}");
    let (is_error, _, text) = call(
        &client,
        "read_email",
        json!({"emailId": id, "saveAttachmentsTo": "../elsewhere"}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains(".."), "{text}");

    // A mailbox without a \Trash folder: delete_email leaves the mail and says how to delete
    // it for good; without a \Sent folder a sent mail's answer says no copy was saved.
    let (is_error, _, text) = call(&client, "delete_email", json!({"emailId": id})).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("no Trash folder") && text.contains("permanent: true"),
        "{text}"
    );
    let (_, listing, _) = call(&client, "list_emails", json!({})).await;
    assert_eq!(ids(&listing), vec![id.clone()], "still there: {listing}");
    let (is_error, gone, text) = call(
        &client,
        "delete_email",
        json!({"emailId": id, "permanent": true}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(gone["permanent"], true, "{gone}");
    let (is_error, sent, text) = call(
        &client,
        "send_email",
        json!({"to": USER, "subject": "no copy", "body": "b"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(sent["sentFolder"], Value::Null, "{sent}");
    assert!(
        sent["sentCopy"].as_str().unwrap().contains("\\Sent"),
        "{sent}"
    );

    // A wrong password is the server's refusal, naming the service to check.
    let (app2, _w) = email_app(&hosts).await;
    configure_email(&app2, servers.imap_port, servers.smtp_port, "wrong").await;
    let client2 = mcp(&app2).await;
    let (is_error, _, text) = call(&client2, "list_emails", json!({})).await;
    assert!(is_error);
    assert!(
        text.contains("logging in") && text.contains("'email'"),
        "{text}"
    );
    let (is_error, _, text) = call(
        &client2,
        "send_email",
        json!({"to": USER, "subject": "s", "body": "b"}),
    )
    .await;
    assert!(is_error);
    assert!(
        text.contains("logging in to the SMTP server") && text.contains("'email'"),
        "{text}"
    );
    assert!(
        !text.contains("wrong"),
        "the password is not repeated: {text}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_server_on_a_private_address_not_listed_is_never_reached() {
    // Two listeners where the servers would be; the operator lists neither.
    let smtp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let imap = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    smtp.set_nonblocking(true).unwrap();
    imap.set_nonblocking(true).unwrap();
    let (app, _w) = email_app(&[]).await;
    configure_email(
        &app,
        imap.local_addr().unwrap().port(),
        smtp.local_addr().unwrap().port(),
        PASSWORD,
    )
    .await;
    let client = mcp(&app).await;
    let (is_error, _, text) = call(
        &client,
        "send_email",
        json!({"to": USER, "subject": "s", "body": "b"}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains("allowed_private_hosts"), "{text}");
    let (is_error, _, text) = call(&client, "list_emails", json!({})).await;
    assert!(is_error);
    assert!(text.contains("allowed_private_hosts"), "{text}");
    for listener in [&smtp, &imap] {
        let accepted = listener.accept();
        assert!(
            matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "nothing connected: {accepted:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_service_each_tool_names_it_and_its_fields() {
    let (app, _w) = email_app(&[]).await;
    let client = mcp(&app).await;
    for (tool, args) in [
        (
            "send_email",
            json!({"to": USER, "subject": "s", "body": "b"}),
        ),
        ("list_emails", json!({})),
        ("read_email", json!({"emailId": "1"})),
        ("search_emails", json!({"query": "x"})),
        ("delete_email", json!({"emailId": "1"})),
        ("reply_email", json!({"emailId": "1", "body": "b"})),
    ] {
        let (is_error, _, text) = call(&client, tool, args).await;
        assert!(is_error, "{tool}");
        assert!(
            text.contains("Config Center service 'email'") && text.contains("smtp_host"),
            "{tool}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_email_tools_from_what_a_person_types() {
    assert_search_finds(&[
        ("email Anna the report", &["send_email"][..]),
        ("send an email", &["send_email"]),
        (
            "check my inbox for messages from Bob",
            &["search_emails", "list_emails"],
        ),
        ("any new mail in my inbox", &["list_emails"]),
        ("reply to that email", &["reply_email"]),
        ("delete that email", &["delete_email"]),
        ("open the email and save its attachment", &["read_email"]),
    ])
    .await;
}
