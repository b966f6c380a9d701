//! The only code of this crate that needs `unsafe`, kept small so it can be read in one sitting:
//!
//! - [`CountingAllocator`]: the allocator of every sandbox runtime. It enforces the memory limit
//!   itself and raises a flag when the limit is hit, so a script that catches QuickJS's
//!   `out of memory` error still ends as `memory_limit` (QuickJS's own `JS_SetMemoryLimit` would
//!   fail the allocation too, but nobody could tell afterwards that it happened).
//! - [`Bytecode`] and [`load_module`]: code is compiled to bytecode in a context that has the
//!   `Eval` intrinsic (see `compile.rs`), and loaded into the sandbox context, which does not.
//!   Without that intrinsic, QuickJS itself refuses `eval`, `Function(...)` and every other way
//!   of turning a string into code, whatever path a script takes to reach them. Loading
//!   bytecode is `unsafe` because malformed bytecode is undefined behaviour; a [`Bytecode`] can
//!   only be made by [`Bytecode::compile`] from source, by this very QuickJS build, so it is
//!   always well formed.
//!
//! - [`add_intrinsic`]: typed arrays, `Map`/`Set`, `Date` and `WeakRef`/`FinalizationRegistry`
//!   are added to a context only when
//!   its tool mentions them (they are a third of the cost of a fresh context, and most tools
//!   never touch them; see `compile::Needs`). rquickjs only offers intrinsics when a context is
//!   created, so this calls QuickJS's `JS_AddIntrinsic*` directly.
//!
//! - [`length_of`] and [`to_js_string`]: `+value.length` and `${value}` for any value (the array guards of `guards.rs` check the
//!   receiver's length as the built-in will read it, primitives included), which rquickjs only
//!   offers on objects, and the string guards coerce as the built-ins do, without copying the
//!   text out of the runtime.
//!
//! - [`native_function`]: a native function made with QuickJS's `JS_NewCFunctionData2`, which
//!   keeps the values it is made with (the built-in a guard replaces) inside the function
//!   object, where the garbage collector sees them: one small object per function, against
//!   rquickjs's `Function::new` (a class instance, a boxed closure and `name`/`length`
//!   redefined), which every fresh runtime would pay for. [`call_passing`] calls a function
//!   with a native function's own arguments, unconverted.
//!
//! - [`replace_lazily`]: methods whose functions QuickJS makes the first time they are read, as
//!   it makes its own built-ins (the guards, `guards.rs`): a [`FunctionList`] of
//!   [`lazy_entry`]s, whose functions find the values they call with when called
//!   ([`LazyNative`]).
//!
//! - [`define_getter`]: an accessor property whose getter is such a native function (the
//!   `fs` and `shell` globals, `grants.rs`), which rquickjs only offers for Rust closures.
//!
//! - [`define_value`] and [`make_constructor`]: `Object.defineProperty` with a descriptor that
//!   leaves attributes out, and a native function that is a constructor (the lock-down,
//!   `lockdown.rs`), which rquickjs does not offer.
//!
//! Nothing else here: no other FFI calls, no raw pointers outside the allocator, the argument
//! and data arrays QuickJS hands a native function, and the `'static` names of a
//! [`FunctionList`].

#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{CStr, c_int};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::convert::Coerced;
use rquickjs::module::Declared;
use rquickjs::{
    Ctx, Exception, FromJs, Function, JsLifetime, Module, Object, Value, WriteOptions, qjs,
};

/// Allocates through Rust's global allocator and refuses to go past `limit` bytes.
pub(crate) struct CountingAllocator {
    inner: RustAllocator,
    used: usize,
    limit: Rc<Cell<usize>>,
    hit: Rc<Cell<bool>>,
}

impl CountingAllocator {
    /// Refuses allocations past `limit` (which may change while the runtime lives); `hit`
    /// becomes `true` the first time it does.
    pub(crate) fn new(limit: Rc<Cell<usize>>, hit: Rc<Cell<bool>>) -> Self {
        CountingAllocator {
            inner: RustAllocator,
            used: 0,
            limit,
            hit,
        }
    }

