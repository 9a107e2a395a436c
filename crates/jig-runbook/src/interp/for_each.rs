//! `for_each`: a step run once per item of a list, each on its own copy of the run's state,
//! one after another or all at once (`parallel`); only the items' outputs survive the loop,
//! collected under the step's id (a list, or a map by each item's `key`).

use futures_util::future::join_all;
use jig_model::runbook::Step;
use jig_model::runbook::kernel::ForEach;
use serde_json::{Map, Value, json};

use super::{Flow, Interpreter, stop};
use crate::outcome::RunStatus;
use crate::render;
use crate::trace::{Actor, TraceKind};
use crate::vars::State;

/// Items `for_each` may iterate over in one step: enough for any runbook, bounded so that a
/// list from a tool cannot fan out without limit.
const MAX_ITEMS: usize = 10_000;

/// What each item that ran left: the steps it visited and, if it went on, its outputs.
type Done = Vec<(Vec<String>, Option<Value>)>;

impl Interpreter<'_> {
    pub(super) async fn for_each(
        &self,
        step: &Step,
        each: &ForEach,
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        let items = match items_of(each, key, state) {
            Ok(items) => items,
            Err(flow) => return flow,
        };
        let start = json!({ "step_id": id, "over": each.over, "item_count": items.len(), "parallel": each.parallel });
        if let Err(e) = self
            .trace(
                &format!("each:{key}"),
                TraceKind::ForEachStart,
                Some(key),
                Actor::system(),
                start,
            )
            .await
        {
            return Flow::Fatal(e);
        }
        let names = match item_names(each, key, &items, state) {
            Ok(names) => names,
            Err(flow) => return flow,
        };
        let keys: Vec<String> = names.iter().map(|n| format!("{key}[{n}]")).collect();
        for (index, (item, item_key)) in items.iter().zip(&keys).enumerate() {
            let data = json!({ "step_id": id, "index": index, "value": item });
            if let Err(e) = self
                .trace(
                    &format!("item:{item_key}"),
                    TraceKind::ForEachItem,
                    Some(item_key),
                    Actor::system(),
                    data,
                )
                .await
            {
                return Flow::Fatal(e);
            }
        }
        let (done, flows) = self.run_items(step, each, id, &items, &keys, state).await;
        collect(step, each, id, &names, done, flows, state)
    }

    /// Run the step once per item, each on a copy of `state` with its item as `each.as_var`:
    /// all at once when `parallel`, else one after another until one does not go on.
    async fn run_items(
        &self,
        step: &Step,
        each: &ForEach,
        id: &str,
        items: &[Value],
        keys: &[String],
        state: &State,
    ) -> (Done, Vec<Flow>) {
        let copy_for = |item: &Value| {
            let mut copy = state.fork();
            copy.set(&each.as_var, item.clone());
            copy
        };
        let mut done: Done = Vec::with_capacity(items.len());
        let mut flows = Vec::with_capacity(items.len());
        let outputs_of = |copy: &State, flow: &Flow| {
            matches!(flow, Flow::Next)
                .then(|| copy.vars().get(id).cloned().unwrap_or_else(|| json!({})))
        };
        if each.parallel {
            let mut copies: Vec<State> = items.iter().map(copy_for).collect();
            flows = join_all(
                copies
                    .iter_mut()
                    .zip(keys)
                    .map(|(copy, item_key)| self.once(step, id, item_key, copy)),
            )
            .await;
            for (copy, flow) in copies.into_iter().zip(&flows) {
                let outputs = outputs_of(&copy, flow);
                done.push((copy.visited, outputs));
            }
        } else {
            // One copy at a time: a long run's state is not held once per item.
            for (item, item_key) in items.iter().zip(keys) {
                let mut copy = copy_for(item);
                let flow = self.once(step, id, item_key, &mut copy).await;
                let go_on = matches!(flow, Flow::Next);
                let outputs = outputs_of(&copy, &flow);
                done.push((copy.visited, outputs));
                flows.push(flow);
                if !go_on {
                    break;
                }
            }
        }
        (done, flows)
    }
}

/// The list `each.over` renders to (nothing for null), within [`MAX_ITEMS`].
fn items_of(each: &ForEach, key: &str, state: &State) -> Result<Vec<Value>, Flow> {
    let items =
        match render::value("for_each.over", &Value::String(each.over.clone()), state.vars()) {
            Ok(Value::Array(items)) => items,
            Ok(Value::Null) => Vec::new(),
            Ok(other) => {
                return Err(stop(
                    key,
                    "for_each",
                    format!("`for_each.over` is not a list: {}", jig_expr::text(&other)),
                    RunStatus::Error,
                ));
            }
            Err(e) => return Err(stop(key, "template", e.to_string(), RunStatus::Error)),
        };
    if items.len() > MAX_ITEMS {
        return Err(stop(
            key,
            "for_each",
            format!("`for_each.over` has {} items; the limit is {MAX_ITEMS}", items.len()),
            RunStatus::Error,
        ));
    }
    Ok(items)
}

/// Each item's name in keys and outputs: its `each.key` rendered (unique), else its index.
fn item_names(
    each: &ForEach,
    key: &str,
    items: &[Value],
    state: &State,
) -> Result<Vec<String>, Flow> {
    let Some(template) = &each.key else {
        return Ok((0..items.len()).map(|index| index.to_string()).collect());
    };
    let mut names = Vec::with_capacity(items.len());
    let mut scratch = state.fork();
    for item in items {
        scratch.set(&each.as_var, item.clone());
        let name = match render::text("for_each.key", template, scratch.vars()) {
            Ok(name) => name,
            Err(e) => return Err(stop(key, "template", e.to_string(), RunStatus::Error)),
        };
        if names.contains(&name) {
            return Err(stop(
                key,
                "for_each",
                format!("two items have the key `{name}` (keys must be unique)"),
                RunStatus::Error,
            ));
        }
        names.push(name);
    }
    Ok(names)
}

/// What the loop leaves in `state`: every item's visited steps, and — when every item went
/// on — their outputs under the step's id (and its exports, per item); else the first flow
/// that did not go on, or every wait at once.
fn collect(
    step: &Step,
    each: &ForEach,
    id: &str,
    names: &[String],
    done: Done,
    flows: Vec<Flow>,
    state: &mut State,
) -> Flow {
    let mut list = Vec::new();
    let mut map = Map::new();
    for ((visited, outputs), name) in done.into_iter().zip(names) {
        state.visited.extend(visited);
        let Some(outputs) = outputs else { continue };
        if each.key.is_some() {
            map.insert(name.clone(), outputs);
        } else {
            list.push(outputs);
        }
    }
    let mut waits = Vec::new();
    for flow in flows {
        match flow {
            Flow::Next => {}
            Flow::Wait(w) => waits.extend(w),
            other => return other,
        }
    }
    if !waits.is_empty() {
        return Flow::Wait(waits);
    }
    let collected = if each.key.is_some() { Value::Object(map) } else { Value::Array(list) };
    state.set(id, collected.clone());
    if !step.export.is_empty() {
        // Keyed exports are maps of each item's exported outputs (kernel-v0 §7).
        for name in &step.export {
            let per_item: Map<String, Value> = match &collected {
                Value::Object(items) => items
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            json!({ name.clone(): v.get(name).cloned().unwrap_or(Value::Null) }),
                        )
                    })
                    .collect(),
                _ => Map::new(),
            };
            state.set(name, Value::Object(per_item));
        }
    }
    Flow::Next
}
