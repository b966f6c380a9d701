//! The policy engine: which tools a caller may see and call.
//!
//! A [`PolicyDocument`] (from TOML or JSON) names tools, groups (`group:core`, `group:custom`,
//! `group:mcp:<server>`, user-defined) and profiles (`full`, `minimal`, `coding`, `messaging`,
//! user-defined) in global, per-user and per-agent scopes.
//! [`PolicyDocument::compile`] checks it against a [`GroupCatalog`] and fails closed: an unknown
//! profile or group is an error, never "allow everything".
//! The compiled [`Policy`] then decides per call with [`Policy::decide`] or per listing with
//! [`Policy::filter`]:
//!
//! 1. the caller's subagent depth beyond `subagents.max_depth` denies everything;
//! 2. any deny entry (global, user, agent, subagent always/leaf) denies — **deny always wins**;
//! 3. any `also_allow` entry allows;
//! 4. otherwise the tool must be in the profile and in every non-empty allow list in scope.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod catalog;
mod compile;
mod document;
mod entry;
mod error;
mod policy;

pub use catalog::{Caller, GroupCatalog, ToolInfo, ToolKind};
pub use document::{AgentPolicy, PolicyDocument, ScopePolicy, SubagentPolicy, ToolGroupSwitches};
pub use error::PolicyError;
pub use policy::{Decision, Policy};

/// The built-in profile names.
pub const BUILTIN_PROFILES: &[&str] = &["full", "minimal", "coding", "messaging"];

#[cfg(test)]
mod tests;
