//! npm's version ranges (`^1.2.3`, `~1.2`, `1.x`, `>=1 <2`, `1.2.3 - 2`, `a || b`, `*`),
//! over the `semver` crate's versions, with npm's rule for prereleases: a prerelease version
//! satisfies a range only if a comparator of the same set names the same `major.minor.patch`
//! with a prerelease.

use semver::Version;

/// A parsed range: any of the sets, each all of its comparators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Range(Vec<Vec<Comparator>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    version: Version,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// A version with some parts left out or wild (`1`, `1.2`, `1.x`, `*`).
struct Partial {
    major: Option<u64>,
    minor: Option<u64>,
    patch: Option<u64>,
    pre: semver::Prerelease,
}

impl Partial {
    fn full(&self) -> Version {
        Version {
            major: self.major.unwrap_or(0),
            minor: self.minor.unwrap_or(0),
            patch: self.patch.unwrap_or(0),
            pre: self.pre.clone(),
            build: semver::BuildMetadata::EMPTY,
        }
    }
}

fn v(major: u64, minor: u64, patch: u64) -> Version {
    Version::new(major, minor, patch)
}

/// `major.minor.patch-0`: below every version of that release, prereleases included.
fn floor(major: u64, minor: u64, patch: u64) -> Version {
    let mut version = v(major, minor, patch);
    version.pre = semver::Prerelease::new("0").unwrap_or(semver::Prerelease::EMPTY);
    version
}

impl Range {
    pub(crate) fn parse(text: &str) -> Result<Range, String> {
        let mut sets = Vec::new();
        for set in text.split("||") {
            sets.push(parse_set(set.trim()).map_err(|why| format!("'{text}': {why}"))?);
        }
        Ok(Range(sets))
    }

    pub(crate) fn satisfies(&self, version: &Version) -> bool {
        self.0.iter().any(|set| set_satisfies(set, version))
    }

    /// The highest of `versions` in the range.
    pub(crate) fn max_satisfying<'a>(
        &self,
        versions: impl Iterator<Item = &'a Version>,
    ) -> Option<&'a Version> {
        versions.filter(|version| self.satisfies(version)).max()
    }
}

fn set_satisfies(set: &[Comparator], version: &Version) -> bool {
    if !set.iter().all(|c| c.matches(version)) {
        return false;
    }
    if version.pre.is_empty() {
        return true;
    }
    set.iter().any(|c| {
        !c.version.pre.is_empty()
            && c.version.major == version.major
            && c.version.minor == version.minor
            && c.version.patch == version.patch
    })
}

impl Comparator {
    fn matches(&self, version: &Version) -> bool {
        let ord = cmp(version, &self.version);
        match self.op {
            Op::Lt => ord.is_lt(),
            Op::Le => ord.is_le(),
            Op::Gt => ord.is_gt(),
            Op::Ge => ord.is_ge(),
            Op::Eq => ord.is_eq(),
        }
    }
}

/// Precedence without build metadata.
fn cmp(a: &Version, b: &Version) -> std::cmp::Ordering {
    (a.major, a.minor, a.patch)
        .cmp(&(b.major, b.minor, b.patch))
        .then_with(|| a.pre.cmp(&b.pre))
}

fn parse_set(set: &str) -> Result<Vec<Comparator>, String> {
    if let Some((low, high)) = set.split_once(" - ") {
        let low = parse_partial(low.trim())?;
        let high = parse_partial(high.trim())?;
        let mut out = vec![Comparator {
            op: Op::Ge,
            version: low.full(),
        }];
        out.extend(upper_le(&high));
        return Ok(out);
    }
    let mut out = Vec::new();
    let mut tokens = Vec::new();
    let mut pending_op = String::new();
    for token in set.split_whitespace() {
        if token
            .chars()
            .all(|c| matches!(c, '<' | '>' | '=' | '~' | '^'))
        {
            pending_op.push_str(token);
            continue;
        }
        tokens.push(format!("{pending_op}{token}"));
        pending_op.clear();
    }
    if !pending_op.is_empty() {
        return Err(format!("'{pending_op}' is not followed by a version"));
    }
    if tokens.is_empty() {
        tokens.push("*".to_owned());
    }
    for token in tokens {
        out.extend(parse_comparator(&token)?);
    }
    Ok(out)
}

