//! `Redacted`: a setting's text that must never reach a log or a panic message through `Debug`
//! (the admin token, a database URL with its password). It reads from flags, the environment
//! and the TOML file like a plain string; only `Debug` differs.

use std::convert::Infallible;
use std::ops::Deref;
use std::str::FromStr;

use serde::Deserialize;

/// A string whose `Debug` is `<redacted>`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Redacted(String);

impl Redacted {
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl FromStr for Redacted {
    type Err = Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Redacted(text.to_owned()))
    }
}

impl Deref for Redacted {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::cli::Cli;
    use crate::settings::FileSettings;

    const TOKEN: &str = "adm-Zq8xW3-0123456789abcdef";

    #[test]
    fn debug_of_the_cli_and_the_file_never_shows_the_token_or_the_password() {
        let cli = Cli::try_parse_from([
            "toolsmith",
            "--database-url",
            "postgres://ts:pw-Zq8xW3@db/ts",
            "serve",
            "--admin-token",
            TOKEN,
        ])
        .unwrap();
        let shown = format!("{cli:?}");
        assert!(!shown.contains("Zq8xW3"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");

        let file: FileSettings = toml::from_str(&format!(
            "admin_token = \"{TOKEN}\"\ndatabase_url = \"postgres://ts:pw-Zq8xW3@db/ts\""
        ))
        .unwrap();
        let shown = format!("{file:?}");
        assert!(!shown.contains("Zq8xW3"), "{shown}");
        assert_eq!(file.admin_token.as_deref(), Some(TOKEN));
    }
}
