//! The globals a tool's permissions add: `fetch` (permission `network`), `fs` (`filesystem`) and
//! `shell` (`shell`), defined natively before the tool runs, and only in a tool that has the
//! permission; and `mcp` (the caller's client), defined the same way in a tool that mentions it.
//!
//! Each is a small native function (`raw::native_function`) whose one datum is the prelude's
//! `load`, which loads the support module (`support.js`) on first use: `fetch` calls the
//! support's `fetch` with its arguments as they are; `fs` and `shell` are read-only accessors
//! whose getters return the support's `fs()` and `shell()` objects, built on first use and the
//! same object afterwards. Defining them here rather than in `prelude.js` keeps their code out
//! of the bytecode every fresh runtime reads, most of which never has a permission.
//!
//! Like the prelude's globals they are neither writable nor configurable, so a tool cannot
//! replace them, and nothing of the host is reachable through them.

use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Value};
use toolsmith_core::{Permission, PermissionSet};

use crate::raw::{self, Args, Native};

/// What each global does when called, by `magic`.
const FETCH: u16 = 0;
const FS: u16 = 1;
const SHELL: u16 = 2;
const MCP: u16 = 3;

/// The permissions `run`'s `granted` carries, by bit (as `support.js`'s `PERMISSION_OF` reads
/// them).
const BITS: [(Permission, u8); 3] = [
    (Permission::Network, 1),
    (Permission::Filesystem, 2),
    (Permission::Shell, 4),
];

/// The bits of `permissions` among [`BITS`].
pub(crate) fn bits(permissions: &PermissionSet) -> i32 {
    BITS.iter()
        .filter(|(permission, _)| permissions.contains(permission))
        .fold(0, |bits, (_, bit)| bits | i32::from(*bit))
}

/// Defines the globals `permissions` add in `ctx`; `load` is the prelude's loader of the
/// support module. Call before any tool code runs.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    load: &Function<'js>,
    permissions: &PermissionSet,
) -> rquickjs::Result<()> {
    if bits(permissions) == 0 {
        return Ok(());
    }
    let globals = ctx.globals();
    let data = [load.clone().into_value()];
    if permissions.contains(&Permission::Network) {
        let fetch = raw::native_function::<Grant>(ctx, c"fetch", 2, FETCH, &data)?;
        globals.prop("fetch", Property::from(fetch))?;
    }
    for (permission, name, magic) in [
        (Permission::Filesystem, c"fs", FS),
        (Permission::Shell, c"shell", SHELL),
    ] {
        if permissions.contains(&permission) {
            let getter = raw::native_function::<Grant>(ctx, c"get", 0, magic, &data)?;
            raw::define_getter(ctx, &globals, name, getter)?;
        }
    }
    Ok(())
}

/// Defines the `mcp` global (the caller's client, `mcp.js`) in `ctx`: a getter like `fs`'s,
/// added only to a context whose tool mentions `mcp` (`compile::Needs`). It needs no
/// permission to exist: `mcp.sample` and `mcp.elicit` check theirs when called.
pub(crate) fn install_mcp<'js>(ctx: &Ctx<'js>, load: &Function<'js>) -> rquickjs::Result<()> {
    let data = [load.clone().into_value()];
    let getter = raw::native_function::<Grant>(ctx, c"get", 0, MCP, &data)?;
    raw::define_getter(ctx, &ctx.globals(), c"mcp", getter)
}

/// A permission global: its one datum is the prelude's `load`.
struct Grant;

impl Native for Grant {
    const DATA: usize = 1;

    fn call<'js>(
        ctx: &Ctx<'js>,
        magic: u16,
        _this: Value<'js>,
        args: &Args<'_, 'js>,
        data: &Args<'_, 'js>,
    ) -> rquickjs::Result<Value<'js>> {
        let load = Function::from_value(data.get(0))?;
        let support: Object<'js> = load.call(())?;
        let name = match magic {
            FETCH => "fetch",
            FS => "fs",
            MCP => "mcp",
            _ => "shell",
        };
        let member: Value<'js> = support.get(name)?;
        if magic == FETCH {
            return raw::call_passing(ctx, &member, &Value::new_undefined(ctx.clone()), args);
        }
        Function::from_value(member)?.call(())
    }
}
