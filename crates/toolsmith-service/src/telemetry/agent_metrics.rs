//! The agent runs' series of `/metrics` (issue 37): runs started and finished by status, the
//! steps they took by kind, the model tokens they used, and the runs this process drives now.
//! Counted by the process that runs them (a run cancelled from another instance is counted
//! where it ran, when it stops).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DirectionLabels {
    direction: &'static str,
}

/// The kinds of step a series is kept for; any other is counted as `other`, so the series
/// stay bounded whatever a step is called.
const STEP_KINDS: &[&str] = &[
    "model",
    "tool_call",
    "tool_result",
    "approval",
    "retry",
    "error",
];

/// The agent runs' figures.
#[derive(Clone, Default)]
pub struct AgentMetrics {
    started: Counter,
    finished: Family<StatusLabels, Counter>,
    steps: Family<KindLabels, Counter>,
    tokens: Family<DirectionLabels, Counter>,
    active: Gauge,
}

impl AgentMetrics {
    /// Registers the series in `registry` (prefixed `toolsmith_` there).
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "agent_runs_started",
            "Agent runs started on this instance",
            self.started.clone(),
        );
        registry.register(
            "agent_runs_finished",
            "Agent runs this instance ran that ended, by status (completed, failed, cancelled)",
            self.finished.clone(),
        );
        registry.register(
            "agent_run_steps",
            "Steps agent runs took, by kind (model, tool_call, tool_result, approval, retry, error)",
            self.steps.clone(),
        );
        registry.register(
            "agent_tokens",
            "Model tokens agent runs used, by direction (input, output), as the providers count them",
            self.tokens.clone(),
        );
        registry.register(
            "agent_runs_active",
            "Agent runs this instance drives now",
            self.active.clone(),
        );
    }

    pub fn run_started(&self) {
        self.started.inc();
    }

    /// A run ended with `status` (`completed`, `failed` or `cancelled`).
    pub fn run_finished(&self, status: &'static str) {
        self.finished.get_or_create(&StatusLabels { status }).inc();
    }

    /// A run recorded a step of `kind`.
    pub fn step(&self, kind: &str) {
        let kind = if STEP_KINDS.contains(&kind) {
            kind
        } else {
            "other"
        };
        self.steps
            .get_or_create(&KindLabels {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// A model turn used `input` and `output` tokens.
    pub fn tokens(&self, input: u64, output: u64) {
        self.tokens
            .get_or_create(&DirectionLabels { direction: "input" })
            .inc_by(input);
        self.tokens
            .get_or_create(&DirectionLabels {
                direction: "output",
            })
            .inc_by(output);
    }

    /// How many runs this instance drives now (set at each scrape).
    pub(crate) fn set_active(&self, runs: usize) {
        self.active.set(i64::try_from(runs).unwrap_or(i64::MAX));
    }
}