    fn admits(&self, extra: usize) -> bool {
        let fits = self
            .used
            .checked_add(extra)
            .is_some_and(|total| total <= self.limit.get());
        if !fits {
            self.hit.set(true);
        }
        fits
    }
}

// SAFETY: every allocation is made by `RustAllocator`, which upholds the trait's contract
// (usize-aligned blocks of at least the requested size, with a header that records the size);
// this wrapper only refuses some requests by returning null, which the contract allows, and
// passes every pointer it is given back to the `RustAllocator` that made it.
unsafe impl Allocator for CountingAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admits(size) {
            return ptr::null_mut();
        }
        let block = self.inner.alloc(size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `self.inner`.
            self.used += unsafe { RustAllocator::usable_size(block) };
        }
        block
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return ptr::null_mut();
        };
        if total == 0 || !self.admits(total) {
            return ptr::null_mut();
        }
        let block = self.inner.calloc(count, size);
        if !block.is_null() {
            // SAFETY: `block` was just allocated by `self.inner`.
            self.used += unsafe { RustAllocator::usable_size(block) };
        }
        block
    }

    unsafe fn dealloc(&mut self, block: *mut u8) {
        // SAFETY: the caller hands back a block this allocator made, so `self.inner` made it.
        unsafe {
            self.used = self.used.saturating_sub(RustAllocator::usable_size(block));
            self.inner.dealloc(block);
        }
    }

    unsafe fn realloc(&mut self, block: *mut u8, new_size: usize) -> *mut u8 {
        // SAFETY: the caller hands back a block this allocator made, so `self.inner` made it.
        let old_size = unsafe { RustAllocator::usable_size(block) };
        if new_size > old_size && !self.admits(new_size - old_size) {
            // A failed realloc leaves the old block untouched, as C's realloc does.
            return ptr::null_mut();
        }
        // SAFETY: as above; `self.inner` made `block`.
        let moved = unsafe { self.inner.realloc(block, new_size) };
        if !moved.is_null() {
            // SAFETY: `moved` was just allocated by `self.inner`.
            let now = unsafe { RustAllocator::usable_size(moved) };
            self.used = self.used.saturating_sub(old_size) + now;
        }
        moved
    }

    unsafe fn usable_size(block: *mut u8) -> usize {
        // SAFETY: the caller guarantees `block` was made by this allocator type, which only
        // hands out blocks made by `RustAllocator`.
        unsafe { RustAllocator::usable_size(block) }
    }
}

/// QuickJS bytecode of one module, written by this process from source it compiled itself.
#[derive(Clone)]
pub(crate) struct Bytecode(Arc<[u8]>);

impl Bytecode {
    /// Its size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Compiles `source` as a module named `name` (compile only: nothing runs) in `ctx`, which
    /// must have the `Eval` intrinsic. Without `debug`, line numbers are left out (smaller,
    /// faster to load; for our own modules, whose lines mean nothing to a tool's author).
    pub(crate) fn compile(
        ctx: &Ctx<'_>,
        name: &str,
        source: &str,
        debug: bool,
    ) -> rquickjs::Result<Bytecode> {
        let module = Module::declare(ctx.clone(), name, source)?;
        let bytes = module.write(WriteOptions {
            strip_source: true,
            strip_debug: !debug,
            ..WriteOptions::default()
        })?;
        Ok(Bytecode(bytes.into()))
    }
}

/// Loads a compiled module into `ctx` (declared, not yet evaluated).
pub(crate) fn load_module<'js>(
    ctx: &Ctx<'js>,
    bytecode: &Bytecode,
) -> rquickjs::Result<Module<'js, Declared>> {
    // SAFETY: a `Bytecode` only comes from `Bytecode::compile`, i.e. from `JS_WriteObject` of
    // this same QuickJS build in this process, so it is well-formed bytecode for this reader.
    unsafe { Module::load(ctx.clone(), &bytecode.0) }
}

