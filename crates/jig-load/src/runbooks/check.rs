//! Checks of a runbook against the rest of the project: its tool list and tool steps, its
//! invocations, its step graph, and its scenarios.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::runbook::{Runbook, RunbookApi, Step, StepKind};
use serde_json::Value;

use super::file::RunbookFile;
use super::variables::Outputs;
use crate::located::{Located, Suggest, did_you_mean};
use crate::resolve::ResolveError;
use crate::runbooks::Index;
use crate::toolfile::{ToolFile, ToolFileKind};
use crate::vfs::normalize;

mod scenario;
mod tool_step;

/// The action name that calls a toolpack from a runbook format that requires an action.
pub(crate) const TOOLPACK_ACTION: &str = "run";

/// What a runbook's tool reference resolved to.
enum ToolRef {
    /// A tool file of some package.
    File(Arc<ToolFile>),
    /// A v0 raw path that exists (not checked further).
    Path,
}

/// Check `file` (a runbook of package `package`) and its scenarios.
pub(crate) fn check(
    index: &Index<'_>,
    package: usize,
    file: &RunbookFile,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(runbook), Some(located)) = (&file.runbook, &file.located) else { return };
    let checker = Checker { index, package, file, runbook, located };
    checker.syntax_of_version(out);
    checker.unique_ids(out);
    let tools = checker.tool_list(out);
    checker.steps(&runbook.steps, &tools, out);
    if runbook.api_version == RunbookApi::KernelV0 {
        super::variables::check(runbook, located, &|step| checker.outputs_of(step, &tools), out);
        super::parallel::check(runbook, located, &|step| checker.usage_of(step, &tools), out);
    }
    checker.legacy_links(out);
    checker.approver_counts(out);
    checker.legacy_details(out);
    if runbook.api_version == RunbookApi::KernelV0 && !terminates(&runbook.steps) {
        let last = runbook.steps.last().map_or("/steps", |s| s.pointer.as_str());
        out.push(located.at(
            Diagnostic::error(codes::RUNBOOK, "not every path reaches an `end` step")
                .with_hint("finish each path with `type: end`, or end with a `branch` that has a `default` arm"),
            last,
        ));
    }
    for scenario in &file.scenarios {
        checker.scenario(scenario, &tools, out);
    }
}

struct Checker<'a> {
    index: &'a Index<'a>,
    package: usize,
    file: &'a RunbookFile,
    runbook: &'a Runbook,
    located: &'a Located,
}

