//! The structural steps: `branch`, `parallel`, `repeat`, `invoke` and `end` (`for_each` has a
//! file of its own).

use futures_util::future::join_all;
use jig_model::runbook::Arm;
use jig_model::runbook::Step;
use jig_model::runbook::kernel::KernelOutcome;
use jig_model::runbook::legacy::GateOnError;
use serde_json::{Map, Value, json};

use super::{Flow, Interpreter, stop};
use crate::outcome::{Outcome, RunStatus};
use crate::render;
use crate::trace::{Actor, TraceKind};
use crate::vars::State;

/// A `repeat` block (kernel) or a v0/v1 `iterate`.
pub(crate) struct Repeat<'s> {
    pub max: Option<u32>,
    pub until: Option<&'s str>,
    pub over: Option<&'s str>,
    pub as_var: Option<&'s str>,
    pub steps: &'s [Step],
}

/// The label of an arm in keys and traces.
fn arm_name(arm: &Arm, index: usize) -> String {
    arm.label.clone().unwrap_or_else(|| format!("arm{index}"))
}

impl Interpreter<'_> {
    pub(super) async fn branch(
        &self,
        arms: &[Arm],
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        for (index, arm) in arms.iter().enumerate() {
            let chosen = match arm.condition.as_deref() {
                None => true,
                Some(condition) => match render::condition(
                    &format!("branches[{index}].condition"),
                    condition,
                    state.vars(),
                ) {
                    Ok(chosen) => chosen,
                    Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
                },
            };
            if !chosen {
                continue;
            }
            let label = arm_name(arm, index);
            state.visited.push(id.to_owned());
            let data = json!({ "step_id": id, "branch_label": label, "condition": arm.condition });
            if let Err(e) = self
                .trace(
                    &format!("enter:{key}"),
                    TraceKind::BranchEnter,
                    Some(key),
                    Actor::system(),
                    data,
                )
                .await
            {
                return Flow::Fatal(e);
            }
            let prefix = format!("{key}/{label}/");
            let flow = self.list(&arm.steps, &prefix, state).await;
            if matches!(flow, Flow::Next | Flow::End(_)) {
                let data = json!({ "step_id": id, "branch_label": label });
                if let Err(e) = self
                    .trace(
                        &format!("exit:{key}"),
                        TraceKind::BranchExit,
                        Some(key),
                        Actor::system(),
                        data,
                    )
                    .await
                {
                    return Flow::Fatal(e);
                }
            }
            return flow;
        }
        Flow::Next
    }

    pub(super) async fn parallel(
        &self,
        arms: &[Arm],
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        state.visited.push(id.to_owned());
        let labels: Vec<String> = arms.iter().enumerate().map(|(i, a)| arm_name(a, i)).collect();
        let fork = json!({ "step_id": id, "branch_count": arms.len(), "branches": labels, "forked_state_hash": crate::hash_of(state.vars()) });
        if let Err(e) = self
            .trace(
                &format!("fork:{key}"),
                TraceKind::ParallelFork,
                Some(key),
                Actor::system(),
                fork,
            )
            .await
        {
            return Flow::Fatal(e);
        }
        let base = state.clone();
        let prefixes: Vec<String> = labels.iter().map(|l| format!("{key}/{l}/")).collect();
        let mut copies: Vec<State> = arms.iter().map(|_| base.clone()).collect();
        let flows = join_all(
            arms.iter()
                .zip(prefixes.iter())
                .zip(copies.iter_mut())
                .map(|((arm, prefix), copy)| self.list(&arm.steps, prefix, copy)),
        )
        .await;
        self.merge(id, key, &labels, &base, copies, flows, state).await
    }

    /// Join parallel lines back into `state`: their new variables (two lines setting the same
    /// one differently is an error, never a silent choice; maps such as step namespaces merge
    /// key by key), the steps they visited in declaration order, and the first line's stop,
    /// outcome or waits.
    #[allow(clippy::too_many_arguments)]
    async fn merge(
        &self,
        id: &str,
        key: &str,
        labels: &[String],
        base: &State,
        copies: Vec<State>,
        flows: Vec<Flow>,
        state: &mut State,
    ) -> Flow {
        let mut merged: Map<String, Value> = Map::new();
        let mut owner: Map<String, Value> = Map::new();
        let mut outcomes = Vec::new();
        for (label, (copy, flow)) in labels.iter().zip(copies.iter().zip(flows.iter())) {
            for (name, value) in copy.changes_since(base) {
                let combined = match merged.get(&name) {
                    None => value,
                    Some(earlier) => match join(earlier, &value, base.vars().get(&name)) {
                        Some(combined) => combined,
                        None => {
                            let other = owner.get(&name).map(jig_expr::text).unwrap_or_default();
                            return stop(
                                key,
                                "parallel_merge",
                                format!("parallel arms `{other}` and `{label}` both set `{name}`"),
                                RunStatus::Error,
                            );
                        }
                    },
                };
                owner.insert(name.clone(), Value::String(label.clone()));
                merged.insert(name.clone(), combined);
                state.merge(name.clone(), merged[&name].clone(), copy);
            }
            state.visited.extend(copy.visited[base.visited.len()..].iter().cloned());
            outcomes.push(json!({ "branch": label, "status": flow_status(flow) }));
        }
        let data = json!({ "step_id": id, "branch_outcomes": outcomes, "merged_outputs": merged.keys().collect::<Vec<_>>() });
        let mut waits = Vec::new();
        let mut result = Flow::Next;
        for flow in flows {
            match flow {
                Flow::Fatal(e) => return Flow::Fatal(e),
                Flow::Wait(w) => waits.extend(w),
                Flow::Stop(..) if !matches!(result, Flow::Stop(..)) => result = flow,
                Flow::End(_) if matches!(result, Flow::Next) => result = flow,
                _ => {}
            }
        }
        if !waits.is_empty() && !matches!(result, Flow::Stop(..)) {
            return Flow::Wait(waits);
        }
        if let Err(e) = self
            .trace(
                &format!("merge:{key}"),
                TraceKind::ParallelMerge,
                Some(key),
                Actor::system(),
                data,
            )
            .await
        {
            return Flow::Fatal(e);
        }
        result
    }

    pub(super) async fn repeat(
        &self,
        spec: Repeat<'_>,
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        state.visited.push(id.to_owned());
        // v0/v1 `iterate` over a list: one round per item, bound to `as`.
        let items: Option<Vec<Value>> = match spec.over {
            None => None,
            Some(over) => {
                match render::value("over", &Value::String(over.to_owned()), state.vars()) {
                    Ok(Value::Array(items)) => Some(items),
                    Ok(other) => {
                        return stop(
                            key,
                            "repeat",
                            format!("`over` is not a list: {}", jig_expr::text(&other)),
                            RunStatus::Error,
                        );
                    }
                    Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
                }
            }
        };
        let max = match (&items, spec.max) {
            (Some(items), Some(max)) => items.len().min(max as usize),
            (Some(items), None) => items.len(),
            (None, Some(max)) => max as usize,
            (None, None) => return stop(key, "repeat", "a `repeat` needs `max`", RunStatus::Error),
        };
        let data = json!({ "step_id": id, "max": max });
        if let Err(e) = self
            .trace(
                &format!("repeat:{key}"),
                TraceKind::RepeatStart,
                Some(key),
                Actor::system(),
                data,
            )
            .await
        {
            return Flow::Fatal(e);
        }
        for index in 0..max {
            state.set("repeat", json!({ "index": index, "round": index }));
            if let (Some(items), Some(as_var)) = (&items, spec.as_var) {
                state.set(as_var, items[index].clone());
            }
            let prefix = format!("{key}#{index}/");
            let flow = self.list(spec.steps, &prefix, state).await;
            if !matches!(flow, Flow::Next) {
                return flow;
            }
            let done = match spec.until {
                None => false,
                Some(until) => match render::condition("repeat.until", until, state.vars()) {
                    Ok(done) => done,
                    Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
                },
            };
            let data = json!({ "step_id": id, "index": index, "until_result": done });
            if let Err(e) = self
                .trace(
                    &format!("round:{key}#{index}"),
                    TraceKind::RepeatIteration,
                    Some(key),
                    Actor::system(),
                    data,
                )
                .await
            {
                return Flow::Fatal(e);
            }
            if done {
                break;
            }
        }
        state.unset("repeat");
        if let Some(as_var) = spec.as_var {
            state.unset(as_var);
        }
        Flow::Next
    }

    /// Run another runbook inside this one: its steps under this step's key, its inputs from
    /// this step's, its outcome as this step's output. A v0/v1 `gate` may let the child's
    /// outcome end this run (`stop_if`) or its failure skip the step (`on_error: skip`); its
    /// `capture` copies the child's variables out.
    pub(super) async fn invoke(
        &self,
        step: &Step,
        reference: &str,
        inputs: &Map<String, Value>,
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        state.visited.push(id.to_owned());
        let Some(child) = self.run().host.runbook(reference) else {
            return stop(
                key,
                "invoke",
                format!("no runbook `{reference}` to invoke"),
                RunStatus::Error,
            );
        };
        let given = match render::map("inputs", inputs, state.vars()) {
            Ok(given) => given,
            Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
        };
        let resolved = match crate::inputs::resolve(&child, &given) {
            Ok(resolved) => resolved,
            Err(e) => return stop(key, "input", e.to_string(), RunStatus::Error),
        };
        let mut inner = State::new(resolved, &child.constants);
        let prefix = format!("{key}/");
        let flow = self.list(&child.steps, &prefix, &mut inner).await;
        state.visited.extend(inner.visited.iter().map(|v| format!("{id}/{v}")));
        let legacy = step.legacy.as_deref();
        let gate = legacy.and_then(|d| d.gate.as_ref());
        let mut outputs = match flow {
            Flow::End(outcome) => {
                let category = outcome.category.as_str();
                if gate.is_some_and(|g| g.stop_if.iter().any(|s| s == category)) {
                    let data =
                        json!({ "step_id": id, "gate": "stop_if", "structured_outcome": outcome });
                    if let Err(e) = self
                        .trace(
                            "outcome",
                            TraceKind::OutcomeResolved,
                            Some(key),
                            Actor::system(),
                            data,
                        )
                        .await
                    {
                        return Flow::Fatal(e);
                    }
                    return Flow::End(outcome);
                }
                Map::from_iter([("outcome".to_owned(), json!(outcome))])
            }
            Flow::Next => Map::new(),
            Flow::Stop(failure, _)
                if gate.is_some_and(|g| g.on_error == Some(GateOnError::Skip)) =>
            {
                let data = json!({ "step_id": id, "status": "skipped", "reason": "gate.on_error", "failure": failure });
                return self.skipped(key, data).await;
            }
            other => return other,
        };
        for (name, from) in legacy.map(|d| &d.capture).into_iter().flatten() {
            match inner.vars().get(from) {
                Some(value) => {
                    outputs.insert(name.clone(), value.clone());
                }
                None => {
                    return stop(
                        key,
                        "capture",
                        format!("capture `{name}`: the invoked runbook has no variable `{from}`"),
                        RunStatus::Error,
                    );
                }
            }
        }
        if let Err(message) = state.outputs(id, None, &outputs) {
            return stop(key, "contract_violation", message, RunStatus::Error);
        }
        if legacy.is_some() {
            return self.legacy_outcome(step, key, state).await;
        }
        Flow::Next
    }

    pub(super) async fn end(
        &self,
        outcome: &KernelOutcome,
        id: &str,
        key: &str,
        state: &mut State,
    ) -> Flow {
        state.visited.push(id.to_owned());
        let meta = match render::map("outcome.meta", &outcome.meta, state.vars()) {
            Ok(meta) => meta,
            Err(e) => return stop(key, "template", e.to_string(), RunStatus::Error),
        };
        let resolved = Outcome {
            category: outcome.category,
            code: outcome.code.clone(),
            meta,
            step: key.to_owned(),
        };
        let data = json!({ "step_id": id, "structured_outcome": resolved });
        if let Err(e) = self
            .trace("outcome", TraceKind::OutcomeResolved, Some(key), Actor::system(), data)
            .await
        {
            return Flow::Fatal(e);
        }
        Flow::End(resolved)
    }
}

/// Two arms' values of one variable combined: equal values, or maps whose keys each arm set
/// apart (relative to `base`); `None` when they contend.
fn join(a: &Value, b: &Value, base: Option<&Value>) -> Option<Value> {
    if a == b {
        return Some(a.clone());
    }
    let (Value::Object(a), Value::Object(b)) = (a, b) else { return None };
    let empty = Map::new();
    let base = base.and_then(Value::as_object).unwrap_or(&empty);
    let mut out = a.clone();
    for (k, v) in b {
        if base.get(k) == Some(v) {
            continue; // unchanged by this arm
        }
        match a.get(k) {
            Some(mine) if base.get(k) != Some(mine) => {
                out.insert(k.clone(), join(mine, v, base.get(k))?);
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Some(Value::Object(out))
}

fn flow_status(flow: &Flow) -> &'static str {
    match flow {
        Flow::Next => "completed",
        Flow::End(_) => "ended",
        Flow::Stop(_, _) => "failed",
        Flow::Wait(_) => "waiting",
        Flow::Fatal(_) => "error",
    }
}