/// Built-ins a sandbox context gets only when needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LazyIntrinsic {
    /// `ArrayBuffer`, `DataView` and the typed arrays (and `SharedArrayBuffer` and `Atomics`,
    /// which the caller removes again).
    TypedArrays,
    /// `Map`, `Set`, `WeakMap`, `WeakSet`.
    MapSet,
    /// `Date`.
    Date,
    /// `WeakRef` and `FinalizationRegistry`.
    WeakRefs,
}

/// Adds `intrinsic` to the context of `ctx`; `false` if QuickJS failed (out of memory), with
/// the exception pending.
///
/// The caller must add each intrinsic at most once per context: QuickJS would set it up twice.
pub(crate) fn add_intrinsic(ctx: &Ctx<'_>, intrinsic: LazyIntrinsic) -> bool {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `raw` is the live context `ctx` borrows, used on its own thread; these are the
    // calls QuickJS's and rquickjs's context builders make, and the caller makes each at most
    // once per context (see `host::JobSlot::ensure`).
    let status = unsafe {
        match intrinsic {
            LazyIntrinsic::TypedArrays => qjs::JS_AddIntrinsicTypedArrays(raw),
            LazyIntrinsic::MapSet => qjs::JS_AddIntrinsicMapSet(raw),
            LazyIntrinsic::Date => qjs::JS_AddIntrinsicDate(raw),
            LazyIntrinsic::WeakRefs => qjs::JS_AddIntrinsicWeakRef(raw),
        }
    };
    status == 0
}

/// `+value.length`, as JavaScript computes it: getters and `valueOf` run, a primitive is read
/// through its wrapper (a string has its length, a number none, which is `NaN`).
pub(crate) fn length_of<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> rquickjs::Result<f64> {
    // SAFETY: `value` belongs to the live context `ctx` borrows, used on its own thread;
    // `JS_GetProperty` takes a borrowed value and one of QuickJS's built-in atoms (never freed),
    // and returns a new reference, which `Value::from_raw` takes ownership of (and frees).
    let length = unsafe {
        let got = qjs::JS_GetProperty(
            ctx.as_raw().as_ptr(),
            value.as_raw(),
            qjs::JS_ATOM_length as qjs::JSAtom,
        );
        Value::from_raw(ctx.clone(), got)
    };
    if length.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Coerced::<f64>::from_js(ctx, length).map(|n| n.0)
}

/// `ToString(value)` as JavaScript computes it (`${value}`: a symbol throws), as a JS string.
pub(crate) fn to_js_string<'js>(
    ctx: &Ctx<'js>,
    value: &Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    // SAFETY: `value` belongs to the live context `ctx` borrows, used on its own thread;
    // `JS_ToString` takes a borrowed value and returns a new reference, which `Value::from_raw`
    // takes ownership of.
    let text = unsafe {
        let raw = qjs::JS_ToString(ctx.as_raw().as_ptr(), value.as_raw());
        Value::from_raw(ctx.clone(), raw)
    };
    if text.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Ok(text)
}

/// What a function made by [`native_function`] does when called: `magic` is the number it was
/// made with, `data` the values it was made with (`DATA` of them).
pub(crate) trait Native {
    /// How many values each function of this kind keeps.
    const DATA: usize;

    fn call<'js>(
        ctx: &Ctx<'js>,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>>;
}

/// Values QuickJS hands a native function for the length of a call: its arguments, or the
/// values it was made with.
pub(crate) struct Args<'a, 'js> {
    ctx: &'a Ctx<'js>,
    values: &'a [qjs::JSValue],
}

