//! The `mcp` global: log and progress passed to the host in order and capped per execution,
//! sampling and elicitation as host calls that need their permission, and every bad request
//! refused with a message that says what to fix.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, LogLevel, Permission, PermissionSet, ToolResult};
use toolsmith_sandbox::{
    ClientNote, HostCalls, MAX_CLIENT_NOTE_BYTES, MAX_CLIENT_NOTES, MAX_CLIENT_REQUEST_BYTES,
};

use crate::support::*;

/// A host that keeps what the script sent its client and answers requests with what it got.
#[derive(Default)]
struct ClientHost {
    notes: Mutex<Vec<ClientNote>>,
    requests: Mutex<Vec<(&'static str, Value)>>,
    /// `Some(message)`: every request fails with it.
    refuse: Option<String>,
}

#[async_trait]
impl HostCalls for ClientHost {
    async fn call_tool(&self, name: &str, _args: Value) -> Result<Value, String> {
        Err(format!("no tool named '{name}' in this test"))
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }

    fn notify(&self, note: ClientNote) {
        self.notes.lock().unwrap().push(note);
    }

    async fn sample(&self, params: Value) -> Result<Value, String> {
        self.requests
            .lock()
            .unwrap()
            .push(("sample", params.clone()));
        if let Some(message) = &self.refuse {
            return Err(message.clone());
        }
        Ok(
            json!({"role": "assistant", "content": {"type": "text", "text": "an answer"}, "model": "test-model", "stopReason": "endTurn", "asked": params}),
        )
    }

    async fn elicit(&self, params: Value) -> Result<Value, String> {
        self.requests
            .lock()
            .unwrap()
            .push(("elicit", params.clone()));
        if let Some(message) = &self.refuse {
            return Err(message.clone());
        }
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }
}

async fn run_on(host: &Arc<ClientHost>, code: &str, permissions: &[Permission]) -> ToolResult {
    let mut job = job_with(code, json!({}), small_limits(), host.clone());
    job.permissions = permissions.iter().copied().collect::<PermissionSet>();
    shared().run(job).await
}

#[tokio::test]
async fn log_and_progress_reach_the_host_in_order_with_their_fields() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        "const sent = [
            mcp.log('info', {step: 1}),
            mcp.progress(1, 3, 'one of three'),
            mcp.log('warning', 'careful', 'my-logger'),
            mcp.progress(2),
            mcp.log('debug'),
        ];
        return sent;",
        &[],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!([true, true, true, true, true]));
    let notes = host.notes.lock().unwrap().clone();
    assert_eq!(
        notes,
        vec![
            ClientNote::Log {
                level: LogLevel::Info,
                logger: None,
                data: json!({"step": 1})
            },
            ClientNote::Progress {
                progress: 1.0,
                total: Some(3.0),
                message: Some("one of three".to_owned())
            },
            ClientNote::Log {
                level: LogLevel::Warning,
                logger: Some("my-logger".to_owned()),
                data: json!("careful")
            },
            ClientNote::Progress {
                progress: 2.0,
                total: None,
                message: None
            },
            ClientNote::Log {
                level: LogLevel::Debug,
                logger: None,
                data: Value::Null
            },
        ]
    );
}

#[tokio::test]
async fn bad_log_and_progress_calls_throw_saying_what_to_fix() {
    let host = Arc::new(ClientHost::default());
    for (code, expected) in [
        (
            "mcp.log('verbose', 1)",
            "mcp.log: the level must be one of debug, info, notice, warning, error, critical, alert, emergency (got verbose)",
        ),
        ("mcp.log(3, 1)", "mcp.log: the level must be one of"),
        (
            "mcp.log('info', 1, 42)",
            "mcp.log: the logger's name must be a string",
        ),
        (
            "mcp.log('info', 1, 'x'.repeat(300))",
            "longer than 256 characters",
        ),
        (
            "const a = {}; a.a = a; mcp.log('info', a)",
            "mcp.log: the data cannot be turned into JSON",
        ),
        (
            "mcp.log('info', 10n)",
            "mcp.log: the data cannot be turned into JSON",
        ),
        (
            "mcp.progress('half')",
            "mcp.progress: progress must be a finite number",
        ),
        (
            "mcp.progress(NaN)",
            "mcp.progress: progress must be a finite number",
        ),
        (
            "mcp.progress(1, Infinity)",
            "mcp.progress: total must be a finite number",
        ),
        (
            "mcp.progress(1, 2, {})",
            "mcp.progress: message must be a string",
        ),
        (
            "mcp.progress(2); mcp.progress(2)",
            "mcp.progress: progress must increase with each call (it was 2, now 2)",
        ),
        ("mcp.progress(5); mcp.progress(1)", "progress must increase"),
    ] {
        let res = run_on(&host, &format!("{code}; return 1"), &[]).await;
        let message = failed(&res, ErrorKind::ExecutionError);
        assert!(message.contains(expected), "{code}: {message}");
        assert!(message.starts_with("TypeError: "), "{code}: {message}");
    }
    // What was sent before the mistake reached the host; nothing of the mistakes did.
    let progress = host
        .notes
        .lock()
        .unwrap()
        .iter()
        .filter(|n| matches!(n, ClientNote::Progress { .. }))
        .count();
    assert_eq!(progress, 2);
    assert!(
        !host
            .notes
            .lock()
            .unwrap()
            .iter()
            .any(|n| matches!(n, ClientNote::Log { .. }))
    );
}

