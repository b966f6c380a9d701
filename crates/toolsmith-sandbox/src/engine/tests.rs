//! Unit tests of the engine's helpers.

use super::*;

#[test]
fn first_line_columns_are_the_codes_own() {
    let header = "export default async function (args, context) {".len();
    assert_eq!(
        code_columns(&format!("at default ({TOOL_MODULE}:1:{})", header + 10)),
        format!("at default ({TOOL_MODULE}:1:10)")
    );
    assert_eq!(
        code_columns(&format!("at f ({TOOL_MODULE}:3:7)")),
        format!("at f ({TOOL_MODULE}:3:7)")
    );
}

/// Runs module `source` in a bare sandbox context (no prelude, so no JS-level lock-down) and
/// returns its export `r`.
fn bare(source: &str) -> String {
    let compiler = Runtime::new().unwrap();
    let context =
        Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(&compiler).unwrap();
    let bytecode = context
        .with(|ctx| raw::Bytecode::compile(&ctx, "bare.js", source, true))
        .unwrap();
    let runtime = Runtime::new().unwrap();
    let context = Context::custom::<Intrinsics>(&runtime).unwrap();
    context.with(|ctx| {
        let (module, _) = raw::load_module(&ctx, &bytecode).unwrap().eval().unwrap();
        module.get::<_, String>("r").unwrap()
    })
}

#[test]
fn the_engine_itself_refuses_to_compile_strings() {
    let attempt = |expr: &str| {
        format!(
            "export const r = (() => {{ try {{ return String({expr}) }} catch (e) {{ return String(e) }} }})();"
        )
    };
    for expr in [
        "eval('1')",
        "Function('return 1')()",
        "(async function () {}).constructor('return 1')",
        "(function* () {}).constructor('yield 1')",
        "Reflect.construct(Function, ['return 1'])()",
    ] {
        assert_eq!(
            bare(&attempt(expr)),
            "TypeError: eval is not supported",
            "{expr}"
        );
    }
}

/// The memory of a fresh runtime: bare (its context's intrinsics only), or prepared as
/// [`serve`] prepares it (prelude, guards), before any job.
fn usage(prepared: bool) -> rquickjs::qjs::JSMemoryUsage {
    let watchdog = Rc::new(Watchdog::new());
    let slot = Rc::new(JobSlot::default());
    let sandbox = Sandbox::start(&watchdog).unwrap();
    if prepared {
        sandbox
            .context
            .with(|ctx| prepare(&ctx, &slot).map(|_| ()))
            .unwrap();
    }
    sandbox.runtime.memory_usage()
}

/// Every fresh runtime reads, creates and then collects what preparing it adds, which is most
/// of what a trivial call costs beyond the context itself (docs/benchmarks.md): this keeps it
/// from growing unnoticed. Raise a bound only with a reason, and the figures in the docs.
#[test]
fn preparing_a_runtime_adds_few_objects() {
    let bare = usage(false);
    let prepared = usage(true);
    let added = |of: fn(&rquickjs::qjs::JSMemoryUsage) -> i64| of(&prepared) - of(&bare);
    let objects = added(|u| u.obj_count);
    let js_functions = added(|u| u.js_func_count);
    let bytes = added(|u| u.malloc_size);
    eprintln!(
        "a bare runtime: {} objects, {} bytes; preparing it adds {objects} objects ({js_functions} JS functions), {bytes} bytes",
        bare.obj_count, bare.malloc_size
    );
    assert!(objects <= 50, "preparing a runtime adds {objects} objects");
    assert!(
        js_functions <= 10,
        "preparing a runtime adds {js_functions} JS functions"
    );
}
