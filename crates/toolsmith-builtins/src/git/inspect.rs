//! `git_status`, `git_diff` and `git_log`: what a repository holds and how it changed. They
//! change nothing (status takes no optional locks).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::parse::{self, LOG_FORMAT};
use super::runner::generic;
use super::{Git, GitError, bool_arg, files_arg, repo_property, revision_arg};

/// Most bytes of patch text `git_diff` returns.
pub const MAX_DIFF_BYTES: usize = 512 * 1024;
/// `git_log`'s `limit`: default and ceiling (the spec's tool max limits).
pub const LOG_DEFAULT: u64 = 10;
pub const LOG_MAX: u64 = 50;

fn no_env() -> BTreeMap<String, String> {
    BTreeMap::new()
}

pub fn status_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_status",
        "Show the working tree status of a git repository in your workspace: the current \
         branch and commit, staged and unstaged changes, untracked and conflicted files.",
        json!({
            "type": "object",
            "properties": {"path": repo_property()},
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git",
        "status",
        "changes",
        "modified",
        "staged",
        "untracked",
        "repository",
        "repo",
        "branch",
        "version control",
    ])
}

pub async fn status(git: Git, _args: Value) -> Result<Value, GitError> {
    let mut v = git.status().await?;
    object::set(&mut v, "path", json!(git.shown()));
    Ok(v)
}

pub fn diff_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_diff",
        "Show the changes in a git repository of your workspace as a unified diff with \
         per-file counts: unstaged changes by default, staged ones with staged: true, or the \
         working tree against a commit or branch with ref. Untracked files are not included \
         (git_status lists them). Up to 512 KB of diff.",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "staged": {"type": "boolean", "default": false, "description": "Show the staged changes (what git_commit would commit) instead of the unstaged ones."},
                "ref": {"type": "string", "description": "Compare against this commit or branch (e.g. 'HEAD~1', 'main')."},
                "files": {"type": "array", "items": {"type": "string"}, "maxItems": 1000, "description": "Only these files or folders, relative to the repository."},
                "statOnly": {"type": "boolean", "default": false, "description": "Only the per-file counts, no patch text."}
            },
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "diff", "changes", "patch", "compare", "what changed", "modified", "lines",
        "version control",
    ])
}

pub async fn diff(git: Git, args: Value) -> Result<Value, GitError> {
    let staged = bool_arg(&args, "staged");
    let stat_only = bool_arg(&args, "statOnly");
    let rev = revision_arg(&args, "ref")?;
    let files = files_arg(&git, &args, "files")?;
    let mut argv: Vec<&str> = vec![
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--numstat",
    ];
    if !stat_only {
        argv.push("-p");
    }
    if staged {
        argv.push("--cached");
    }
    argv.push("--end-of-options");
    if let Some(rev) = &rev {
        argv.push(rev);
    }
    argv.push("--");
    let specs = git.pathspecs(&files);
    argv.extend(specs.iter().map(String::as_str));
    let out = git
        .run_ok(&argv, &no_env(), |complaint| {
            unknown_revision(complaint, rev.as_deref())
        })
        .await?;
    let (changed, patch) = parse::numstat(&out.stdout);
    let mut patch = patch.to_owned();
    let mut truncated = out.truncated;
    if patch.len() > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !patch.is_char_boundary(cut) {
            cut -= 1;
        }
        patch.truncate(cut);
        truncated = true;
    }
    let mut v = json!({
        "path": git.shown(),
        "staged": staged,
        "ref": rev,
        "files": changed,
        "truncated": truncated,
    });
    if !stat_only {
        object::set(&mut v, "diff", json!(patch));
    }
    if truncated {
        object::set(
            &mut v,
            "hint",
            json!("the diff is longer than shown; ask for fewer files (files) or use statOnly"),
        );
    }
    Ok(v)
}

pub fn log_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_log",
        "Show the commit history of a git repository in your workspace, newest first: hash, \
         author, date and message of each commit (limit: default 10, at most 50). Optionally \
         from a branch or commit (ref) and only the commits touching one file.",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "limit": {"type": "integer", "minimum": 1, "description": "How many commits (default 10, at most 50)."},
                "skip": {"type": "integer", "minimum": 0, "description": "Skip this many commits first (for the next page)."},
                "ref": {"type": "string", "description": "Start from this branch or commit instead of the current one."},
                "file": {"type": "string", "description": "Only commits that changed this file, relative to the repository."}
            },
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "log", "history", "commits", "show", "recent", "who changed", "author",
        "version control",
    ])
}

pub async fn log(git: Git, args: Value) -> Result<Value, GitError> {
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(LOG_DEFAULT)
        .clamp(1, LOG_MAX);
    let skip = args.get("skip").and_then(Value::as_u64).unwrap_or(0);
    let rev = revision_arg(&args, "ref")?;
    let file = match super::opt_str(&args, "file")? {
        Some(f) => Some(format!(":(literal){}", super::repo_relative(&git, f)?)),
        None => None,
    };
    let (count, skip_arg) = (format!("--max-count={limit}"), format!("--skip={skip}"));
    let mut argv: Vec<&str> = vec![
        "log",
        "--no-color",
        LOG_FORMAT,
        &count,
        &skip_arg,
        "--end-of-options",
    ];
    if let Some(rev) = &rev {
        argv.push(rev);
    }
    argv.push("--");
    if let Some(file) = &file {
        argv.push(file);
    }
    let out = git.run(&argv, &no_env()).await?;
    if !out.ok {
        let complaint = out.complaint();
        if complaint.contains("does not have any commits yet") {
            return Ok(json!({
                "path": git.shown(), "count": 0, "commits": [],
                "hint": "the repository has no commits yet; stage files with git_add and commit them with git_commit",
            }));
        }
        return Err(git.failure(&out, |c| unknown_revision(c, rev.as_deref())));
    }
    let commits = parse::log(&out.stdout);
    Ok(json!({
        "path": git.shown(),
        "count": commits.len(),
        "commits": commits,
    }))
}

/// The message for a failure that names a revision git does not know.
pub(crate) fn unknown_revision(complaint: &str, rev: Option<&str>) -> String {
    match rev {
        Some(rev)
            if complaint.contains("unknown revision")
                || complaint.contains("bad revision")
                || complaint.contains("ambiguous argument")
                || complaint.contains("invalid reference")
                || complaint.contains("not a valid") =>
        {
            format!(
                "there is no branch or commit named '{rev}' in this repository; git_branch lists \
                 the branches and git_log the commits"
            )
        }
        _ => generic(complaint),
    }
}
