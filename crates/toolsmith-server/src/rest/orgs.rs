//! Organisations over REST (issue 41): `/api/v1/organizations…` — make one, list mine with my
//! role, read, rename and delete one, its members, add a member or set a role, remove one or
//! leave — and `POST /api/v1/custom-tools/{id}/move`, moving a tool between owners.
//!
//! The organisation routes always act as the *person* ([`Identity::as_person`]: their own user
//! id and their token's own scopes, also when the request names an organisation with
//! `X-Toolsmith-Organization`), never as an agent: a caller acting as one is refused naming
//! why. The rules are the service's (`toolsmith_service::orgs`): to a non-member an
//! organisation does not exist (404), a role too low is a 403 naming the role needed, a taken
//! name or the last owner a 409. A move acts in the caller's scope: the tool is found among the
//! tools of the scope the request acts in (the person's own, or the organisation's named by
//! the header), and goes to `to` (`me` or an organisation's name or id).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolsmith_core::organization::{MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord};
use toolsmith_service::ToolRef;
use utoipa::ToSchema;

use super::custom_tools::{expected_revision, tool_ok};
use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::types::{ToolRecord, optional_integer};
use super::{actor, require, require_person};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A member's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads and calls the organisation's tools.
    Viewer,
    /// And creates, changes and deletes them (and moves tools in and out).
    Editor,
    /// And manages its members (not its owners) and renames it.
    Admin,
    /// And manages owners, and deletes it.
    Owner,
}

impl From<OrgRole> for Role {
    fn from(role: OrgRole) -> Role {
        match role {
            OrgRole::Viewer => Role::Viewer,
            OrgRole::Editor => Role::Editor,
            OrgRole::Admin => Role::Admin,
            OrgRole::Owner => Role::Owner,
        }
    }
}

impl From<Role> for OrgRole {
    fn from(role: Role) -> OrgRole {
        match role {
            Role::Viewer => OrgRole::Viewer,
            Role::Editor => OrgRole::Editor,
            Role::Admin => OrgRole::Admin,
            Role::Owner => OrgRole::Owner,
        }
    }
}

/// A new organisation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateOrganizationBody {
    /// Its handle, unique on the server: lowercase letters, digits, `-` and `_`, starting with
    /// a letter; never `org_…` nor `me`.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_-]*$")]
    pub name: String,
    /// The name people read (default: `name`): up to 200 characters, no control characters,
    /// not only spaces.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub display_name: Option<String>,
}

/// A change of an organisation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateOrganizationBody {
    /// The new display name (the handle never changes): up to 200 characters, no control
    /// characters, not only spaces.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub display_name: String,
}

/// A member's role to set.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberBody {
    pub role: Role,
}

/// Where a tool moves.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MoveToolBody {
    /// `me` (your own tools) or an organisation's name or id, of which you are editor or above.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$"
    )]
    pub to: String,
    /// Move only if the tool is at this revision (409 otherwise); same as `If-Match`.
    #[serde(default, deserialize_with = "optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

/// An organisation, with your role in it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    /// `org_<16 hex>`: the owner of everything the organisation holds.
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub created_at: DateTime<Utc>,
    /// The user who made it.
    pub created_by: String,
    /// Your role in it.
    pub role: Role,
}

impl Organization {
    fn new(org: OrganizationRecord, role: OrgRole) -> Organization {
        Organization {
            id: org.id,
            name: org.name,
            display_name: org.display_name,
            created_at: org.created_at,
            created_by: org.created_by,
            role: role.into(),
        }
    }
}

/// Your organisations, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationList {
    pub organizations: Vec<Organization>,
    pub count: usize,
}

/// One member.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user_id: String,
    pub role: Role,
    pub added_at: DateTime<Utc>,
}

impl From<OrgMemberRecord> for Member {
    fn from(m: OrgMemberRecord) -> Member {
        Member {
            user_id: m.user_id,
            role: m.role.into(),
            added_at: m.added_at,
        }
    }
}

