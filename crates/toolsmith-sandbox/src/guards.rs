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
//! teardown: about a quarter of a trivial call's CPU. As native functions they cost one small
//! object each. (`flat` and `flatMap`, which must also walk nested arrays in interruptible
//! code, stay in `prelude.js`, as do the string guards.)
//!
//! The built-ins replaced are kept on the Rust side ([`Guards`]), captured before any tool code
//! ran, and never reachable from a script. They are released before the runtime is torn down
//! ([`Originals`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rquickjs::function::{Rest, This};
use rquickjs::{Ctx, Exception, Function, Object, Persistent, Value};

use crate::raw;

/// The array methods guarded here, by index (the index of each one's original in [`Guards`]).
const GUARDED: [&str; 16] = [
    "concat",
    "copyWithin",
    "fill",
    "join",
    "reverse",
    "shift",
    "slice",
    "sort",
    "splice",
    "toLocaleString",
    "toReversed",
    "toSorted",
    "toSpliced",
    "toString",
    "unshift",
    "with",
];

/// The longest array a runtime is prepared with, before a job sets its own memory limit
/// (`prelude.js` starts from the same value).
const PREPARE_MAX_LENGTH: f64 = (1u32 << 20) as f64;
/// The longest array allowed under any memory limit.
const MIN_MAX_LENGTH: f64 = (1u32 << 16) as f64;

/// One runtime's array guards: the built-ins they replaced and the length they allow.
pub(crate) struct Guards {
    originals: RefCell<Vec<Persistent<Function<'static>>>>,
    max_length: Cell<f64>,
}

/// Owns a runtime's [`Guards`] and releases the built-ins they keep when dropped, which must
/// happen before the runtime is torn down (a value kept from Rust must not outlive its runtime).
pub(crate) struct Originals(Rc<Guards>);

impl Originals {
    /// Applies a job's memory limit to the guards.
    pub(crate) fn set_memory(&self, memory_bytes: usize) {
        self.0.set_memory(memory_bytes);
    }
}

impl Drop for Originals {
    fn drop(&mut self) {
        self.0.originals.borrow_mut().clear();
    }
}

impl Guards {
    /// Replaces the guarded methods of `Array.prototype` in `ctx`. Call before any tool code
    /// runs; the returned [`Originals`] must be dropped before the runtime.
    pub(crate) fn install<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Originals> {
        let guards = Rc::new(Guards {
            originals: RefCell::new(Vec::with_capacity(GUARDED.len())),
            max_length: Cell::new(PREPARE_MAX_LENGTH),
        });
        let originals = Originals(guards.clone());
        let array: Object<'js> = ctx.globals().get("Array")?;
        let proto: Object<'js> = array.get("prototype")?;
        for (index, name) in GUARDED.iter().enumerate() {
            let original: Function<'js> = proto.get(*name)?;
            let length: usize = original.get("length")?;
            guards
                .originals
                .borrow_mut()
                .push(Persistent::save(ctx, original));
            let state = guards.clone();
            let guard = Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, this: This<Value<'js>>, args: Rest<Value<'js>>| {
                    state.call(&ctx, index, this.0, args.0)
                },
            )?
            .with_name(name)?;
            guard.set_length(length)?;
            // An assignment: the property keeps the built-in's attributes.
            proto.set(*name, guard)?;
        }
        Ok(originals)
    }

    /// A job's memory limit: a JSValue takes 16 bytes, so no dense array of more
    /// elements than `memory_bytes / 16` fits.
    fn set_memory(&self, memory_bytes: usize) {
        let fits = memory_bytes as f64 / 16.0;
        self.max_length.set(fits.max(MIN_MAX_LENGTH));
    }

    fn call<'js>(
        &self,
        ctx: &Ctx<'js>,
        index: usize,
        this: Value<'js>,
        args: Vec<Value<'js>>,
    ) -> rquickjs::Result<Value<'js>> {
        let name = GUARDED[index];
        self.check(ctx, name, &this)?;
        if name == "concat" {
            for arg in &args {
                if arg.is_object() && !arg.is_function() {
                    self.check(ctx, name, arg)?;
                }
            }
        }
        let original = self.originals.borrow().get(index).cloned();
        let Some(original) = original else {
            return Err(Exception::throw_internal(
                ctx,
                "the sandbox's array guards were released",
            ));
        };
        original.restore(ctx)?.call((This(this), Rest(args)))
    }

    /// Refuses `value` when its `length` is more than a dense array could have (`null` and
    /// `undefined` are left to the built-in, which throws).
    fn check<'js>(&self, ctx: &Ctx<'js>, name: &str, value: &Value<'js>) -> rquickjs::Result<()> {
        if value.is_null() || value.is_undefined() {
            return Ok(());
        }
        let length = raw::length_of(ctx, value)?;
        let max = self.max_length.get();
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
