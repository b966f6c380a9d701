//! dynamic-mcp's operator tools under `--compat dynamic-mcp` ([`super::profile`]): what each
//! answers, field for field as dynamic-mcp v0.4.1 answers it (`structuredContent`, and the text
//! it writes beside it).
//!
//! - `system.health` → `{status: "ok", service: "dynamic-mcp", version, uptimeSeconds}` (both
//!   profiles; `version` is Toolsmith's, uptime counts from the server's start);
//! - `dev.echo` `{message, uppercase?}` → `{message, length}`, text the message;
//! - `time.now` `{timeZone?}` → `{iso, unixSeconds, timeZone}` (an IANA name, default `UTC`;
//!   `iso` is always UTC, as JavaScript's `toISOString`), or `Invalid IANA timezone: …`;
//! - `system.guard_metrics` → `{activeExecutions, limits, scopes}` ([`Guard`]);
//! - `system.runtime_config` → the sanitized configuration ([`runtime_config`]): whether an
//!   admin token is configured, never the token.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{SecondsFormat, Utc};
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData};
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::ErrorKind;

use super::profile::{Definition, ProfileOp};
use crate::mcp::handler::Caller;

/// dynamic-mcp's name for itself, which its clients check.
pub(crate) const SERVICE: &str = "dynamic-mcp";

/// dynamic-mcp's default `MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH_MAX`.
pub(crate) const DEFAULT_ATTACH_MAX: usize = 8;

/// The most npm dependencies one tool may declare (dynamic-mcp's schema limit).
const MAX_DEPENDENCIES: u64 = 64;

pub(crate) fn definitions() -> Vec<Definition> {
    let nonnegative = json!({"type": "integer", "minimum": 0});
    vec![
        (
            ProfileOp::Health,
            "system.health",
            "Return server liveness and uptime info",
            json!({"type": "object", "properties": {}}),
            json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "const": "ok"},
                    "service": {"type": "string"},
                    "version": {"type": "string"},
                    "uptimeSeconds": nonnegative
                },
                "required": ["status", "service", "version", "uptimeSeconds"]
            }),
        ),
        (
            ProfileOp::Echo,
            "dev.echo",
            "Echo user input and return deterministic structured output",
            json!({
                "type": "object",
                "properties": {
                    "message": {"type": "string", "minLength": 1, "description": "Message to echo back"},
                    "uppercase": {"type": "boolean", "default": false, "description": "Convert the message to upper case"}
                },
                "required": ["message"]
            }),
            json!({
                "type": "object",
                "properties": {"message": {"type": "string"}, "length": nonnegative},
                "required": ["message", "length"]
            }),
        ),
        (
            ProfileOp::TimeNow,
            "time.now",
            "Return current server time in ISO format",
            json!({
                "type": "object",
                "properties": {
                    "timeZone": {"type": "string", "description": "Optional IANA timezone, e.g. Asia/Shanghai"}
                }
            }),
            json!({
                "type": "object",
                "properties": {
                    "iso": {"type": "string"},
                    "unixSeconds": {"type": "integer"},
                    "timeZone": {"type": "string"}
                },
                "required": ["iso", "unixSeconds", "timeZone"]
            }),
        ),
        (
            ProfileOp::GuardMetrics,
            "system.guard_metrics",
            "Get guard concurrency/rate-limit counters",
            json!({"type": "object", "properties": {}}),
            json!({
                "type": "object",
                "properties": {
                    "activeExecutions": nonnegative,
                    "limits": {
                        "type": "object",
                        "properties": {
                            "maxConcurrency": nonnegative,
                            "maxCallsPerWindow": nonnegative,
                            "windowMs": nonnegative
                        },
                        "required": ["maxConcurrency", "maxCallsPerWindow", "windowMs"]
                    },
                    "scopes": {"type": "array", "items": {"type": "object"}}
                },
                "required": ["activeExecutions", "limits", "scopes"]
            }),
        ),
        (
            ProfileOp::RuntimeConfig,
            "system.runtime_config",
            "Return sanitized runtime config snapshot",
            json!({"type": "object", "properties": {}}),
            json!({
                "type": "object",
                "properties": {
                    "transports": {"type": "array", "items": {"type": "string"}},
                    "dynamic": {"type": "object"},
                    "auth": {"type": "object"},
                    "security": {"type": "object"},
                    "sandbox": {"type": "object"},
                    "audit": {"type": "object"},
                    "experimental": {"type": "object"}
                },
                "required": ["transports", "dynamic", "auth", "security", "sandbox", "audit", "experimental"]
            }),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EchoArgs {
    message: String,
    #[serde(default)]
    uppercase: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TimeArgs {
    #[serde(default)]
    time_zone: Option<String>,
}

/// Runs an operator tool (all but attach and detach).
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: ProfileOp,
    args: Value,
) -> Result<CallToolResult, String> {
    Ok(match op {
        ProfileOp::Health => {
            let output = health(caller);
            structured(output.to_string(), output)
        }
        ProfileOp::Echo => {
            let EchoArgs { message, uppercase } =
                serde_json::from_value(args).map_err(|e| e.to_string())?;
            let message = if uppercase {
                message.to_uppercase()
            } else {
                message
            };
            // JavaScript's `length`: UTF-16 code units.
            let length = message.encode_utf16().count();
            structured(
                message.clone(),
                json!({"message": message, "length": length}),
            )
        }
        ProfileOp::TimeNow => {
            let TimeArgs { time_zone } = serde_json::from_value(args).map_err(|e| e.to_string())?;
            time_now(time_zone.as_deref().unwrap_or("UTC"))
        }
        ProfileOp::GuardMetrics => {
            let output = guard_metrics(caller);
            structured(output.to_string(), output)
        }
        ProfileOp::RuntimeConfig => {
            let output = runtime_config(caller).await;
            structured(output.to_string(), output)
        }
        ProfileOp::Attach | ProfileOp::Detach => return Err("not an operator tool".to_owned()),
    })
}

/// A result whose text is `text` and whose structured content is `output`.
pub(crate) fn structured(text: String, output: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(output);
    result
}

/// dynamic-mcp's failure: `isError` with the message as the only text.
pub(crate) fn failed(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_owned())])
}

