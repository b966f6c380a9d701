//! `utils.callTool` and `utils.listTools` over a test [`HostCalls`]: content in, errors as
//! catchable JS errors, hanging hosts cut by the wall clock, and JS tools calling JS tools on a
//! pool too small to give each its own worker.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, Permission};
use toolsmith_sandbox::{HostCalls, JsLimits, JsSandbox, PoolSettings};

use crate::support::*;

/// Tools: `echo` returns its arguments, `fail` fails, `hang` never answers, `js` runs
/// `args.code` as a nested JS tool on `sandbox`, and every call is recorded.
struct TestHost {
    sandbox: Weak<JsSandbox>,
    calls: Mutex<Vec<(String, Value)>>,
}

impl TestHost {
    fn new(sandbox: &Arc<JsSandbox>) -> Arc<TestHost> {
        Arc::new(TestHost {
            sandbox: Arc::downgrade(sandbox),
            calls: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl HostCalls for TestHost {
    async fn call_tool(&self, name: &str, args: Value) -> Result<Value, String> {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_owned(), args.clone()));
        match name {
            "echo" => Ok(json!({ "echoed": args })),
            "fail" => Err(format!("the input {} was rejected", args["input"])),
            "hang" => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(Value::Null)
            }
            "js" => {
                let Some(sandbox) = self.sandbox.upgrade() else {
                    return Err("no sandbox".to_owned());
                };
                let code = args["code"].as_str().unwrap_or_default().to_owned();
                let host: Arc<dyn HostCalls> = Arc::new(TestHost {
                    sandbox: self.sandbox.clone(),
                    calls: Mutex::new(Vec::new()),
                });
                let res = sandbox
                    .run(job_with(&code, args["args"].clone(), small_limits(), host))
                    .await;
                if res.is_error {
                    return Err(res.error_message().unwrap_or_default().to_owned());
                }
                Ok(res.content)
            }
            _ => Err(format!("no tool named '{name}'")),
        }
    }

    fn list_tools(&self) -> Vec<Value> {
        vec![
            json!({"name": "echo", "description": "Echoes its arguments", "parameters": {"type": "object"}}),
            json!({"name": "fail", "description": "Always fails", "parameters": {"type": "object"}}),
        ]
    }
}

fn pool(workers: usize) -> Arc<JsSandbox> {
    Arc::new(JsSandbox::new(PoolSettings {
        workers,
        max_in_flight: 16,
    }))
}

#[tokio::test]
async fn call_tool_resolves_to_the_tools_content() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "const r = await utils.callTool('echo', { q: args.q, n: [1, 2] }); return [r, Object.getPrototypeOf(r) === Object.prototype]",
            json!({"q": "weather"}),
            small_limits(),
            host.clone(),
        ))
        .await;
    assert_eq!(
        res.content,
        json!([{"echoed": {"q": "weather", "n": [1, 2]}}, true])
    );
    assert_eq!(
        *host.calls.lock().unwrap(),
        vec![("echo".to_owned(), json!({"q": "weather", "n": [1, 2]}))]
    );
}

#[tokio::test]
async fn call_tool_without_arguments_sends_an_empty_object() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "return await utils.callTool('echo')",
            json!({}),
            small_limits(),
            host.clone(),
        ))
        .await;
    assert_eq!(res.content, json!({"echoed": {}}));
}

#[tokio::test]
async fn several_calls_may_run_at_once() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "const rs = await Promise.all([1, 2, 3].map(i => utils.callTool('echo', { i }))); return rs.map(r => r.echoed.i)",
            json!({}),
            small_limits(),
            host.clone(),
        ))
        .await;
    assert_eq!(res.content, json!([1, 2, 3]));
    assert_eq!(host.calls.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_host_error_is_a_js_error_the_script_can_catch() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "try { await utils.callTool('fail', { input: 'x' }) } catch (e) { return [e instanceof Error, e.message] }",
            json!({}),
            small_limits(),
            host.clone(),
        ))
        .await;
    assert_eq!(res.content, json!([true, "the input \"x\" was rejected"]));
}

#[tokio::test]
async fn an_uncaught_host_error_fails_the_tool_with_that_message() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "return await utils.callTool('nope', {})",
            json!({}),
            small_limits(),
            host,
        ))
        .await;
    assert_eq!(
        failed(&res, ErrorKind::ExecutionError),
        "no tool named 'nope'"
    );
}

#[tokio::test]
async fn a_hanging_host_call_is_cut_by_the_wall_clock() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "await utils.callTool('hang', {}); return 'never'",
            json!({}),
            wall_limits(),
            host.clone(),
        ))
        .await;
    assert_eq!(
        failed(&res, ErrorKind::Timeout),
        "the tool did not finish within its time limit of 300 ms"
    );
    still_works(&sandbox).await;
}

#[tokio::test]
async fn arguments_that_are_not_json_are_refused() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "try { await utils.callTool('echo', () => 1) } catch (e) { return e.message }",
            json!({}),
            small_limits(),
            host,
        ))
        .await;
    assert_eq!(
        res.content,
        json!("utils.callTool: the arguments must be an object")
    );
}

