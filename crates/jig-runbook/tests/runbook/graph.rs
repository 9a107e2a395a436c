//! The step graph people look at: parallel arms fork and join, a repeat loops back and exits,
//! a `next` jump is its own edge, and nodes carry the ids a run records.

use jig_runbook::graph::{self, Graph};
use serde_json::json;

use crate::support::runbook;

/// `(source step id, target step id, kind, label)` of every edge.
fn edges(graph: &Graph) -> Vec<(String, String, String, Option<String>)> {
    let step = |id: &str| {
        graph.nodes.iter().find(|n| n.id == id).map(|n| n.step_id.clone()).expect("a node")
    };
    graph
        .edges
        .iter()
        .map(|e| (step(&e.source), step(&e.target), e.kind.clone(), e.label.clone()))
        .collect()
}

fn has(
    edges: &[(String, String, String, Option<String>)],
    edge: (&str, &str, &str, Option<&str>),
) -> bool {
    edges.iter().any(|(s, t, k, l)| (s.as_str(), t.as_str(), k.as_str(), l.as_deref()) == edge)
}

#[test]
fn parallel_arms_fork_and_join_and_a_repeat_loops_back_and_exits() {
    let runbook = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "shapes" },
        "steps": [
            { "id": "both", "type": "parallel", "branches": [
                { "label": "dns", "steps": [{ "id": "d", "type": "tool", "tool": "dns", "action": "check" }] },
                { "label": "web", "steps": [
                    { "id": "w", "type": "tool", "tool": "web", "action": "check" },
                    { "id": "peek", "type": "assert", "assert": [{ "type": "exists", "value": "{{ .w }}" }] }
                ] }
            ] },
            { "id": "rounds", "type": "repeat", "repeat": { "max": 3, "until": "{{ .done }}" }, "steps": [
                { "id": "try", "type": "tool", "tool": "probe", "action": "check", "for_each": { "as": "h", "over": "{{ .hosts }}" } }
            ] },
            { "id": "again", "type": "tool", "tool": "probe", "action": "check", "when": "{{ .retry }}",
              "next": { "step": "rounds", "max": 2 } },
            { "id": "done", "type": "end", "outcome": { "category": "resolved", "code": "ok" } }
        ]
    }));
    let graph = graph::of(&runbook);
    let ids: Vec<&str> = graph.nodes.iter().map(|n| n.step_id.as_str()).collect();
    assert_eq!(ids, ["both", "d", "w", "peek", "rounds", "try", "again", "done"]);
    let edges = edges(&graph);
    assert!(has(&edges, ("both", "d", "fork", Some("dns"))), "{edges:?}");
    assert!(has(&edges, ("both", "w", "fork", Some("web"))));
    assert!(has(&edges, ("w", "peek", "next", None)));
    assert!(has(&edges, ("d", "rounds", "join", None)));
    assert!(has(&edges, ("peek", "rounds", "join", None)));
    assert!(has(&edges, ("rounds", "try", "arm", None)));
    assert!(has(&edges, ("try", "rounds", "loop", None)));
    assert!(has(&edges, ("rounds", "again", "exit", Some("until {{ .done }}"))));
    assert!(has(&edges, ("again", "rounds", "jump", Some("at most 2"))));
    assert!(has(&edges, ("again", "done", "next", None)));
    assert!(!edges.iter().any(|(s, ..)| s == "done"), "an end goes nowhere");
    assert_eq!(edges.len(), 10);

    let node = |id: &str| graph.nodes.iter().find(|n| n.step_id == id).expect("node");
    assert_eq!(node("try").for_each.as_deref(), Some("{{ .hosts }}"));
    assert_eq!(node("again").when.as_deref(), Some("{{ .retry }}"));
    assert_eq!(node("done").detail.as_deref(), Some("resolved · ok"));
    assert_eq!(node("rounds").detail.as_deref(), Some("at most 3 times"));
    assert_eq!(node("d").detail.as_deref(), Some("dns · check"));
    let unique: std::collections::HashSet<&str> =
        graph.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(unique.len(), graph.nodes.len(), "node ids are unique");
}

#[test]
fn a_branch_without_a_default_arm_may_go_straight_on() {
    let runbook = runbook(json!({
        "apiVersion": "kernel/v0",
        "meta": { "name": "maybe" },
        "steps": [
            { "id": "pick", "type": "branch", "branches": [
                { "condition": "{{ .a }}", "steps": [{ "id": "x", "type": "tool", "tool": "t", "action": "go" }] },
                { "condition": "{{ .b }}", "label": "empty", "steps": [] }
            ] },
            { "id": "after", "type": "end", "outcome": { "category": "no_action" } }
        ]
    }));
    let edges = edges(&graph::of(&runbook));
    assert!(has(&edges, ("pick", "x", "arm", Some("{{ .a }}"))), "{edges:?}");
    assert!(has(&edges, ("x", "after", "next", None)));
    assert!(has(&edges, ("pick", "after", "arm", Some("empty"))), "an empty arm goes straight on");
    assert!(has(&edges, ("pick", "after", "next", Some("no arm matches"))));
}
