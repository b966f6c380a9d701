//! `git_add` and `git_commit`: staging files and recording a commit, with the author the call
//! names or the server's default (`git_author`, by default `Toolsmith Agent
//! <agent@toolsmith.local>`).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::parse::{self, LOG_FORMAT, RECORD};
use super::runner::generic;
use super::{Git, GitError, bool_arg, files_arg, opt_str, repo_property};

/// Longest commit message, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 10_000;

pub fn add_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_add",
        "Stage files for the next commit in a git repository of your workspace (new, changed \
         and deleted files; '.' stages everything). Returns what is staged now.",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "files": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 1000, "description": "Files or folders to stage, relative to the repository ('.' for everything)."}
            },
            "required": ["files"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "add", "stage", "staging", "index", "track", "files", "version control",
    ])
}

pub async fn add(git: Git, args: Value) -> Result<Value, GitError> {
    let files = files_arg(&git, &args, "files")?;
    if files.is_empty() {
        return Err(GitError::Args(
            "'files' must name at least one file ('.' for everything)".into(),
        ));
    }
    git.check_room().await?;
    let specs = git.pathspecs(&files);
    let mut argv = vec!["add", "--"];
    argv.extend(specs.iter().map(String::as_str));
    git.run_ok(&argv, &BTreeMap::new(), |complaint| {
        if complaint.contains("did not match any files") {
            format!(
                "{complaint}: name files that exist in the repository (git_status lists what changed)"
            )
        } else {
            generic(complaint)
        }
    })
    .await?;
    let status = git.status().await?;
    Ok(json!({
        "path": git.shown(),
        "added": files,
        "staged": status.get("staged"),
        "unstaged": status.get("unstaged"),
        "untracked": status.get("untracked"),
    }))
}

pub fn commit_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_commit",
        "Commit the staged changes of a git repository in your workspace with a message (stage \
         them with git_add first, or pass all: true to commit every change to tracked files). \
         The author is the server's default unless you give one ('Name <email>').",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_BYTES, "description": "The commit message (first line: a short summary)."},
                "all": {"type": "boolean", "default": false, "description": "Also stage every change to tracked files first (like git commit -a); new files still need git_add."},
                "author": {"type": "string", "description": "The author as 'Name <email>' (default: the server's, e.g. 'Toolsmith Agent <agent@toolsmith.local>')."}
            },
            "required": ["message"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "commit", "save", "changes", "record", "snapshot", "message", "version control",
        "check in",
    ])
}

pub async fn commit(git: Git, args: Value) -> Result<Value, GitError> {
    let message = opt_str(&args, "message")?.unwrap_or_default();
    if message.trim().is_empty() || message.len() > MAX_MESSAGE_BYTES {
        return Err(GitError::Args(format!(
            "'message' must be a non-empty commit message of at most {MAX_MESSAGE_BYTES} bytes"
        )));
    }
    if message.contains('\0') {
        return Err(GitError::Args(
            "'message' cannot contain a NUL character".into(),
        ));
    }
    let (name, email) = author(opt_str(&args, "author")?.unwrap_or(&git.default_author))?;
    let env: BTreeMap<String, String> = [
        ("GIT_AUTHOR_NAME", &name),
        ("GIT_AUTHOR_EMAIL", &email),
        ("GIT_COMMITTER_NAME", &name),
        ("GIT_COMMITTER_EMAIL", &email),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.clone()))
    .collect();
    git.check_room().await?;
    let message_arg = format!("--message={message}");
    let mut argv = vec!["commit", "--quiet", "--no-verify", &message_arg];
    if bool_arg(&args, "all") {
        argv.push("--all");
    }
    let out = git.run(&argv, &env).await?;
    if !out.ok {
        let text = format!("{}\n{}", out.stdout, out.stderr);
        if text.contains("nothing to commit")
            || text.contains("no changes added to commit")
            || text.contains("nothing added to commit")
        {
            return Err(GitError::Git(
                "nothing to commit: stage changes with git_add first (or pass all: true to \
                 commit every change to tracked files); git_status shows what changed"
                    .into(),
            ));
        }
        return Err(git.failure(&out, generic));
    }
    let shown = git
        .run_ok(
            &["log", "-1", "--no-color", LOG_FORMAT, "--numstat"],
            &BTreeMap::new(),
            generic,
        )
        .await?;
    let (head, stats) = shown
        .stdout
        .split_once(RECORD)
        .unwrap_or((&shown.stdout, ""));
    let commit = parse::log(head).into_iter().next().unwrap_or(Value::Null);
    let (files, _) = parse::numstat(stats.trim_start_matches('\n'));
    Ok(json!({
        "path": git.shown(),
        "commit": commit,
        "filesChanged": files.len(),
        "files": files,
    }))
}

/// `Name <email>` split, refused with the expected form when it is not one.
fn author(raw: &str) -> Result<(String, String), GitError> {
    parse_author(raw).map_err(|e| GitError::Args(format!("'author' {e}")))
}

/// `Name <email>` split into name and email; the error says what form is expected.
pub fn parse_author(raw: &str) -> Result<(String, String), String> {
    let bad = || {
        format!(
            "must look like 'Name <email>' (e.g. 'Ada Lovelace <ada@example.org>'), got '{}'",
            raw.chars().take(100).collect::<String>()
        )
    };
    let raw = raw.trim();
    let (name, rest) = raw.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    let name = name.trim();
    let clean = |s: &str, max: usize| {
        !s.is_empty()
            && s.len() <= max
            && !s.chars().any(|c| c.is_control() || matches!(c, '<' | '>'))
    };
    if !clean(name, 200) || !clean(email, 200) || email.contains(char::is_whitespace) {
        return Err(bad());
    }
    Ok((name.to_owned(), email.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::author;

    #[test]
    fn authors_are_name_and_email() {
        assert_eq!(
            author("Ada Lovelace <ada@example.org>").unwrap(),
            ("Ada Lovelace".into(), "ada@example.org".into())
        );
        for bad in [
            "Ada",
            "<a@b>",
            "Ada <>",
            "Ada <a b@c>",
            "A\u{7}b <a@b>",
            "Ada <a@b> x",
            "A <<a@b>",
        ] {
            assert!(author(bad).is_err(), "{bad}");
        }
    }
}