fn parse_comparator(token: &str) -> Result<Vec<Comparator>, String> {
    let (op, rest) = ["~>", ">=", "<=", ">", "<", "=", "~", "^"]
        .iter()
        .find_map(|op| token.strip_prefix(op).map(|rest| (*op, rest)))
        .unwrap_or(("", token));
    let p = parse_partial(rest.trim())?;
    let ge = |version: Version| Comparator {
        op: Op::Ge,
        version,
    };
    let lt = |version: Version| Comparator {
        op: Op::Lt,
        version,
    };
    Ok(match op {
        "" | "=" => match (p.major, p.minor, p.patch) {
            (None, _, _) => vec![ge(v(0, 0, 0))],
            (Some(ma), None, _) => vec![ge(v(ma, 0, 0)), lt(floor(ma + 1, 0, 0))],
            (Some(ma), Some(mi), None) => vec![ge(v(ma, mi, 0)), lt(floor(ma, mi + 1, 0))],
            (Some(_), Some(_), Some(_)) => vec![Comparator {
                op: Op::Eq,
                version: p.full(),
            }],
        },
        "~" | "~>" => match (p.major, p.minor) {
            (None, _) => vec![ge(v(0, 0, 0))],
            (Some(ma), None) => vec![ge(v(ma, 0, 0)), lt(floor(ma + 1, 0, 0))],
            (Some(ma), Some(mi)) => vec![ge(p.full()), lt(floor(ma, mi + 1, 0))],
        },
        "^" => match (p.major, p.minor, p.patch) {
            (None, _, _) => vec![ge(v(0, 0, 0))],
            (Some(ma), None, _) => vec![ge(v(ma, 0, 0)), lt(floor(ma + 1, 0, 0))],
            (Some(0), Some(mi), None) => vec![ge(v(0, mi, 0)), lt(floor(0, mi + 1, 0))],
            (Some(ma), Some(_), None) => vec![ge(p.full()), lt(floor(ma + 1, 0, 0))],
            (Some(0), Some(0), Some(pa)) => vec![ge(p.full()), lt(floor(0, 0, pa + 1))],
            (Some(0), Some(mi), Some(_)) => vec![ge(p.full()), lt(floor(0, mi + 1, 0))],
            (Some(ma), Some(_), Some(_)) => vec![ge(p.full()), lt(floor(ma + 1, 0, 0))],
        },
        ">=" => vec![ge(p.full())],
        ">" => match (p.major, p.minor, p.patch) {
            (None, _, _) => vec![lt(v(0, 0, 0))],
            (Some(ma), None, _) => vec![ge(v(ma + 1, 0, 0))],
            (Some(ma), Some(mi), None) => vec![ge(v(ma, mi + 1, 0))],
            _ => vec![Comparator {
                op: Op::Gt,
                version: p.full(),
            }],
        },
        "<" => match (p.major, p.minor, p.patch) {
            (None, _, _) => vec![lt(v(0, 0, 0))],
            (Some(_), Some(_), Some(_)) => vec![lt(p.full())],
            (Some(ma), mi, _) => vec![lt(floor(ma, mi.unwrap_or(0), 0))],
        },
        "<=" => upper_le(&p),
        _ => return Err(format!("'{token}' is not a version range")),
    })
}

