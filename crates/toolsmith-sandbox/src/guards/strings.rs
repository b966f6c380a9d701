//! The string guards, as native functions: `normalize` and `localeCompare` by the host's linear
//! Unicode normalization (QuickJS's own is quadratic on long runs of combining marks), and
//! `indexOf`, `lastIndexOf`, `includes`, `split`, `replace` and `replaceAll` by the host's
//! linear search once the needle and the haystack are long (QuickJS's naive search is
//! quadratic).
//!
//! Each does what the prelude's JavaScript guard did, step for step (the same coercions, in the
//! same order, with the same messages), and then calls the built-in it replaced or takes the
//! rare path of `bounds.js` (a long search, strings with lone surrogates), which is loaded the
//! first time one is taken. Everything `bounds.js` uses is captured here, before any tool code
//! ran, in the *kit* (an array no script can reach, kept as every string guard's second datum).

use rquickjs::function::{IntoArgs, This};
use rquickjs::{Array, Ctx, Exception, Function, IntoJs, Object, Value};

use super::{max_string_bytes, name_str};
use crate::raw::{self, Args, FunctionList, LazyNative, Native, lazy_entry};
use crate::utils;

/// The guarded methods of `String.prototype`, by index (the `magic` of each one's guard).
pub(super) const GUARDED: [&std::ffi::CStr; 8] = [
    c"normalize",
    c"localeCompare",
    c"indexOf",
    c"lastIndexOf",
    c"includes",
    c"split",
    c"replace",
    c"replaceAll",
];
const NORMALIZE: u16 = 0;
const LOCALE_COMPARE: u16 = 1;
const INDEX_OF: u16 = 2;
const LAST_INDEX_OF: u16 = 3;
const INCLUDES: u16 = 4;
const SPLIT: u16 = 5;
const REPLACE: u16 = 6;
const REPLACE_ALL: u16 = 7;

/// What the kit holds, by position, as `bounds.js`'s `init` reads it: `Reflect.apply`, then
/// built-ins of `String.prototype` (`S`), `Array.prototype` (`A`), `RegExp` and its `escape`;
/// then `Array.isArray` for the `flat` guards (`guards.rs`).
const KIT: [(Holder, &str); 13] = [
    (Holder::Reflect, "apply"),
    (Holder::StringProto, "slice"),
    (Holder::StringProto, "codePointAt"),
    (Holder::StringProto, "split"),
    (Holder::ArrayProto, "join"),
    (Holder::StringProto, "isWellFormed"),
    (Holder::Global, "RegExp"),
    (Holder::RegExp, "escape"),
    (Holder::StringProto, "lastIndexOf"),
    (Holder::StringProto, "split"),
    (Holder::StringProto, "replace"),
    (Holder::StringProto, "replaceAll"),
    (Holder::Array, "isArray"),
];
/// The kit's `isWellFormed`.
const KIT_IS_WELL_FORMED: usize = 5;
/// The kit's `Array.isArray`.
pub(super) const KIT_IS_ARRAY: usize = 12;
/// Where the kit keeps the rare paths once `bounds.js` is loaded.
const KIT_RARE: usize = KIT.len();
/// Where the kit keeps the nested walk of `flat` once `flat.js` is loaded.
pub(super) const KIT_FLAT: usize = KIT.len() + 1;

/// A needle longer than this, in a haystack this many times longer than the needle's length
/// squared ([`QUADRATIC`]), is searched by the host.
const LONG_NEEDLE: f64 = 16.0;
const QUADRATIC: f64 = (1u32 << 20) as f64;

#[derive(Clone, Copy)]
enum Holder {
    Global,
    Array,
    Reflect,
    StringProto,
    ArrayProto,
    RegExp,
}

/// The guards of `String.prototype`, in [`GUARDED`]'s order (magic = index), each with its
/// built-in's length.
static STRING_GUARDS: FunctionList<8> = FunctionList([
    lazy_entry::<StringGuard>(c"normalize", 0, 0),
    lazy_entry::<StringGuard>(c"localeCompare", 1, 1),
    lazy_entry::<StringGuard>(c"indexOf", 1, 2),
    lazy_entry::<StringGuard>(c"lastIndexOf", 1, 3),
    lazy_entry::<StringGuard>(c"includes", 1, 4),
    lazy_entry::<StringGuard>(c"split", 2, 5),
    lazy_entry::<StringGuard>(c"replace", 2, 6),
    lazy_entry::<StringGuard>(c"replaceAll", 2, 7),
]);

/// Replaces the guarded methods of `String.prototype` (`globals` is the context's global
/// object) by guards made when first read; returns the built-ins they replaced, in
/// [`GUARDED`]'s order. Call after [`kit`].
pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    globals: &Object<'js>,
) -> rquickjs::Result<Vec<Value<'js>>> {
    let string: Object<'js> = globals.get("String")?;
    let string_proto: Object<'js> = string.get("prototype")?;
    raw::replace_lazily(ctx, &string_proto, &STRING_GUARDS)
}