/// An organisation's members, by user id.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberList {
    /// The organisation's id.
    pub organization: String,
    pub members: Vec<Member>,
    pub count: usize,
}

/// What a delete answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrganizationDeleted {
    /// Always `true`.
    pub deleted: bool,
    /// The organisation as it was.
    pub organization: Organization,
}

/// What removing a member (or leaving) answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberRemoved {
    /// Always `true`.
    pub removed: bool,
    /// The organisation's id.
    pub organization: String,
    pub user_id: String,
}

pub type OrganizationEnvelope = Envelope<Organization>;
pub type OrganizationListEnvelope = Envelope<OrganizationList>;
pub type MemberEnvelope = Envelope<Member>;
pub type MemberListEnvelope = Envelope<MemberList>;
pub type OrganizationDeletedEnvelope = Envelope<OrganizationDeleted>;
pub type MemberRemovedEnvelope = Envelope<MemberRemoved>;

const ORG_PARAM_DOC: &str = "The organisation's name or id (`org_<16 hex>`)";
// The patterns of display names, `to` and member ids say what the service accepts: no control
// characters (`char::is_control`) and not only white space.

/// The person behind the caller, for the organisation routes: refused when acting as an agent
/// (what the routes do is a person's decision), holding `scope` among the token's own scopes.
fn person(identity: &Identity, scope: Scope) -> Result<Identity, ApiError> {
    require_person(
        identity,
        "organisations and their members are managed by a person",
    )?;
    let person = identity.as_person();
    require(&person, scope)?;
    Ok(person)
}

