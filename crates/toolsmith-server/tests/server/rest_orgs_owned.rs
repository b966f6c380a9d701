//! Issue 41: prompts, Config Center services, agents and the policy under an organisation,
//! through the real router with bearer tokens and `X-Toolsmith-Organization`, on SQLite and on
//! PostgreSQL. ann owns `acme`, ed edits in it, vic views, sam is no member; each of them also
//! keeps things of their own. For each kind: the organisation's are listed and read by its
//! members, written by its editors (never its viewers), invisible to a stranger (the header
//! itself is a 404), and never mixed with a member's own; a tool of the organisation reads the
//! organisation's service; an agent of the organisation runs as it, calling its tools, audited
//! naming the person who started it; the organisation's policy is its `users.<org id>` scope,
//! written by the server's admin only, with the person's own rules holding too.

use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_core::organization::OrgRole;
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Scope;
use toolsmith_service::{Actor, ToolServiceSettings};

use crate::agent_support::{
    Proto, Script, answers, calls_shout, model_server, offered, tool_result,
};
use crate::rest_support::{TestApp, TestResponse, request, settings_reaching, tool_body};

/// The app and its people: each one's token, and the organisation's id.
struct Team {
    app: TestApp,
    org: String,
    tokens: Vec<(&'static str, String)>,
}

/// Who acts, and where: `Some("acme")` sends the organisation header.
type As<'a> = (&'a str, Option<&'a str>);

const ALL: &[Scope] = &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];

async fn team(app: TestApp) -> Team {
    let service = &app.state.service;
    let acme = service
        .create_organization(&Actor::user("ann"), "acme", Some("Acme Support"))
        .await
        .unwrap();
    for (who, role) in [("ed", OrgRole::Editor), ("vic", OrgRole::Viewer)] {
        service
            .put_organization_member(&Actor::user("ann"), "acme", who, role)
            .await
            .unwrap();
    }
    let mut tokens = Vec::new();
    for (who, scopes) in [
        ("root", &[Scope::Admin][..]),
        ("ann", &[Scope::Admin][..]),
        ("ed", ALL),
        ("vic", ALL),
        ("sam", ALL),
    ] {
        tokens.push((who, app.token(who, None, scopes).await));
    }
    Team {
        app,
        org: acme.id,
        tokens,
    }
}

impl Team {
    async fn send(
        &self,
        (who, org): As<'_>,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> TestResponse {
        let token = &self.tokens.iter().find(|(w, _)| *w == who).unwrap().1;
        let mut builder = request(method, path).header("authorization", format!("Bearer {token}"));
        if let Some(org) = org {
            builder = builder.header("x-toolsmith-organization", org);
        }
        let body = match body {
            Some(body) => {
                builder = builder.header("content-type", "application/json");
                Body::from(body.to_string())
            }
            None => Body::empty(),
        };
        self.app.send(builder.body(body).unwrap()).await
    }

    /// One stateless MCP (2026-07-28) request through `/mcp`, its JSON-RPC `result`.
    async fn mcp(&self, who: As<'_>, method: &str, params: Value) -> Value {
        self.mcp_as(who, None, method, params).await
    }

