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
