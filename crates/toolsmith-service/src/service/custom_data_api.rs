//! Custom Data as people reach it outside tool calls (REST, the web UI): a caller's tables and
//! their rows through the same operations as the tools ([`toolsmith_builtins::custom`]), with
//! a table or row not among the caller's answered as "not found" rather than as a bad argument.

use serde_json::Value;
use toolsmith_builtins::custom::{self, CustomOp, ops};
use toolsmith_builtins::data::Records;
use toolsmith_builtins::utilities::Fail;
use toolsmith_core::data::RecordScope;

use super::ToolService;
use crate::ServiceError;

impl ToolService {
    /// Runs the Custom Data operation `op` with the tool's arguments `args` in `scope`; the
    /// reply is the tool's.
    pub async fn custom_data(
        &self,
        scope: &RecordScope,
        op: CustomOp,
        args: &Value,
    ) -> Result<Value, ServiceError> {
        let records = self.records();
        if !matches!(op, CustomOp::ListTables | CustomOp::CreateTable) {
            let name = args["table"].as_str().unwrap_or_default();
            let table = ops::find_table(&records, scope, name)
                .await
                .map_err(service_error)?
                .ok_or_else(|| {
                    ServiceError::NotFound(format!(
                        "no custom table '{}' among yours",
                        name.chars().take(64).collect::<String>()
                    ))
                })?;
            if matches!(
                op,
                CustomOp::GetRow | CustomOp::UpdateRow | CustomOp::DeleteRow
            ) {
                let id = args["recordId"].as_str().unwrap_or_default();
                let found = records
                    .get(scope, &ops::rows_collection(&table.id), id)
                    .await
                    .map_err(|e| service_error(e.into()))?;
                if found.is_none() {
                    return Err(ServiceError::NotFound(format!(
                        "no record with id '{}' in table '{}' among yours",
                        id.chars().take(100).collect::<String>(),
                        table.definition.name
                    )));
                }
            }
        }
        custom::run(op, &records, scope, args)
            .await
            .map_err(service_error)
    }
}

fn service_error(e: Fail) -> ServiceError {
    match e {
        // The checks' answers (a bad column, a limit) name the fix.
        Fail::Args(m) => ServiceError::Validation(m),
        Fail::Run(m) => ServiceError::Store(toolsmith_store::StoreError::Backend(m.into())),
    }
}