/// Make an organisation
///
/// You become its first owner. Only a person makes one (never an agent).
#[utoipa::path(
    post, path = "/api/v1/organizations", tag = "organizations", operation_id = "createOrganization",
    request_body = CreateOrganizationBody,
    responses(
        (status = 201, description = "The organisation, with you as owner", body = inline(OrganizationEnvelope)),
        (status = 409, description = "The name is taken, or reserved (`me`, `org_…`)", body = super::error::ErrorEnvelope),
        (status = 422, description = "The name or display name breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<CreateOrganizationBody>,
) -> Result<ApiOk<Organization>, ApiError> {
    let person = person(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let org = state
        .service
        .create_organization(&actor(&person), &body.name, body.display_name.as_deref())
        .await?;
    Ok(ApiOk::created(Organization::new(org, OrgRole::Owner)))
}

/// Your organisations
///
/// Every organisation you are a member of, with your role, by name.
#[utoipa::path(
    get, path = "/api/v1/organizations", tag = "organizations", operation_id = "listOrganizations",
    responses((status = 200, description = "`{organizations, count}`", body = inline(OrganizationListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<OrganizationList>, ApiError> {
    let person = person(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let organizations: Vec<Organization> = state
        .service
        .my_organizations(&actor(&person))
        .await?
        .into_iter()
        .map(|(org, role)| Organization::new(org, role))
        .collect();
    Ok(ApiOk::ok(OrganizationList {
        count: organizations.len(),
        organizations,
    }))
}

/// One organisation
///
/// An organisation you are a member of, with your role; to anyone else it does not exist.
#[utoipa::path(
    get, path = "/api/v1/organizations/{org}", tag = "organizations", operation_id = "getOrganization",
    params(("org" = String, Path, description = ORG_PARAM_DOC)),
    responses(
        (status = 200, description = "The organisation", body = inline(OrganizationEnvelope)),
        (status = 404, description = "No organisation of that name or id of which you are a member", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(org): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Organization>, ApiError> {
    let person = person(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let (org, role) = state
        .service
        .organization_of_member(&person.user_id, &org)
        .await?;
    Ok(ApiOk::ok(Organization::new(org, role)))
}

/// Rename an organisation
///
/// Sets its display name (its handle never changes); admins and owners.
#[utoipa::path(
    patch, path = "/api/v1/organizations/{org}", tag = "organizations", operation_id = "updateOrganization",
    params(("org" = String, Path, description = ORG_PARAM_DOC)),
    request_body = UpdateOrganizationBody,
    responses(
        (status = 200, description = "The organisation after", body = inline(OrganizationEnvelope)),
        (status = 403, description = "You are editor or viewer of it (the role needed is named)", body = super::error::ErrorEnvelope),
        (status = 404, description = "No organisation of that name or id of which you are a member", body = super::error::ErrorEnvelope),
        (status = 422, description = "The display name breaks a rule", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(org): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<UpdateOrganizationBody>,
) -> Result<ApiOk<Organization>, ApiError> {
    let person = person(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let renamed = state
        .service
        .rename_organization(&actor(&person), &org, &body.display_name)
        .await?;
    let (_, role) = state
        .service
        .organization_of_member(&person.user_id, &renamed.id)
        .await?;
    Ok(ApiOk::ok(Organization::new(renamed, role)))
}

/// Delete an organisation
///
/// Owners only; refused (409) while it still owns anything, naming what and how to move or
/// delete it. Its memberships go with it; what it did (executions, the audit log) stays as
/// history.
#[utoipa::path(
    delete, path = "/api/v1/organizations/{org}", tag = "organizations", operation_id = "deleteOrganization",
    params(("org" = String, Path, description = ORG_PARAM_DOC)),
    responses(
        (status = 200, description = "Deleted", body = inline(OrganizationDeletedEnvelope)),
        (status = 403, description = "You are not an owner of it", body = super::error::ErrorEnvelope),
        (status = 404, description = "No organisation of that name or id of which you are a member", body = super::error::ErrorEnvelope),
        (status = 409, description = "It still owns tools or other things (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(org): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<OrganizationDeleted>, ApiError> {
    let person = person(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let (record, role) = state
        .service
        .organization_of_member(&person.user_id, &org)
        .await?;
    state
        .service
        .delete_organization(&actor(&person), &record.id)
        .await?;
    Ok(ApiOk::ok(OrganizationDeleted {
        deleted: true,
        organization: Organization::new(record, role),
    }))
}

/// An organisation's members
///
/// Every member with their role, by user id; any member may read them.
#[utoipa::path(
    get, path = "/api/v1/organizations/{org}/members", tag = "organizations", operation_id = "listOrganizationMembers",
    params(("org" = String, Path, description = ORG_PARAM_DOC)),
    responses(
        (status = 200, description = "`{organization, members, count}`", body = inline(MemberListEnvelope)),
        (status = 404, description = "No organisation of that name or id of which you are a member", body = super::error::ErrorEnvelope)
    )
)]
pub async fn members(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(org): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<MemberList>, ApiError> {
    let person = person(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let (org, members) = state
        .service
        .organization_members(&actor(&person), &org)
        .await?;
    let members: Vec<Member> = members.into_iter().map(Member::from).collect();
    Ok(ApiOk::ok(MemberList {
        organization: org.id,
        count: members.len(),
        members,
    }))
}

/// Add a member or set a member's role
///
/// Admins and owners manage members; only owners grant, change or take away the owner role;
/// the last owner is never demoted (409, naming how to make another). 201 when the user was
/// added, 200 when their role was set.
#[utoipa::path(
    put, path = "/api/v1/organizations/{org}/members/{user}", tag = "organizations", operation_id = "putOrganizationMember",
    params(
        ("org" = String, Path, description = ORG_PARAM_DOC),
        ("user" = String, Path, description = "The member's user id", max_length = 128, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$")
    ),
    request_body = MemberBody,
    responses(
        (status = 200, description = "The member's role was set", body = inline(MemberEnvelope)),
        (status = 201, description = "The user was added", body = inline(MemberEnvelope)),
        (status = 403, description = "Your role does not allow it (the role needed is named)", body = super::error::ErrorEnvelope),
        (status = 404, description = "No organisation of that name or id of which you are a member", body = super::error::ErrorEnvelope),
        (status = 409, description = "The change would leave it without an owner", body = super::error::ErrorEnvelope),
        (status = 422, description = "Not a user id (an organisation's id, control characters, too long)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn put_member(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((org, user)): ApiPath<(String, String)>,
    query: QueryPairs,
    ApiJson(body): ApiJson<MemberBody>,
) -> Result<ApiOk<Member>, ApiError> {
    let person = person(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let (member, outcome) = state
        .service
        .put_organization_member(&actor(&person), &org, &user, body.role.into())
        .await?;
    let status = match outcome {
        MemberWrite::Added => StatusCode::CREATED,
        _ => StatusCode::OK,
    };
    Ok(ApiOk::with_status(status, member.into()))
}

/// Remove a member, or leave
///
/// Admins and owners remove members, owners remove owners, and any member may remove
/// themselves (leave); the last owner never (409, naming how to make another).
#[utoipa::path(
    delete, path = "/api/v1/organizations/{org}/members/{user}", tag = "organizations", operation_id = "removeOrganizationMember",
    params(
        ("org" = String, Path, description = ORG_PARAM_DOC),
        ("user" = String, Path, description = "The member's user id (yours: leave)", max_length = 128, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$")
    ),
    responses(
        (status = 200, description = "Removed", body = inline(MemberRemovedEnvelope)),
        (status = 403, description = "Your role does not allow it (the role needed is named)", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such organisation of yours, or no such member", body = super::error::ErrorEnvelope),
        (status = 409, description = "The last owner cannot leave or be removed", body = super::error::ErrorEnvelope)
    )
)]
pub async fn remove_member(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((org, user)): ApiPath<(String, String)>,
    query: QueryPairs,
) -> Result<ApiOk<MemberRemoved>, ApiError> {
    let person = person(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let (record, _) = state
        .service
        .organization_of_member(&person.user_id, &org)
        .await?;
    state
        .service
        .remove_organization_member(&actor(&person), &record.id, &user)
        .await?;
    Ok(ApiOk::ok(MemberRemoved {
        removed: true,
        organization: record.id,
        user_id: user,
    }))
}

/// Move a tool to another owner
///
/// Moves a tool of the scope you act in (your own, or the organisation named by
/// `X-Toolsmith-Organization`) to `to`: `me` or an organisation of which you are editor or
/// above; out of an organisation you must be its editor or above too. A person's decision
/// (never an agent). Its versions go with it; its executions stay with the old owner as
/// history; its `allow_always` approvals are revoked. A name taken at the new owner is a 409
/// naming the clash and how to rename. Audited `tool.move`.
#[utoipa::path(
    post, path = "/api/v1/custom-tools/{id}/move", tag = "custom-tools", operation_id = "moveCustomTool",
    params(
        ("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name"),
        ("If-Match" = Option<String>, Header, description = "`\"<revision>\"`: move only at this revision (or `*`)",
            pattern = r#"^(\*|"[1-9][0-9]{0,14}"|[1-9][0-9]{0,14})$"#)
    ),
    request_body = MoveToolBody,
    responses(
        (status = 200, description = "The tool, now the new owner's", body = inline(super::openapi::ToolEnvelope),
            headers(("ETag" = String, description = "The tool's revision, quoted"))),
        (status = 403, description = "An agent, or your role in an organisation is below editor", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such tool in your scope, or no organisation of that name of which you are a member", body = super::error::ErrorEnvelope),
        (status = 409, description = "The name is taken at the new owner, a stale revision, already the owner's, or the new owner's limit", body = super::error::ErrorEnvelope),
        (status = 422, description = "`to` is not `me` nor a name or id", body = super::error::ErrorEnvelope)
    )
)]
pub async fn move_tool(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    headers: HeaderMap,
    ApiJson(body): ApiJson<MoveToolBody>,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    require_person(
        &identity,
        "moving a tool to another owner is a person's decision",
    )?;
    query.check(&[])?;
    let expected = expected_revision(&headers, body.expected_revision)?;
    let moved = state
        .service
        .move_tool(&actor(&identity), &ToolRef::parse(&id), &body.to, expected)
        .await?;
    Ok(tool_ok(StatusCode::OK, moved.into()))
}
