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
//! `JS_NewCFunctionData2` (`raw::native_function`) they cost one small object each. The string
//! guards are native too (`guards/strings.rs`).
//!
//! **`flat` and `flatMap`** also check what they flatten. `flatMap`'s guard wraps the callback in
//! a native function that checks each array it returns. `flat`'s must check every array nested
//! down to its depth before the built-in starts, and that walk must be JavaScript, which the CPU
//! limit can stop on a deep or cyclic receiver: it is `flat.js`, loaded the first time a tool
//! flattens an array (a runtime that never does reads none of it).
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

use rquickjs::convert::Coerced;
use rquickjs::function::This;
use rquickjs::{Array, Atom, Ctx, Exception, FromJs, Function, Object, Value};

use crate::compile;
use crate::raw::{self, Args, Native};
use crate::utils;

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
/// The array methods that flatten, by index (the `magic` of each one's guard).
const FLATTENING: [&CStr; 2] = [c"flat", c"flatMap"];
const FLAT: u16 = 0;

/// The longest array a runtime is prepared with, before a job sets its own memory limit
/// (the default limit's).
const PREPARE_MAX_LENGTH: f64 = (1u32 << 20) as f64;
/// The longest string a runtime's normalization may produce before a job sets its own memory
/// limit.
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
    replace_all::<ArrayGuard>(ctx, &proto, &GUARDED, None)?;
    let kit = strings::install(ctx, &globals)?;
    replace_all::<FlatGuard>(ctx, &proto, &FLATTENING, Some(&kit))
}

/// Replaces each method `names[i]` of `holder` by a guard of kind `N` made with magic `i`,
/// whose data are the built-in it replaces and, if given, `kit`; the guard keeps the built-in's
/// name and length, and (an assignment) the property its attributes.
fn replace_all<'js, N: Native>(
    ctx: &Ctx<'js>,
    holder: &Object<'js>,
    names: &[&CStr],
    kit: Option<&Value<'js>>,
) -> rquickjs::Result<()> {
    for (index, name) in names.iter().enumerate() {
        // One atom for the lookup and the assignment.
        let key = Atom::from_str(ctx.clone(), name_str(name))?;
        let original: Value<'js> = holder.get(key.clone())?;
        let length = raw::length_of(ctx, &original)? as u8;
        let magic = index as u16;
        let guard = match kit {
            Some(kit) => {
                raw::native_function::<N>(ctx, name, length, magic, &[original, kit.clone()])
            }
            None => raw::native_function::<N>(ctx, name, length, magic, &[original]),
        }?;
        holder.set(key, guard)?;
    }
    Ok(())
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

/// A guard of [`FLATTENING`]: its data are the built-in it replaced and the kit
/// (`guards/strings.rs`), which holds `Array.isArray` and, once loaded, `flat.js`'s walk.
struct FlatGuard;

impl Native for FlatGuard {
    const DATA: usize = 2;

    fn call<'js>(
        ctx: &Ctx<'js>,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let kit = Array::from_value(data.get(1))?;
        let original = data.get(0);
        if magic == FLAT {
            check(ctx, "flat", &this)?;
            if is_array(&kit, &this)? {
                let value = args.get(0);
                let depth = if value.is_undefined() {
                    1.0
                } else {
                    Coerced::<f64>::from_js(ctx, value)?.0
                };
                if depth >= 1.0 {
                    flat_walk(ctx, &kit)?.call::<_, ()>((this.clone(), depth, "flat"))?;
                }
            }
            return raw::call_passing(ctx, &original, &this, args);
        }
        check(ctx, "flatMap", &this)?;
        let callback = args.get(0);
        if !callback.is_function() {
            return raw::call_passing(ctx, &original, &this, args);
        }
        // flatMap flattens what the callback returns: that is checked as it comes.
        let this_arg = args.get(1);
        let mapper = raw::native_function::<Mapped>(
            ctx,
            c"",
            3,
            0,
            &[callback, this_arg.clone(), kit.into_value()],
        )?;
        Function::from_value(original)?.call((This(this), mapper, this_arg))
    }
}

/// The callback `flatMap`'s guard hands the built-in: calls the tool's callback (its first
/// datum) with its `thisArg` (the second) and checks what it returns; the third is the kit.
struct Mapped;

impl Native for Mapped {
    const DATA: usize = 3;

    fn call<'js>(
        ctx: &Ctx<'js>,
        _magic: u16,
        _this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let mapped = raw::call_passing(ctx, &data.get(0), &data.get(1), args)?;
        if is_array(&Array::from_value(data.get(2))?, &mapped)? {
            check(ctx, "flatMap", &mapped)?;
        }
        Ok(mapped)
    }
}

/// `flat.js`'s `checkArray(value, name)`: whether `value` is an array, refusing one too long for
/// `Array.prototype[name]`. Its one datum is the kit.
struct CheckArray;

impl Native for CheckArray {
    const DATA: usize = 1;

    fn call<'js>(
        ctx: &Ctx<'js>,
        _magic: u16,
        _this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let value = args.get(0);
        let array = is_array(&Array::from_value(data.get(0))?, &value)?;
        if array {
            let name = args.get(1);
            let name = name
                .as_string()
                .and_then(|name| name.to_string().ok())
                .unwrap_or_default();
            check(ctx, &name, &value)?;
        }
        Ok(Value::new_bool(ctx.clone(), array))
    }
}

/// `Array.isArray(value)`, as captured in the kit before any tool code ran (proxies of arrays
/// are arrays, a revoked proxy throws).
fn is_array<'js>(kit: &Array<'js>, value: &Value<'js>) -> rquickjs::Result<bool> {
    if value.is_array() {
        return Ok(true);
    }
    if !value.is_object() {
        return Ok(false);
    }
    let is_array: Function<'js> = kit.get(strings::KIT_IS_ARRAY)?;
    is_array.call((value.clone(),))
}

/// `flat.js`'s walk, loaded into the context on first use and kept in the kit.
fn flat_walk<'js>(ctx: &Ctx<'js>, kit: &Array<'js>) -> rquickjs::Result<Function<'js>> {
    let kept: Value<'js> = kit.get(strings::KIT_FLAT)?;
    if kept.is_function() {
        return Function::from_value(kept);
    }
    let natives = Object::new(ctx.clone())?;
    let check_array =
        raw::native_function::<CheckArray>(ctx, c"checkArray", 2, 0, &[kit.clone().into_value()])?;
    natives.set("checkArray", check_array)?;
    let walk: Function<'js> =
        utils::load_module(ctx, compile::flat(), "the built-in guards", (natives,))?;
    kit.set(strings::KIT_FLAT, walk.clone())?;
    Ok(walk)
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
