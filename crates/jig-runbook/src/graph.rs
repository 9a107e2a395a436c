//! A runbook's steps as a graph for people to look at: one node per step (branches, parallel
//! blocks and loops included), and edges for the ways control can go — in order, into an arm,
//! out of a parallel block, back round a loop, or by a `next` jump. The workbench lays it out
//! and marks the path a run took; nodes are named by the ids the interpreter records, so a
//! run's `visited` and `waiting` steps find theirs.

use std::collections::HashMap;

use jig_model::runbook::{Arm, Runbook, Step, StepKind};
use serde::Serialize;

use crate::interp::id_of;

/// The graph of a runbook.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Graph {
    /// Every step, depth-first in file order.
    pub nodes: Vec<Node>,
    /// How control moves between them.
    pub edges: Vec<Edge>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Node {
    /// Unique in the graph: the step's JSON pointer in its file.
    pub id: String,
    /// The id a run records for it (`visited`, `waiting[].step_id`).
    pub step_id: String,
    /// `tool`, `manual`, `cli`, `invoke`, `assert`, `branch`, `parallel`, `repeat`, `end`,
    /// `extension`.
    pub kind: String,
    /// What people read: the title, else the id.
    pub label: String,
    /// One line on what it does: the tool, the runbook invoked, the outcome, the loop's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its guard (`when`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// What it iterates over (`for_each.over`), when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<String>,
}

/// A way control can go.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Edge {
    /// Unique in the graph.
    pub id: String,
    /// The node control leaves.
    pub source: String,
    /// The node it reaches.
    pub target: String,
    /// `next` (in order), `arm` (into a branch's arm), `fork` (into a parallel arm), `join`
    /// (out of a parallel arm), `loop` (back round a repeat), `exit` (out of a repeat),
    /// `jump` (a `next:` jump).
    pub kind: String,
    /// The arm's condition or label, the jump's bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The graph of `runbook`.
pub fn of(runbook: &Runbook) -> Graph {
    let mut builder = Builder::default();
    builder.list(&runbook.steps, None);
    builder.jumps(&runbook.steps);
    builder.graph
}

/// Where a list's last step goes when it finishes: a node and the kind of edge.
type After<'a> = Option<(&'a str, &'static str)>;

#[derive(Default)]
struct Builder {
    graph: Graph,
    /// Pointer of each step, for `next` jumps (which stay within one list).
    by_pointer: HashMap<String, usize>,
}

