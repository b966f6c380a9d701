//! Unit tests of the registration-time checks.

use super::*;

#[track_caller]
fn forbidden_pattern(code: &str) -> &'static str {
    match check_code(code, 100_000) {
        Err(CodeError::Forbidden { pattern, hint }) => {
            assert!(!hint.is_empty());
            pattern
        }
        other => panic!("expected a forbidden pattern in {code:?}, got {other:?}"),
    }
}

#[test]
fn empty_code_is_refused() {
    assert_eq!(check_code("", 100), Err(CodeError::Empty));
    assert_eq!(check_code("  \n\t ", 100), Err(CodeError::Empty));
}

#[test]
fn code_over_the_size_limit_is_refused() {
    assert_eq!(
        check_code("return 12345", 5),
        Err(CodeError::TooLarge { len: 12, max: 5 })
    );
    assert_eq!(check_code("return 1", 8), Ok(()));
}

#[test]
fn every_pattern_of_the_spec_is_caught() {
    let cases = [
        ("process.exit(1)", "process.exit"),
        ("const fs = require('fs')", "require("),
        ("return __dirname", "__dirname"),
        ("return __filename", "__filename"),
        ("global.x = 1", "global."),
        ("globalThis.x = 1", "globalThis."),
        ("return eval('1')", "eval("),
        ("return new Function('return 1')()", "Function("),
        ("const o = {}; o.__proto__.x = 1", "__proto__"),
        ("return ({}).constructor['constructor']", "constructor["),
        ("with (Math) { return PI }", "with("),
    ];
    for (code, pattern) in cases {
        assert_eq!(forbidden_pattern(code), pattern, "code: {code}");
    }
    assert_eq!(forbidden_pattern("process .exit(0)"), "process.exit");
    // Node-isms a tool may use (issue 33): `process.env`, `process.version`, `import()` of its
    // declared npm dependencies.
    for code in [
        "return process.env.HOME ?? null",
        "return process.version",
        "const { parse } = await import('csv-parse/sync'); return parse",
    ] {
        assert_eq!(check_code(code, 1000), Ok(()), "{code}");
    }
}

#[test]
fn the_hints_point_to_what_to_do_instead() {
    assert_eq!(
        check_code("const x = require('x')", 1000),
        Err(CodeError::Forbidden {
            pattern: "require(",
            hint: "tool code has no require(). For files: declare permissions: [\"filesystem\"] and use the fs global (`await fs.readFile('notes.txt')`, in the caller's workspace), or call the file tools (read_file, write_file) with utils.callTool(); for HTTP: permissions: [\"network\"] and fetch(); for an npm package: declare it in the tool's dependencies and load it with `await import('name')`",
        })
    );
    assert_eq!(
        CodeError::Forbidden {
            pattern: "import(",
            hint: "modules cannot be imported in the sandbox; use utils.callTool() to use another tool",
        }
        .to_string(),
        "tool code contains forbidden pattern 'import(': modules cannot be imported in the sandbox; use utils.callTool() to use another tool"
    );
}

#[test]
fn whitespace_does_not_hide_a_pattern() {
    assert_eq!(forbidden_pattern("return eval  ('1')"), "eval(");
    assert_eq!(forbidden_pattern("require\n('fs')"), "require(");
    assert_eq!(forbidden_pattern("with (obj) {}"), "with(");
    assert_eq!(forbidden_pattern("return `${eval('1')}`"), "eval(");
}

#[test]
fn honest_code_is_not_mistaken_for_a_pattern() {
    let honest = [
        "const processText = (t) => t; return processText(args.x)",
        "function preprocess(x) { return x } return preprocess(1)",
        "return 'could not process the file: eval( require( import( __proto__'",
        "return \"global. globalThis. with(\"",
        "// eval('x') would be bad\nreturn 1",
        "/* process.exit(1) */ return 2",
        "return args.job.process()",
        "const job = { process: 1, global: 2 }; return job.process + job.global",
        "return [1, 2, 3].with(0, 9)",
        "const evaluate = (x) => x; return evaluate(1)",
        "function myFunction(a) { return a } return myFunction(1)",
        "return /eval\\(|require\\(/.test(args.text ?? '')",
        "const n = 10 / 2; const m = n / 5; return m",
        "return `template text mentions process and eval( ${1 + 1}`",
        "const withSomething = 1; return withSomething",
    ];
    for code in honest {
        assert_eq!(check_code(code, 100_000), Ok(()), "code: {code}");
    }
}

#[test]
fn bypass_spellings_pass_here_and_are_refused_at_run_time() {
    // The engine is the wall; see the hostile tests.
    for code in [
        "return globalThis['ev' + 'al']('1')",
        "return \\u0065val('1')",
        "return (() => 1).constructor('return 1')()",
    ] {
        assert_eq!(check_code(code, 100_000), Ok(()), "code: {code}");
    }
}

#[test]
fn syntax_errors_name_their_line() {
    assert_eq!(
        check_code("const a = 1;\nconst b = ;", 1000),
        Err(CodeError::Syntax(
            "SyntaxError: unexpected token in expression: ';' (line 2, column 11)".to_owned()
        ))
    );
    assert_eq!(
        check_code("return 1 +", 1000),
        Err(CodeError::Syntax(
            "SyntaxError: unexpected token in expression: '}' (line 2, column 1)".to_owned()
        ))
    );
    assert_eq!(
        check_code("let x = ;", 1000),
        Err(CodeError::Syntax(
            "SyntaxError: unexpected token in expression: ';' (line 1, column 9)".to_owned()
        ))
    );
}

#[test]
fn await_and_return_work_at_the_top_of_the_body() {
    assert_eq!(
        check_code(
            "const r = await utils.callTool('x', {}); if (!r) return null; return r",
            1000
        ),
        Ok(())
    );
}
