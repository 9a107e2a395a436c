//! kernel-v0 §7's static variable resolution: every `{{ .name }}` a runbook's templates read
//! must be an input, a constant, or the output of a step that comes before it; exports must
//! name outputs and must not clash. Templates that do not parse are reported here too.
//!
//! Flow is followed as the interpreter follows it: steps in order; after a `branch` or
//! `parallel`, what any arm defines counts (a name only some arms set is the runtime's to
//! catch, as gert's kernel says); inside `for_each` the `as` variable, inside `repeat` the
//! `repeat` variable. A step whose outputs cannot be known (a tool without declared output
//! properties) makes later reads of unknown names unprovable, so they are not reported.

use std::collections::BTreeSet;

use jig_expr::Template;
use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::runbook::{Runbook, Step, StepKind};
use serde_json::Value;

use crate::located::{Located, Suggest};

/// What a step produces, as far as the project says.
pub(crate) enum Outputs {
    /// Exactly these names.
    Known(Vec<String>),
    /// Anything (no declared outputs).
    Unknown,
}

/// The names defined at a point of the runbook.
#[derive(Clone)]
struct Defined {
    names: BTreeSet<String>,
    /// An earlier step's outputs are unknown: any name may exist.
    open: bool,
}

pub(crate) fn check(
    runbook: &Runbook,
    located: &Located,
    outputs: &dyn Fn(&Step) -> Outputs,
    out: &mut Vec<Diagnostic>,
) {
    let mut names: BTreeSet<String> = runbook.inputs.keys().cloned().collect();
    names.extend(runbook.constants.keys().cloned());
    names.extend(["step".to_owned(), "scope".to_owned()]);
    // Every name some step can set, to tell "read too early" from "never defined".
    let mut anywhere = BTreeSet::new();
    for step in runbook.walk() {
        anywhere.extend(step.id.clone());
        if let Outputs::Known(names) = outputs(step) {
            anywhere.extend(names);
        }
        anywhere.extend(step.export.iter().cloned());
    }
    let constants: BTreeSet<&str> = runbook.constants.keys().map(String::as_str).collect();
    let inputs: BTreeSet<&str> = runbook.inputs.keys().map(String::as_str).collect();
    let pass = Pass { located, outputs, anywhere, constants, inputs };
    let mut defined = Defined { names, open: false };
    // Constants may be templates over inputs (`inputs_from` spreads them).
    for (name, value) in &runbook.constants {
        pass.value(value, &crate::yaml::pointer_push("/meta/constants", name), &defined, out);
    }
    pass.steps(&runbook.steps, &mut defined, out);
}

struct Pass<'a> {
    located: &'a Located,
    outputs: &'a dyn Fn(&Step) -> Outputs,
    anywhere: BTreeSet<String>,
    constants: BTreeSet<&'a str>,
    inputs: BTreeSet<&'a str>,
}

