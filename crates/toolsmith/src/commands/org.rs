//! `toolsmith org …`: organisations (issue 41) — make one, list `--user`'s with their role,
//! show, rename (its display name), delete; its members, add a member or set a role, remove
//! one, leave (a member is named `member` in the arguments: `user` is the global `--user`).
//! The same rules as `/api/v1/organizations…` (`toolsmith_service::orgs`): the
//! CLI acts as the person `--user`, and to a non-member an organisation does not exist.

use clap::Subcommand;
use toolsmith_core::organization::{OrgMemberRecord, OrgRole, OrganizationRecord};

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Make an organisation; you (`--user`) become its first owner.
    Create {
        /// Its handle: lowercase letters, digits, `-` and `_`, starting with a letter.
        name: String,
        /// The name people read (default: the handle).
        #[arg(long, value_name = "TEXT")]
        display_name: Option<String>,
    },
    /// Your organisations, with your role.
    List,
    /// One organisation of yours, by name or id.
    Show { org: String },
    /// Set an organisation's display name (admins and owners).
    Rename {
        org: String,
        /// The new display name.
        #[arg(long, value_name = "TEXT")]
        display_name: String,
    },
    /// Delete an organisation (owners); refused while it still owns anything.
    Delete { org: String },
    /// An organisation's members with their roles.
    Members { org: String },
    /// Add a member (admins and owners; the owner role only by owners).
    AddMember {
        org: String,
        /// The user to add.
        #[arg(value_name = "USER")]
        member: String,
        /// owner, admin, editor or viewer.
        #[arg(long, value_parser = parse_role, default_value = "viewer")]
        role: OrgRole,
    },
    /// Set a member's role (admins and owners; the owner role only by owners).
    SetRole {
        org: String,
        /// The member.
        #[arg(value_name = "USER")]
        member: String,
        /// owner, admin, editor or viewer.
        #[arg(long, value_parser = parse_role)]
        role: OrgRole,
    },
    /// Remove a member (admins and owners; owners by owners).
    RemoveMember {
        org: String,
        /// The member.
        #[arg(value_name = "USER")]
        member: String,
    },
    /// Leave an organisation (never as its last owner).
    Leave { org: String },
}

fn parse_role(text: &str) -> Result<OrgRole, String> {
    OrgRole::parse(text)
}

impl OrgCommand {
    /// Whether the command only reads.
    #[must_use]
    pub fn reads(&self) -> bool {
        matches!(
            self,
            OrgCommand::List | OrgCommand::Show { .. } | OrgCommand::Members { .. }
        )
    }
}

/// Runs an `org` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: OrgCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let me = &ctx.actor;
    let orgs: Vec<(OrganizationRecord, OrgRole)> = match command {
        OrgCommand::Create { name, display_name } => {
            let org = service
                .create_organization(me, &name, display_name.as_deref())
                .await?;
            vec![(org, OrgRole::Owner)]
        }
        OrgCommand::List => service.my_organizations(me).await?,
        OrgCommand::Show { org } => vec![service.organization_of_member(&me.user_id, &org).await?],
        OrgCommand::Rename { org, display_name } => {
            let renamed = service.rename_organization(me, &org, &display_name).await?;
            vec![
                service
                    .organization_of_member(&me.user_id, &renamed.id)
                    .await?,
            ]
        }
        OrgCommand::Delete { org } => {
            let found = service.organization_of_member(&me.user_id, &org).await?;
            service.delete_organization(me, &found.0.id).await?;
            return done(ctx, &format!("deleted organisation '{}'", found.0.name));
        }
        OrgCommand::Members { org } => {
            let (_, members) = service.organization_members(me, &org).await?;
            return print_members(ctx, &members);
        }
        OrgCommand::AddMember { org, member, role } | OrgCommand::SetRole { org, member, role } => {
            let (member, _) = service
                .put_organization_member(me, &org, &member, role)
                .await?;
            return print_members(ctx, &[member]);
        }
        OrgCommand::RemoveMember { org, member } => {
            service
                .remove_organization_member(me, &org, &member)
                .await?;
            return done(ctx, &format!("removed '{member}' from '{org}'"));
        }
        OrgCommand::Leave { org } => {
            service
                .remove_organization_member(me, &org, &me.user_id)
                .await?;
            return done(ctx, &format!("left '{org}'"));
        }
    };
    if ctx.json {
        let views: Vec<serde_json::Value> = orgs
            .iter()
            .map(|(org, role)| {
                serde_json::json!({
                    "id": org.id, "name": org.name, "displayName": org.display_name,
                    "createdAt": org.created_at, "createdBy": org.created_by, "role": role,
                })
            })
            .collect();
        output::json(&views)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["ID", "NAME", "DISPLAY NAME", "ROLE"]);
    for (org, role) in &orgs {
        table.row(vec![
            org.id.clone(),
            org.name.clone(),
            org.display_name.clone(),
            role.to_string(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}

fn print_members(ctx: &Ctx, members: &[OrgMemberRecord]) -> anyhow::Result<u8> {
    if ctx.json {
        output::json(&members)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["USER", "ROLE", "ADDED"]);
    for member in members {
        table.row(vec![
            member.user_id.clone(),
            member.role.to_string(),
            member.added_at.to_rfc3339(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}

fn done(ctx: &Ctx, what: &str) -> anyhow::Result<u8> {
    if ctx.json {
        output::json(&serde_json::json!({"done": what}))?;
    } else {
        output::stdout(&format!("{what}\n"))?;
    }
    Ok(SUCCESS)
}
