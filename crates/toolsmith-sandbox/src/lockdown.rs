//! The lock-down of what the engine offers, done natively in every fresh context before any
//! tool code runs: no code from strings, no shared memory, no stack-trace hooks.
//!
//! The sandbox context has no `Eval` intrinsic, so QuickJS itself refuses to compile strings
//! whatever path reaches it; the replacements here only make the refusal say clearly what
//! happened: `eval`, `Function` and the `constructor` of every kind of function prototype
//! (plain, async, generator, async generator) become one native function, `noCode`, that throws
//! an `EvalError` naming the rule, whether it is called or constructed. `SharedArrayBuffer` and
//! `Atomics` go (typed arrays are added only for tools that mention them, and these two are
//! removed again then, `host::JobSlot::ensure`), and `Error.prepareStackTrace` is fixed to
//! `undefined`, so a V8-style hook can never hand out the functions on the stack.
//!
//! **Why native.** Written in `prelude.js`, every fresh runtime read the code, created a closure
//! and eight descriptor objects and collected them again: about 6% of a trivial call's CPU.
//! Here it is one native function and a few property definitions. The prelude hands over one
//! generator and one async generator function (their prototypes are reachable no other way);
//! the async function prototype is its own `run` hook's.

use rquickjs::{Constructor, Ctx, Function, Object, Value};

use crate::raw::{self, Args, Descriptor, Native};

/// What `noCode` throws.
const NO_CODE: &str = "code cannot be generated from strings in the sandbox (eval and the Function constructors are disabled)";

/// Locks the context of `ctx` down; `kinds` are functions whose prototypes' `constructor` must
/// go too (besides `Function.prototype`'s). Call before any tool code runs.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, kinds: &[Function<'js>]) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let eval_error: Value<'js> = globals.get("EvalError")?;
    let no_code = raw::native_function::<NoCode>(ctx, c"noCode", 0, 0, &[eval_error])?;
    raw::make_constructor(ctx, &no_code)?;
    let no_code_object = Object::from_value(no_code.clone().into_value())?;
    let function_proto = prototype_of(&no_code)?;
    // `x instanceof Function` keeps working.
    raw::define_value(
        ctx,
        &no_code_object,
        c"prototype",
        function_proto.clone().into_value(),
        Descriptor::READ_ONLY,
    )?;
    let mut protos = vec![function_proto];
    for kind in kinds {
        protos.push(prototype_of(kind)?);
    }
    for proto in &protos {
        raw::define_value(
            ctx,
            proto,
            c"constructor",
            no_code.clone().into_value(),
            Descriptor::FIXED,
        )?;
    }
    for name in [c"Function", c"eval"] {
        raw::define_value(
            ctx,
            &globals,
            name,
            no_code.clone().into_value(),
            Descriptor::HIDDEN_FIXED,
        )?;
    }
    // No shared memory.
    globals.remove("SharedArrayBuffer")?;
    globals.remove("Atomics")?;
    // No V8-style stack hooks: call sites would hand out the functions on the stack.
    let error: Object<'js> = globals.get("Error")?;
    raw::define_value(
        ctx,
        &error,
        c"prepareStackTrace",
        Value::new_undefined(ctx.clone()),
        Descriptor::FIXED,
    )
}

fn prototype_of<'js>(function: &Function<'js>) -> rquickjs::Result<Object<'js>> {
    Object::from_value(function.clone().into_value())?
        .get_prototype()
        .ok_or(rquickjs::Error::Unknown)
}

/// `eval`, `Function` and every function constructor: throws `EvalError` (its one datum, the
/// constructor as it was before any tool code ran).
struct NoCode;

impl Native for NoCode {
    const DATA: usize = 1;

    fn call<'js>(
        ctx: &Ctx<'js>,
        _magic: u16,
        _this: Value<'js>,
        _args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let eval_error = Constructor::from_value(data.get(0))?;
        let error: Value<'js> = eval_error.construct((NO_CODE,))?;
        Err(ctx.throw(error))
    }
}
