//! The response template: Jinja (minijinja) in a sandbox with a fuel limit and an output cap.
//!
//! The environment has no loader (no `include`/`import` of files), no custom functions, and
//! strict limits: `fuel` bounds the instructions a render may run, so a loop bomb stops, and the
//! output is capped while it is written. Values from the response and the parameters are data
//! in the context; they are never parsed as template source.

use std::io;

use minijinja::value::Serde;
use minijinja::{Environment, ErrorKind};
use serde_json::{Map, Value};

/// Instructions a render may execute.
pub const TEMPLATE_FUEL: u64 = 100_000;
/// Largest rendered output, in bytes.
pub const MAX_TEMPLATE_OUTPUT: usize = 64 * 1024;
/// Largest template source, in bytes.
pub const MAX_TEMPLATE_SOURCE: usize = 16 * 1024;
/// Deepest nesting of blocks and calls.
const RECURSION_LIMIT: usize = 32;

/// Why a template could not be compiled or rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("response template is {len} bytes, over the limit of {MAX_TEMPLATE_SOURCE}")]
    TooLarge { len: usize },
    #[error("response template does not compile: {0}")]
    Syntax(String),
    #[error("response template ran out of fuel (limit {TEMPLATE_FUEL} instructions)")]
    OutOfFuel,
    #[error("response template output is over {MAX_TEMPLATE_OUTPUT} bytes")]
    OutputTooLarge,
    #[error("response template failed: {0}")]
    Render(String),
}

/// Checks that `source` compiles.
pub fn compile_template(source: &str) -> Result<(), TemplateError> {
    if source.len() > MAX_TEMPLATE_SOURCE {
        return Err(TemplateError::TooLarge { len: source.len() });
    }
    let env = environment();
    env.template_from_str(source)
        .map(|_| ())
        .map_err(|e| TemplateError::Syntax(describe(&e)))
}

/// Renders `source` over `vars`.
pub fn render_template(source: &str, vars: &Map<String, Value>) -> Result<String, TemplateError> {
    if source.len() > MAX_TEMPLATE_SOURCE {
        return Err(TemplateError::TooLarge { len: source.len() });
    }
    let env = environment();
    let template = env
        .template_from_str(source)
        .map_err(|e| TemplateError::Syntax(describe(&e)))?;
    let mut sink = CappedWriter::default();
    match template.render_captured_to(Serde(vars), &mut sink) {
        Ok(_) => {}
        Err(_) if sink.overflowed => return Err(TemplateError::OutputTooLarge),
        Err(e) if e.kind() == ErrorKind::OutOfFuel => return Err(TemplateError::OutOfFuel),
        Err(e) => return Err(TemplateError::Render(describe(&e))),
    }
    String::from_utf8(sink.buf).map_err(|_| TemplateError::Render("output is not UTF-8".into()))
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    env
}

fn describe(err: &minijinja::Error) -> String {
    let mut text = err.kind().to_string();
    if let Some(detail) = err.detail() {
        text.push_str(": ");
        text.push_str(detail);
    }
    if let Some(line) = err.line() {
        text.push_str(&format!(" (line {line})"));
    }
    text
}

/// A writer that fails once more than `MAX_TEMPLATE_OUTPUT` bytes arrive.
#[derive(Default)]
struct CappedWriter {
    buf: Vec<u8>,
    overflowed: bool,
}

impl io::Write for CappedWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.buf.len() + data.len() > MAX_TEMPLATE_OUTPUT {
            self.overflowed = true;
            return Err(io::Error::other("template output limit reached"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