impl Pass<'_> {
    fn steps(&self, steps: &[Step], defined: &mut Defined, out: &mut Vec<Diagnostic>) {
        for step in steps {
            self.step(step, defined, out);
        }
    }

    fn step(&self, step: &Step, defined: &mut Defined, out: &mut Vec<Diagnostic>) {
        let at = |field: &str| format!("{}/{field}", step.pointer);
        if let Some(when) = &step.when {
            self.text(when, &at("when"), defined, out);
        }
        let mut inner = defined.clone();
        if let Some(each) = &step.for_each {
            self.text(&each.over, &at("for_each/over"), defined, out);
            inner.names.insert(each.as_var.clone());
            if let Some(key) = &each.key {
                self.text(key, &at("for_each/key"), &inner, out);
            }
        }
        if let Some(scope) = &step.scope {
            self.text(scope, &at("scope"), &inner, out);
        }
        if let Some(max) = step.next.as_ref().and_then(|n| n.max()) {
            self.value(max, &at("next/max"), &inner, out);
        }
        self.kind(step, &mut inner, out);
        self.leaves(step, &mut inner, out);
        *defined = inner;
    }

    /// The templates of the step's own kind (its inputs, argv, instructions, assertions, an
    /// outcome's meta), and the names its arms or loop body define.
    fn kind(&self, step: &Step, inner: &mut Defined, out: &mut Vec<Diagnostic>) {
        let at = |field: &str| format!("{}/{field}", step.pointer);
        match &step.kind {
            StepKind::Tool { inputs, inputs_from, .. } => {
                for (i, name) in inputs_from.iter().enumerate() {
                    self.name(name, &at(&format!("inputs_from/{i}")), None, inner, out);
                }
                self.map(inputs, &at("inputs"), inner, out);
            }
            StepKind::Cli { argv } => {
                for (i, arg) in argv.iter().enumerate() {
                    self.text(arg, &at(&format!("with/argv/{i}")), inner, out);
                }
            }
            StepKind::Manual { instructions, .. } => {
                if let Some(text) = instructions {
                    self.text(text, &at("instructions"), inner, out);
                }
            }
            StepKind::Invoke { inputs, .. } | StepKind::Extension { inputs, .. } => {
                self.map(inputs, &at("inputs"), inner, out);
            }
            StepKind::Assert { assertions } => {
                for (i, a) in assertions.iter().enumerate() {
                    self.value(&a.value, &at(&format!("assert/{i}/value")), inner, out);
                    if let Some(expected) = &a.expected {
                        self.value(expected, &at(&format!("assert/{i}/expected")), inner, out);
                    }
                }
            }
            StepKind::End { outcome } => {
                for (name, value) in &outcome.meta {
                    self.value(
                        value,
                        &format!(
                            "{}/{}",
                            step.pointer,
                            crate::yaml::pointer_push("outcome/meta", name)
                        ),
                        inner,
                        out,
                    );
                }
            }
            StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                let mut after = inner.clone();
                for (i, arm) in arms.iter().enumerate() {
                    if let Some(condition) =
                        arm.condition.as_deref().filter(|c| c.trim() != "default")
                    {
                        self.text(condition, &at(&format!("branches/{i}/condition")), inner, out);
                    }
                    let mut arm_defined = inner.clone();
                    self.steps(&arm.steps, &mut arm_defined, out);
                    after.names.extend(arm_defined.names);
                    after.open |= arm_defined.open;
                }
                *inner = after;
            }
            StepKind::Repeat { until, steps, as_var, .. } => {
                let mut body = inner.clone();
                body.names.insert("repeat".to_owned());
                body.names.extend(as_var.clone());
                self.steps(steps, &mut body, out);
                if let Some(until) = until {
                    self.text(until, &at("repeat/until"), &body, out);
                }
                body.names.remove("repeat");
                if let Some(as_var) = as_var {
                    body.names.remove(as_var);
                }
                *inner = body;
            }
        }
    }

    /// What the step leaves defined: its id, its outputs (unless scoped or looped), its
    /// exports — each refused where it clashes with a constant or an input.
    fn leaves(&self, step: &Step, inner: &mut Defined, out: &mut Vec<Diagnostic>) {
        let at = |field: &str| format!("{}/{field}", step.pointer);
        if let Some(each) = &step.for_each {
            inner.names.remove(&each.as_var);
        }
        let produced = (self.outputs)(step);
        if let Some(id) = &step.id {
            inner.names.insert(id.clone());
        }
        match &produced {
            Outputs::Known(names) if step.for_each.is_none() => {
                if step.scope.is_none() {
                    for name in names {
                        if self.constants.contains(name.as_str()) {
                            out.push(self.located.at(
                                Diagnostic::error(codes::RUNBOOK_VARIABLE, format!("step `{}` produces `{name}`, which is a constant (constants are immutable)", step.id.as_deref().unwrap_or("?")))
                                    .with_hint("rename the constant, or give the step a `scope` so its outputs stay in it"),
                                &step.pointer,
                            ));
                        }
                    }
                    inner.names.extend(names.iter().cloned());
                }
            }
            Outputs::Known(_) => {}
            Outputs::Unknown => inner.open = true,
        }
        for (i, name) in step.export.iter().enumerate() {
            let pointer = at(&format!("export/{i}"));
            if self.constants.contains(name.as_str()) || self.inputs.contains(name.as_str()) {
                let what =
                    if self.constants.contains(name.as_str()) { "a constant" } else { "an input" };
                out.push(self.located.at(
                    Diagnostic::error(
                        codes::RUNBOOK_VARIABLE,
                        format!("`export` of `{name}` clashes with {what} of the same name"),
                    ),
                    &pointer,
                ));
            } else if let Outputs::Known(names) = &produced
                && !names.contains(name)
            {
                out.push(
                    self.located.at(
                        Diagnostic::error(
                            codes::RUNBOOK_VARIABLE,
                            format!("`export` names `{name}`, which the step does not produce"),
                        )
                        .suggest_or(
                            name,
                            names.iter().map(String::as_str),
                            format!("its outputs: {}", names.join(", ")),
                        ),
                        &pointer,
                    ),
                );
            }
            inner.names.insert(name.clone());
        }
    }

    /// Every string of `value` as a template.
    fn value(&self, value: &Value, pointer: &str, defined: &Defined, out: &mut Vec<Diagnostic>) {
        match value {
            Value::String(text) => self.text(text, pointer, defined, out),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.value(item, &format!("{pointer}/{i}"), defined, out);
                }
            }
            Value::Object(map) => self.map(map, pointer, defined, out),
            _ => {}
        }
    }

    fn map(
        &self,
        map: &serde_json::Map<String, Value>,
        pointer: &str,
        defined: &Defined,
        out: &mut Vec<Diagnostic>,
    ) {
        for (k, v) in map {
            self.value(v, &crate::yaml::pointer_push(pointer, k), defined, out);
        }
    }

    fn text(&self, text: &str, pointer: &str, defined: &Defined, out: &mut Vec<Diagnostic>) {
        if !jig_expr::is_template(text) {
            return;
        }
        match Template::parse(text) {
            Err(error) => out.push(self.located.at(
                Diagnostic::error(
                    codes::RUNBOOK_TEMPLATE,
                    format!("template `{}`: {}", shorten(text), error),
                ),
                pointer,
            )),
            Ok(template) => {
                for reference in template.references() {
                    if let Some(first) = reference.path.first() {
                        self.name(first, pointer, Some((text, reference.offset)), defined, out);
                    }
                }
            }
        }
    }

    fn name(
        &self,
        name: &str,
        pointer: &str,
        template: Option<(&str, usize)>,
        defined: &Defined,
        out: &mut Vec<Diagnostic>,
    ) {
        if defined.names.contains(name) || defined.open {
            return;
        }
        let place = template
            .map(|(text, offset)| {
                format!(
                    " (in `{}`, column {})",
                    shorten(text),
                    text[..offset.min(text.len())].chars().count() + 1
                )
            })
            .unwrap_or_default();
        let diagnostic = if self.anywhere.contains(name) {
            Diagnostic::error(
                codes::RUNBOOK_VARIABLE,
                format!("`.{name}` is read before any step can set it{place}"),
            )
            .with_hint(
                "move this step after the step that produces it, or give it a default as an input",
            )
        } else {
            Diagnostic::error(codes::RUNBOOK_VARIABLE, format!("undefined variable `.{name}`{place}"))
                .suggest_or(name, defined.names.iter().map(String::as_str), "declare it under `meta.inputs` or `meta.constants`, or produce it in an earlier step")
        };
        out.push(self.located.at(diagnostic, pointer));
    }
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= 60 {
        text.to_owned()
    } else {
        text.chars().take(57).collect::<String>() + "…"
    }
}
