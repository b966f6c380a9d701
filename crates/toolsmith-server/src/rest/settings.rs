//! A person's settings over REST: `GET /api/v1/settings/timezone` and `PUT
//! /api/v1/settings/timezone`, the time zone the personal data families read dates in words in
//! ("tomorrow 9am" is 9am there; UTC unless set). The zone is the user's, whichever agent
//! calls: any caller reads it, a caller without an agent sets it.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A time zone.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeZone {
    /// An IANA time zone name, as the tz database spells it (`Europe/Paris`, `America/New_York`,
    /// `UTC`).
    #[schema(min_length = 1, max_length = 64, example = "Europe/Paris")]
    pub time_zone: String,
}

/// The time-zone answer, enveloped.
pub type TimeZoneEnvelope = Envelope<TimeZone>;

/// Your time zone
///
/// The time zone dates in words are read in by the data tools and `/api/v1/data` ("today",
/// "tomorrow 9am"): `UTC` unless set.
#[utoipa::path(
    get, path = "/api/v1/settings/timezone", tag = "data", operation_id = "getTimeZone",
    responses((status = 200, description = "Your time zone", body = inline(TimeZoneEnvelope)))
)]
pub async fn get_time_zone(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<TimeZone>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let time_zone = state.service.time_zone(&identity.user_id).await?;
    Ok(ApiOk::ok(TimeZone { time_zone }))
}

/// Set your time zone
///
/// An IANA name (`Europe/Paris`); from then on "tomorrow 9am" is 9am there, stored as the
/// instant with its offset (`2026-03-30T09:00:00+02:00`). Records already stored keep their
/// dates. A person's setting: a caller with an agent is refused.
#[utoipa::path(
    put, path = "/api/v1/settings/timezone", tag = "data", operation_id = "setTimeZone",
    request_body = TimeZone,
    responses(
        (status = 200, description = "The time zone set", body = inline(TimeZoneEnvelope)),
        (status = 403, description = "A caller with an agent", body = super::error::ErrorEnvelope),
        (status = 422, description = "Not an IANA time zone name", body = super::error::ErrorEnvelope)
    )
)]
pub async fn set_time_zone(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<TimeZone>,
) -> Result<ApiOk<TimeZone>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    if identity.agent_id.is_some() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the time zone is the user's, for every agent: set it without an agent",
        ));
    }
    let time_zone = state
        .service
        .set_time_zone(&identity.user_id, &body.time_zone)
        .await?;
    Ok(ApiOk::ok(TimeZone { time_zone }))
}
