//! The length guards of the generic array methods, as native functions.
//!
//! `concat`, `join`, `slice`, `sort` and the other generic array methods loop over the `length`
//! of whatever they are called on, in native code that never reaches the interrupt handler: an
//! array-like `{length: 2**53 - 1}` or a sparse array would keep one running for hours. Each is
//! replaced by a guard that refuses a receiver (and, for `concat`, an object argument) whose
//! length is more than any dense array under the memory limit could have, and otherwise calls
//! the built-in it replaced.
//!
//! **Why native, and made when first read.** Every execution has a fresh runtime, so every
//! execution pays for what the guards create. Written in the prelude, the sixteen array guards
//! cost each runtime a function definition read from bytecode, sixteen closures and sixteen
//! objects to name them, and their teardown: about a quarter of a trivial call's CPU. Made
//! eagerly as native functions, the 26 guards still cost an object each, with its `name` and
//! `length`, and its collection. Now they are defined as QuickJS defines its own built-in
//! methods (`raw::replace_lazily`): a guard's function is made the first time a script reads
//! its property, and most tools read few of them. The string guards are native too
//! (`guards/strings.rs`).
//!
//! **`flat` and `flatMap`** also check what they flatten. `flatMap`'s guard wraps the callback in
//! a native function that checks each array it returns. `flat`'s must check every array nested
//! down to its depth before the built-in starts, and that walk must be JavaScript, which the CPU
//! limit can stop on a deep or cyclic receiver: it is `flat.js`, loaded the first time a tool
//! flattens an array (a runtime that never does reads none of it).
//!
//! The built-ins the guards replaced, captured before any tool code ran, are kept with the kit
//! in the runtime's userdata ([`Kept`], freed with the runtime), which no script can reach; a
//! guard finds its own there when it is called ([`LazyNative::data`]).
//!
//! **The limits a guard checks** follow the running job's memory limit. A runtime lives on one
//! thread and a thread runs one runtime's job at a time, so they are the thread's
//! ([`set_memory`], reset by [`install`] for each fresh runtime).

use std::cell::Cell;
use std::ffi::CStr;

use rquickjs::convert::Coerced;
use rquickjs::function::This;
use rquickjs::{Array, Ctx, Exception, FromJs, Function, Object, Value};

use crate::compile;
use crate::raw::{self, Args, FunctionList, Kept, LazyNative, Native, lazy_entry};
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
/// The index of `concat` in [`GUARDED`], whose object arguments are checked too.
const CONCAT: u16 = 0;
/// The index of `join` in [`GUARDED`], whose separator is checked too.
const JOIN: u16 = 3;
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

/// The guards of `Array.prototype`: [`GUARDED`] (magic = index), then [`FLATTENING`], each
/// with its built-in's length.
static ARRAY_GUARDS: FunctionList<18> = FunctionList([
    lazy_entry::<ArrayGuard>(c"concat", 1, 0),
    lazy_entry::<ArrayGuard>(c"copyWithin", 2, 1),
    lazy_entry::<ArrayGuard>(c"fill", 1, 2),
    lazy_entry::<ArrayGuard>(c"join", 1, 3),
    lazy_entry::<ArrayGuard>(c"reverse", 0, 4),
    lazy_entry::<ArrayGuard>(c"shift", 0, 5),
    lazy_entry::<ArrayGuard>(c"slice", 2, 6),
    lazy_entry::<ArrayGuard>(c"sort", 1, 7),
    lazy_entry::<ArrayGuard>(c"splice", 2, 8),
    lazy_entry::<ArrayGuard>(c"toLocaleString", 0, 9),
    lazy_entry::<ArrayGuard>(c"toReversed", 0, 10),
    lazy_entry::<ArrayGuard>(c"toSorted", 1, 11),
    lazy_entry::<ArrayGuard>(c"toSpliced", 2, 12),
    lazy_entry::<ArrayGuard>(c"toString", 0, 13),
    lazy_entry::<ArrayGuard>(c"unshift", 1, 14),
    lazy_entry::<ArrayGuard>(c"with", 2, 15),
    lazy_entry::<FlatGuard>(c"flat", 0, 0),
    lazy_entry::<FlatGuard>(c"flatMap", 1, 1),
]);
/// Where the built-ins the guards replaced are kept ([`Kept`]): the array guards' first, in
/// [`ARRAY_GUARDS`]' order, then the string guards' (`guards/strings.rs`), then the kit.
const FIRST_FLAT: usize = GUARDED.len();
const FIRST_STRING: usize = FIRST_FLAT + FLATTENING.len();
const KEPT_KIT: usize = FIRST_STRING + strings::GUARDED.len();

