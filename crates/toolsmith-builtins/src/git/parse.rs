//! Git's machine-readable output as JSON: `status --porcelain=v2 --branch -z`, `--numstat`,
//! `log` with a fixed format, `branch --format`. Pure functions, tested on git's own output.

use serde_json::{Value, json};
use toolsmith_core::object;

/// Most entries of each status list returned.
pub const MAX_STATUS_ENTRIES: usize = 1000;

/// Field and record separators of the log and branch formats (unit and record separators).
pub const FIELD: char = '\u{1f}';
pub const RECORD: char = '\u{1e}';

/// The `git log --format` that [`log`] reads.
pub const LOG_FORMAT: &str = "--format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%P%x1f%s%x1f%b%x1e";
/// The `git branch --format` that [`branches`] reads.
pub const BRANCH_FORMAT: &str =
    "--format=%(HEAD)%1f%(refname:short)%1f%(objectname:short)%1f%(subject)";

/// The name of a status letter.
fn status_name(c: char) -> &'static str {
    match c {
        'M' => "modified",
        'T' => "typeChanged",
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'U' => "unmerged",
        _ => "changed",
    }
}

/// `git status --porcelain=v2 --branch -z` as `{branch, detached, commit, upstream, ahead,
/// behind, staged, unstaged, untracked, conflicted, clean, truncated}`.
#[must_use]
pub fn status(out: &str) -> Value {
    let mut branch = Value::Null;
    let mut detached = false;
    let mut commit = Value::Null;
    let mut upstream = Value::Null;
    let (mut ahead, mut behind) = (0i64, 0i64);
    let mut staged = Vec::new();
    let mut unstaged = Vec::new();
    let mut untracked = Vec::new();
    let mut conflicted = Vec::new();
    let mut truncated = false;
    let mut records = out.split('\0');
    while let Some(record) = records.next() {
        let mut push = |list: &mut Vec<Value>, v: Value| {
            if list.len() < MAX_STATUS_ENTRIES {
                list.push(v);
            } else {
                truncated = true;
            }
        };
        if let Some(header) = record.strip_prefix("# ") {
            let (key, value) = header.split_once(' ').unwrap_or((header, ""));
            match key {
                "branch.oid" if value != "(initial)" => {
                    commit = json!(value.chars().take(12).collect::<String>());
                }
                "branch.head" if value == "(detached)" => detached = true,
                "branch.head" => branch = json!(value),
                "branch.upstream" => upstream = json!(value),
                "branch.ab" => {
                    let mut parts = value.split(' ');
                    ahead = parts.next().and_then(|a| a.parse().ok()).unwrap_or(0);
                    behind = parts
                        .next()
                        .and_then(|b| b.parse::<i64>().ok())
                        .map_or(0, i64::abs);
                }
                _ => {}
            }
            continue;
        }
        let kind = record.chars().next();
        match kind {
            Some('1' | '2') => {
                // `1 XY sub mH mI mW hH hI path`; `2` adds `Xscore` before the path and the
                // original path follows as the next record.
                let fields = if kind == Some('1') { 8 } else { 9 };
                let parts: Vec<&str> = record.splitn(fields + 1, ' ').collect();
                let (Some(xy), Some(path)) = (parts.get(1), parts.get(fields)) else {
                    continue;
                };
                let from = if kind == Some('2') {
                    records.next()
                } else {
                    None
                };
                let mut xy = xy.chars();
                let (x, y) = (xy.next().unwrap_or('.'), xy.next().unwrap_or('.'));
                if x != '.' {
                    let mut entry = json!({"path": path, "status": status_name(x)});
                    if let Some(from) = from {
                        object::set(&mut entry, "from", json!(from));
                    }
                    push(&mut staged, entry);
                }
                if y != '.' {
                    push(
                        &mut unstaged,
                        json!({"path": path, "status": status_name(y)}),
                    );
                }
            }
            Some('u') => {
                if let Some(path) = record.splitn(11, ' ').nth(10) {
                    push(&mut conflicted, json!(path));
                }
            }
            Some('?') => push(&mut untracked, json!(record.get(2..).unwrap_or_default())),
            _ => {}
        }
    }
    let clean =
        staged.is_empty() && unstaged.is_empty() && untracked.is_empty() && conflicted.is_empty();
    json!({
        "branch": branch,
        "detached": detached,
        "commit": commit,
        "upstream": upstream,
        "ahead": ahead,
        "behind": behind,
        "staged": staged,
        "unstaged": unstaged,
        "untracked": untracked,
        "conflicted": conflicted,
        "clean": clean,
        "truncated": truncated,
    })
}

