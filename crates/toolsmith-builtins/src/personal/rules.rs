//! What a family adds to the shared operations of [`super::ops`] when its fields alone do not
//! say it all: checks against the store before a record is added or changed (a goal's parent
//! is one of the caller's goals and not one of its own sub-goals; a status may only move
//! along its lifecycle), what follows a change (a goal's progress follows its steps), and the
//! family's own list limits and filters (an expense's amount range). The operations run these
//! hooks on every path — the family's tools and REST alike — so a rule is written once.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};
use toolsmith_core::data::{DataRecord, RecordQuery, RecordScope};

use crate::data::Records;
use crate::utilities::Fail;

/// A boxed future of a hook.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Fail>> + Send + 'a>>;

/// Before a new record is stored: its document, which the hook may complete.
pub type BeforeAdd =
    for<'a> fn(&'a dyn Records, &'a RecordScope, &'a mut Map<String, Value>) -> HookFuture<'a>;

/// Before a changed record is stored: the record as stored and its new document, which the
/// hook may complete.
pub type BeforeChange = for<'a> fn(
    &'a dyn Records,
    &'a RecordScope,
    &'a DataRecord,
    &'a mut Map<String, Value>,
) -> HookFuture<'a>;

/// After a record was stored (added or changed) or deleted: the record.
pub type After = for<'a> fn(&'a dyn Records, &'a RecordScope, &'a DataRecord) -> HookFuture<'a>;

/// A family's rules beyond its fields. Every hook is optional.
#[derive(Debug)]
pub struct Rules {
    /// The list's `limit`: its default and its most (003 "Tool Max Limits").
    pub list_limit: (i64, i64),
    /// List filters of the family's own, beyond the ones its indexed fields give.
    pub filters: Option<ListFilters>,
    pub before_add: Option<BeforeAdd>,
    pub before_change: Option<BeforeChange>,
    pub after_write: Option<After>,
    pub after_delete: Option<After>,
}

/// A family's own list filters: their schema properties and how they narrow a query.
#[derive(Debug, Clone, Copy)]
pub struct ListFilters {
    pub schema: fn(&mut Map<String, Value>),
    pub apply: fn(&Value, &mut RecordQuery) -> Result<(), Fail>,
}

impl Rules {
    /// Rules with the default list limits and no hooks, to be filled in.
    #[must_use]
    pub const fn new() -> Rules {
        Rules {
            list_limit: (super::ops::DEFAULT_LIST, super::ops::MAX_LIST),
            filters: None,
            before_add: None,
            before_change: None,
            after_write: None,
            after_delete: None,
        }
    }
}

impl Default for Rules {
    fn default() -> Self {
        Rules::new()
    }
}