impl<'js> Args<'_, 'js> {
    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The `index`-th, `undefined` past the end.
    pub(crate) fn get(&self, index: usize) -> Value<'js> {
        match self.values.get(index) {
            // SAFETY: the value is live for the call and belongs to this context; `JS_DupValue`
            // makes the reference `Value::from_raw` takes ownership of.
            Some(&raw) => unsafe {
                Value::from_raw(
                    self.ctx.clone(),
                    qjs::JS_DupValue(self.ctx.as_raw().as_ptr(), raw),
                )
            },
            None => Value::new_undefined(self.ctx.clone()),
        }
    }
}

/// A native function named `name`, of `length`, that calls `N::call` with `magic` and `data`
/// (which the function keeps, traced by the garbage collector, for as long as it lives). Not a
/// constructor.
pub(crate) fn native_function<'js, N: Native>(
    ctx: &Ctx<'js>,
    name: &CStr,
    length: u8,
    magic: u16,
    data: &[Value<'js>],
) -> rquickjs::Result<Function<'js>> {
    if data.len() != N::DATA {
        return Err(Exception::throw_internal(
            ctx,
            "a native function was made with the wrong number of values",
        ));
    }
    let mut raw_data: Vec<qjs::JSValue> = data.iter().map(Value::as_raw).collect();
    // SAFETY: the live context `ctx` borrows, on its own thread; QuickJS copies (and duplicates)
    // the `data` values and the name; the new reference it returns is owned by `Value::from_raw`.
    let function = unsafe {
        let raw = qjs::JS_NewCFunctionData2(
            ctx.as_raw().as_ptr(),
            Some(trampoline::<N>),
            name.as_ptr(),
            c_int::from(length),
            c_int::from(magic),
            N::DATA as c_int,
            raw_data.as_mut_ptr(),
        );
        Value::from_raw(ctx.clone(), raw)
    };
    if function.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Function::from_value(function)
}

/// What QuickJS calls for a function made by [`native_function`].
unsafe extern "C" fn trampoline<N: Native>(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
    data: *mut qjs::JSValue,
) -> qjs::JSValue {
    let Some(raw_ctx) = NonNull::new(ctx) else {
        return qjs::JS_EXCEPTION;
    };
    // SAFETY: QuickJS hands `data` the `N::DATA` values the function was made with
    // (`native_function` checked), borrowed for the length of the call.
    let data: &[qjs::JSValue] = if N::DATA > 0 && !data.is_null() {
        unsafe { std::slice::from_raw_parts(data, N::DATA) }
    } else {
        &[]
    };
    // SAFETY: as `call_native` requires, straight from QuickJS.
    unsafe { call_native::<N>(raw_ctx, this, argc, argv, magic, data) }
}

/// Calls `N::call` for QuickJS and turns its outcome into what QuickJS expects back.
///
/// # Safety
/// Called on the runtime's own thread with the runtime locked, for the length of a call QuickJS
/// makes: `ctx` is live, `argv` holds at least `argc` values, and `this`, `argv` and `data` are
/// borrowed values of that runtime that outlive the call.
unsafe fn call_native<N: Native>(
    raw_ctx: NonNull<qjs::JSContext>,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
    data: &[qjs::JSValue],
) -> qjs::JSValue {
    // SAFETY: see above; `this` is borrowed, hence the `JS_DupValue` before `Value::from_raw`
    // owns it.
    let (ctx, this, args) = unsafe {
        let ctx = Ctx::from_raw(raw_ctx);
        let this = Value::from_raw(ctx.clone(), qjs::JS_DupValue(ctx.as_raw().as_ptr(), this));
        let args: &[qjs::JSValue] = match usize::try_from(argc) {
            Ok(n) if n > 0 && !argv.is_null() => std::slice::from_raw_parts(argv, n),
            _ => &[],
        };
        (ctx, this, args)
    };
    let magic = u16::try_from(magic).unwrap_or(u16::MAX);
    let called = panic::catch_unwind(AssertUnwindSafe(|| {
        N::call(
            &ctx,
            magic,
            this,
            &Args {
                ctx: &ctx,
                values: args,
            },
            &Args {
                ctx: &ctx,
                values: data,
            },
        )
    }));
    let result = match called {
        Ok(result) => result,
        Err(_) => Err(Exception::throw_internal(&ctx, "a sandbox guard failed")),
    };
    match result {
        // SAFETY: a new reference for QuickJS to own, made from the live `value`.
        Ok(value) => unsafe { qjs::JS_DupValue(ctx.as_raw().as_ptr(), value.as_raw()) },
        Err(rquickjs::Error::Exception) => qjs::JS_EXCEPTION,
        Err(other) => {
            let _ = Exception::throw_internal(&ctx, &other.to_string());
            qjs::JS_EXCEPTION
        }
    }
}

