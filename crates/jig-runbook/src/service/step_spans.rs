//! A span per step a walk runs, inside the walk's span, when traces are exported: from the
//! moment the step starts (after its go-ahead, precondition and delay) to its result, with
//! the calls of a tool step as its children. A step that completes without running (a
//! `when` that is false, governance's denial, a precondition that holds) is a span of no
//! length. A walk that goes over steps an earlier walk finished makes no span for them.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use jig_engine::telemetry::{Span, TraceOrigin};
use serde_json::Value;

use crate::trace::{TraceEvent, TraceKind};

/// The open step spans of one walk.
#[derive(Default)]
pub(crate) struct StepSpans {
    /// By the step's instance key.
    open: Mutex<HashMap<String, Span>>,
    /// The trace keys earlier walks of the run recorded: their steps are not traced again.
    pub earlier: HashSet<String>,
}

impl StepSpans {
    /// What `event` means for the step spans of the walk spanned by `walk`.
    pub(crate) fn on(&self, walk: &Span, event: &TraceEvent) {
        let Some(key) = event.step.as_deref() else { return };
        match event.kind {
            TraceKind::StepStart => {
                let span = start(walk, key, &event.data);
                if let Ok(mut open) = self.open.lock() {
                    open.insert(key.to_owned(), span);
                }
            }
            TraceKind::StepComplete => {
                let open = self.open.lock().ok().and_then(|mut open| open.remove(key));
                let span = match open {
                    Some(span) => span,
                    None if self.earlier.contains(&format!("trace:{}", event.key)) => return,
                    None => start(walk, key, &event.data),
                };
                complete(&span, &event.data);
            }
            _ => {}
        }
    }

    /// The walk stopped to wait for a person: the steps under way wait with it.
    pub(crate) fn waiting(&self) {
        let open = self.open.lock().map(|mut open| std::mem::take(&mut *open)).unwrap_or_default();
        for span in open.values() {
            span.set("jig.runbook.step.status", "waiting");
        }
    }

    /// Where a call made by step `key` belongs: inside its span, when it has one.
    pub(crate) fn origin(&self, key: &str) -> Option<TraceOrigin> {
        self.open.lock().ok()?.get(key).map(Span::origin)
    }
}

fn start(walk: &Span, key: &str, data: &Value) -> Span {
    let id = data["step_id"].as_str().unwrap_or(key);
    let mut attributes = vec![("jig.runbook.step", id), ("jig.runbook.step.key", key)];
    if let Some(kind) = data["type"].as_str() {
        attributes.push(("jig.runbook.step.type", kind));
    }
    if let Some(tool) = data["tool"].as_str() {
        attributes.push(("gen_ai.tool.name", tool));
    }
    walk.child(format!("step {id}"), &attributes)
}

fn complete(span: &Span, data: &Value) {
    let status = data["status"].as_str().unwrap_or("success");
    span.set("jig.runbook.step.status", status);
    if matches!(status, "failed" | "error") {
        let failure = &data["failure"];
        span.fail(
            failure["kind"].as_str().unwrap_or(status),
            failure["message"].as_str().unwrap_or_default(),
        );
    }
}
