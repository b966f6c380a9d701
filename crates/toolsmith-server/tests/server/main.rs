//! The server's integration tests, in one test binary: one link of the whole stack instead of
//! one per file (each link is hundreds of megabytes and most of the build's time and disk).
//!
//! - `auth` — tokens, scopes and agents on REST.
//! - `rest_*` — the REST routes through the real router (`rest_support`).
//! - `mcp_*` — MCP through rmcp's client and the real SDK clients (`mcp_support`).

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

mod agent_support;
mod mcp_person;
mod mcp_support;
mod rest_support;

mod agent_delegate_search;
mod agent_delegation;
mod agent_files;
mod agent_quality_gates;
mod agent_sampling;
mod agent_sessions;
mod agent_teams;
mod auth;
mod code_execution;
mod docs_examples;
mod http_limits;
mod json_paths;
mod mcp_annotations;
mod mcp_approvals;
mod mcp_bridge;
mod mcp_bridge_http;
mod mcp_bridge_offer;
mod mcp_bridge_subscribe;
mod mcp_browser;
mod mcp_caller_client;
mod mcp_cli_tools;
mod mcp_clients;
mod mcp_coding_agents;
mod mcp_compat;
mod mcp_compat_answers;
mod mcp_confirmation;
mod mcp_content;
mod mcp_email;
mod mcp_extract_sampling;
mod mcp_hybrid_search;
mod mcp_listing;
mod mcp_manage;
mod mcp_media;
mod mcp_mistakes;
mod mcp_outside;
mod mcp_overlaps;
mod mcp_prompts;
mod mcp_protocol;
mod mcp_resources;
mod mcp_resources_listen;
mod mcp_scopes;
mod mcp_sdk_capabilities;
mod mcp_stateless_approvals;
mod mcp_tasks;
mod mcp_tool_client;
mod mcp_vectors;
mod package_registries;
mod reference_examples;
mod rest_agent_limits;
mod rest_agent_rule;
mod rest_agent_scope;
mod rest_agents;
mod rest_agents_visible;
mod rest_api;
mod rest_approvals;
mod rest_audit;
mod rest_contract;
mod rest_cross_site;
mod rest_custom_data;
mod rest_data;
mod rest_dependencies;
mod rest_executions;
mod rest_finance;
mod rest_goals;
mod rest_http;
mod rest_kinds;
mod rest_load;
mod rest_metrics;
mod rest_oauth;
mod rest_one_off;
mod rest_openapi;
mod rest_orgs;
mod rest_orgs_owned;
mod rest_orgs_scope;
mod rest_policies;
mod rest_prompts;
mod rest_read_only;
mod rest_resources;
mod rest_scheduled_tasks;
mod rest_schemathesis;
mod rest_scrubbing;
mod rest_tasks;
mod rest_time_zone;
mod rest_ui;
mod search_quality;
mod tool_groups;
