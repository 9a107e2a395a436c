//! A step's visibility (kernel-v0 §7): which variables its templates may read.
//!
//! gert records visibility and leaves enforcing it to hosts; Jig enforces it where it can: the
//! step's inputs and instructions are rendered from a view holding only the allowed variables,
//! so a template that reads a hidden one fails as undefined.

use jig_model::runbook::kernel::Visibility;
use serde_json::{Map, Value};

use crate::vars::scope_path;

/// `vars` as `visibility` lets a step see them.
pub(crate) fn view(vars: &Value, visibility: &Visibility) -> Value {
    let allow: Vec<Vec<String>> = visibility.allow.iter().map(|p| pattern(p)).collect();
    let deny: Vec<Vec<String>> = visibility.deny.iter().map(|p| pattern(p)).collect();
    filter(vars, &mut Vec::new(), &allow, &deny, visibility.allow.is_empty())
}

/// A path glob, in dot-separated segments (`scope.round/0.*` → `scope`, `round`, `0`, `*`).
fn pattern(glob: &str) -> Vec<String> {
    scope_path(glob)
}

fn filter(
    value: &Value,
    path: &mut Vec<String>,
    allow: &[Vec<String>],
    deny: &[Vec<String>],
    allowed: bool,
) -> Value {
    let Value::Object(map) = value else { return value.clone() };
    let mut out = Map::new();
    for (name, child) in map {
        path.push(name.clone());
        if !deny.iter().any(|d| matches(d, path)) {
            let here = allowed || allow.iter().any(|a| matches(a, path));
            if here {
                out.insert(name.clone(), filter(child, path, allow, deny, true));
            } else if allow.iter().any(|a| could_match_below(a, path)) && child.is_object() {
                let inner = filter(child, path, allow, deny, false);
                if inner.as_object().is_some_and(|m| !m.is_empty()) {
                    out.insert(name.clone(), inner);
                }
            }
        }
        path.pop();
    }
    Value::Object(out)
}

/// Whether `glob` matches `path` exactly: `*` is one segment, `**` any number (one or more).
fn matches(glob: &[String], path: &[String]) -> bool {
    match (glob.first(), path.first()) {
        (None, None) => true,
        (Some(g), _) if g == "**" => (0..=path.len()).any(|n| matches(&glob[1..], &path[n..])),
        (Some(g), Some(p)) if g == "*" || g == p => matches(&glob[1..], &path[1..]),
        _ => false,
    }
}

/// Whether `glob` could match a path that continues `path`.
fn could_match_below(glob: &[String], path: &[String]) -> bool {
    match (glob.first(), path.first()) {
        (_, None) => !glob.is_empty(),
        (Some(g), _) if g == "**" => true,
        (Some(g), Some(p)) if g == "*" || g == p => could_match_below(&glob[1..], &path[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vis(allow: &[&str], deny: &[&str]) -> Visibility {
        Visibility {
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            deny: deny.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn allow_lists_and_deny_wins() {
        let vars = json!({
            "question": "q",
            "secret": "s",
            "scope": {"round": {"0": {"agent_a": {"r": 1}, "agent_b": {"r": 2}}}}
        });
        let seen =
            view(&vars, &vis(&["question", "scope.round/0.**"], &["scope.round/0.agent_b.**"]));
        assert_eq!(
            seen,
            json!({"question": "q", "scope": {"round": {"0": {"agent_a": {"r": 1}}}}})
        );
        let seen = view(&vars, &vis(&[], &["secret"]));
        assert!(seen.get("secret").is_none() && seen.get("question").is_some());
        let seen = view(&vars, &vis(&["scope.round.*"], &[]));
        assert_eq!(
            seen["scope"]["round"]["0"]["agent_a"]["r"], 1,
            "`*` allows the segment and all below it"
        );
    }
}
