//! TLS to PostgreSQL against a real server with a test CA: each `sslmode` connects when it
//! should and is refused, with a message that names the fix, when it should not; a client
//! certificate signs in where `pg_hba.conf` asks for one.

use std::path::{Path, PathBuf};
use std::process::Command;

use toolsmith_store::testkit::{PgCluster, pg_or_skip};
use toolsmith_store::{PgOptions, PgStore, Store, StoreError};

/// A CA, and certificates it signed, made with the `openssl` command in a temp dir.
struct TestPki {
    dir: tempfile::TempDir,
}

impl TestPki {
    fn new() -> TestPki {
        let pki = TestPki {
            dir: tempfile::tempdir().unwrap(),
        };
        pki.ca("ca");
        pki.ca("other-ca");
        pki.signed(
            "server",
            "ca",
            "/CN=localhost",
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
        );
        pki.signed(
            "client",
            "ca",
            "/CN=postgres",
            "extendedKeyUsage=clientAuth\n",
        );
        pki
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    fn ca(&self, name: &str) {
        openssl(
            self.dir.path(),
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
                &format!("/CN={name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.crt"),
            ],
        );
    }

    fn signed(&self, name: &str, ca: &str, subject: &str, extensions: &str) {
        let ext = self.path(&format!("{name}.ext"));
        std::fs::write(&ext, format!("basicConstraints=CA:FALSE\n{extensions}")).unwrap();
        openssl(
            self.dir.path(),
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-subj",
                subject,
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
            ],
        );
        openssl(
            self.dir.path(),
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.crt"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &ext.display().to_string(),
                "-out",
                &format!("{name}.crt"),
            ],
        );
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("the openssl command is needed (bash scripts/install-system-deps.sh): {e}")
        });
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A cluster that accepts TCP clients over TLS only (`hostssl`), trusting them, except the
/// database `by_cert`, where a client certificate is the password.
fn tls_cluster(pki: &TestPki) -> Option<PgCluster> {
    let cluster = pg_or_skip()?;
    cluster
        .enable_tls(
            &pki.read("server.crt"),
            &pki.read("server.key"),
            &pki.read("ca.crt"),
        )
        .unwrap();
    cluster.psql("CREATE DATABASE by_cert").unwrap();
    cluster
        .set_hba(
            "local all all trust\n\
             hostssl by_cert all 127.0.0.1/32 cert\n\
             hostssl all all 127.0.0.1/32 trust\n",
        )
        .unwrap();
    Some(cluster)
}

async fn connect(url: &str) -> Result<PgStore, StoreError> {
    let options = PgOptions {
        startup_timeout: std::time::Duration::from_secs(2),
        ..PgOptions::default()
    };
    PgStore::connect(url, &options).await
}

fn refusal(result: Result<PgStore, StoreError>) -> String {
    match result {
        Ok(_) => panic!("connected where it should have been refused"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sslmode_connects_or_is_refused_as_libpq_says() {
    let pki = TestPki::new();
    let Some(cluster) = tls_cluster(&pki) else {
        return;
    };
    let port = cluster.port();
    let ca = pki.path("ca.crt").display().to_string();
    let other_ca = pki.path("other-ca.crt").display().to_string();
    let at =
        |host: &str, query: &str| format!("postgres://postgres@{host}:{port}/postgres?{query}");

    // verify-full by the name the certificate holds.
    let store = connect(&at(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .await
    .unwrap();
    store.ping().await.unwrap();
    // The change feed's own connection (outside the pool) goes over TLS too.
    let mut feed = store.subscribe_changes().unwrap();
    assert!(matches!(
        feed.recv().await,
        Some(toolsmith_store::FeedEvent::Resync)
    ));
    // The server asks for TLS on every TCP connection: a plain one is refused by pg_hba.
    let plain = refusal(connect(&at("127.0.0.1", "sslmode=disable")).await);
    assert!(plain.contains("no encryption"), "{plain}");

    // A CA that did not sign the server's certificate.
    let wrong_ca = refusal(
        connect(&at(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={other_ca}"),
        ))
        .await,
    );
    assert!(
        wrong_ca.contains("sslrootcert"),
        "names the file to check: {wrong_ca}"
    );
    let wrong_ca = refusal(
        connect(&at(
            "127.0.0.1",
            &format!("sslmode=verify-ca&sslrootcert={other_ca}"),
        ))
        .await,
    );
    assert!(wrong_ca.contains("UnknownIssuer"), "{wrong_ca}");
    // libpq's rule: require with a root certificate checks the chain.
    let wrong_ca = refusal(
        connect(&at(
            "127.0.0.1",
            &format!("sslmode=require&sslrootcert={other_ca}"),
        ))
        .await,
    );
    assert!(wrong_ca.contains("UnknownIssuer"), "{wrong_ca}");

    // A host the certificate does not name: verify-full refuses, verify-ca checks the chain only.
    // (The certificate names localhost only; 127.0.0.1 is the same server by another name.)
    let by_address = "127.0.0.1";
    let mismatch = refusal(
        connect(&at(
            by_address,
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ))
        .await,
    );
    assert!(
        mismatch.contains("does not name the host") && mismatch.contains("verify-ca"),
        "{mismatch}"
    );
    connect(&at(
        by_address,
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    ))
    .await
    .unwrap()
    .ping()
    .await
    .unwrap();
    // require: encrypted, the certificate not checked.
    connect(&at("127.0.0.1", "sslmode=require"))
        .await
        .unwrap()
        .ping()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_signs_in_where_the_server_asks_for_one() {
    let pki = TestPki::new();
    let Some(cluster) = tls_cluster(&pki) else {
        return;
    };
    let port = cluster.port();
    let ca = pki.path("ca.crt").display().to_string();
    let base = format!(
        "postgres://postgres@localhost:{port}/by_cert?sslmode=verify-full&sslrootcert={ca}"
    );
    let without = refusal(connect(&base).await);
    assert!(without.contains("certificate"), "{without}");
    let with = format!(
        "{base}&sslcert={}&sslkey={}",
        pki.path("client.crt").display(),
        pki.path("client.key").display()
    );
    connect(&with).await.unwrap().ping().await.unwrap();
    let half = refusal(
        connect(&format!(
            "{base}&sslcert={}",
            pki.path("client.crt").display()
        ))
        .await,
    );
    assert!(half.contains("sslcert needs sslkey"), "{half}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_tls_is_refused_at_once_for_require_and_kept_plain_by_default() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().unwrap();
    // Refused at once, not retried until the start-up timeout (that ends in `Unreachable`):
    // waiting does not turn TLS on.
    match connect(&format!("{url}?sslmode=require")).await {
        Err(e @ StoreError::ConnectRefused { .. }) => {
            assert!(e.to_string().contains("ssl off"), "names the fix: {e}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    connect(&url).await.unwrap().ping().await.unwrap();
    connect(&format!("{url}?sslmode=prefer"))
        .await
        .unwrap()
        .ping()
        .await
        .unwrap();
}
