//! The PDF tools (003 §8): `read_pdf` (text), `create_pdf` (from text or Markdown) and
//! `pdf_info` (page count, metadata), on files of the caller's [`Workspace`] — every path goes
//! through the workspace's path security, every output through its quota.
//!
//! A PDF is hostile input: it is parsed by `lopdf` with every stream's decompression capped
//! ([`MAX_DECOMPRESSED`]), the file size capped ([`MAX_PDF_BYTES`]), the pages read per call
//! capped, and the work run on a thread of its own with [`PDF_TIMEOUT`]: a call that takes
//! longer answers with the reason, and at most [`MAX_PARALLEL`] parses run at once (a parse
//! that outlived its call keeps its slot until it ends), so crafted files can neither panic
//! the server nor take every worker.
//!
//! Modules: [`load`] (reading and opening a PDF, errors with the fix), [`text`] (text
//! extraction by content-stream position), [`read`], [`info`], [`create`] (the tools),
//! [`markdown`] (text or Markdown → blocks), [`layout`] (blocks → positioned lines on pages),
//! [`fonts`] (the standard fonts' widths and WinAnsi encoding), [`writer`] (pages → PDF bytes).
//!
//! To add a tool: a module with `definition()` and `run(&Workspace, &Value)`, a line in
//! [`tools`], its name in the `pdf` group (`crate::groups`).

pub mod create;
pub mod fonts;
pub mod info;
pub mod layout;
pub mod load;
pub mod markdown;
pub mod read;
pub mod text;
pub mod writer;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::Semaphore;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::workspace::{Workspace, WorkspaceError, Workspaces};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "PDF";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "pdf",
        "PDF",
        "Read, create and describe PDF documents in the workspace.",
        "PDF processing libraries",
        ResultSource::UserData,
        &["read_pdf", "create_pdf", "pdf_info"],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["read_pdf", "pdf_info"]),
    (Effect::Changes, &["create_pdf"]),
];
/// Largest PDF the tools open.
pub const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;
/// Most bytes one stream of a PDF may decompress to (a small file cannot inflate to gigabytes).
pub const MAX_DECOMPRESSED: usize = 32 * 1024 * 1024;
/// Longest one PDF call may work.
pub const PDF_TIMEOUT: Duration = Duration::from_secs(30);
/// Most PDF calls working at once in the process.
pub const MAX_PARALLEL: usize = 2;
/// Stack of a PDF worker thread: the parser recurses (nesting is capped by lopdf).
const STACK_BYTES: usize = 16 * 1024 * 1024;

/// Why a PDF tool failed.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("{0}")]
    Args(String),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// The file is not a PDF the tools can read; the message names what to do.
    #[error("{0}")]
    Unreadable(String),
}

impl PdfError {
    fn kind(&self) -> ErrorKind {
        match self {
            PdfError::Args(_) => ErrorKind::InvalidArguments,
            PdfError::Workspace(e) => e.kind(),
            PdfError::Unreadable(_) => ErrorKind::ExecutionError,
        }
    }
}

/// The work of a PDF tool, on the caller's workspace.
pub type PdfFn = fn(&Workspace, &Value) -> Result<Value, PdfError>;

struct PdfExecutor {
    workspaces: Option<Arc<Workspaces>>,
    slots: Arc<Semaphore>,
    run: PdfFn,
}

#[async_trait]
impl ToolExecutor for PdfExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let Some(workspaces) = self.workspaces.clone() else {
            let e = WorkspaceError::NotConfigured;
            return ToolResult::error(e.kind(), e.to_string());
        };
        let deadline = tokio::time::Instant::now() + PDF_TIMEOUT;
        let Ok(Ok(permit)) =
            tokio::time::timeout_at(deadline, self.slots.clone().acquire_owned()).await
        else {
            return ToolResult::error(ErrorKind::Busy, busy_message());
        };
        let (ctx, run) = (ctx.clone(), self.run);
        let (tx, rx) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("toolsmith-pdf".into())
            .stack_size(STACK_BYTES)
            .spawn(move || {
                // The slot is held until the work ends, even when its call has given up.
                let _permit = permit;
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let workspace = workspaces.for_call(&ctx)?;
                    run(&workspace, &args)
                }));
                let _ = tx.send(outcome);
            });
        if let Err(e) = spawned {
            return ToolResult::error(
                ErrorKind::Internal,
                format!("the PDF tool could not start its worker: {e}"),
            );
        }
        match tokio::time::timeout_at(deadline, rx).await {
            Ok(Ok(Ok(Ok(content)))) => ToolResult::ok(content),
            Ok(Ok(Ok(Err(e)))) => ToolResult::error(e.kind(), e.to_string()),
            // A panic in the parser: contained here, reported as ours, not the caller's.
            Ok(Ok(Err(_)) | Err(_)) => ToolResult::error(
                ErrorKind::Internal,
                "the PDF parser failed on this file's structure (a fault of the PDF tools); the \
                 file is damaged or uses features they do not support — try another copy of it",
            ),
            Err(_) => ToolResult::error(
                ErrorKind::Timeout,
                format!(
                    "the PDF took longer than {} s to process and was abandoned; it is very \
                     large or built to be slow — read fewer pages at once (startPage/endPage)",
                    PDF_TIMEOUT.as_secs()
                ),
            ),
        }
    }
}

fn busy_message() -> String {
    format!(
        "the PDF tools are busy with other documents (at most {MAX_PARALLEL} at once) and none \
         finished within {} s; try again shortly",
        PDF_TIMEOUT.as_secs()
    )
}

/// A PDF tool: category `PDF`, its group as provider, the `filesystem` permission (it reads
/// and writes the workspace).
fn pdf_tool(
    env: &BuiltinEnv,
    slots: &Arc<Semaphore>,
    definition: ToolDefinition,
    run: PdfFn,
) -> RegisteredTool {
    crate::family_tool(
        definition,
        CATEGORY,
        Permission::Filesystem,
        Arc::new(PdfExecutor {
            workspaces: env.workspaces.clone(),
            slots: slots.clone(),
            run,
        }),
    )
}

/// Every tool of the family, ready to register. They share one set of worker slots.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let slots = Arc::new(Semaphore::new(MAX_PARALLEL));
    vec![
        pdf_tool(env, &slots, read::definition(), read::run),
        pdf_tool(env, &slots, create::definition(), create::run),
        pdf_tool(env, &slots, info::definition(), info::run),
    ]
}

/// The string argument `key`, when given.
pub(crate) fn opt_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, PdfError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(PdfError::Args(format!("'{key}' must be a string"))),
    }
}

/// The workspace path in argument `key`.
pub(crate) fn path_arg(
    ws: &Workspace,
    args: &Value,
    key: &str,
) -> Result<crate::workspace::WsPath, PdfError> {
    let raw = opt_str(args, key)?
        .ok_or_else(|| PdfError::Args(format!("'{key}' must be a string path")))?;
    Ok(ws.path(raw)?)
}
