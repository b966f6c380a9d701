//! The one rule of asking the caller's client: permission, policy, per call, per user.

use toolsmith_core::{ToolContext, ToolRegistry};
use toolsmith_policy::PolicyDocument;

use super::*;

fn gate() -> ClientRequestGate {
    ClientRequestGate::new(ClientRequestLimits {
        samples_per_call: 2,
        samples_per_user_minute: 3,
        elicitations_per_call: 1,
        elicitations_per_user_minute: 5,
    })
}

fn policy(toml_text: &str) -> PolicyGate {
    let document: PolicyDocument = toml::from_str(toml_text).unwrap();
    PolicyGate::new(
        Some(&document),
        &ToolRegistry::default(),
        std::collections::BTreeSet::new(),
    )
    .unwrap()
}

#[test]
fn a_tool_must_declare_what_it_asks() {
    let err = gate()
        .may_ask(
            &policy(""),
            &ToolContext::new("ann"),
            "summarize",
            ClientRequest::Sampling,
            false,
            &ClientRequestBudget::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        "asking the client's model (sampling) needs the tool 'summarize' to declare permissions: [\"sampling\"] (set it with create_tool or update_custom_tool)"
    );
}

#[test]
fn the_policy_denies_by_naming_the_capability() {
    let policy = policy("[users.bob]\ndeny = [\"mcp:elicitation\"]");
    let budget = ClientRequestBudget::default();
    let bob = ToolContext::new("bob");
    let err = gate()
        .may_ask(
            &policy,
            &bob,
            "t",
            ClientRequest::Elicitation,
            true,
            &budget,
        )
        .unwrap_err();
    assert_eq!(
        err,
        "asking the user (elicitation) is not allowed for this caller: denied by deny entry 'mcp:elicitation' of user 'bob' (the policy entry 'mcp:elicitation')"
    );
    assert_eq!(budget.used(ClientRequest::Elicitation), 0);
    gate()
        .may_ask(&policy, &bob, "t", ClientRequest::Sampling, true, &budget)
        .unwrap();
    gate()
        .may_ask(
            &policy,
            &ToolContext::new("ann"),
            "t",
            ClientRequest::Elicitation,
            true,
            &budget,
        )
        .unwrap();
}

#[test]
fn a_call_and_a_user_have_a_budget_each() {
    let gate = gate();
    let policy = policy("");
    let ann = ToolContext::new("ann");
    let first = ClientRequestBudget::default();
    for _ in 0..2 {
        gate.may_ask(&policy, &ann, "t", ClientRequest::Sampling, true, &first)
            .unwrap();
    }
    let err = gate
        .may_ask(&policy, &ann, "t", ClientRequest::Sampling, true, &first)
        .unwrap_err();
    assert!(
        err.starts_with(
            "this call has made its 2 sampling requests (the `mcp_max_samples_per_call` setting)"
        ),
        "{err}"
    );
    // A second call of the same user: its own per-call budget, but the minute's third and last.
    let second = ClientRequestBudget::default();
    gate.may_ask(&policy, &ann, "t", ClientRequest::Sampling, true, &second)
        .unwrap();
    let err = gate
        .may_ask(&policy, &ann, "t", ClientRequest::Sampling, true, &second)
        .unwrap_err();
    assert_eq!(
        err,
        "user 'ann' has made 3 sampling requests in the last minute (the `mcp_max_samples_per_user_per_minute` setting); try again in a minute"
    );
    // The refusal spent nothing of the call's budget, and another user has their own minute.
    assert_eq!(second.used(ClientRequest::Sampling), 1);
    gate.may_ask(
        &policy,
        &ToolContext::new("bob"),
        "t",
        ClientRequest::Sampling,
        true,
        &ClientRequestBudget::default(),
    )
    .unwrap();
    // Elicitation is counted apart.
    gate.may_ask(
        &policy,
        &ann,
        "t",
        ClientRequest::Elicitation,
        true,
        &second,
    )
    .unwrap();
}
