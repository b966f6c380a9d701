//! A scratch family that proves CONTRIBUTING's recipe: one tool, `echo_text`, that answers with
//! its argument.

pub mod echo_text;

use toolsmith_core::{RegisteredTool, ResultSource};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, on};
use crate::utilities::{Runs, pure_tool};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Example";

/// The family's tool groups.
pub const GROUPS: &[ToolGroup] = &[on(
    "exampleEcho",
    "Example Echo",
    "Answers with what it was given.",
    ResultSource::UserData,
    &["echo_text"],
)];

/// Every tool of the family, ready to register.
pub fn tools(_env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![pure_tool(
        echo_text::definition(),
        CATEGORY,
        echo_text::run,
        Runs::Inline,
    )]
}