fn health(caller: &Caller<'_>) -> Value {
    json!({
        "status": "ok",
        "service": SERVICE,
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeSeconds": caller.shared().profile.started.elapsed().as_secs()
    })
}

fn time_now(zone: &str) -> CallToolResult {
    if !valid_time_zone(zone) {
        return failed(&format!("Invalid IANA timezone: {zone}"));
    }
    let now = Utc::now();
    let output = json!({
        "iso": now.to_rfc3339_opts(SecondsFormat::Millis, true),
        "unixSeconds": now.timestamp(),
        "timeZone": zone
    });
    structured(output.to_string(), output)
}

/// Whether `zone` names an IANA time zone (any case, as `Intl.DateTimeFormat` accepts it).
fn valid_time_zone(zone: &str) -> bool {
    zone.parse::<chrono_tz::Tz>().is_ok()
        || chrono_tz::TZ_VARIANTS
            .iter()
            .any(|tz| tz.name().eq_ignore_ascii_case(zone))
}

/// The calls dynamic-mcp counts in its execution guard — dynamic tools, `run_js_ephemeral`,
/// the sandbox sessions and upstream attach — by name (dynamic-mcp's "scope"), for
/// `system.guard_metrics`. The limits themselves are Toolsmith's (`max_concurrent`, the
/// per-tool rate), applied by the pipeline to every call; this only counts what they did.
#[derive(Default)]
pub(crate) struct Guard {
    active: AtomicU64,
    scopes: Mutex<std::collections::BTreeMap<String, ScopeStats>>,
}

#[derive(Default, Clone, Copy)]
struct ScopeStats {
    total: u64,
    allowed: u64,
    rejected_rate: u64,
    rejected_concurrency: u64,
    failed: u64,
}

/// One counted call in flight; [`Active::finish`] records how it ended.
pub(crate) struct Active<'a> {
    guard: &'a Guard,
    scope: String,
}

