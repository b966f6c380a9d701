//! The agent's own data as people reach it outside tool calls (REST, the web UI): the personal
//! families' records of a caller's scope listed, read, added, changed and deleted with the
//! same checks as the tools ([`toolsmith_builtins::personal::ops`]), and a person's whole data
//! exported page by page and erased.

use serde_json::{Value, json};
use toolsmith_builtins::personal::{self, Family, ops};
use toolsmith_builtins::utilities::Fail;
use toolsmith_core::data::{DataRecord, RecordScope};

use super::ToolService;
use super::records::StoreRecords;
use crate::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;

/// One operation on a family's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataOp<'a> {
    /// The records a list tool's arguments select (`body`: filters, `search`, `sortBy` …).
    List,
    Get(&'a str),
    /// A new record from `body`.
    Create,
    /// The fields of `body` changed on the record.
    Update(&'a str),
    Delete(&'a str),
}

/// Most records one export page holds.
pub const MAX_EXPORT_PAGE: u32 = 1000;

impl ToolService {
    pub(crate) fn records(&self) -> StoreRecords {
        StoreRecords {
            store: self.store.clone(),
            limits: self.config.records,
            read_only: self.config.read_only,
        }
    }

    /// Runs `op` on the family REST names `family` (`tasks`, `bookmarks`, `notes`, `events`,
    /// `contacts`) in `scope`; the reply is what the family's tool replies.
    pub async fn data_op(
        &self,
        scope: &RecordScope,
        family: &str,
        op: DataOp<'_>,
        body: &Value,
    ) -> Result<Value, ServiceError> {
        let f = find(family)?;
        let records = self.records();
        if let DataOp::Get(id) | DataOp::Update(id) | DataOp::Delete(id) = op
            && ops::existing(f, &records, scope, id).await.is_err()
        {
            return Err(ServiceError::NotFound(format!(
                "no {} with id '{}' among yours",
                f.noun,
                id.chars().take(100).collect::<String>()
            )));
        }
        let result = match op {
            DataOp::List => ops::list(f, &records, scope, body).await,
            DataOp::Get(id) => ops::get(f, &records, scope, id).await,
            DataOp::Create => ops::add(f, &records, scope, body).await,
            DataOp::Update(id) => ops::update(f, &records, scope, id, body, "").await,
            DataOp::Delete(id) => ops::delete(f, &records, scope, id).await,
        };
        result.map_err(service_error)
    }

    /// The time zone `user`'s dates in words are read in (an IANA name; `UTC` unless set).
    pub async fn time_zone(&self, user: &str) -> Result<String, ServiceError> {
        let zone = personal::zone::get(&self.records(), user)
            .await
            .map_err(service_error)?;
        Ok(zone.name().to_owned())
    }

    /// Sets `user`'s time zone to `name` (an IANA name, like `Europe/Paris`); the name set.
    pub async fn set_time_zone(&self, user: &str, name: &str) -> Result<String, ServiceError> {
        let zone = personal::zone::set(&self.records(), user, name)
            .await
            .map_err(service_error)?;
        Ok(zone.name().to_owned())
    }

    /// A list's arguments from a query string: each name one of the family's list filters
    /// (its list tool's parameters), each value as that parameter's type (`limit=5`,
    /// `isFavorite=true`, `tags=a,b`).
    pub fn data_list_args(
        &self,
        family: &str,
        pairs: &[(String, String)],
    ) -> Result<Value, ServiceError> {
        let f = find(family)?;
        let schema = ops::list_schema(f);
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut args = serde_json::Map::new();
        for (name, raw) in pairs {
            let Some(prop) = props.get(name) else {
                let mut known: Vec<&String> = props.keys().collect();
                known.sort();
                let known: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
                return Err(ServiceError::Validation(format!(
                    "unknown query parameter '{}' for {}: use {}",
                    name.chars().take(64).collect::<String>(),
                    f.plural,
                    known.join(", ")
                )));
            };
            if args.contains_key(name) {
                return Err(ServiceError::Validation(format!(
                    "query parameter '{name}' is given more than once"
                )));
            }
            let value = match prop["type"].as_str() {
                Some("integer") => raw.parse::<i64>().map(Value::from).map_err(|_| {
                    ServiceError::Validation(format!("'{name}' must be a whole number"))
                })?,
                Some("boolean") => match raw.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => {
                        return Err(ServiceError::Validation(format!(
                            "'{name}' must be true or false"
                        )));
                    }
                },
                Some("array") => Value::from(
                    raw.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                ),
                _ => Value::from(raw.as_str()),
            };
            args.insert(name.clone(), value);
        }
        Ok(Value::Object(args))
    }

    /// One page of everything `owner` keeps (every family, memories included, of every agent
    /// of theirs), in id order after `after`; the id to continue after, when there is more.
    pub async fn data_export(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<DataRecord>, Option<String>), ServiceError> {
        let limit = limit.clamp(1, MAX_EXPORT_PAGE);
        let mut page = self.store.export_records(owner, after, limit + 1).await?;
        let more = page.len() > limit as usize;
        page.truncate(limit as usize);
        let next = more.then(|| page.last().map(|r| r.id.clone())).flatten();
        Ok((page, next))
    }

    /// Deletes everything `owner` keeps (every family, every agent) and audits it
    /// (`data.erase`, with the count, never a record); how many records went.
    pub async fn data_erase(&self, actor: &Actor, owner: &str) -> Result<u64, ServiceError> {
        let deleted = self.store.delete_owner_records(owner).await?;
        self.audit
            .record(
                actor,
                "data.erase",
                AuditTarget::new("user", owner.to_owned(), None),
                (None, None),
                json!({"deleted": deleted}),
            )
            .await;
        Ok(deleted)
    }
}

/// A data operation's failure as the service's: the checks' answers (a bad field, a limit)
/// name the fix; anything else is the store's.
pub(crate) fn service_error(fail: Fail) -> ServiceError {
    match fail {
        Fail::Args(m) => ServiceError::Validation(m),
        Fail::Run(m) => ServiceError::Store(toolsmith_store::StoreError::Backend(m.into())),
    }
}

/// The family REST names `family`, or a "not found" that lists them.
fn find(family: &str) -> Result<&'static Family, ServiceError> {
    personal::family(family).ok_or_else(|| {
        let names: Vec<&str> = personal::FAMILIES.iter().map(|f| f.plural).collect();
        ServiceError::NotFound(format!(
            "no data family '{}': the families are {}",
            family.chars().take(64).collect::<String>(),
            names.join(", ")
        ))
    })
}