/// Values a runtime keeps for its native functions, in its userdata (`Ctx::store_userdata`):
/// out of every script's reach, and freed with the runtime.
pub(crate) struct Kept<'js>(pub(crate) Vec<Value<'js>>);

// SAFETY: `Changed` is `Kept` with only its `'js` lifetime changed, as rquickjs requires.
unsafe impl<'js> JsLifetime<'js> for Kept<'js> {
    type Changed<'to> = Kept<'to>;
}

/// A [`Native`] whose functions are made only when a script first reads them
/// ([`replace_lazily`]): such a function keeps no values, so it finds the ones it is called with
/// when it is called.
pub(crate) trait LazyNative: Native {
    /// The `N::DATA` values (at most two) a call of the function made with `magic` passes to
    /// [`Native::call`]; `None` fails the call.
    fn data<'js>(ctx: &Ctx<'js>, magic: u16) -> Option<[Value<'js>; 2]>;
}

/// Entries of a function list for [`replace_lazily`], made by [`lazy_entry`]: a `static`, since
/// QuickJS keeps pointing at an entry until its function is made.
pub(crate) struct FunctionList<const N: usize>(pub(crate) [qjs::JSCFunctionListEntry; N]);

// SAFETY: the entries hold only pointers to `'static` C strings and to functions; nothing in
// them is ever written.
unsafe impl<const N: usize> Sync for FunctionList<N> {}

/// A method named `name`, of `length`, writable and configurable but not enumerable (as the
/// built-in methods are), whose function calls `N::call` with `magic` and `N::data`.
pub(crate) const fn lazy_entry<N: LazyNative>(
    name: &'static CStr,
    length: u8,
    magic: i16,
) -> qjs::JSCFunctionListEntry {
    qjs::JSCFunctionListEntry {
        name: name.as_ptr(),
        prop_flags: (qjs::JS_PROP_WRITABLE | qjs::JS_PROP_CONFIGURABLE) as u8,
        def_type: qjs::JS_DEF_CFUNC as u8,
        magic,
        u: qjs::JSCFunctionListEntry__bindgen_ty_1 {
            func: qjs::JSCFunctionListEntry__bindgen_ty_1__bindgen_ty_1 {
                length,
                cproto: qjs::JSCFunctionEnum_JS_CFUNC_generic_magic as u8,
                cfunc: qjs::JSCFunctionType {
                    generic_magic: Some(lazy_trampoline::<N>),
                },
            },
        },
    }
}