    /// [`Team::mcp`] as `agent` (`X-Toolsmith-Agent`), if given.
    async fn mcp_as(
        &self,
        (who, org): As<'_>,
        agent: Option<&str>,
        method: &str,
        mut params: Value,
    ) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let token = &self.tokens.iter().find(|(w, _)| *w == who).unwrap().1;
        let mut builder = request(Method::POST, "/mcp")
            .header("authorization", format!("Bearer {token}"))
            .header("mcp-method", method)
            .header("mcp-name", name)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28");
        if let Some(org) = org {
            builder = builder.header("x-toolsmith-organization", org);
        }
        if let Some(agent) = agent {
            builder = builder.header("x-toolsmith-agent", agent);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let res = self
            .app
            .send(builder.body(Body::from(body.to_string())).unwrap())
            .await;
        let answer: Value = if res.json.is_null() {
            let mut data = res
                .text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim);
            serde_json::from_str(data.rfind(|d| !d.is_empty()).unwrap_or("null")).unwrap()
        } else {
            res.json
        };
        assert!(answer["result"].is_object(), "{} {answer}", res.status);
        answer["result"].clone()
    }

    /// A control-plane tool's call through MCP: (isError, its text).
    async fn manage(&self, who: As<'_>, tool: &str, args: Value) -> (bool, String) {
        let result = self
            .mcp(who, "tools/call", json!({"name": tool, "arguments": args}))
            .await;
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        (result["isError"] == true, text.to_owned())
    }

    async fn get(&self, who: As<'_>, path: &str) -> TestResponse {
        self.send(who, Method::GET, path, None).await
    }

    async fn post(&self, who: As<'_>, path: &str, body: &Value) -> TestResponse {
        self.send(who, Method::POST, path, Some(body)).await
    }

    /// The names under `key` of what `who` lists at `path`.
    async fn names(&self, who: As<'_>, path: &str, key: &str) -> Vec<String> {
        let listed = self.get(who, path).await.assert_ok(StatusCode::OK);
        let mut names: Vec<String> = listed[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} in {listed}"))
            .iter()
            .map(|item| item["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    }

    /// A write of a viewer in the organisation: 403 naming the role and who may.
    #[track_caller]
    fn viewer_refused(res: &TestResponse) {
        let why = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
        assert!(why.contains("as viewer") && why.contains("editor"), "{why}");
    }

    /// The stranger naming the organisation: the same 404 whether it exists or not.
    async fn stranger_finds_nothing(&self, path: &str) {
        let acme = self.get(("sam", Some("acme")), path).await;
        let why = acme.assert_error(StatusCode::NOT_FOUND, "not_found");
        let none = self.get(("sam", Some("nothing")), path).await;
        let other = none.assert_error(StatusCode::NOT_FOUND, "not_found");
        assert_eq!(other.replace("nothing", "acme"), why);
    }
}

fn prompt(name: &str, text: &str) -> Value {
    json!({"name": name, "description": "Triage a ticket",
           "messages": [{"role": "user", "content": {"type": "text", "text": text}}]})
}

const ED: As = ("ed", Some("acme"));
const VIC: As = ("vic", Some("acme"));
const ANN_IN: As = ("ann", Some("acme"));

async fn prompts_services_and_tools(t: &Team) {
    // Prompts: ed writes the organisation's, every member reads it, vic writes nothing.
    t.post(ED, "/api/v1/prompts", &prompt("triage", "Triage for Acme."))
        .await
        .assert_ok(StatusCode::CREATED);
    t.post(
        ("ann", None),
        "/api/v1/prompts",
        &prompt("triage", "Ann's own triage."),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(ED, "/api/v1/prompts", &prompt("triage", "Again."))
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    for who in [ED, VIC, ANN_IN] {
        assert_eq!(t.names(who, "/api/v1/prompts", "prompts").await, ["triage"]);
        let read = t
            .get(who, "/api/v1/prompts/triage")
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(
            read["messages"][0]["content"]["text"], "Triage for Acme.",
            "{read}"
        );
    }
    let own = t
        .get(("ann", None), "/api/v1/prompts/triage")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        own["messages"][0]["content"]["text"], "Ann's own triage.",
        "{own}"
    );
    assert!(
        t.names(("ed", None), "/api/v1/prompts", "prompts")
            .await
            .is_empty()
    );
    assert!(
        t.names(("sam", None), "/api/v1/prompts", "prompts")
            .await
            .is_empty()
    );
    Team::viewer_refused(&t.post(VIC, "/api/v1/prompts", &prompt("mine", "x")).await);
    Team::viewer_refused(
        &t.send(
            VIC,
            Method::PUT,
            "/api/v1/prompts/triage",
            Some(&prompt("triage", "Vic's.")),
        )
        .await,
    );
    Team::viewer_refused(
        &t.send(VIC, Method::DELETE, "/api/v1/prompts/triage", None)
            .await,
    );
    let changed = t
        .send(
            ED,
            Method::PUT,
            "/api/v1/prompts/triage",
            Some(&prompt("triage", "Triage v2.")),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(changed["revision"], 2, "{changed}");
    t.stranger_finds_nothing("/api/v1/prompts").await;

    // The same through MCP: the organisation's prompts are its members' prompts/list, and
    // manage_prompts writes them for its editors only.
    let listed = t.mcp(VIC, "prompts/list", json!({})).await;
    assert_eq!(listed["prompts"][0]["name"], "triage", "{listed}");
    assert_eq!(listed["prompts"].as_array().unwrap().len(), 1, "{listed}");
    let by_model = prompt("escalate", "Escalate for Acme.");
    let (refused, why) = t
        .manage(
            VIC,
            "manage_prompts",
            json!({"action": "create", "definition": by_model}),
        )
        .await;
    assert!(refused && why.contains("as viewer"), "{why}");
    let (failed, made) = t
        .manage(
            ED,
            "manage_prompts",
            json!({"action": "create", "definition": by_model}),
        )
        .await;
    assert!(!failed, "{made}");
    assert_eq!(
        t.names(VIC, "/api/v1/prompts", "prompts").await,
        ["escalate", "triage"]
    );
    let (_, listed) = t
        .manage(("sam", None), "manage_prompts", json!({"action": "list"}))
        .await;
    assert!(!listed.contains("escalate"), "{listed}");

    // Services: an editor sets the organisation's (no one holds admin in it), a viewer reads
    // them masked, and the person's own stay theirs.
    t.post(
        ED,
        "/api/v1/config/services",
        &json!({"name": "desk", "displayName": "Acme desk"}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(
        ED,
        "/api/v1/config/services/desk/entries",
        &json!({"values": {"api_key": "acme-key-123"}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(
        ("ann", None),
        "/api/v1/config/services",
        &json!({"name": "desk"}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(
        ("ann", None),
        "/api/v1/config/services/desk/entries",
        &json!({"values": {"api_key": "ann-key-456"}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    for who in [VIC, ANN_IN] {
        let listed = t
            .get(who, "/api/v1/config/services")
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(listed["count"], 1, "{listed}");
        assert_eq!(
            listed["services"][0]["displayName"], "Acme desk",
            "{listed}"
        );
        let entries = t.get(who, "/api/v1/config/services/desk/entries").await;
        assert!(
            !entries.text.contains("acme-key-123"),
            "a secret in clear: {}",
            entries.text
        );
    }
    Team::viewer_refused(
        &t.post(
            VIC,
            "/api/v1/config/services/desk/entries",
            &json!({"values": {"api_key": "vic"}}),
        )
        .await,
    );
    // Outside an organisation, writing a service still needs admin.
    let why = t
        .post(
            ("ed", None),
            "/api/v1/config/services",
            &json!({"name": "eds"}),
        )
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("'admin' scope"), "{why}");
    assert!(
        t.names(("sam", None), "/api/v1/config/services", "services")
            .await
            .is_empty()
    );
    t.stranger_finds_nothing("/api/v1/config/services").await;

    // A tool of the organisation reads the organisation's service, whoever calls it.
    let mut reader = tool_body("desk_key");
    reader["code"] =
        json!("const k = utils.getApiKey('desk'); return k.split('').reverse().join('');");
    reader["requiredApiKeys"] = json!([{"name": "desk"}]);
    t.post(ED, "/api/v1/custom-tools", &reader)
        .await
        .assert_ok(StatusCode::CREATED);
    let ran = t
        .post(
            VIC,
            "/api/v1/tools/desk_key/execute",
            &json!({"arguments": {"text": "x"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["content"], "321-yek-emca", "{ran}");
    t.post(
        ("ann", None),
        "/api/v1/tools/desk_key/execute",
        &json!({"arguments": {"text": "x"}}),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
}

/// An agent of the organisation: written by its editors, run by its members as the
/// organisation (its tool, its model service), audited naming who started it.
async fn agents(t: &Team, host: &str, script: &Script) {
    t.post(
        ED,
        "/api/v1/config/services",
        &json!({"name": "local", "fields": [
        {"name": "protocol", "kind": "text", "required": true},
        {"name": "base_url", "kind": "url"},
        {"name": "api_key", "kind": "secret"}]}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(
        ED,
        "/api/v1/config/services/local/entries",
        &json!({"values": {
        "protocol": "openai", "base_url": format!("http://{host}/v1"), "api_key": "sk-acme"}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    t.post(ED, "/api/v1/custom-tools", &tool_body("shout"))
        .await
        .assert_ok(StatusCode::CREATED);
    let body = json!({"name": "helper", "displayName": "Acme helper", "instructions": "Shout.",
                      "model": {"service": "local", "model": "m"}, "toolPolicy": {"allow": ["shout"]}});
    Team::viewer_refused(&t.post(VIC, "/api/v1/agents", &body).await);
    let made = t
        .post(ED, "/api/v1/agents", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    let id = made["id"].as_str().unwrap().to_owned();
    for who in [VIC, ANN_IN] {
        assert_eq!(t.names(who, "/api/v1/agents", "agents").await, ["helper"]);
    }
    assert!(
        t.names(("ed", None), "/api/v1/agents", "agents")
            .await
            .is_empty()
    );
    t.get(("ann", None), &format!("/api/v1/agents/{id}"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    t.stranger_finds_nothing("/api/v1/agents").await;
    let (failed, listed) = t
        .manage(VIC, "manage_agents", json!({"action": "list"}))
        .await;
    assert!(!failed && listed.contains("Acme helper"), "{listed}");
    let (refused, why) = t
        .manage(
            VIC,
            "manage_agents",
            json!({"action": "delete", "agent": "helper", "confirm": true}),
        )
        .await;
    assert!(refused && why.contains("as viewer"), "{why}");

    // An agent of the organisation that a model wrote changes its own SOUL.md by writing the
    // file: a new revision, audited naming the person behind the call and the organisation.
    let (failed, made) = t
        .manage(ED, "manage_agents", json!({"action": "create", "definition": {
            "name": "drafter", "instructions": "Drafts.", "model": {"service": "local", "model": "m"},
            "contextFiles": [{"name": "SOUL.md", "text": "Draft carefully."}],
            "toolPolicy": {"allow": ["group:filesystem"]}}}))
        .await;
    assert!(!failed, "{made}");
    let written = t
        .mcp_as(
            ED,
            Some("drafter"),
            "tools/call",
            json!({"name": "write_file",
            "arguments": {"path": "SOUL.md", "content": "Draft boldly."}}),
        )
        .await;
    assert!(written["isError"] != true, "{written}");
    let audit = t
        .get(("root", None), "/api/v1/audit?action=agent.update&limit=10")
        .await
        .assert_ok(StatusCode::OK);
    let entry = &audit["entries"][0];
    assert_eq!(entry["targetName"], "drafter", "{audit}");
    assert_eq!(entry["actor"], "ed", "{entry}");
    assert_eq!(
        entry["details"]["actorOrganization"],
        t.org.as_str(),
        "{entry}"
    );

    // vic (a viewer may run: tools:execute) starts a run; it calls the organisation's tool.
    script.push(calls_shout(Proto::OpenAi, false, "c1", "hello"));
    script.push(answers(Proto::OpenAi, false, "Done."));
    let run = t
        .post(
            VIC,
            &format!("/api/v1/agents/{id}/runs"),
            &json!({"input": "go", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(run["status"], "completed", "{run}");
    let (_, key) = script.seen().pop().unwrap();
    assert!(
        key.contains("sk-acme"),
        "the organisation's model key: {key}"
    );
    let executions = t
        .get(ED, "/api/v1/executions?tool=shout")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        executions["executions"].as_array().unwrap().len(),
        1,
        "{executions}"
    );

    let audit = t
        .get(
            ("root", None),
            "/api/v1/audit?action=agent.run.start&limit=10",
        )
        .await
        .assert_ok(StatusCode::OK);
    let entry = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["targetId"] == run["id"])
        .unwrap_or_else(|| panic!("the run's audit entry: {audit}"));
    assert_eq!(entry["actor"], "vic", "{entry}");
    assert_eq!(
        entry["details"]["actorOrganization"],
        t.org.as_str(),
        "{entry}"
    );
}

/// The organisation's rules: its `users.<org id>` scope, set by the server's admin only; the
/// person's own rules hold in it too.
async fn policy(t: &Team, script: &Script) {
    let doc = json!({"policy": {"users": {
        t.org.as_str(): {"deny": ["calculate"]},
        "vic": {"deny": ["generate_uuid", "shout"]}}}});
    for who in [ANN_IN, ED] {
        let res = t
            .send(who, Method::PUT, "/api/v1/policies", Some(&doc))
            .await;
        let why = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
        assert!(why.contains("admin"), "{why}");
    }
    t.send(("root", None), Method::PUT, "/api/v1/policies", Some(&doc))
        .await
        .assert_ok(StatusCode::OK);
    let calc = json!({"arguments": {"expression": "2+2"}});
    for who in [ED, VIC] {
        let res = t
            .post(who, "/api/v1/tools/calculate/execute", &calc)
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(res["metadata"]["errorKind"], "denied", "{res}");
    }
    let own = t
        .post(("ed", None), "/api/v1/tools/calculate/execute", &calc)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(own["content"]["result"], 4.0, "{own}");
    let uuid = |who| async move {
        t.post(
            who,
            "/api/v1/tools/generate_uuid/execute",
            &json!({"arguments": {}}),
        )
        .await
        .assert_ok(StatusCode::OK)["metadata"]["errorKind"]
            .clone()
    };
    assert_eq!(uuid(VIC).await, "denied");
    assert_eq!(uuid(ED).await, Value::Null);

    // A run of the organisation's agent that vic starts is held to vic's own rules too: the
    // organisation's shout is not offered to its model, and its call is refused; ed's run
    // calls it.
    for (who, refused) in [(VIC, true), (ED, false)] {
        let before = script.seen().len();
        script.push(calls_shout(Proto::OpenAi, false, "c2", "hi"));
        script.push(answers(Proto::OpenAi, false, "Done."));
        let run = t
            .post(
                who,
                "/api/v1/agents/helper/runs",
                &json!({"input": "go", "wait": true}),
            )
            .await
            .assert_ok(StatusCode::OK);
        let (content, is_error) = tool_result(&run);
        assert_eq!(is_error, refused, "{content}");
        let (first, _) = &script.seen()[before];
        assert_eq!(
            offered(first).contains(&"shout".to_owned()),
            !refused,
            "{first}"
        );
        if refused {
            assert!(
                content.contains("no tool named 'shout' is offered"),
                "{content}"
            );
        }
    }
}

/// `settings` with the file tools' workspaces under `dir`.
fn with_workspaces(
    mut settings: ToolServiceSettings,
    dir: &tempfile::TempDir,
) -> ToolServiceSettings {
    settings.workspace = Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
        dir.path().to_owned(),
    ));
    settings
}

async fn scenario(app: TestApp, host: &str, script: &Script) {
    let t = team(app).await;
    prompts_services_and_tools(&t).await;
    agents(&t, host, script).await;
    policy(&t, script).await;
}

#[tokio::test]
async fn an_organisations_prompts_services_agents_and_policy_on_sqlite() {
    let script = Script::default();
    let host = model_server(&script).await;
    let workspaces = tempfile::tempdir().unwrap();
    let settings = with_workspaces(settings_reaching(&host), &workspaces);
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    scenario(app, &host, &script).await;
}

#[tokio::test]
async fn an_organisations_prompts_services_agents_and_policy_on_postgres() {
    let script = Script::default();
    let host = model_server(&script).await;
    let workspaces = tempfile::tempdir().unwrap();
    let settings = with_workspaces(settings_reaching(&host), &workspaces);
    let Some(app) = TestApp::on_postgres(settings, ServerSettings::default()).await else {
        return;
    };
    scenario(app, &host, &script).await;
}