impl Guard {
    /// Counts a call of `scope` as started.
    pub fn enter(&self, scope: &str) -> Active<'_> {
        self.active.fetch_add(1, Ordering::SeqCst);
        Active {
            guard: self,
            scope: scope.to_owned(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, ScopeStats>> {
        self.scopes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Active<'_> {
    /// Records how the call ended: refused by a rate limit (a protocol error naming it) or a
    /// concurrency cap (`busy`), or run — and then whether it failed.
    pub fn finish(self, answer: &Result<CallToolResponse, ErrorData>) {
        let mut scopes = self.guard.lock();
        let stats = scopes.entry(self.scope.clone()).or_default();
        stats.total += 1;
        match answer {
            Err(e) if is_rate_limited(e) && mentions_concurrency(&e.message) => {
                stats.rejected_concurrency += 1
            }
            Err(e) if is_rate_limited(e) => stats.rejected_rate += 1,
            Err(_) => {
                stats.allowed += 1;
                stats.failed += 1;
            }
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                let code = result
                    .structured_content
                    .as_ref()
                    .and_then(|s| s.get("code"))
                    .and_then(Value::as_str);
                if code == Some(ErrorKind::Busy.as_str()) {
                    stats.rejected_concurrency += 1;
                } else {
                    stats.allowed += 1;
                    stats.failed += 1;
                }
            }
            Ok(_) => stats.allowed += 1,
        }
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.guard.active.fetch_sub(1, Ordering::SeqCst);
    }
}

fn is_rate_limited(e: &ErrorData) -> bool {
    e.data
        .as_ref()
        .and_then(|d| d.get("kind"))
        .and_then(Value::as_str)
        == Some(ErrorKind::RateLimited.as_str())
}

fn mentions_concurrency(message: &str) -> bool {
    message.contains("concurren") || message.contains("at once")
}

/// The limits as dynamic-mcp names them: `(maxConcurrency, maxCallsPerWindow, windowMs)`.
/// The concurrency is `max_concurrent`, or without one the JavaScript executions allowed in
/// flight; the rate is the per-tool rate, else the per-user one, counted per minute; 0 calls
/// means no rate limit.
fn limits(caller: &Caller<'_>) -> (u64, u64, u64) {
    let config = caller.service().config();
    let limits = &config.limits;
    let concurrency = if limits.max_concurrent > 0 {
        limits.max_concurrent
    } else {
        config.pool.max_in_flight
    };
    let per_minute = limits
        .per_tool
        .or(limits.per_user)
        .map_or(0, |rate| u64::from(rate.per_minute));
    (concurrency as u64, per_minute, 60_000)
}

pub(crate) fn guard_metrics(caller: &Caller<'_>) -> Value {
    let guard = &caller.shared().profile.guard;
    let (max_concurrency, max_calls, window_ms) = limits(caller);
    let scopes: Vec<Value> = guard
        .lock()
        .iter()
        .map(|(scope, s)| {
            json!({
                "scope": scope,
                "total": s.total,
                "allowed": s.allowed,
                "rejectedRate": s.rejected_rate,
                "rejectedConcurrency": s.rejected_concurrency,
                "failed": s.failed
            })
        })
        .collect();
    json!({
        "activeExecutions": guard.active.load(Ordering::SeqCst),
        "limits": {
            "maxConcurrency": max_concurrency,
            "maxCallsPerWindow": max_calls,
            "windowMs": window_ms
        },
        "scopes": scopes
    })
}

/// The configuration in dynamic-mcp's snapshot shape, mapped onto Toolsmith's settings
/// (docs/mcp.md, "Profiles"): `dynamic.backend` is `file` for the embedded store and
/// `postgres` otherwise, `auth.mode` is `none` while no token is needed and `token` once API
/// tokens or an admin token exist, `sandbox.executionEngine` is `auto` (Toolsmith chooses:
/// QuickJS for tools, bubblewrap for sessions), `sandbox.memoryLimit` is one execution's heap.
pub(crate) async fn runtime_config(caller: &Caller<'_>) -> Value {
    let state = &caller.shared().state;
    let config = &state.config;
    let service = state.service.config();
    let (max_concurrency, max_calls, window_ms) = limits(caller);
    let auth_needed = crate::auth::auth_configured(state).await;
    let memory_mb = (service.js_limits.memory_bytes as u64).div_ceil(1024 * 1024);
    json!({
        "transports": ["stdio", "http"],
        "dynamic": {
            "backend": if service.data_dir.is_some() { "file" } else { "postgres" },
            "maxTools": service.max_tools_per_owner,
            "readOnly": config.read_only,
            "requireAdminToken": config.require_admin_token,
            "adminTokenConfigured": config.admin_token.is_some()
        },
        "auth": {
            "mode": if auth_needed { "token" } else { "none" },
            "jwtConfigured": false,
            "requiredScopes": []
        },
        "security": {
            "toolMaxConcurrency": max_concurrency,
            "toolMaxCallsPerWindow": max_calls,
            "toolRateWindowMs": window_ms
        },
        "sandbox": {
            "executionEngine": "auto",
            "memoryLimit": format!("{memory_mb}m"),
            "cpuLimit": "1",
            "maxDependencies": MAX_DEPENDENCIES,
            "maxOutputBytes": service.js_limits.max_output_bytes,
            "maxTimeoutMs": toolsmith_service::tool_settings::MAX_TIMEOUT_MS,
            "sessionTimeoutSeconds": service.sandbox_sessions.idle_timeout.as_secs(),
            "maxSessions": service.sandbox_sessions.max_per_user,
            "allowedImagesCount": config.compat_sandbox_images.len(),
            "blockedPackagesCount": 0
        },
        "audit": {"enabled": true},
        "experimental": {
            "upstreamMcpAttach": config.compat_upstream_attach.is_some(),
            "upstreamMcpAttachMax": config.compat_upstream_attach.unwrap_or(DEFAULT_ATTACH_MAX)
        }
    })
}
