//! Organisations (issue 41): an owner like a user. Everything a user can own (tools, prompts,
//! Config Center services, the policy, agents …) is stored with a text `owner`; an
//! organisation's things hold its id ([`is_org_id`]: `org_` and 16 hex digits) there, so no
//! owned table changes and every row stored before organisations existed stays as it was.
//! Who may act for an organisation, and how far, is its members' [`OrgRole`]s. Plain data.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// An organisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationRecord {
    /// `org_` and 16 lowercase hex digits: the owner of everything the organisation holds.
    pub id: String,
    /// Its handle (unique; [`check_org_name`]).
    pub name: String,
    /// The name people read.
    pub display_name: String,
    pub created_at: DateTime<Utc>,
    /// The user who made it (its first owner).
    pub created_by: String,
}

/// A member's role: what they may do in the organisation's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrgRole {
    /// Reads and calls the organisation's tools.
    Viewer,
    /// And creates, changes and deletes them.
    Editor,
    /// And manages the members (not owners).
    Admin,
    /// And manages owners, renames and deletes the organisation.
    Owner,
}

impl OrgRole {
    pub const ALL: [OrgRole; 4] = [
        OrgRole::Owner,
        OrgRole::Admin,
        OrgRole::Editor,
        OrgRole::Viewer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrgRole::Owner => "owner",
            OrgRole::Admin => "admin",
            OrgRole::Editor => "editor",
            OrgRole::Viewer => "viewer",
        }
    }

    /// Parses `owner`, `admin`, `editor` or `viewer`; the error names them.
    pub fn parse(text: &str) -> Result<OrgRole, String> {
        OrgRole::ALL
            .into_iter()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| {
                format!("unknown role '{text}' (expected: owner, admin, editor, viewer)")
            })
    }

    /// Whether the role may write the organisation's things (editor and above).
    pub fn can_write(self) -> bool {
        self >= OrgRole::Editor
    }

    /// Whether the role may manage members (admin and above).
    pub fn can_manage(self) -> bool {
        self >= OrgRole::Admin
    }
}

impl std::fmt::Display for OrgRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One member of an organisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgMemberRecord {
    pub org_id: String,
    pub user_id: String,
    pub role: OrgRole,
    pub added_at: DateTime<Utc>,
}

/// What a change of membership did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberWrite {
    /// The user was not a member and now is.
    Added,
    /// The member's role was set (perhaps to the same).
    Changed,
    /// The member was removed.
    Removed,
    /// The user is no member (nothing to remove), or the organisation is gone.
    NotMember,
    /// Refused: the change would leave the organisation without an owner.
    LastOwner,
}

/// Whether `text` is an organisation's id: `org_` and 16 lowercase hex digits.
pub fn is_org_id(text: &str) -> bool {
    text.strip_prefix("org_").is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Whether `name` is a handle no organisation may have: `org_…` (how ids look) or `me` (the
/// person's own scope). Refused as a taken name (as reserved tool names are), not as a
/// malformed one.
pub fn is_reserved_org_name(name: &str) -> bool {
    name.starts_with("org_") || name == "me"
}

/// Checks an organisation's handle: 1–64 characters, lowercase letters, digits, `-` and `_`,
/// starting with a letter, and not `org_…` (which an id could be) nor `me` (the user's own
/// scope in a move).
pub fn check_org_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !valid {
        return Err(format!(
            "organisation name '{name}' is not valid: use 1-64 lowercase letters, digits, '-' \
             and '_', starting with a letter (e.g. 'acme-support')"
        ));
    }
    if is_reserved_org_name(name) {
        return Err(format!(
            "organisation name '{name}' is reserved ('org_…' is how ids look, 'me' is your own \
             scope); choose another"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_names_and_roles() {
        assert!(is_org_id("org_0123456789abcdef"));
        assert!(!is_org_id("org_0123456789ABCDEF"));
        assert!(!is_org_id("org_0123"));
        assert!(!is_org_id("alice"));
        assert!(check_org_name("acme-support").is_ok());
        assert!(check_org_name("Acme").is_err());
        assert!(check_org_name("org_x").is_err());
        assert!(check_org_name("me").is_err());
        assert!(check_org_name("").is_err());
        assert!(OrgRole::Owner.can_manage() && OrgRole::Admin.can_manage());
        assert!(!OrgRole::Editor.can_manage() && OrgRole::Editor.can_write());
        assert!(!OrgRole::Viewer.can_write());
        assert_eq!(OrgRole::parse("editor"), Ok(OrgRole::Editor));
        assert!(OrgRole::parse("boss").unwrap_err().contains("viewer"));
    }
}
