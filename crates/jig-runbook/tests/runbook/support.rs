//! A host for tests: tools answered by a function, every call counted, the journal and trace
//! in memory.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use jig_model::runbook::Runbook;
use jig_model::runbook::kernel::KernelRunbook;
use jig_runbook::{
    Contract, Entry, Host, HostError, Interpreter, Journal, Progress, Run, ToolAnswer, ToolCall,
    ToolInfo, TraceEvent,
};
use serde_json::{Map, Value};

pub type Answer = Box<dyn Fn(&ToolCall) -> ToolAnswer + Send + Sync>;

pub struct TestHost {
    pub tools: HashMap<String, ToolInfo>,
    answer: Answer,
    pub calls: Mutex<Vec<ToolCall>>,
    pub journal: Mutex<Journal>,
    pub trace: Mutex<Vec<TraceEvent>>,
    traced: Mutex<HashSet<String>>,
    pub in_flight: AtomicUsize,
    pub most_in_flight: AtomicUsize,
    pub delay_ms: u64,
    /// Runbooks an `invoke` step may name.
    pub runbooks: HashMap<String, Runbook>,
}

/// A tool with this contract.
pub fn tool(id: &str, side_effects: bool, reads: &[&str], writes: &[&str]) -> (String, ToolInfo) {
    (
        id.to_owned(),
        ToolInfo {
            id: id.to_owned(),
            contract: Contract {
                side_effects,
                deterministic: true,
                idempotent: true,
                effects: Vec::new(),
                reads: reads.iter().map(|s| (*s).to_owned()).collect(),
                writes: writes.iter().map(|s| (*s).to_owned()).collect(),
            },
            outputs: Vec::new(),
            accepts: None,
        },
    )
}

/// Succeed with these outputs.
pub fn ok(outputs: Value) -> ToolAnswer {
    match outputs {
        Value::Object(outputs) => ToolAnswer::Succeeded { outputs },
        _ => ToolAnswer::Succeeded { outputs: Map::new() },
    }
}

impl TestHost {
    pub fn new(
        tools: Vec<(String, ToolInfo)>,
        answer: impl Fn(&ToolCall) -> ToolAnswer + Send + Sync + 'static,
    ) -> Self {
        Self {
            tools: tools.into_iter().collect(),
            answer: Box::new(answer),
            calls: Mutex::new(Vec::new()),
            journal: Mutex::new(Journal::new()),
            trace: Mutex::new(Vec::new()),
            traced: Mutex::new(HashSet::new()),
            in_flight: AtomicUsize::new(0),
            most_in_flight: AtomicUsize::new(0),
            delay_ms: 0,
            runbooks: HashMap::new(),
        }
    }

    pub fn calls(&self) -> Vec<ToolCall> {
        self.calls.lock().expect("calls").clone()
    }

    pub fn trace_kinds(&self) -> Vec<String> {
        self.trace.lock().expect("trace").iter().map(|e| e.kind.as_str().to_owned()).collect()
    }

    pub fn journal(&self) -> Journal {
        self.journal.lock().expect("journal").clone()
    }

    /// A person's entry, as the stepping API would record it.
    pub fn give(&self, key: String, entry: Entry) {
        self.journal.lock().expect("journal").insert(key, entry);
    }
}

#[async_trait]
impl Host for TestHost {
    fn tool(&self, reference: &str, action: Option<&str>) -> Result<ToolInfo, String> {
        let id = jig_runbook::registry::tool_id(reference, action);
        self.tools.get(&id).cloned().ok_or_else(|| format!("no tool `{id}`"))
    }

    async fn call_tool(&self, call: &ToolCall) -> ToolAnswer {
        self.calls.lock().expect("calls").push(call.clone());
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        if self.delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(self.delay_ms)).await;
        }
        let answer = (self.answer)(call);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    async fn record(&self, key: &str, entry: Entry) -> Result<Entry, HostError> {
        Ok(self.journal.lock().expect("journal").insert(key.to_owned(), entry).clone())
    }

    async fn trace(&self, event: TraceEvent) -> Result<(), HostError> {
        if self.traced.lock().expect("traced").insert(event.key.clone()) {
            self.trace.lock().expect("trace").push(event);
        }
        Ok(())
    }

    fn runbook(&self, reference: &str) -> Option<Runbook> {
        self.runbooks.get(reference).cloned()
    }
}

/// A runbook/v0 or v1 runbook from JSON.
pub fn legacy_runbook(value: Value) -> Runbook {
    let file: jig_model::runbook::legacy::LegacyRunbook =
        serde_json::from_value(value).expect("a runbook/v0 or v1 runbook");
    let (runbook, problems) = Runbook::from_legacy(file);
    assert!(problems.is_empty(), "{problems:?}");
    runbook
}

/// A kernel/v0 runbook from JSON.
pub fn runbook(value: Value) -> Runbook {
    let file: KernelRunbook = serde_json::from_value(value).expect("a kernel/v0 runbook");
    let (runbook, problems) = Runbook::from_kernel(file);
    assert!(problems.is_empty(), "{problems:?}");
    runbook
}

/// Start a run (if not started) and advance it once.
pub async fn advance(
    runbook: &Runbook,
    host: &TestHost,
    inputs: Value,
    stepwise: bool,
) -> Progress {
    try_advance(runbook, host, inputs, stepwise).await.expect("advance")
}

pub async fn try_advance(
    runbook: &Runbook,
    host: &TestHost,
    inputs: Value,
    stepwise: bool,
) -> Result<Progress, jig_runbook::RunbookError> {
    let inputs: Map<String, Value> = inputs.as_object().cloned().unwrap_or_default();
    host.give(
        "start".to_owned(),
        Entry::Start {
            runbook: "test".to_owned(),
            hash: "h".to_owned(),
            inputs,
            stepwise,
            by: "alice".to_owned(),
            definition: None,
        },
    );
    let run =
        Run { runbook, name: "test", hash: "h", run_id: "run-1", host, tokens: HashMap::new() };
    Interpreter::new(run, host.journal()).advance().await
}