/// Replaces the guarded methods of `Array.prototype` and `String.prototype` in `ctx`. Call
/// before any tool code runs.
///
/// **Made when first read.** A guard's function is made the first time a script reads its
/// property (as QuickJS makes its own built-in methods): most tools never touch most of the
/// 26, and a fresh runtime for every execution paid for each one (an object, its `name` and
/// `length`, and its garbage collection at teardown) whether it was used or not. The built-ins
/// they replaced and the kit are kept in the runtime's userdata ([`Kept`]), where no script
/// reaches them, in the order [`LazyNative::data`] finds them.
pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    MAX_LENGTH.set(PREPARE_MAX_LENGTH);
    MAX_STRING_BYTES.set(PREPARE_MAX_STRING_BYTES);
    let globals = ctx.globals();
    let array: Object<'_> = globals.get("Array")?;
    let proto: Object<'_> = array.get("prototype")?;
    // The kit first: it captures built-ins the guards replace.
    let kit = strings::kit(ctx, &globals)?;
    let mut kept = raw::replace_lazily(ctx, &proto, &ARRAY_GUARDS)?;
    kept.extend(strings::install(ctx, &globals)?);
    kept.push(kit);
    ctx.store_userdata(Kept(kept))
        .map_err(|e| Exception::throw_internal(ctx, &e.to_string()))?;
    Ok(())
}

/// The built-in a guard replaced (at `first + magic` in [`Kept`]) and the kit.
fn kept<'js>(ctx: &Ctx<'js>, first: usize, magic: u16) -> Option<[Value<'js>; 2]> {
    let kept = ctx.userdata::<Kept<'js>>()?;
    let original = kept.0.get(first + usize::from(magic))?.clone();
    let kit = kept.0.get(KEPT_KIT)?.clone();
    Some([original, kit])
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

impl LazyNative for ArrayGuard {
    fn data<'js>(ctx: &Ctx<'js>, magic: u16) -> Option<[Value<'js>; 2]> {
        kept(ctx, 0, magic)
    }
}

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
        if magic == JOIN {
            check_join(ctx, &this, &args.get(0))?;
        }
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

impl LazyNative for FlatGuard {
    fn data<'js>(ctx: &Ctx<'js>, magic: u16) -> Option<[Value<'js>; 2]> {
        kept(ctx, FIRST_FLAT, magic)
    }
}

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

/// `join`'s result holds the separator `length - 1` times: a long separator on a long (even
/// empty, sparse) receiver would make the built-in copy it into one string for seconds, in
/// native code the CPU limit cannot stop, before the memory limit ends it. A string separator
/// whose copies alone would pass the memory limit is refused first.
fn check_join<'js>(
    ctx: &Ctx<'js>,
    this: &Value<'js>,
    separator: &Value<'js>,
) -> rquickjs::Result<()> {
    if !separator.is_string() || this.is_null() || this.is_undefined() {
        return Ok(());
    }
    let units = raw::length_of(ctx, separator)?;
    let copies = raw::length_of(ctx, this)? - 1.0;
    // A code unit takes a byte at least: over the limit in units is over it in bytes.
    if copies > 0.0 && copies * units > max_string_bytes() as f64 {
        return Err(Exception::throw_range(
            ctx,
            &format!(
                "Array.prototype.join: {} copies of a separator of {} characters are more than the \
                 sandbox's memory limit of {} bytes allows",
                js_number(copies),
                js_number(units),
                max_string_bytes()
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