impl Checker<'_> {
    fn syntax_of_version(&self, out: &mut Vec<Diagnostic>) {
        if self.runbook.api_version != RunbookApi::V1 {
            return;
        }
        let value = &self.located.doc.value;
        if value.get("imports").is_some() {
            out.push(self.located.at_key(
                Diagnostic::error(codes::RUNBOOK_V1_SYNTAX, "runbook/v1 removed `imports`")
                    .with_hint("declare the package under `require` in the manifest and reference it as `pkg/name`"),
                "/imports",
            ));
        }
        if value.get("tools").is_some_and(Value::is_object) {
            out.push(self.located.at(
                Diagnostic::error(codes::RUNBOOK_V1_SYNTAX, "in runbook/v1, `tools` is a list of names, not a map")
                    .with_hint("write `tools: [nslookup, pkg/query]`; put shared tools in a required package"),
                "/tools",
            ));
        }
    }

    fn unique_ids(&self, out: &mut Vec<Diagnostic>) {
        let mut seen: BTreeMap<&str, &Step> = BTreeMap::new();
        for step in self.runbook.walk() {
            let Some(id) = &step.id else { continue };
            if let Some(first) = seen.get(id.as_str()) {
                let line = self.located.line_of(&first.pointer);
                out.push(self.located.at(
                    Diagnostic::error(
                        codes::RUNBOOK,
                        format!("step id `{id}` is used twice (first on line {line})"),
                    ),
                    &format!("{}/id", step.pointer),
                ));
            } else {
                seen.insert(id, step);
            }
        }
    }

    /// Resolve `tools`; returns what each resolvable name points at.
    fn tool_list(&self, out: &mut Vec<Diagnostic>) -> BTreeMap<String, ToolRef> {
        let mut resolved = BTreeMap::new();
        for (i, reference) in self.runbook.tools.iter().enumerate() {
            if let Some(raw) = self.runbook.tool_paths.get(reference) {
                // v0 map form: a path relative to the runbook file.
                let pointer = crate::yaml::pointer_push("/tools", reference);
                match self.raw_path(raw, &[""]) {
                    true => {
                        // A tool file of the project is checked like any other reference.
                        let found = self.index.tool_file_at(&self.file.path, raw);
                        resolved
                            .insert(reference.clone(), found.map_or(ToolRef::Path, ToolRef::File));
                    }
                    false => out.push(self.located.at(
                        Diagnostic::error(
                            codes::RESOLVE_TOOL,
                            format!("tool file `{raw}` does not exist"),
                        ),
                        &pointer,
                    )),
                }
                continue;
            }
            match self.index.tool(self.package, reference) {
                Ok((_, file)) => {
                    resolved.insert(reference.clone(), ToolRef::File(file));
                }
                Err(error) => {
                    let code = match error {
                        ResolveError::UnknownPackage(_) => codes::RESOLVE_PACKAGE,
                        ResolveError::NotFound(_) => codes::RESOLVE_TOOL,
                    };
                    let mut diagnostic = Diagnostic::error(code, error.message());
                    if let Some(hint) = self.tool_hint(reference) {
                        diagnostic = diagnostic.with_hint(hint);
                    }
                    out.push(self.located.at(diagnostic, &format!("/tools/{i}")));
                }
            }
        }
        resolved
    }

    /// The tool references of the runbooks this one invokes (their tool steps are answered
    /// from this runbook's scenarios too).
    fn invoked_tools(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for step in self.runbook.walk() {
            let StepKind::Invoke { runbook: reference, .. } = &step.kind else { continue };
            let own = self.index.runbooks[self.package].get(reference.as_str());
            let required = reference.split_once('/').and_then(|(prefix, rest)| {
                let target = *self.index.packages[self.package].requires.get(prefix)?;
                self.index.runbooks[target].get(rest)
            });
            if let Some(child) = own.or(required).and_then(|file| file.runbook.as_ref()) {
                out.extend(child.tools.iter().cloned());
            }
        }
        out
    }

    /// The resource tags a step reads and writes: its tool's contract with the step's own
    /// additions, or a manual or extension step's declared contract.
    fn usage_of(&self, step: &Step, tools: &BTreeMap<String, ToolRef>) -> super::parallel::Usage {
        let mut usage = super::parallel::Usage::default();
        let declared = match &step.kind {
            StepKind::Tool { tool, action, contract, .. } => {
                if let Some(ToolRef::File(file)) = tools.get(tool) {
                    let def = match action {
                        Some(action) => {
                            file.defs.iter().find(|d| d.id.ends_with(&format!(".{action}")))
                        }
                        None => file.defs.first(),
                    };
                    if let Some(jig_model::tool_def::ToolExecution::Gert(gert)) =
                        def.map(|d| &d.execution)
                    {
                        usage.0.extend(gert.reads.iter().cloned());
                        usage.1.extend(gert.writes.iter().cloned());
                        // A resource tag among its effects: it acts on (writes) that resource.
                        usage.1.extend(gert.effect_tags.iter().cloned());
                    }
                }
                contract.as_ref()
            }
            StepKind::Manual { contract, .. } | StepKind::Extension { contract, .. } => {
                contract.as_ref()
            }
            _ => None,
        };
        if let Some(contract) = declared {
            usage.0.extend(contract.reads.iter().flatten().cloned());
            usage.1.extend(contract.writes.iter().flatten().cloned());
        }
        usage
    }

    /// `min_approvers` counts the people who must approve a step a `require-approval` rule
    /// holds (each a different person); on a rule that allows or denies it would mean nothing,
    /// so say so rather than let a reader believe it guards something.
    fn approver_counts(&self, out: &mut Vec<Diagnostic>) {
        let Some(jig_model::runbook::RunbookGovernance::Rules(governance)) =
            &self.runbook.governance
        else {
            return;
        };
        if governance.approval_timeout.is_some() {
            out.push(self.located.at(
                Diagnostic::warning(
                    codes::RUNBOOK,
                    "`approval_timeout` is not applied: approvals wait for a person's decision, and a granted one expires after the policy's `approvals.ttl_seconds`",
                ),
                "/meta/governance/approval_timeout",
            ));
        }
        for (i, rule) in governance.rules.iter().enumerate() {
            let asks =
                rule.action == Some(jig_model::runbook::kernel::GovernanceAction::RequireApproval);
            if let Some(count) = rule.min_approvers.filter(|n| *n > 1 && !asks) {
                out.push(self.located.at(
                    Diagnostic::warning(
                        codes::RUNBOOK,
                        format!(
                            "`min_approvers: {count}` applies only to a `require-approval` rule; this one does not ask for approval"
                        ),
                    ),
                    &format!("/meta/governance/rules/{i}/min_approvers"),
                ));
            }
        }
    }

    /// v0/v1 step details that would do nothing as written (gert gives them no meaning
    /// either): say so rather than let a reader believe they guard something.
    fn legacy_details(&self, out: &mut Vec<Diagnostic>) {
        for step in self.runbook.walk() {
            let Some(details) = &step.legacy else { continue };
            let mut warn = |message: String, field: &str| {
                out.push(self.located.at(
                    Diagnostic::warning(codes::RUNBOOK, message),
                    &format!("{}/{field}", step.pointer),
                ));
            };
            if details.precondition.as_ref().is_some_and(|p| !p.skip_if_succeeds) {
                warn(
                    "`skip_if_succeeds: false` does nothing: a precondition's check runs only to skip the step when it succeeds".to_owned(),
                    "precondition/skip_if_succeeds",
                );
            }
            if details.gate.is_some() && !matches!(step.kind, StepKind::Invoke { .. }) {
                warn(
                    "`gate` applies only to `invoke` steps; here it does nothing".to_owned(),
                    "gate",
                );
            }
            for (i, a) in details.assertions.iter().enumerate() {
                let set = [
                    a.contains.is_some(),
                    a.not_contains.is_some(),
                    a.matches.is_some(),
                    a.exit_code.is_some(),
                    a.equals.is_some(),
                    a.not_equals.is_some(),
                    a.json_path.is_some(),
                ]
                .iter()
                .filter(|set| **set)
                .count();
                if set != 1 {
                    warn(
                        format!(
                            "an assertion checks exactly one thing; this one sets {set} (write one assertion per check)"
                        ),
                        &format!("assertions/{i}"),
                    );
                }
            }
        }
    }

    /// Whether the runbook runs commands (`cli` steps, preconditions): `shell_exec` calls.
    fn runs_commands(&self) -> bool {
        self.runbook.walk().into_iter().any(|step| {
            matches!(step.kind, StepKind::Cli { .. })
                || step.legacy.as_ref().is_some_and(|d| d.precondition.is_some())
        })
    }

    /// What a step produces, as its tool or its own fields declare.
    fn outputs_of(&self, step: &Step, tools: &BTreeMap<String, ToolRef>) -> Outputs {
        match &step.kind {
            StepKind::Tool { tool, action, .. } => {
                let Some(ToolRef::File(file)) = tools.get(tool) else { return Outputs::Unknown };
                let def = match (&file.kind, action) {
                    (Some(ToolFileKind::Gert(_)), Some(action)) => {
                        file.defs.iter().find(|d| d.id.ends_with(&format!(".{action}")))
                    }
                    _ => file.defs.first(),
                };
                match def.and_then(|d| d.output_schema.get("properties")).and_then(Value::as_object)
                {
                    Some(properties) if !properties.is_empty() => {
                        Outputs::Known(properties.keys().cloned().collect())
                    }
                    _ => Outputs::Unknown,
                }
            }
            StepKind::Manual { required_evidence, choices, .. } => Outputs::Known(
                required_evidence
                    .iter()
                    .map(|e| e.name.clone())
                    .chain(choices.iter().map(|c| c.variable.clone()))
                    .collect(),
            ),
            StepKind::Extension { contract: Some(contract), .. }
                if !contract.outputs.is_empty() =>
            {
                Outputs::Known(contract.outputs.keys().cloned().collect())
            }
            StepKind::Cli { .. } | StepKind::Invoke { .. } | StepKind::Extension { .. } => {
                Outputs::Unknown
            }
            StepKind::Assert { .. }
            | StepKind::Branch { .. }
            | StepKind::Parallel { .. }
            | StepKind::Repeat { .. }
            | StepKind::End { .. } => Outputs::Known(Vec::new()),
        }
    }

    fn tool_hint(&self, reference: &str) -> Option<String> {
        let (package, name) = match reference.split_once('/') {
            None => (self.package, reference),
            Some((prefix, name)) => match self.index.packages[self.package].requires.get(prefix) {
                Some(&package) => (package, name),
                None => {
                    let known =
                        self.index.packages[self.package].requires.keys().map(String::as_str);
                    return Some(match did_you_mean(prefix, known) {
                        Some(s) => format!("did you mean `{s}/{name}`?"),
                        None => format!("add `{prefix}` to `require` in the manifest"),
                    });
                }
            },
        };
        let mut names: Vec<&str> = self.index.tools[package].keys().map(String::as_str).collect();
        if let Some(exports) = &self.index.packages[package].exports {
            names.extend(exports.keys().map(String::as_str));
        }
        did_you_mean(name, names).map(|s| format!("did you mean `{s}`?"))
    }

    fn steps(&self, steps: &[Step], tools: &BTreeMap<String, ToolRef>, out: &mut Vec<Diagnostic>) {
        let ids: Vec<Option<&str>> = steps.iter().map(|s| s.id.as_deref()).collect();
        for (position, step) in steps.iter().enumerate() {
            if let Some(next) = &step.next {
                let target = next.target();
                match ids.iter().position(|id| *id == Some(target)) {
                    None => out.push(
                        self.located.at(
                            Diagnostic::error(
                                codes::RUNBOOK,
                                format!(
                                    "`next` jumps to `{target}`, which is not a step of this list"
                                ),
                            )
                            .with_hint(
                                "`next` targets must be in the same step list (kernel-v0 §6.3)",
                            ),
                            &format!("{}/next", step.pointer),
                        ),
                    ),
                    Some(target_position)
                        if target_position <= position && next.max().is_none() =>
                    {
                        out.push(
                            self.located.at(
                                Diagnostic::error(
                                    codes::RUNBOOK,
                                    format!("`next` jumps back to `{target}` without a bound"),
                                )
                                .with_hint(format!("write `next: {{step: {target}, max: 3}}`")),
                                &format!("{}/next", step.pointer),
                            ),
                        )
                    }
                    Some(_) => {}
                }
            }
            match &step.kind {
                StepKind::Tool { tool, action, inputs, inputs_from, .. } => {
                    self.tool_step(
                        step,
                        tool,
                        action.as_deref(),
                        inputs,
                        !inputs_from.is_empty(),
                        tools,
                        out,
                    );
                }
                StepKind::Invoke { runbook, .. } => {
                    self.runbook_link(runbook, &format!("{}/invoke", step.pointer), out)
                }
                StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                    let is_branch = matches!(step.kind, StepKind::Branch { .. });
                    let defaults =
                        arms.iter().filter(|a| a.condition.as_deref() == Some("default")).count();
                    if is_branch && defaults > 1 {
                        out.push(self.located.at(
                            Diagnostic::error(
                                codes::RUNBOOK,
                                "a branch has more than one `default` arm",
                            ),
                            &step.pointer,
                        ));
                    }
                    for (i, arm) in arms.iter().enumerate() {
                        if is_branch && arm.condition.is_none() {
                            out.push(self.located.at(
                                Diagnostic::error(
                                    codes::RUNBOOK,
                                    "a branch arm needs a `condition` (or `condition: default`)",
                                ),
                                &format!("{}/branches/{i}", step.pointer),
                            ));
                        }
                        self.steps(&arm.steps, tools, out);
                    }
                }
                StepKind::Repeat { steps, .. } => self.steps(steps, tools, out),
                _ => {}
            }
        }
    }

    fn runbook_link(&self, reference: &str, pointer: &str, out: &mut Vec<Diagnostic>) {
        match self.index.runbook(self.package, reference) {
            Ok(ambiguity) => {
                if let Some(warning) = ambiguity {
                    out.push(self.located.at(
                        Diagnostic::warning(codes::RESOLVE_AMBIGUOUS, warning).with_hint(
                            "rename the local group, or refer to the package by its full name",
                        ),
                        pointer,
                    ));
                }
            }
            Err(error) => {
                // runbook/v0 falls back to raw filesystem paths (seed 004 "transition period").
                if self.runbook.api_version == RunbookApi::V0
                    && self.raw_path(reference, &["", ".runbook.yaml", ".yaml"])
                {
                    return;
                }
                let code = match error {
                    ResolveError::UnknownPackage(_) => codes::RESOLVE_PACKAGE,
                    ResolveError::NotFound(_) => codes::RESOLVE_RUNBOOK,
                };
                let names = self.index.runbooks[self.package].keys().map(String::as_str);
                let mut diagnostic = Diagnostic::error(code, error.message());
                diagnostic = diagnostic.suggest(reference, names);
                out.push(self.located.at(diagnostic, pointer));
            }
        }
    }

    /// v0 `imports` and outcome `next_runbook`s.
    fn legacy_links(&self, out: &mut Vec<Diagnostic>) {
        for (i, import) in self.runbook.imports.iter().enumerate() {
            if !self.raw_path(import, &["", ".runbook.yaml", ".yaml"])
                && self.index.runbook(self.package, import).is_err()
            {
                out.push(self.located.at(
                    Diagnostic::error(
                        codes::RESOLVE_RUNBOOK,
                        format!("import `{import}` does not exist"),
                    ),
                    &format!("/imports/{i}"),
                ));
            }
        }
        for step in self.runbook.walk() {
            let Some(legacy) = &step.legacy else { continue };
            for (i, outcome) in legacy.outcomes.iter().enumerate() {
                if let Some(next) = &outcome.next_runbook {
                    self.runbook_link(
                        &next.file,
                        &format!("{}/outcomes/{i}/next_runbook/file", step.pointer),
                        out,
                    );
                }
            }
        }
    }

    /// Whether `raw` (with one of `suffixes`) is a file relative to the runbook, in its package.
    fn raw_path(&self, raw: &str, suffixes: &[&str]) -> bool {
        let package = &self.index.packages[self.package];
        let base = self.file.path.parent().unwrap_or(Path::new(""));
        suffixes.iter().any(|suffix| {
            let candidate = normalize(&base.join(format!("{raw}{suffix}")));
            package.vfs.is_file(&candidate)
        })
    }
}

/// Whether every path through `steps` reaches an `end` step (kernel-v0 §5).
fn terminates(steps: &[Step]) -> bool {
    steps.iter().any(|step| match &step.kind {
        StepKind::End { .. } => true,
        StepKind::Branch { arms } => {
            arms.iter().any(|a| a.condition.as_deref() == Some("default"))
                && arms.iter().all(|a| terminates(&a.steps))
        }
        _ => false,
    })
}
