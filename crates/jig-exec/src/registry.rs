//! Which executor runs which tool.

use std::collections::BTreeMap;
use std::sync::Arc;

use jig_model::ToolDef;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution;

use crate::executor::Executor;

/// Executors by execution kind (`builtin`, `cli`, … as `ToolExecution::kind` names them).
#[derive(Clone, Default)]
pub struct Executors {
    by_kind: BTreeMap<&'static str, Arc<dyn Executor>>,
    /// Built-ins run by someone else (the engine runs `emit_metrics`).
    builtins: BTreeMap<&'static str, Arc<dyn Executor>>,
}

impl std::fmt::Debug for Executors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executors")
            .field("kinds", &self.by_kind.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Executors {
    /// No executors yet: a composition root (`jig_tools::standard_executors`) fills it in.
    pub fn new() -> Self {
        Self { by_kind: BTreeMap::new(), builtins: BTreeMap::new() }
    }

    /// Add or replace the executor of `kind`.
    pub fn insert(&mut self, kind: &'static str, executor: Arc<dyn Executor>) {
        self.by_kind.insert(kind, executor);
    }

    /// Run the built-in `name` with `executor` instead of the catalog.
    pub fn insert_builtin(&mut self, name: &'static str, executor: Arc<dyn Executor>) {
        self.builtins.insert(name, executor);
    }

    /// The executor for `tool`, if its kind has one.
    pub fn for_tool(&self, tool: &ToolDef) -> Option<Arc<dyn Executor>> {
        if let ToolExecution::Toolpack(Execution::Builtin(builtin)) = &tool.execution {
            let name = builtin.name.as_deref().unwrap_or(&tool.id);
            if let Some(executor) = self.builtins.get(name) {
                return Some(Arc::clone(executor));
            }
        }
        self.by_kind.get(tool.execution.kind()).cloned()
    }
}