/// The kit, captured from `globals` (the context's global object) before any tool code ran
/// and before the guards replace what it holds.
pub(super) fn kit<'js>(ctx: &Ctx<'js>, globals: &Object<'js>) -> rquickjs::Result<Value<'js>> {
    let string: Object<'js> = globals.get("String")?;
    let string_proto: Object<'js> = string.get("prototype")?;
    let array: Object<'js> = globals.get("Array")?;
    let array_proto: Object<'js> = array.get("prototype")?;
    let reflect: Object<'js> = globals.get("Reflect")?;
    let regexp: Object<'js> = globals.get("RegExp")?;
    let kit = Array::new(ctx.clone())?;
    for (index, (holder, name)) in KIT.iter().enumerate() {
        let from = match holder {
            Holder::Global => globals,
            Holder::Array => &array,
            Holder::Reflect => &reflect,
            Holder::StringProto => &string_proto,
            Holder::ArrayProto => &array_proto,
            Holder::RegExp => &regexp,
        };
        kit.set(index, from.get::<_, Value<'js>>(*name)?)?;
    }
    Ok(kit.into_value())
}

/// A guard of [`GUARDED`]: its data are the built-in it replaced and the kit.
struct StringGuard;

impl LazyNative for StringGuard {
    fn data<'js>(ctx: &Ctx<'js>, magic: u16) -> Option<[Value<'js>; 2]> {
        super::kept(ctx, super::FIRST_STRING, magic)
    }
}

impl Native for StringGuard {
    const DATA: usize = 2;

    fn call<'js>(
        ctx: &Ctx<'js>,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let guard = Guard {
            ctx,
            original: data.get(0),
            kit: data.get(1),
        };
        match magic {
            NORMALIZE => guard.normalize(this, args.get(0)),
            LOCALE_COMPARE => guard.locale_compare(this, args.get(0)),
            INDEX_OF | LAST_INDEX_OF => guard.search(magic, this, args),
            INCLUDES => guard.includes(this, args),
            SPLIT | REPLACE | REPLACE_ALL => guard.split_or_replace(magic, this, args),
            _ => Err(Exception::throw_internal(ctx, "no such string guard")),
        }
    }
}

/// One call of a string guard.
struct Guard<'a, 'js> {
    ctx: &'a Ctx<'js>,
    original: Value<'js>,
    kit: Value<'js>,
}

