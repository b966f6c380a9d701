//! A narrowing of what a call may reach, carried on its [`ToolContext`] and kept by every
//! nested call (`callTool` and what it calls in turn).
//!
//! The engine knows nothing of policies: a door that runs calls on behalf of something with
//! a scope of its own — an agent Toolsmith runs, bounded by its definition's `toolPolicy` —
//! sets a [`Narrowing`] on the context, and the policy middleware and every listing ask it
//! for each tool, nested calls included, so a tool the scope leaves out cannot be reached
//! through another tool that is in it. A narrowing only ever takes away.

use std::fmt;
use std::sync::Arc;

use crate::{RegisteredTool, ToolContext};

/// Something that decides which tools a call (and every call nested in it) may reach.
pub trait Narrows: Send + Sync {
    /// `Err(reason)` when `tool` is outside the scope; the reason names the scope and how
    /// to widen it.
    fn check(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String>;
}

/// The [`Narrows`] of a call, cheap to clone into nested calls.
#[derive(Clone)]
pub struct Narrowing(pub Arc<dyn Narrows>);

impl Narrowing {
    /// `Err(reason)` when `tool` is outside the scope.
    pub fn check(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String> {
        self.0.check(ctx, tool)
    }
}

impl fmt::Debug for Narrowing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Narrowing")
    }
}