impl Builder {
    /// Add `steps`; the last one continues to `after`. Returns the first step's node.
    fn list(&mut self, steps: &[Step], after: After<'_>) -> Option<String> {
        let ids: Vec<String> = steps.iter().map(|s| s.pointer.clone()).collect();
        for (i, step) in steps.iter().enumerate() {
            self.node(step, i);
            let next: After<'_> = match ids.get(i + 1) {
                Some(id) => Some((id.as_str(), "next")),
                None => after,
            };
            self.flow(step, next);
        }
        ids.into_iter().next()
    }

    fn node(&mut self, step: &Step, index: usize) {
        let step_id = id_of(step, index);
        let (kind, detail) = describe(&step.kind);
        self.by_pointer.insert(step.pointer.clone(), self.graph.nodes.len());
        self.graph.nodes.push(Node {
            id: step.pointer.clone(),
            label: step.title.clone().unwrap_or_else(|| step_id.clone()),
            step_id,
            kind: kind.to_owned(),
            detail,
            when: step.when.clone(),
            for_each: step.for_each.as_ref().map(|f| f.over.clone()),
        });
    }

    /// The edges out of `step`, whose successor is `next`.
    fn flow(&mut self, step: &Step, next: After<'_>) {
        let id = step.pointer.as_str();
        match &step.kind {
            StepKind::End { .. } => {}
            StepKind::Branch { arms } => {
                for arm in arms {
                    let label = arm.label.clone().or_else(|| arm.condition.clone());
                    self.arm(id, arm, "arm", label, next);
                }
                let fallback = arms.iter().any(|a| a.condition.as_deref() == Some("default"));
                if !fallback && let Some((target, kind)) = next {
                    self.edge(id, target, kind, Some("no arm matches".to_owned()));
                }
            }
            StepKind::Parallel { arms } => {
                let join = next.map(|(target, _)| (target, "join"));
                for arm in arms {
                    self.arm(id, arm, "fork", arm.label.clone(), join);
                }
            }
            StepKind::Repeat { steps, until, .. } => {
                if let Some(head) = self.list(steps, Some((id, "loop"))) {
                    self.edge(id, &head, "arm", None);
                }
                if let Some((target, _)) = next {
                    self.edge(id, target, "exit", until.as_ref().map(|u| format!("until {u}")));
                }
            }
            _ => {
                if let Some((target, kind)) = next {
                    self.edge(id, target, kind, None);
                }
            }
        }
    }

    /// An arm: from `from` into its steps, which go on to `next`; an empty arm goes straight on.
    fn arm(
        &mut self,
        from: &str,
        arm: &Arm,
        kind: &'static str,
        label: Option<String>,
        next: After<'_>,
    ) {
        match self.list(&arm.steps, next) {
            Some(head) => self.edge(from, &head, kind, label),
            None => {
                if let Some((target, _)) = next {
                    self.edge(from, target, kind, label);
                }
            }
        }
    }

    /// `next:` jumps, which name a step of the same list by id.
    fn jumps(&mut self, steps: &[Step]) {
        for step in steps {
            if let Some(next) = &step.next
                && let Some(target) = steps.iter().find(|s| s.id.as_deref() == Some(next.target()))
            {
                let label = next.max().map(|max| format!("at most {}", jig_expr::text(max)));
                let (source, target) = (step.pointer.clone(), target.pointer.clone());
                self.edge(&source, &target, "jump", label);
            }
            match &step.kind {
                StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                    for arm in arms {
                        self.jumps(&arm.steps);
                    }
                }
                StepKind::Repeat { steps, .. } => self.jumps(steps),
                _ => {}
            }
        }
    }

    fn edge(&mut self, source: &str, target: &str, kind: &str, label: Option<String>) {
        let id = format!("e{}", self.graph.edges.len());
        self.graph.edges.push(Edge {
            id,
            source: source.to_owned(),
            target: target.to_owned(),
            kind: kind.to_owned(),
            label,
        });
    }
}

/// A step's kind and its one-line detail.
fn describe(kind: &StepKind) -> (&'static str, Option<String>) {
    match kind {
        StepKind::Tool { tool, action, .. } => (
            "tool",
            Some(match action {
                Some(action) => format!("{tool} · {action}"),
                None => tool.clone(),
            }),
        ),
        StepKind::Cli { argv } => ("cli", Some(argv.join(" "))),
        StepKind::Manual { required_evidence, choices, .. } => (
            "manual",
            if choices.is_some() {
                Some("a choice".to_owned())
            } else if required_evidence.is_empty() {
                None
            } else {
                let names: Vec<&str> = required_evidence.iter().map(|e| e.name.as_str()).collect();
                Some(format!("evidence: {}", names.join(", ")))
            },
        ),
        StepKind::Invoke { runbook, .. } => ("invoke", Some(runbook.clone())),
        StepKind::Assert { assertions } => ("assert", Some(format!("{} checks", assertions.len()))),
        StepKind::Branch { arms } => ("branch", Some(format!("{} arms", arms.len()))),
        StepKind::Parallel { arms } => ("parallel", Some(format!("{} arms at once", arms.len()))),
        StepKind::Repeat { max, over, .. } => (
            "repeat",
            match (over, max) {
                (Some(over), _) => Some(format!("over {over}")),
                (None, Some(max)) => Some(format!("at most {max} times")),
                (None, None) => None,
            },
        ),
        StepKind::End { outcome } => (
            "end",
            Some(match &outcome.code {
                Some(code) => format!("{} · {code}", category(outcome.category)),
                None => category(outcome.category),
            }),
        ),
        StepKind::Extension { extension, .. } => ("extension", Some(extension.clone())),
    }
}

fn category(category: jig_model::runbook::OutcomeCategory) -> String {
    serde_json::to_value(category)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