/// `<= partial`: a left-out part covers its whole span.
fn upper_le(p: &Partial) -> Vec<Comparator> {
    let lt = |version: Version| Comparator {
        op: Op::Lt,
        version,
    };
    match (p.major, p.minor, p.patch) {
        (None, _, _) => Vec::new(),
        (Some(ma), None, _) => vec![lt(floor(ma + 1, 0, 0))],
        (Some(ma), Some(mi), None) => vec![lt(floor(ma, mi + 1, 0))],
        _ => vec![Comparator {
            op: Op::Le,
            version: p.full(),
        }],
    }
}

fn parse_partial(text: &str) -> Result<Partial, String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let text = text.split('+').next().unwrap_or(text);
    let (numbers, pre) = match text.split_once('-') {
        Some((numbers, pre)) => (numbers, Some(pre)),
        None => (text, None),
    };
    let mut parts = numbers.split('.');
    let mut next = || -> Result<Option<u64>, String> {
        match parts.next() {
            None | Some("x" | "X" | "*") => Ok(None),
            Some(n) => n
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("'{text}' is not a version")),
        }
    };
    let major = next()?;
    let minor = if major.is_some() { next()? } else { None };
    let patch = if minor.is_some() { next()? } else { None };
    if parts.next().is_some() {
        return Err(format!("'{text}' is not a version"));
    }
    let pre = match pre {
        Some(pre) if patch.is_some() => semver::Prerelease::new(pre)
            .map_err(|_| format!("'{text}' has an invalid prerelease"))?,
        Some(_) => return Err(format!("'{text}' is not a version")),
        None => semver::Prerelease::EMPTY,
    };
    Ok(Partial {
        major,
        minor,
        patch,
        pre,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sat(range: &str, version: &str) -> bool {
        Range::parse(range)
            .unwrap()
            .satisfies(&Version::parse(version).unwrap())
    }

    #[test]
    fn ranges_mean_what_npm_means() {
        let cases: &[(&str, &str, bool)] = &[
            ("^5.5.0", "5.6.0", true),
            ("^5.5.0", "6.0.0", false),
            ("^5.5.0", "5.4.9", false),
            ("^0.2.3", "0.2.9", true),
            ("^0.2.3", "0.3.0", false),
            ("^0.0.3", "0.0.4", false),
            ("~1.2.3", "1.2.9", true),
            ("~1.2.3", "1.3.0", false),
            ("~1", "1.9.0", true),
            ("1.x", "1.4.0", true),
            ("1.x", "2.0.0", false),
            ("1.2", "1.2.7", true),
            ("*", "3.1.4", true),
            ("", "3.1.4", true),
            (">=1.0.0 <2", "1.9.9", true),
            (">= 1.0.0 < 2", "2.0.0", false),
            ("1.2.3 - 2.3", "2.3.9", true),
            ("1.2.3 - 2.3", "2.4.0", false),
            ("^1 || ^3", "3.0.1", true),
            ("^1 || ^3", "2.0.0", false),
            ("1.2.3", "1.2.3", true),
            ("=v1.2.3", "1.2.3", true),
            (">1.2", "1.3.0", true),
            (">1.2", "1.2.9", false),
            ("<=1.2", "1.2.9", true),
            ("<1.2", "1.1.9", true),
            ("<1.2", "1.2.0-beta", false),
            ("^1.2.3", "1.3.0-beta.1", false),
            ("^1.2.3-beta.1", "1.2.3-beta.2", true),
            ("^1.2.3-beta.1", "1.2.4-beta.2", false),
        ];
        for (range, version, expected) in cases {
            assert_eq!(sat(range, version), *expected, "{range} vs {version}");
        }
        let versions: Vec<Version> = ["5.5.0", "5.6.0", "6.0.0", "5.7.0-rc.1"]
            .iter()
            .map(|v| Version::parse(v).unwrap())
            .collect();
        let range = Range::parse("^5.5.0").unwrap();
        assert_eq!(
            range.max_satisfying(versions.iter()),
            Some(&Version::parse("5.6.0").unwrap())
        );
        assert!(Range::parse("git+https://x").is_err());
        assert!(Range::parse(">=").is_err());
    }
}