impl<'js> Guard<'_, 'js> {
    /// `normalize(form)`: the host's normalization of a well-formed string.
    fn normalize(&self, this: Value<'js>, form: Value<'js>) -> rquickjs::Result<Value<'js>> {
        let text = self.coerce(this, NORMALIZE)?;
        let form = if form.is_undefined() {
            "NFC".to_owned()
        } else {
            let form = raw::to_js_string(self.ctx, &form)?;
            rust_string(&form).unwrap_or_default()
        };
        if !matches!(form.as_str(), "NFC" | "NFD" | "NFKC" | "NFKD") {
            return Err(Exception::throw_range(
                self.ctx,
                "invalid normalization form",
            ));
        }
        let max_bytes = max_string_bytes();
        if !self.well_formed(&text)? {
            return self.rare("normalize", (text, form.as_str(), max_bytes as f64));
        }
        let text = self.rust_text(&text)?;
        let normalized = utils::normalize(&text, &form, max_bytes)
            .map_err(|e| Exception::throw_range(self.ctx, &e))?;
        normalized.into_js(self.ctx)
    }

    /// `localeCompare(that)`: code points after NFC, by the host for well-formed strings.
    fn locale_compare(&self, this: Value<'js>, that: Value<'js>) -> rquickjs::Result<Value<'js>> {
        let a = self.coerce(this, LOCALE_COMPARE)?;
        let b = raw::to_js_string(self.ctx, &that)?;
        if !(self.well_formed(&a)? && self.well_formed(&b)?) {
            let max_bytes = max_string_bytes() as f64;
            return self.rare("localeCompare", (a, b, max_bytes));
        }
        let order = utils::compare_nfc(&self.rust_text(&a)?, &self.rust_text(&b)?);
        Ok(Value::new_int(self.ctx.clone(), order))
    }

    /// `indexOf(search, from)` and `lastIndexOf(search, from)`.
    fn search(
        &self,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let search = args.get(0);
        // The common case, as the guard would call the built-in anyway (which reads no more
        // than two arguments): a short string needle in a string.
        if this.is_string() && search.is_string() && !self.long(&this, &search)? {
            return raw::call_passing(self.ctx, &self.original, &this, args);
        }
        let text = self.coerce(this, magic)?;
        let pattern = raw::to_js_string(self.ctx, &search)?;
        let from = args.get(1);
        if self.long(&text, &pattern)? {
            let rare = if magic == INDEX_OF {
                "indexOf"
            } else {
                "lastIndexOf"
            };
            return self.rare(rare, (text, pattern, from));
        }
        self.call_original(text, (pattern, from))
    }

    /// `includes(search, from)`.
    fn includes(&self, this: Value<'js>, args: &Args<'_, 'js>) -> rquickjs::Result<Value<'js>> {
        let search = args.get(0);
        if this.is_string() && (!search.is_string() || !self.long(&this, &search)?) {
            return raw::call_passing(self.ctx, &self.original, &this, args);
        }
        let text = self.coerce(this, INCLUDES)?;
        if !search.is_string() || !self.long(&text, &search)? {
            return self.call_original(text, (search, args.get(1)));
        }
        let found = self.rare("indexOf", (text, search, args.get(1)))?;
        let found = found.as_number().unwrap_or(-1.0);
        Ok(Value::new_bool(self.ctx.clone(), found != -1.0))
    }

    /// `split(separator, limit)`, `replace(pattern, replacement)` and
    /// `replaceAll(pattern, replacement)`: `this` is coerced by the guard only for a string
    /// needle, and otherwise left to the built-in.
    fn split_or_replace(
        &self,
        magic: u16,
        this: Value<'js>,
        args: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let needle = args.get(0);
        if !this.is_null() && !this.is_undefined() && needle.is_string() {
            let text = raw::to_js_string(self.ctx, &this)?;
            if self.long(&text, &needle)? {
                let last = args.get(1);
                return match magic {
                    SPLIT => self.rare("splitLong", (text, needle, last)),
                    _ => self.rare("replaceLong", (magic == REPLACE_ALL, text, needle, last)),
                };
            }
        }
        // The built-ins read no more than the two arguments the guard would pass on.
        raw::call_passing(self.ctx, &self.original, &this, args)
    }

    /// `ToString(this)`, refusing `null` and `undefined` as the built-ins do.
    fn coerce(&self, this: Value<'js>, magic: u16) -> rquickjs::Result<Value<'js>> {
        if this.is_null() || this.is_undefined() {
            let name = GUARDED
                .get(usize::from(magic))
                .map_or("", |name| name_str(name));
            return Err(Exception::throw_type(
                self.ctx,
                &format!("String.prototype.{name} called on null or undefined"),
            ));
        }
        if this.is_string() {
            return Ok(this);
        }
        raw::to_js_string(self.ctx, &this)
    }

    /// Whether searching `text` for `pattern` (both strings) could be quadratic.
    fn long(&self, text: &Value<'js>, pattern: &Value<'js>) -> rquickjs::Result<bool> {
        let needle = raw::length_of(self.ctx, pattern)?;
        if needle <= LONG_NEEDLE {
            return Ok(false);
        }
        Ok(raw::length_of(self.ctx, text)? * needle > QUADRATIC)
    }

    /// Whether the string `text` has no lone surrogates (the captured `isWellFormed`).
    fn well_formed(&self, text: &Value<'js>) -> rquickjs::Result<bool> {
        let is_well_formed: Function<'js> = self.kit_item(KIT_IS_WELL_FORMED)?;
        is_well_formed.call((This(text.clone()),))
    }

    /// The text of a well-formed string.
    fn rust_text(&self, text: &Value<'js>) -> rquickjs::Result<String> {
        match rust_string(text) {
            Some(text) => Ok(text),
            None => Err(Exception::throw_internal(
                self.ctx,
                "a string guard could not read a well-formed string",
            )),
        }
    }

    /// Calls the built-in the guard replaced.
    fn call_original(
        &self,
        this: Value<'js>,
        (a, b): (Value<'js>, Value<'js>),
    ) -> rquickjs::Result<Value<'js>> {
        let original = Function::from_value(self.original.clone())?;
        original.call((This(this), a, b))
    }

    /// Calls the rare path `name` of `bounds.js` (loaded on first use).
    fn rare(&self, name: &str, args: impl IntoArgs<'js>) -> rquickjs::Result<Value<'js>> {
        let kit = self.kit()?;
        let rare = match kit.get::<Value<'js>>(KIT_RARE)? {
            rare if rare.is_object() => Object::from_value(rare)?,
            _ => {
                let rare = utils::load_bounds(self.ctx, kit.clone().into_value())?;
                kit.set(KIT_RARE, rare.clone())?;
                rare
            }
        };
        let path: Function<'js> = rare.get(name)?;
        path.call(args)
    }

    fn kit(&self) -> rquickjs::Result<Array<'js>> {
        Array::from_value(self.kit.clone())
    }

    fn kit_item<T: rquickjs::FromJs<'js>>(&self, index: usize) -> rquickjs::Result<T> {
        self.kit()?.get(index)
    }
}

/// A JS string's text, if it is well formed.
fn rust_string(value: &Value<'_>) -> Option<String> {
    value.as_string().and_then(|text| text.to_string().ok())
}
