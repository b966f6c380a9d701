//! The files under the data directory: the Config Center's key (never replaced while sealed
//! values need it), and the database file (created private, an empty or unwritable file
//! refused with the reason and the path).

use std::os::unix::fs::PermissionsExt as _;

use crate::support::Env;

const SECRET: &str = "kiwi-lantern-5521-secret";

/// Stores one sealed secret with `config set` (the value read from stdin).
fn store_a_secret(env: &Env) {
    env.run_with_stdin(
        &["config", "set", "weatherapi", "api_key=@-"],
        Some(SECRET.as_bytes()),
    )
    .expect(0);
}

fn key_file(env: &Env) -> std::path::PathBuf {
    env.data_dir().join("secret.key")
}

#[test]
fn a_missing_key_is_not_replaced_while_sealed_values_need_it() {
    let env = Env::new();
    store_a_secret(&env);
    let key = std::fs::read(key_file(&env)).expect("the first start created the key");
    std::fs::remove_file(key_file(&env)).unwrap();

    for args in [&["config", "list"][..], &["serve", "--port", "0"][..]] {
        let out = env.run(args).expect(10);
        assert!(
            out.stderr.contains("1 sealed secret value(s)")
                && out.stderr.contains("Restore secret.key from your backup")
                && out.stderr.contains("TOOLSMITH_SECRET_KEY"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            !key_file(&env).exists(),
            "{args:?} created a new key over the sealed values"
        );
    }

    // Put the key back: everything works again, and the secret is still readable.
    std::fs::write(key_file(&env), &key).unwrap();
    std::fs::set_permissions(key_file(&env), std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = env.run(&["config", "list"]).expect(0);
    assert!(
        out.stdout.contains("weatherapi (configured)"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_different_key_is_refused_instead_of_reading_secrets_as_missing() {
    let env = Env::new();
    store_a_secret(&env);
    let other = "a".repeat(64);
    let out = env
        .run_with_env(
            &["config", "list"],
            None,
            &[("TOOLSMITH_SECRET_KEY", &other)],
        )
        .expect(10);
    assert!(
        out.stderr
            .contains("cannot open the Config Center's sealed values")
            && out.stderr.contains("not the key they were sealed with"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(SECRET));
    // The key file itself still works.
    env.run(&["config", "list"]).expect(0);
}

#[test]
fn a_store_without_sealed_values_gets_a_new_private_key() {
    let env = Env::new();
    env.run(&["config", "add-service", "placeholder"]).expect(0); // starts the store
    let mode = std::fs::metadata(key_file(&env))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Losing a key that sealed nothing is harmless: a new one is made.
    std::fs::remove_file(key_file(&env)).unwrap();
    env.run(&["tool", "list"]).expect(0);
    assert!(key_file(&env).exists());
}

#[test]
fn the_database_is_created_private() {
    let env = Env::new();
    env.run(&["config", "add-service", "placeholder"]).expect(0); // starts the store
    let mode = std::fs::metadata(env.db_file())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "toolsmith.db is {:o}", mode & 0o777);
}

#[test]
fn an_empty_database_file_is_refused_and_left_alone() {
    let env = Env::new();
    std::fs::create_dir_all(env.data_dir()).unwrap();
    std::fs::write(env.db_file(), b"").unwrap();
    let out = env.run(&["tool", "list"]).expect(10);
    assert!(
        out.stderr.contains("it is empty (0 bytes)")
            && out.stderr.contains(&env.db_file().display().to_string()),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::metadata(env.db_file()).unwrap().len(), 0);
    let out = env.run(&["serve", "--port", "0"]).expect(10);
    assert!(
        out.stderr.contains("it is empty (0 bytes)"),
        "{}",
        out.stderr
    );
}

/// A data directory the server's user may not write: the message says so and names the path.
/// As root (where permissions do not apply) the binary runs as `nobody` through `setpriv`.
#[test]
fn an_unwritable_data_directory_says_permission_denied_and_the_path() {
    let env = Env::new();
    env.run(&["config", "add-service", "placeholder"]).expect(0); // starts the store
    let root = is_root();
    let dir = env.data_dir();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("toolsmith.db")
        {
            std::fs::remove_file(path).unwrap();
        }
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = if root {
        if !toolsmith_core::testkit::require_path(
            "setpriv (util-linux)",
            std::path::Path::new("/usr/bin/setpriv"),
        ) {
            return;
        }
        // `nobody` must reach the directory: open up the scratch dir's parents.
        let mut p = dir.parent();
        while let Some(d) = p {
            if d == std::path::Path::new("/") {
                break;
            }
            let mode = std::fs::metadata(d).unwrap().permissions().mode();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o005)).unwrap();
            p = d.parent();
        }
        // A command that starts a store where none is (a read would say there is none).
        env.run_as_nobody(&["config", "add-service", "again"])
    } else {
        env.run(&["config", "add-service", "again"])
    };
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.code, 10, "{}", out.stderr);
    assert!(
        out.stderr.contains("permission denied")
            && out.stderr.contains(&env.db_file().display().to_string()),
        "{}",
        out.stderr
    );
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        == Some("0")
}
