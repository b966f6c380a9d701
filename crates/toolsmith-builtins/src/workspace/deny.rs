//! [`DenyList`]: workspace path prefixes the file tools refuse and never show (001's
//! `PathDenyable`): a denied folder is absent from every listing, search and glob, and any
//! path through it is refused.

use super::path::WsPath;

/// Denied prefixes, each a sequence of whole names from the workspace root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DenyList {
    prefixes: Vec<Vec<String>>,
}

impl DenyList {
    /// From the configured prefixes (`.toolsmith`, `secrets/keys`); empty and `.`-only entries
    /// are ignored, and `..` entries can never match (workspace paths never hold `..`).
    #[must_use]
    pub fn new<S: AsRef<str>>(prefixes: &[S]) -> Self {
        let prefixes = prefixes
            .iter()
            .map(|p| {
                p.as_ref()
                    .split('/')
                    .filter(|n| !n.is_empty() && *n != ".")
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|names| !names.is_empty())
            .collect();
        DenyList { prefixes }
    }

    /// Every denied prefix as a relative path (`secrets/keys`), leaving out those that can
    /// never match (holding `..`): what a sandbox mounting the workspace must cover.
    #[must_use]
    pub fn paths(&self) -> Vec<String> {
        self.prefixes
            .iter()
            .filter(|names| names.iter().all(|n| n != ".."))
            .map(|names| names.join("/"))
            .collect()
    }

    /// Whether `path` is a denied prefix or lies under one.
    #[must_use]
    pub fn denies(&self, path: &WsPath) -> bool {
        self.prefixes.iter().any(|p| path.names().starts_with(p))
    }

    /// Whether `path` is denied or holds a denied prefix below it (removing or moving it would
    /// touch the denied folder).
    #[must_use]
    pub fn holds_denied(&self, path: &WsPath) -> bool {
        self.prefixes
            .iter()
            .any(|p| p.starts_with(path.names()) || path.names().starts_with(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::settings::FileLimits;

    fn path(raw: &str) -> WsPath {
        WsPath::parse(raw, std::path::Path::new("/w"), &FileLimits::default()).unwrap()
    }

    #[test]
    fn whole_names_from_the_root() {
        let deny = DenyList::new(&[".toolsmith", "secrets/keys/", ""]);
        assert!(deny.denies(&path(".toolsmith")));
        assert!(deny.denies(&path("./.toolsmith/state.json")));
        assert!(deny.denies(&path("secrets/keys/a")));
        assert!(!deny.denies(&path(".toolsmithy")));
        assert!(!deny.denies(&path("secrets")));
        assert!(!deny.denies(&path("sub/.toolsmith")));
        assert!(!deny.denies(&WsPath::root()));
        assert!(deny.holds_denied(&WsPath::root()));
        assert!(deny.holds_denied(&path("secrets")));
        assert!(!deny.holds_denied(&path("secretsx")));
    }
}