/// Replaces the methods named in `list` on `object` by the list's, defined as QuickJS defines
/// its own built-in methods: each function is made the first time its property is read.
/// Returns the values replaced, in the list's order.
pub(crate) fn replace_lazily<'js, const N: usize>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    list: &'static FunctionList<N>,
) -> rquickjs::Result<Vec<Value<'js>>> {
    let mut replaced = Vec::with_capacity(N);
    let raw_ctx = ctx.as_raw().as_ptr();
    for entry in &list.0 {
        // SAFETY: `object` belongs to the live context `ctx` borrows, used on its own thread;
        // every entry's name is a C string (`lazy_entry` takes a `CStr`). The atom made here is
        // freed before the block ends; the value read is a new reference `Value::from_raw`
        // owns. With no descriptor to fill, `JS_GetOwnProperty` only looks the property up.
        let (value, deleted, still_there) = unsafe {
            let key = qjs::JS_NewAtom(raw_ctx, entry.name);
            if key == qjs::JS_ATOM_NULL as qjs::JSAtom {
                return Err(rquickjs::Error::Exception);
            }
            let value = Value::from_raw(
                ctx.clone(),
                qjs::JS_GetProperty(raw_ctx, object.as_raw(), key),
            );
            let deleted =
                qjs::JS_DeleteProperty(raw_ctx, object.as_raw(), key, qjs::JS_PROP_THROW as c_int);
            let still_there =
                qjs::JS_GetOwnProperty(raw_ctx, ptr::null_mut(), object.as_raw(), key);
            qjs::JS_FreeAtom(raw_ctx, key);
            (value, deleted, still_there)
        };
        if value.is_exception() || deleted < 0 {
            return Err(rquickjs::Error::Exception);
        }
        // QuickJS aborts the process when a lazy method would replace a property.
        if still_there != 0 {
            return Err(Exception::throw_internal(
                ctx,
                "a built-in method could not be replaced by its guard",
            ));
        }
        replaced.push(value);
    }
    let len = c_int::try_from(N).unwrap_or(c_int::MAX);
    // SAFETY: `object` belongs to the live context `ctx` borrows, used on its own thread; the
    // list is `'static` and well formed (`lazy_entry`), and none of its names is a property of
    // `object` any more (checked above).
    let status = unsafe {
        qjs::JS_SetPropertyFunctionList(
            ctx.as_raw().as_ptr(),
            object.as_raw(),
            list.0.as_ptr(),
            len,
        )
    };
    if status < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(replaced)
}

/// What QuickJS calls for a function made from a [`lazy_entry`].
unsafe extern "C" fn lazy_trampoline<N: LazyNative>(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
) -> qjs::JSValue {
    let Some(raw_ctx) = NonNull::new(ctx) else {
        return qjs::JS_EXCEPTION;
    };
    // SAFETY: QuickJS calls this on the runtime's own thread with `ctx` live.
    let found = unsafe { Ctx::from_raw(raw_ctx) };
    // No unwinding into QuickJS: a panic here fails the call like a missing value.
    let data = u16::try_from(magic).ok().and_then(|magic| {
        panic::catch_unwind(AssertUnwindSafe(|| N::data(&found, magic)))
            .ok()
            .flatten()
    });
    let Some(data) = data else {
        let _ = Exception::throw_internal(&found, "a sandbox guard lost the built-in it guards");
        return qjs::JS_EXCEPTION;
    };
    // The values stay owned here for the length of the call.
    let [first, second] = data;
    let raw = [first.as_raw(), second.as_raw()];
    let raw = raw.get(..N::DATA).unwrap_or(&raw);
    // SAFETY: as `call_native` requires, straight from QuickJS; `raw` borrows `first` and
    // `second`.
    unsafe { call_native::<N>(raw_ctx, this, argc, argv, magic, raw) }
}

/// The attributes a [`define_value`] sets; those it leaves out keep what they were (or are
/// `false` on a new property), as in `Object.defineProperty`.
#[derive(Clone, Copy)]
pub(crate) struct Descriptor(c_int);

impl Descriptor {
    /// `{writable: false}`.
    pub(crate) const READ_ONLY: Descriptor = Descriptor(qjs::JS_PROP_HAS_WRITABLE as c_int);
    /// `{writable: false, configurable: false}`.
    pub(crate) const FIXED: Descriptor =
        Descriptor((qjs::JS_PROP_HAS_WRITABLE | qjs::JS_PROP_HAS_CONFIGURABLE) as c_int);
    /// `{writable: false, enumerable: false, configurable: false}`.
    pub(crate) const HIDDEN_FIXED: Descriptor = Descriptor(
        (qjs::JS_PROP_HAS_WRITABLE | qjs::JS_PROP_HAS_CONFIGURABLE | qjs::JS_PROP_HAS_ENUMERABLE)
            as c_int,
    );
}