#[tokio::test]
async fn a_loop_of_ten_thousand_logs_sends_the_cap_and_warns_once() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        "let sent = 0; for (let i = 0; i < 10000; i++) { if (mcp.log('info', i)) sent++; } return sent;",
        &[],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!(MAX_CLIENT_NOTES));
    assert_eq!(host.notes.lock().unwrap().len(), MAX_CLIENT_NOTES);
    let warnings: Vec<_> = res
        .metadata
        .console
        .iter()
        .filter(|entry| entry.message.contains("were dropped"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:?}", res.metadata.console);
    assert!(
        warnings[0]
            .message
            .contains(&format!("over the limit of {MAX_CLIENT_NOTES} messages")),
        "{}",
        warnings[0].message
    );
}

#[tokio::test]
async fn a_huge_log_message_is_dropped_and_the_tool_goes_on() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        &format!(
            "const big = mcp.log('info', 'x'.repeat({})); const small = mcp.log('info', 'ok'); return [big, small];",
            MAX_CLIENT_NOTE_BYTES + 1
        ),
        &[],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    // Dropped over the size cap; the next one goes.
    assert_eq!(res.content, json!([false, true]));
    assert_eq!(host.notes.lock().unwrap().len(), 1);
    assert_eq!(res.metadata.console.len(), 1, "{:?}", res.metadata.console);
}

#[tokio::test]
async fn sampling_and_elicitation_need_their_permission() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(&host, "return await mcp.sample('hello')", &[]).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert_eq!(
        message,
        "mcp.sample asks the client's model, which a tool may do only when it declares permissions: [\"sampling\"] (set it with create_tool or update_custom_tool)"
    );
    let res = run_on(
        &host,
        "return await mcp.elicit({message: 'Name?', requestedSchema: {type: 'object', properties: {name: {type: 'string'}}}})",
        &[Permission::Sampling],
    )
    .await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("permissions: [\"elicitation\"]"),
        "{message}"
    );
    // The error can be caught like any other.
    let res = run_on(
        &host,
        "try { await mcp.sample('hi'); return 'sampled'; } catch (e) { return e.message.slice(0, 10); }",
        &[],
    )
    .await;
    assert_eq!(res.content, json!("mcp.sample"));
    assert!(host.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_sample_is_a_host_call_whose_answer_comes_back_as_a_copy() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        "const a = await mcp.sample('Say hi');
         const b = await mcp.sample({messages: [{role: 'user', content: 'Hi'}, {role: 'assistant', content: [{type: 'text', text: 'Hello'}]}], systemPrompt: 'Be brief', maxTokens: 50, modelPreferences: {hints: [{name: 'claude'}]}});
         return [a.content.text, a.model, b.asked];",
        &[Permission::Sampling],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content[0], json!("an answer"));
    assert_eq!(res.content[1], json!("test-model"));
    assert_eq!(
        res.content[2],
        json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]}
            ],
            "systemPrompt": "Be brief",
            "maxTokens": 50,
            "modelPreferences": {"hints": [{"name": "claude"}]}
        })
    );
    let requests = host.requests.lock().unwrap().clone();
    assert_eq!(
        requests[0],
        (
            "sample",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 1024})
        )
    );
}

