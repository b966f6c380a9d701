//! The length guards of the generic array methods, as native functions.
//!
//! `concat`, `join`, `slice`, `sort` and the other generic array methods loop over the `length`
//! of whatever they are called on, in native code that never reaches the interrupt handler: an
//! array-like `{length: 2**53 - 1}` or a sparse array would keep one running for hours. Each is
//! replaced by a guard that refuses a receiver (and, for `concat`, an object argument) whose
//! length is more than any dense array under the memory limit could have, and otherwise calls
//! the built-in it replaced.
//!
//! **Why native.** Every execution has a fresh runtime, so every execution pays for what the
//! guards create. Written in the prelude, the sixteen of them cost each runtime a function
//! definition read from bytecode, sixteen closures and sixteen objects to name them, and their
//! teardown: about a quarter of a trivial call's CPU. As native functions made with
//! `JS_NewCFunctionData2` (`raw::native_function`) they cost one small object each. (`flat`
//! and `flatMap`, which must also walk nested arrays in interruptible code, stay in
//! `prelude.js`; the string guards are native too, `guards/strings.rs`.)
//!
//! The built-in each guard replaced is kept inside the guard's function object (its data),
//! captured before any tool code ran and never reachable from a script; the garbage collector
//! traces it like any other value, so nothing of the runtime is kept on the Rust side.
//!
//! **The limits a guard checks** follow the running job's memory limit. A runtime lives on one
//! thread and a thread runs one runtime's job at a time, so they are the thread's
//! ([`set_memory`], reset by [`install`] for each fresh runtime).

use std::cell::Cell;
use std::ffi::CStr;

use rquickjs::{Ctx, Exception, Object, Value};

use crate::raw::{self, Args, Native};

mod strings;

/// The array methods guarded here, by index (the `magic` of each one's guard).
const GUARDED: [&CStr; 16] = [
    c"concat",
    c"copyWithin",
    c"fill",
    c"join",
    c"reverse",
    c"shift",
    c"slice",
    c"sort",
    c"splice",
    c"toLocaleString",
    c"toReversed",
    c"toSorted",
    c"toSpliced",
    c"toString",
    c"unshift",
    c"with",
];
/// The index of `concat` in [`GUARDED`], the one guard that also checks its arguments.
const CONCAT: u16 = 0;

/// The longest array a runtime is prepared with, before a job sets its own memory limit
/// (`prelude.js` starts from the same value).
const PREPARE_MAX_LENGTH: f64 = (1u32 << 20) as f64;
/// The longest string a runtime's normalization may produce before a job sets its own memory
/// limit (`prelude.js` starts from the same value).
const PREPARE_MAX_STRING_BYTES: usize = 1 << 26;
/// The longest array allowed under any memory limit.
const MIN_MAX_LENGTH: f64 = (1u32 << 16) as f64;

thread_local! {
    /// The longest array the running job's memory limit allows.
    static MAX_LENGTH: Cell<f64> = const { Cell::new(PREPARE_MAX_LENGTH) };
    /// The running job's memory limit, in bytes: no string may be longer.
    static MAX_STRING_BYTES: Cell<usize> = const { Cell::new(PREPARE_MAX_STRING_BYTES) };
}

/// Replaces the guarded methods of `Array.prototype` and `String.prototype` in `ctx`. Call
/// before any tool code runs.
pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    MAX_LENGTH.set(PREPARE_MAX_LENGTH);
    MAX_STRING_BYTES.set(PREPARE_MAX_STRING_BYTES);
    let globals = ctx.globals();
    let array: Object<'_> = globals.get("Array")?;
    let proto: Object<'_> = array.get("prototype")?;
    for (index, name) in GUARDED.iter().enumerate() {
        let original: Value<'_> = proto.get(name_str(name))?;
        let length = raw::length_of(ctx, &original)?;
        let guard =
            raw::native_function::<ArrayGuard>(ctx, name, length as u8, index as u16, &[original])?;
        // An assignment: the property keeps the built-in's attributes.
        proto.set(name_str(name), guard)?;
    }
    strings::install(ctx, &globals)
}

/// Applies a job's memory limit to the guards of this thread's runtime: a JSValue takes 16
/// bytes, so no dense array of more elements than `memory_bytes / 16` fits.
pub(crate) fn set_memory(memory_bytes: usize) {
    let fits = memory_bytes as f64 / 16.0;
    MAX_LENGTH.set(fits.max(MIN_MAX_LENGTH));
    MAX_STRING_BYTES.set(memory_bytes);
}

/// The running job's memory limit in bytes, the longest string a guard may produce.
fn max_string_bytes() -> usize {
    MAX_STRING_BYTES.get()
}

fn name_str(name: &CStr) -> &str {
    name.to_str().unwrap_or_default()
}

/// A guard of [`GUARDED`]: its one datum is the built-in it replaced.
struct ArrayGuard;

impl Native for ArrayGuard {
    const DATA: usize = 1;

    fn call<'js>(
        ctx: &Ctx<'js>,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let name = GUARDED
            .get(usize::from(magic))
            .map_or("", |name| name_str(name));
        check(ctx, name, &this)?;
        if magic == CONCAT {
            for index in 0..args.len() {
                let arg = args.get(index);
                if arg.is_object() && !arg.is_function() {
                    check(ctx, name, &arg)?;
                }
            }
        }
        raw::call_passing(ctx, &data.get(0), &this, args)
    }
}

/// Refuses `value` when its `length` is more than a dense array could have (`null` and
/// `undefined` are left to the built-in, which throws).
fn check<'js>(ctx: &Ctx<'js>, name: &str, value: &Value<'js>) -> rquickjs::Result<()> {
    if value.is_null() || value.is_undefined() {
        return Ok(());
    }
    let length = raw::length_of(ctx, value)?;
    let max = MAX_LENGTH.get();
    if length > max {
        return Err(Exception::throw_range(
            ctx,
            &format!(
                "Array.prototype.{name}: a length of {} is more than the sandbox allows ({} elements)",
                js_number(length),
                js_number(max)
            ),
        ));
    }
    Ok(())
}

/// A number as JavaScript writes it, for the values a length check meets.
fn js_number(n: f64) -> String {
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n.fract() == 0.0 && n.abs() < 1e21 {
        return format!("{n:.0}");
    }
    format!("{n}")
}

#[cfg(test)]
mod tests;