#[tokio::test]
async fn list_tools_returns_plain_values() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = sandbox
        .run(job_with(
            "const tools = utils.listTools(); tools[0].name = 'changed'; return [utils.listTools().map(t => t.name), tools.length]",
            json!({}),
            small_limits(),
            host,
        ))
        .await;
    assert_eq!(res.content, json!([["echo", "fail"], 2]));
}

#[tokio::test]
async fn a_js_tool_calling_a_js_tool_does_not_deadlock_a_one_worker_pool() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let res = tokio::time::timeout(
        Duration::from_secs(10),
        sandbox.run(job_with(
            "const inner = await utils.callTool('js', { code: 'return args.n * 2', args: { n: 21 } }); return { inner }",
            json!({}),
            small_limits(),
            host,
        )),
    )
    .await
    .expect("no deadlock");
    assert_eq!(res.content, json!({"inner": 42}));
}

#[tokio::test]
async fn nested_calls_three_deep_and_side_by_side_complete() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let level3 = "return 'c'";
    let level2 = format!(
        "return 'b' + await utils.callTool('js', {{ code: {}, args: {{}} }})",
        serde_json::to_string(level3).unwrap()
    );
    let level1 = format!(
        "const parts = await Promise.all([1, 2].map(() => utils.callTool('js', {{ code: {}, args: {{}} }}))); return 'a' + parts.join('')",
        serde_json::to_string(&level2).unwrap()
    );
    let mut runs = tokio::task::JoinSet::new();
    for _ in 0..3 {
        let sandbox = sandbox.clone();
        let job = job_with(
            &level1,
            json!({}),
            JsLimits {
                wall_time: Duration::from_secs(20),
                ..small_limits()
            },
            host.clone(),
        );
        runs.spawn(async move { sandbox.run(job).await });
    }
    let results = tokio::time::timeout(Duration::from_secs(30), runs.join_all())
        .await
        .expect("no deadlock");
    assert_eq!(results.len(), 3);
    for res in results {
        assert_eq!(res.content, json!("abcbc"));
    }
}

#[tokio::test]
async fn fs_and_shell_are_calls_of_the_file_tools_and_execute_shell_under_their_permissions() {
    let sandbox = pool(1);
    let host = TestHost::new(&sandbox);
    let code = r#"
        const out = [typeof fs, typeof shell];
        for (const attempt of [
            () => fs.readFile('a.txt', {encoding: 'utf-8', startLine: 2}),
            () => fs.writeFile('b.txt', 'text', {overwrite: false}),
            () => fs.readdir(),
            () => fs.list('src', {recursive: true}),
            () => fs.stat('a.txt'),
            () => fs.mkdir('x/y'),
            () => fs.rm('x', {recursive: true}),
            () => shell.exec('ls -la', {timeoutSeconds: 5}),
        ]) {
            try { await attempt(); } catch (e) { out.push(e.message); }
        }
        return out;
    "#;
    let mut job = job_with(code, json!({}), small_limits(), host.clone());
    job.permissions.insert(Permission::Filesystem);
    job.permissions.insert(Permission::Shell);
    let res = sandbox.run(job).await;
    assert_eq!(
        res.content,
        json!([
            "object",
            "object",
            "fs.readFile: no tool named 'read_file'",
            "fs.writeFile: no tool named 'write_file'",
            "fs.readdir: no tool named 'list_directory'",
            "fs.list: no tool named 'list_directory'",
            "fs.stat: no tool named 'file_info'",
            "fs.mkdir: no tool named 'create_folder'",
            "fs.rm: no tool named 'delete_file'",
            "shell.exec: no tool named 'execute_shell'",
        ]),
        "{res:?}"
    );
    assert_eq!(
        *host.calls.lock().unwrap(),
        vec![
            (
                "read_file".to_owned(),
                json!({"path": "a.txt", "encoding": "utf8", "startLine": 2})
            ),
            (
                "write_file".to_owned(),
                json!({"path": "b.txt", "content": "text", "overwrite": false})
            ),
            ("list_directory".to_owned(), json!({"path": "."})),
            (
                "list_directory".to_owned(),
                json!({"path": "src", "recursive": true})
            ),
            ("file_info".to_owned(), json!({"path": "a.txt"})),
            ("create_folder".to_owned(), json!({"path": "x/y"})),
            (
                "delete_file".to_owned(),
                json!({"path": "x", "recursive": true})
            ),
            (
                "execute_shell".to_owned(),
                json!({"command": "ls -la", "timeoutSeconds": 5})
            ),
        ]
    );

    // Without the permissions neither exists, and the error names the permission to declare.
    let res = sandbox
        .run(job_with(
            "return await shell.exec('ls')",
            json!({}),
            small_limits(),
            host,
        ))
        .await;
    assert_eq!(
        res.error_message(),
        Some(
            "ReferenceError: shell is not defined: shell exists only in tools that declare permissions: [\"shell\"] (set it with create_tool or update_custom_tool)"
        )
    );
}
