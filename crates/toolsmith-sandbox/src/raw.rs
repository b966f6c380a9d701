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
//! - [`add_intrinsic`]: typed arrays, `Map`/`Set` and `Date` are added to a context only when
//!   its tool mentions them (they are a third of the cost of a fresh context, and most tools
//!   never touch them; see `compile::Needs`). rquickjs only offers intrinsics when a context is
//!   created, so this calls QuickJS's `JS_AddIntrinsic*` directly.
//!
//! - [`length_of`]: `+value.length` for any value (the array guards of `guards.rs` check the
//!   receiver's length as the built-in will read it, primitives included), which rquickjs only
//!   offers on objects.
//!
//! Nothing else here: no other FFI calls, no raw pointers outside the allocator.

#![allow(unsafe_code)]

use std::cell::Cell;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::convert::Coerced;
use rquickjs::module::Declared;
use rquickjs::{Ctx, FromJs, Module, Value, WriteOptions, qjs};

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
        }
    };
    status == 0
}

/// `+value.length`, as JavaScript computes it: getters and `valueOf` run, a primitive is read
/// through its wrapper (a string has its length, a number none, which is `NaN`).
pub(crate) fn length_of<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> rquickjs::Result<f64> {
    // SAFETY: `value` belongs to the live context `ctx` borrows, used on its own thread;
    // `JS_GetPropertyStr` takes a borrowed value and returns a new reference, which
    // `Value::from_raw` takes ownership of (and frees).
    let length = unsafe {
        let got = qjs::JS_GetPropertyStr(ctx.as_raw().as_ptr(), value.as_raw(), c"length".as_ptr());
        Value::from_raw(ctx.clone(), got)
    };
    if length.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    Coerced::<f64>::from_js(ctx, length).map(|n| n.0)
}
