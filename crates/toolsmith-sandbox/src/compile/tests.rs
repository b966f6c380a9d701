//! Unit tests of compilation: the module wrapper, error locations, the cache, and which
//! optional built-ins a tool needs.

use super::*;

#[test]
fn tool_code_is_the_body_of_an_async_default_export() {
    assert_eq!(
        tool_source("return 1"),
        "export default async function (args, context) {return 1\n}"
    );
}

#[test]
fn first_line_columns_count_from_the_code() {
    let header = TOOL_HEADER.len();
    assert_eq!(
        shift_first_line(&format!("SyntaxError: x (line 1, column {})", header + 9)),
        "SyntaxError: x (line 1, column 9)"
    );
    assert_eq!(
        shift_first_line("SyntaxError: x (line 3, column 4)"),
        "SyntaxError: x (line 3, column 4)"
    );
    assert_eq!(code_column(3), 1);
}

#[test]
fn locations_are_read_from_stacks() {
    assert_eq!(
        first_location("    at tool.js:3:7\n"),
        Some(" (line 3, column 7)".to_owned())
    );
    assert_eq!(
        first_location("    at f (utils.js:12)"),
        Some(" (line 12)".to_owned())
    );
    assert_eq!(first_location("no location"), None);
}

#[test]
fn compiled_tools_are_cached_and_so_are_their_errors() {
    let mut compiler = Compiler::new();
    let first = compiler.tool("return 1");
    let second = compiler.tool("return 1");
    assert!(first.is_ok());
    assert_eq!(compiler.cache.len(), 1);
    assert_eq!(
        first.map(|(_, needs)| needs),
        second.map(|(_, needs)| needs)
    );
    let broken = compiler.tool("return (").err();
    assert_eq!(
        broken,
        Some(CompileError::Syntax(
            "SyntaxError: unexpected token in expression: '}' (line 2, column 1)".to_owned()
        ))
    );
    assert_eq!(compiler.tool("return (").err(), broken);
    assert_eq!(compiler.cache.len(), 2);
}

#[test]
fn the_cache_forgets_the_least_recently_used() {
    let mut compiler = Compiler::new();
    for n in 0..CACHE_ENTRIES + 10 {
        assert!(compiler.tool(&format!("return {n}")).is_ok());
    }
    assert_eq!(compiler.cache.len(), CACHE_ENTRIES);
    assert!(!compiler.cache.contains_key("return 0"));
    assert!(
        compiler
            .cache
            .contains_key(&format!("return {}", CACHE_ENTRIES + 9))
    );
}

#[test]
fn the_prelude_and_utils_compile() {
    assert!(prelude().is_ok());
    assert!(support().is_ok());
    assert!(utils().is_ok());
    assert!(io().is_ok());
    assert!(bounds().is_ok());
    assert!(flat().is_ok());
    assert!(node().is_ok());
    assert!(cjs().is_ok());
}

#[test]
fn optional_built_ins_follow_the_names_in_the_source() {
    assert_eq!(Needs::of("return 1"), Needs::default());
    assert_eq!(
        Needs::of("return new Map()"),
        Needs {
            map_set: true,
            ..Needs::default()
        }
    );
    assert_eq!(
        Needs::of("return new Uint8Array(2)"),
        Needs {
            typed_arrays: true,
            ..Needs::default()
        }
    );
    assert_eq!(
        Needs::of("return Date.now()"),
        Needs {
            date: true,
            ..Needs::default()
        }
    );
    for code in [
        "return new WeakRef(args)",
        "new FinalizationRegistry(() => 1)",
    ] {
        assert_eq!(
            Needs::of(code),
            Needs {
                weak_refs: true,
                ..Needs::default()
            },
            "{code}"
        );
    }
    let all = Needs {
        node: false,
        mcp: true,
        typed_arrays: true,
        map_set: true,
        date: true,
        weak_refs: true,
    };
    assert_eq!(Needs::of("return globalThis[args.name]"), all);
    assert_eq!(Needs::of("return new \\u0044ate()"), all);
    assert!(Needs::of("return process.env").node && Needs::of("Buffer.from('x')").node);
    assert!(!Needs::of("return args").node);
    assert!(Needs::of("mcp.log('info', 1)").mcp && !Needs::of("return args").mcp);
}
