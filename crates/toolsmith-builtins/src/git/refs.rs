//! `git_branch` (list, create, delete) and `git_checkout` (switch branches, make one, or
//! restore files from a commit).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::inspect::unknown_revision;
use super::parse::{self, BRANCH_FORMAT};
use super::runner::generic;
use super::{Git, GitError, bool_arg, check_name, files_arg, opt_str, repo_property, revision_arg};

fn no_env() -> BTreeMap<String, String> {
    BTreeMap::new()
}

pub fn branch_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_branch",
        "List, create or delete branches of a git repository in your workspace. action list \
         (default) returns every local branch and marks the current one; create makes 'name' \
         (from startPoint, default the current commit) without switching to it; delete removes \
         'name' (force: true also when its commits are not merged).",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "action": {"type": "string", "enum": ["list", "create", "delete"], "default": "list", "description": "list (default), create or delete."},
                "name": {"type": "string", "description": "The branch to create or delete."},
                "startPoint": {"type": "string", "description": "With create: the commit or branch the new branch starts at (default: the current commit)."},
                "force": {"type": "boolean", "default": false, "description": "With delete: delete even if the branch has unmerged commits."}
            },
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "branch", "branches", "list", "create", "delete", "new branch", "version control",
    ])
}

pub async fn branch(git: Git, args: Value) -> Result<Value, GitError> {
    let action = opt_str(&args, "action")?.unwrap_or("list");
    if action == "list" {
        let out = git
            .run_ok(
                &["branch", "--list", "--no-color", BRANCH_FORMAT],
                &no_env(),
                generic,
            )
            .await?;
        let branches = parse::branches(&out.stdout);
        let current = branches
            .iter()
            .find(|b| b["current"] == true)
            .map(|b| b["name"].clone())
            .unwrap_or(Value::Null);
        return Ok(json!({
            "path": git.shown(),
            "current": current,
            "branches": branches,
        }));
    }
    let name = revision_arg(&args, "name")?.ok_or_else(|| {
        GitError::Args(format!(
            "action {action} needs 'name': the branch to {action}"
        ))
    })?;
    match action {
        "create" => {
            let start = revision_arg(&args, "startPoint")?;
            let mut argv = vec!["branch", "--no-track", "--end-of-options", &name];
            if let Some(start) = &start {
                argv.push(start);
            }
            git.run_ok(&argv, &no_env(), |c| {
                if c.contains("already exists") {
                    format!("a branch named '{name}' already exists; choose another name, or switch to it with git_checkout")
                } else if c.contains("not a valid branch name") {
                    format!("'{name}' is not a valid branch name; use letters, digits, '-', '_', '.' and '/' (no '..', no trailing '/' or '.lock')")
                } else if c.contains("not a valid object name") && c.contains("HEAD") {
                    "the repository has no commits yet, so a branch has nothing to point at; commit first (git_add, git_commit)".to_owned()
                } else {
                    unknown_revision(c, start.as_deref())
                }
            })
            .await?;
            Ok(json!({"path": git.shown(), "created": name}))
        }
        "delete" => {
            let flag = if bool_arg(&args, "force") { "-D" } else { "-d" };
            git.run_ok(&["branch", flag, "--end-of-options", &name], &no_env(), |c| {
                if c.contains("not found") {
                    format!("there is no branch named '{name}'; git_branch lists the branches")
                } else if c.contains("not fully merged") {
                    format!("'{name}' has commits that are not merged into the current branch; merge them first, or pass force: true to delete it anyway")
                } else if c.contains("checked out") || c.contains("Cannot delete") {
                    format!("'{name}' is the current branch; switch to another with git_checkout first")
                } else {
                    generic(c)
                }
            })
            .await?;
            Ok(json!({"path": git.shown(), "deleted": name}))
        }
        other => Err(GitError::Args(format!(
            "unknown action '{other}'; use list, create or delete"
        ))),
    }
}

pub fn checkout_definition() -> ToolDefinition {
    ToolDefinition::new(
        "git_checkout",
        "Switch a git repository in your workspace to a branch or commit (target), make a new \
         branch there and switch to it (create: true), or restore files to their content at \
         target (files, e.g. target 'HEAD' to discard uncommitted changes to them).",
        json!({
            "type": "object",
            "properties": {
                "path": repo_property(),
                "target": {"type": "string", "description": "The branch or commit to switch to (or, with create, the new branch's name; with files, where their content comes from)."},
                "create": {"type": "boolean", "default": false, "description": "Create the branch 'target' at startPoint (default: the current commit) and switch to it."},
                "startPoint": {"type": "string", "description": "With create: where the new branch starts."},
                "files": {"type": "array", "items": {"type": "string"}, "maxItems": 1000, "description": "Only restore these files (relative to the repository) from target; the branch does not change."}
            },
            "required": ["target"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "git", "checkout", "switch", "branch", "change branch", "restore", "discard", "revert",
        "version control",
    ])
}

pub async fn checkout(git: Git, args: Value) -> Result<Value, GitError> {
    let target = opt_str(&args, "target")?.unwrap_or_default().to_owned();
    check_name(&target, "target")?;
    let files = files_arg(&git, &args, "files")?;
    let create = bool_arg(&args, "create");
    let start = revision_arg(&args, "startPoint")?;
    if create && !files.is_empty() {
        return Err(GitError::Args(
            "create and files do not go together: create switches to a new branch, files restores files".into(),
        ));
    }
    git.check_room().await?;
    let mut argv: Vec<&str> = vec!["checkout", "--quiet"];
    if create {
        argv.extend(["-b", &target]);
        if let Some(start) = &start {
            argv.extend(["--end-of-options", start]);
        }
    } else {
        argv.extend(["--end-of-options", &target]);
    }
    argv.push("--");
    let specs = if files.is_empty() {
        Vec::new()
    } else {
        git.pathspecs(&files)
    };
    argv.extend(specs.iter().map(String::as_str));
    git.run_ok(&argv, &no_env(), |c| {
        if c.contains("would be overwritten") {
            format!(
                "switching would overwrite uncommitted changes ({c}); commit them (git_add, \
                 git_commit) or restore the files first (git_checkout with target 'HEAD' and files)"
            )
        } else if c.contains("already exists") {
            format!("a branch named '{target}' already exists; switch to it without create")
        } else if create {
            unknown_revision(c, start.as_deref())
        } else {
            let hint = unknown_revision(c, Some(&target));
            if hint.starts_with("there is no") && files.is_empty() {
                format!("{hint} (or pass create: true to make it)")
            } else {
                hint
            }
        }
    })
    .await?;
    if !files.is_empty() {
        return Ok(json!({"path": git.shown(), "target": target, "restored": files}));
    }
    let status = git.status().await?;
    Ok(json!({
        "path": git.shown(),
        "branch": status.get("branch"),
        "detached": status.get("detached"),
        "commit": status.get("commit"),
        "created": create,
    }))
}