/// `Object.defineProperty(object, name, {value, ...descriptor})`: throws as it does when the
/// property cannot be so defined.
pub(crate) fn define_value<'js>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    name: &CStr,
    value: Value<'js>,
    descriptor: Descriptor,
) -> rquickjs::Result<()> {
    let undefined = Value::new_undefined(ctx.clone());
    let flags = descriptor.0 | qjs::JS_PROP_HAS_VALUE as c_int;
    define(ctx, object, name, (&value, &undefined), flags)
}

/// Makes `function` (a native function) a constructor: `new` and `Reflect.construct` call it
/// too.
pub(crate) fn make_constructor<'js>(
    ctx: &Ctx<'js>,
    function: &Function<'js>,
) -> rquickjs::Result<()> {
    // SAFETY: the live context `ctx` borrows, on its own thread, and a live function of it,
    // borrowed for the call.
    let done = unsafe { qjs::JS_SetConstructorBit(ctx.as_raw().as_ptr(), function.as_raw(), true) };
    if !done {
        return Err(Exception::throw_internal(
            ctx,
            "could not make a constructor",
        ));
    }
    Ok(())
}

/// Defines `name` on `object` as an accessor property with `getter` and no setter, neither
/// enumerable nor configurable (what `Object.defineProperty(object, name, {get})` makes).
pub(crate) fn define_getter<'js>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    name: &CStr,
    getter: Function<'js>,
) -> rquickjs::Result<()> {
    let undefined = Value::new_undefined(ctx.clone());
    let flags = (qjs::JS_PROP_HAS_GET
        | qjs::JS_PROP_HAS_SET
        | qjs::JS_PROP_HAS_CONFIGURABLE
        | qjs::JS_PROP_HAS_ENUMERABLE) as c_int;
    define(ctx, object, name, (&undefined, getter.as_value()), flags)
}

/// `JS_DefineProperty` of `name` on `object` with `value` or `getter` (whichever `flags` say),
/// throwing as `Object.defineProperty` does.
fn define<'js>(
    ctx: &Ctx<'js>,
    object: &Object<'js>,
    name: &CStr,
    (value, getter): (&Value<'js>, &Value<'js>),
    flags: c_int,
) -> rquickjs::Result<()> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: the live context `ctx` borrows, on its own thread, and live values of it, which
    // `JS_DefineProperty` borrows; `JS_NewAtom` copies the name and returns an atom this
    // function frees.
    let status = unsafe {
        let atom = qjs::JS_NewAtom(raw, name.as_ptr());
        let status = qjs::JS_DefineProperty(
            raw,
            object.as_raw(),
            atom,
            value.as_raw(),
            getter.as_raw(),
            qjs::JS_UNDEFINED,
            flags | qjs::JS_PROP_THROW as c_int,
        );
        qjs::JS_FreeAtom(raw, atom);
        status
    };
    if status < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

/// Calls `function` with `this` and the arguments of a native function's call, as they are.
pub(crate) fn call_passing<'js>(
    ctx: &Ctx<'js>,
    function: &Value<'js>,
    this: &Value<'js>,
    args: &Args<'_, 'js>,
) -> rquickjs::Result<Value<'js>> {
    let argc = c_int::try_from(args.values.len()).unwrap_or(c_int::MAX);
    // SAFETY: every value is live and belongs to the live context `ctx` borrows, on its own
    // thread; `JS_Call` borrows them (it only reads `argv`, whatever its pointer type says) and
    // returns a new reference, which `Value::from_raw` owns.
    let result = unsafe {
        let raw = qjs::JS_Call(
            ctx.as_raw().as_ptr(),
            function.as_raw(),
            this.as_raw(),
            argc,
            args.values.as_ptr().cast_mut(),
        );
        Value::from_raw(ctx.clone(), raw)
    };
    if result.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Ok(result)
}