/// `--numstat` lines as `[{path, additions, deletions, binary}]`, and the rest of the output
/// (the patch that follows them with `-p`).
#[must_use]
pub fn numstat(out: &str) -> (Vec<Value>, &str) {
    let mut files = Vec::new();
    let mut rest = out;
    while let Some((line, tail)) = rest.split_once('\n') {
        let mut parts = line.splitn(3, '\t');
        let (Some(add), Some(del), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            break;
        };
        let binary = add == "-" && del == "-";
        files.push(json!({
            "path": path,
            "additions": add.parse::<u64>().unwrap_or(0),
            "deletions": del.parse::<u64>().unwrap_or(0),
            "binary": binary,
        }));
        rest = tail;
    }
    (files, rest.strip_prefix('\n').unwrap_or(rest))
}

/// `git log` in [`LOG_FORMAT`] as commits.
#[must_use]
pub fn log(out: &str) -> Vec<Value> {
    out.split(RECORD)
        .map(|r| r.trim_start_matches('\n'))
        .filter(|r| !r.is_empty())
        .filter_map(|record| {
            let f: Vec<&str> = record.splitn(8, FIELD).collect();
            let [hash, short, author, email, date, parents, subject, body] = f.as_slice() else {
                return None;
            };
            Some(json!({
                "hash": hash,
                "shortHash": short,
                "author": author,
                "email": email,
                "date": date,
                "parents": parents.split_whitespace().collect::<Vec<_>>(),
                "message": subject,
                "body": body.trim_end(),
            }))
        })
        .collect()
}

/// `git branch` in [`BRANCH_FORMAT`] as `[{name, current, commit, subject}]`.
#[must_use]
pub fn branches(out: &str) -> Vec<Value> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.splitn(4, FIELD).collect();
            let [head, name, commit, subject] = f.as_slice() else {
                return None;
            };
            Some(json!({
                "name": name,
                "current": *head == "*",
                "commit": commit,
                "subject": subject,
            }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reads_every_kind_of_entry() {
        let out = "# branch.oid 1823b568f096994e54d82a3d8be4c680bb6b5271\0# branch.head main\0\
                   # branch.upstream origin/main\0# branch.ab +2 -1\0\
                   1 .M N... 100644 100644 100644 aaa aaa f.txt\0\
                   1 A. N... 000000 100644 100644 000 bbb dir/new file.txt\0\
                   2 R. N... 100644 100644 100644 ccc ccc R100 b.txt\0a.txt\0\
                   u UU N... 100644 100644 100644 100644 d1 d2 d3 c.txt\0? loose.md\0";
        let v = status(out);
        assert_eq!(v["branch"], "main");
        assert_eq!(v["commit"], "1823b568f096");
        assert_eq!(v["upstream"], "origin/main");
        assert_eq!(
            (v["ahead"].clone(), v["behind"].clone()),
            (json!(2), json!(1))
        );
        assert_eq!(
            v["staged"],
            json!([{"path": "dir/new file.txt", "status": "added"},
                   {"path": "b.txt", "status": "renamed", "from": "a.txt"}])
        );
        assert_eq!(
            v["unstaged"],
            json!([{"path": "f.txt", "status": "modified"}])
        );
        assert_eq!(v["untracked"], json!(["loose.md"]));
        assert_eq!(v["conflicted"], json!(["c.txt"]));
        assert_eq!(v["clean"], false);
        let fresh = status("# branch.oid (initial)\0# branch.head main\0");
        assert_eq!(fresh["commit"], Value::Null);
        assert_eq!(fresh["clean"], true);
    }

    #[test]
    fn numstat_log_and_branches() {
        let (files, patch) = numstat("1\t0\tf\n-\t-\tbin.png\n\ndiff --git a/f b/f\n");
        assert_eq!(files.len(), 2);
        assert_eq!(files[1]["binary"], true);
        assert_eq!(patch, "diff --git a/f b/f\n");
        let commits = log(
            "abc\u{1f}ab\u{1f}Ada\u{1f}a@x\u{1f}2026-01-01T00:00:00+00:00\u{1f}p1 p2\u{1f}Subj\u{1f}Body\n\u{1e}\n",
        );
        assert_eq!(commits[0]["parents"], json!(["p1", "p2"]));
        assert_eq!(commits[0]["message"], "Subj");
        assert_eq!(commits[0]["body"], "Body");
        let b = branches("*\u{1f}main\u{1f}abc\u{1f}first\n \u{1f}dev\u{1f}def\u{1f}x\n");
        assert_eq!(b[0]["current"], true);
        assert_eq!(b[1]["name"], "dev");
    }
}