#[tokio::test]
async fn bad_sampling_and_elicitation_requests_are_refused_before_the_host() {
    let host = Arc::new(ClientHost::default());
    let all = [Permission::Sampling, Permission::Elicitation];
    for (code, expected) in [
        (
            "mcp.sample(42)",
            "mcp.sample: give a prompt (a string) or {messages",
        ),
        (
            "mcp.sample({messages: []})",
            "mcp.sample: messages must be a non-empty list",
        ),
        (
            "mcp.sample({messages: [{role: 'system', content: 'x'}]})",
            "mcp.sample: messages[0] must be {role: \"user\" | \"assistant\", content}",
        ),
        (
            "mcp.sample({messages: [{role: 'user', content: 5}]})",
            "mcp.sample: messages[0].content must be a string, a content block",
        ),
        (
            "mcp.sample({messages: [{role: 'user', content: []}]})",
            "messages[0].content is an empty list",
        ),
        (
            "mcp.sample({messages: [{role: 'user', content: 'x'}], maxTokens: 0})",
            "mcp.sample: maxTokens must be a positive whole number",
        ),
        (
            "mcp.sample({messages: [{role: 'user', content: 'x'}], systemPrompt: 1})",
            "mcp.sample: systemPrompt must be a string",
        ),
        (
            "mcp.elicit('Name?')",
            "mcp.elicit: give {message, requestedSchema}",
        ),
        (
            "mcp.elicit({message: ''})",
            "mcp.elicit: message must be a non-empty string",
        ),
        (
            "mcp.elicit({message: 'Name?'})",
            "mcp.elicit: requestedSchema must be {type: \"object\"",
        ),
        (
            "mcp.elicit({message: 'Where?', requestedSchema: {type: 'object', properties: {address: {type: 'object', properties: {}}}}})",
            "mcp.elicit: property 'address' must have type string, number, integer, boolean or array",
        ),
        (
            "mcp.elicit({message: 'Go', mode: 'url'})",
            "mcp.elicit: a URL request needs url",
        ),
        (
            "mcp.elicit({message: 'Go', mode: 'page'})",
            "mcp.elicit: mode must be \"form\"",
        ),
    ] {
        let res = run_on(&host, &format!("return await {code}"), &all).await;
        let message = failed(&res, ErrorKind::ExecutionError);
        assert!(message.contains(expected), "{code}: {message}");
    }
    let huge = format!(
        "return await mcp.sample('x'.repeat({}))",
        MAX_CLIENT_REQUEST_BYTES
    );
    let res = run_on(&host, &huge, &all).await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(
        message.contains("the request is") && message.contains("over the limit"),
        "{message}"
    );
    assert!(host.requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_elicitation_returns_the_users_answer_and_a_refusal_rejects_with_its_reason() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        "const answer = await mcp.elicit({message: 'Your name?', requestedSchema: {type: 'object', properties: {name: {type: 'string', default: 'Bob'}, colors: {type: 'array', items: {enum: ['red', 'blue']}}}, required: ['name']}});
         return answer.action === 'accept' ? answer.content.name : answer.action;",
        &[Permission::Elicitation],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!("Ada"));

    let refusing = Arc::new(ClientHost {
        refuse: Some(
            "the calling MCP client did not declare the elicitation (form) capability".to_owned(),
        ),
        ..ClientHost::default()
    });
    let res = run_on(
        &refusing,
        "return await mcp.elicit({message: 'Go', mode: 'url', url: 'https://example.com/consent'})",
        &[Permission::Elicitation],
    )
    .await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert_eq!(
        message,
        "mcp.elicit: the calling MCP client did not declare the elicitation (form) capability"
    );
    // The rejection comes from the sandbox's own code, which has no lines to show: the error
    // carries no `at reject (<null>:0:1)` stack.
    let shown = res.content.to_string();
    assert!(!shown.contains("<null>"), "{shown}");
    // A URL request gets the id MCP requires when the tool gave none, and keeps its own.
    let requests = refusing.requests.lock().unwrap().clone();
    let id = requests[0].1["elicitationId"].as_str().unwrap();
    assert_eq!(id.len(), 36, "{requests:?}");
    let res = run_on(
        &host,
        "return await mcp.elicit({message: 'Go', mode: 'url', url: 'https://example.com/c', elicitationId: 'mine'})",
        &[Permission::Elicitation],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(
        host.requests.lock().unwrap().last().unwrap().1["elicitationId"],
        "mine"
    );
}

#[tokio::test]
async fn the_mcp_object_cannot_be_replaced_or_changed() {
    let host = Arc::new(ClientHost::default());
    let res = run_on(
        &host,
        "const before = mcp;
         try { mcp = 1 } catch (_) {}
         try { mcp.log = () => false } catch (_) {}
         return [mcp === before, Object.isFrozen(mcp), typeof mcp.sample];",
        &[],
    )
    .await;
    assert!(!res.is_error, "{}", res.content);
    assert_eq!(res.content, json!([true, true, "function"]));
}
