//! The analytics operations of [`ToolService`]: figures per tool and per owner, anomalies,
//! and the retention of execution history. The arithmetic is in [`crate::telemetry::analytics`].

use chrono::Utc;
use serde::Serialize;
use toolsmith_core::CustomToolRecord;
use toolsmith_store::ExecutionSample;

use crate::error::ServiceError;
use crate::input::{Actor, ToolRef};
use crate::service::ToolService;
use crate::telemetry::analytics::{self, Anomaly, MAX_SAMPLES, Period, ToolMetrics};

/// The figures of all of an owner's tools over a period: the totals, then one row per tool
/// that was called (most executions first).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricsReport {
    pub period: String,
    pub since: chrono::DateTime<Utc>,
    pub until: chrono::DateTime<Utc>,
    /// `true` when the period held more than [`MAX_SAMPLES`] executions and the figures cover
    /// the newest of them.
    pub sampled: bool,
    pub totals: ToolMetrics,
    pub tools: Vec<ToolMetricsRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetricsRow {
    pub tool_id: String,
    pub tool_name: String,
    #[serde(flatten)]
    pub metrics: ToolMetrics,
}

/// One tool's figures over a period.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetricsReport {
    pub tool_id: String,
    pub tool_name: String,
    pub period: String,
    pub since: chrono::DateTime<Utc>,
    pub until: chrono::DateTime<Utc>,
    pub sampled: bool,
    #[serde(flatten)]
    pub metrics: ToolMetrics,
}

/// How many of a user's newest calls [`ToolService::recent_calls_by_tool`] counts: enough to
/// rank the tools a caller works with, few enough to read on every compact `tools/list`.
pub const RECENT_CALLS: u32 = 5_000;

impl ToolService {
    /// The user's calls of the last 30 days (the newest [`RECENT_CALLS`]) that ran, counted by
    /// tool name, whatever the source — custom, built-in or bridged: what the compact MCP
    /// listing ranks the caller's most used tools by.
    pub async fn recent_calls_by_tool(
        &self,
        user: &str,
    ) -> Result<std::collections::HashMap<String, u64>, ServiceError> {
        let since = Utc::now() - chrono::Duration::days(30);
        let samples = self
            .store
            .execution_samples(user, None, since, RECENT_CALLS)
            .await?;
        let mut counts = std::collections::HashMap::new();
        for sample in samples.into_iter().filter(|s| s.status.ran()) {
            *counts.entry(sample.tool_name).or_insert(0) += 1;
        }
        Ok(counts)
    }

    /// The figures of one of the actor's tools over the last `period`.
    pub async fn tool_metrics(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        period: Period,
    ) -> Result<ToolMetricsReport, ServiceError> {
        let found = self.get(actor, tool).await?;
        let until = Utc::now();
        let since = until - period.duration();
        let samples = self.samples(actor, Some(&found), since).await?;
        let refs: Vec<&ExecutionSample> = samples.iter().collect();
        Ok(ToolMetricsReport {
            tool_id: found.id,
            tool_name: found.name,
            period: period.to_string(),
            since,
            until,
            sampled: samples.len() >= MAX_SAMPLES as usize,
            metrics: analytics::metrics(&refs, since, until),
        })
    }

    /// The figures of all of the actor's tools over the last `period`.
    pub async fn metrics_report(
        &self,
        actor: &Actor,
        period: Period,
    ) -> Result<MetricsReport, ServiceError> {
        self.flush_usage().await;
        let until = Utc::now();
        let since = until - period.duration();
        let samples = self.samples(actor, None, since).await?;
        let mut by_tool: std::collections::BTreeMap<&str, Vec<&ExecutionSample>> =
            Default::default();
        for sample in &samples {
            by_tool.entry(&sample.tool_id).or_default().push(sample);
        }
        let mut tools: Vec<ToolMetricsRow> = by_tool
            .into_values()
            .filter_map(|group| {
                // Newest first: the name the tool had most recently.
                let newest = group.first()?;
                Some(ToolMetricsRow {
                    tool_id: newest.tool_id.clone(),
                    tool_name: newest.tool_name.clone(),
                    metrics: analytics::metrics(&group, since, until),
                })
            })
            .collect();
        tools.sort_by(|a, b| {
            b.metrics
                .total_executions
                .cmp(&a.metrics.total_executions)
                .then_with(|| a.tool_name.cmp(&b.tool_name))
        });
        let all: Vec<&ExecutionSample> = samples.iter().collect();
        Ok(MetricsReport {
            period: period.to_string(),
            since,
            until,
            sampled: samples.len() >= MAX_SAMPLES as usize,
            totals: analytics::metrics(&all, since, until),
            tools,
        })
    }

    /// The actor's tools (or one tool) whose last `window` departs from the `baseline` before
    /// it, by the rule in [`analytics::rule`].
    pub async fn anomalies(
        &self,
        actor: &Actor,
        tool: Option<&ToolRef>,
        window: Period,
        baseline: Period,
    ) -> Result<Vec<Anomaly>, ServiceError> {
        let found = match tool {
            Some(tool) => Some(self.get(actor, tool).await?),
            None => {
                self.flush_usage().await;
                None
            }
        };
        let window_start = Utc::now() - window.duration();
        let since = window_start - baseline.duration();
        let samples = self.samples(actor, found.as_ref(), since).await?;
        Ok(analytics::anomalies(&samples, window_start))
    }

    /// Deletes execution history and execution approvals older than the configured retention
    /// (`allow_always` grants stay); the number of execution rows removed (0 when retention is
    /// off).
    pub async fn prune_executions(&self) -> Result<u64, ServiceError> {
        let Some(days) = self.config.execution_retention_days.filter(|d| *d > 0) else {
            return Ok(0);
        };
        self.flush_usage().await;
        // The settings bound the retention; a cut-off before the calendar's start keeps all.
        let Some(before) = chrono::Duration::try_days(i64::from(days))
            .and_then(|retention| Utc::now().checked_sub_signed(retention))
        else {
            return Ok(0);
        };
        let removed = self.store.prune_executions(before).await?;
        if removed > 0 {
            tracing::info!(removed, days, "pruned execution history past its retention");
        }
        let approvals = self.store.prune_approvals(before).await?;
        if approvals > 0 {
            tracing::info!(
                removed = approvals,
                days,
                "pruned execution approvals past their retention"
            );
        }
        Ok(removed)
    }

    async fn samples(
        &self,
        actor: &Actor,
        tool: Option<&CustomToolRecord>,
        since: chrono::DateTime<Utc>,
    ) -> Result<Vec<ExecutionSample>, ServiceError> {
        Ok(self
            .store
            .execution_samples(
                &actor.user_id,
                tool.map(|t| t.id.as_str()),
                since,
                MAX_SAMPLES,
            )
            .await?)
    }
}
