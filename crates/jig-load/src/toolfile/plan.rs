//! Seed 001's rules for plans (`kind: docker | slurm | hybrid`), fail-closed: a plan that
//! breaks one does not load.
//!
//! - `abiVersion: v1` is required.
//! - The image is pinned by digest; a tag alone is refused.
//! - The plan's inputs are exactly the linked set: one per `format: workspace-path` argument,
//!   by role (the argument's name), and nothing else.
//! - Docker `destName`s and Slurm `dest_relpath`s are whitespace-strict, safe relative paths,
//!   unique; Slurm's start with `in/`.
//! - Slurm `io.outputs` are exactly the declared `outputs` (role, type, label, `srcRelpath`),
//!   each under `out/`; docker outputs are written to `/work/out/<path>` and carry no
//!   `srcRelpath`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};
use std::sync::OnceLock;

use jig_model::diagnostic::codes;
use jig_model::duration::parse_duration;
use jig_model::plan::{PINNED_IMAGE_PATTERN, Resources, SlurmIo};
use jig_model::toolpack::{ENV_NAME_PATTERN, Execution, Toolpack};
use jig_model::{Diagnostic, SideEffect};
use regex::Regex;
use serde_json::Value;

use crate::located::{Located, Suggest};

/// The JSON Schema `format` of an argument that names a workspace file to hand in (the same
/// marker `jig-exec`'s run directories use).
const INPUT_FORMAT: &str = "workspace-path";

/// Check `pack`'s plan, if it has one; `input` is its resolved input schema.
pub(super) fn check(located: &Located, pack: &Toolpack, input: &Value, out: &mut Vec<Diagnostic>) {
    if !pack.execution.is_plan() {
        for (i, output) in pack.outputs.iter().enumerate() {
            if output.src_relpath.is_some() {
                out.push(error(
                    located,
                    "`srcRelpath` is for slurm and hybrid plans",
                    "other tools write their outputs to `out/<path>`",
                    &format!("/outputs/{i}/srcRelpath"),
                ));
            }
        }
        return;
    }
    let kind = pack.execution.kind();
    if pack.abi_version.is_none() {
        out.push(error(
            located,
            &format!("a `{kind}` plan must declare `abiVersion: v1`"),
            "add `abiVersion: v1` at the top of the tool file (seed 001)",
            "",
        ));
    }
    let linked = linked_inputs(input);
    match &pack.execution {
        Execution::Docker(plan) => {
            check_image(located, &plan.image, out);
            let roles: Vec<(&str, &str)> =
                plan.inputs.iter().map(|i| (i.role.as_str(), i.dest_name.as_str())).collect();
            check_inputs(located, &linked, &roles, "destName", out);
            for (i, input) in plan.inputs.iter().enumerate() {
                let pointer = format!("/execution/inputs/{i}/destName");
                if let Some(problem) = unsafe_relpath(&input.dest_name) {
                    out.push(error(
                        located,
                        &format!("`destName` `{}` {problem}", input.dest_name),
                        "a file name under /work/in/, e.g. `report.md`",
                        &pointer,
                    ));
                }
            }
            for (i, output) in pack.outputs.iter().enumerate() {
                if output.src_relpath.is_some() {
                    out.push(error(
                        located,
                        "`srcRelpath` is for slurm and hybrid plans",
                        "a docker plan writes each output to /work/out/<path> (`path`, or the role)",
                        &format!("/outputs/{i}/srcRelpath"),
                    ));
                }
                if let Some(path) = &output.path
                    && let Some(problem) = unsafe_relpath(path)
                {
                    out.push(error(
                        located,
                        &format!("output path `{path}` {problem}"),
                        "a path under /work/out/, e.g. `report.html`",
                        &format!("/outputs/{i}/path"),
                    ));
                }
            }
            check_env(located, &plan.env, out);
            check_resources(located, &plan.resources, out);
            if plan.network.is_some() && !declares(pack, SideEffect::Network) {
                out.push(error(
                    located,
                    "the plan joins a network, but the tool does not declare the `network` side effect",
                    "add `network` to `sideEffects`, so the policy decides about it",
                    "/execution/network",
                ));
            }
        }
        Execution::Slurm(plan) => {
            check_io(located, pack, &linked, &plan.io, out);
            check_env(located, &plan.env, out);
            check_resources(located, &plan.resources, out);
        }
        Execution::Hybrid(plan) => {
            check_image(located, &plan.image, out);
            check_io(located, pack, &linked, &plan.io, out);
            check_env(located, &plan.env, out);
            check_resources(located, &plan.resources, out);
        }
        _ => {}
    }
}

/// The arguments a plan is handed as files: `format: workspace-path` properties, with whether
/// each is a single path (a list of paths cannot be linked by role).
fn linked_inputs(input: &Value) -> BTreeMap<String, bool> {
    let mut linked = BTreeMap::new();
    let Some(properties) = input.get("properties").and_then(Value::as_object) else {
        return linked;
    };
    for (name, schema) in properties {
        if schema.get("format").and_then(Value::as_str) == Some(INPUT_FORMAT) {
            linked.insert(name.clone(), true);
        } else if schema.pointer("/items/format").and_then(Value::as_str) == Some(INPUT_FORMAT) {
            linked.insert(name.clone(), false);
        }
    }
    linked
}

fn check_image(located: &Located, image: &str, out: &mut Vec<Diagnostic>) {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let pattern =
        PATTERN.get_or_init(|| Regex::new(PINNED_IMAGE_PATTERN).unwrap_or_else(|e| panic!("{e}")));
    if !pattern.is_match(image) {
        let hint = if image.contains("@sha256:") {
            "a digest is `sha256:` and 64 lowercase hex digits".to_owned()
        } else {
            format!(
                "a tag can move; pin the image by digest, e.g. `{}@sha256:…` (`docker image inspect --format '{{{{.RepoDigests}}}}' {image}`)",
                image.split(':').next().unwrap_or(image)
            )
        };
        out.push(error(
            located,
            &format!("image `{image}` is not pinned by digest"),
            &hint,
            "/execution/image",
        ));
    }
}

/// The plan's inputs must be the linked set exactly, and their destinations unique.
fn check_inputs(
    located: &Located,
    linked: &BTreeMap<String, bool>,
    inputs: &[(&str, &str)],
    dest_field: &str,
    out: &mut Vec<Diagnostic>,
) {
    let pointer = |i: usize, field: &str| {
        if dest_field == "destName" {
            format!("/execution/inputs/{i}/{field}")
        } else {
            format!("/execution/io/inputs/{i}/{field}")
        }
    };
    let mut roles = BTreeSet::new();
    let mut dests = BTreeSet::new();
    for (i, (role, dest)) in inputs.iter().enumerate() {
        match linked.get(*role) {
            None => {
                let mut diagnostic = Diagnostic::error(
                    codes::TOOL_PLAN,
                    format!(
                        "plan input `{role}` is not an input argument: inputs are the `inputSchema` properties with `format: workspace-path`"
                    ),
                )
                .with_hint("a plan may use only the files it is handed (seed 001, no hidden I/O)");
                diagnostic = diagnostic.suggest(role, linked.keys().map(String::as_str));
                out.push(located.at(diagnostic, &pointer(i, "role")));
            }
            Some(false) => out.push(error(
                located,
                &format!("plan input `{role}` is a list of paths; a plan links one file per role"),
                "declare one `format: workspace-path` string argument per input",
                &pointer(i, "role"),
            )),
            Some(true) => {}
        }
        if !roles.insert(*role) {
            out.push(error(
                located,
                &format!("plan input `{role}` is listed twice"),
                "list each input argument once",
                &pointer(i, "role"),
            ));
        }
        if !dests.insert(*dest) {
            out.push(error(
                located,
                &format!(
                    "`{dest_field}` `{dest}` is used twice; one input would overwrite the other"
                ),
                "give every input its own destination",
                &pointer(i, dest_field),
            ));
        }
    }
    for (name, _) in linked.iter().filter(|(name, _)| !roles.contains(name.as_str())) {
        out.push(error(
            located,
            &format!(
                "argument `{name}` is a workspace file (`format: workspace-path`) that the plan does not link"
            ),
            &format!("add it to the plan's inputs: `{{role: {name}, {dest_field}: …}}`"),
            if dest_field == "destName" { "/execution/inputs" } else { "/execution/io/inputs" },
        ));
    }
}

/// Slurm staging: inputs under `in/`, outputs exactly the declared ones, under `out/`.
fn check_io(
    located: &Located,
    pack: &Toolpack,
    linked: &BTreeMap<String, bool>,
    io: &SlurmIo,
    out: &mut Vec<Diagnostic>,
) {
    let roles: Vec<(&str, &str)> =
        io.inputs.iter().map(|i| (i.role.as_str(), i.dest_relpath.as_str())).collect();
    check_inputs(located, linked, &roles, "dest_relpath", out);
    for (i, input) in io.inputs.iter().enumerate() {
        let problem = unsafe_relpath(&input.dest_relpath).or_else(|| {
            (!input.dest_relpath.starts_with("in/")).then(|| "does not start with `in/`".to_owned())
        });
        if let Some(problem) = problem {
            out.push(error(
                located,
                &format!("`dest_relpath` `{}` {problem}", input.dest_relpath),
                "a path under the run directory's `in/`, e.g. `in/samples.csv`",
                &format!("/execution/io/inputs/{i}/dest_relpath"),
            ));
        }
    }
    let mut sources = BTreeSet::new();
    for (i, output) in pack.outputs.iter().enumerate() {
        let pointer = format!("/outputs/{i}/srcRelpath");
        match &output.src_relpath {
            None => out.push(error(
                located,
                &format!("output `{}` needs a `srcRelpath`", output.role),
                "where the job leaves it, relative to the run directory, e.g. `out/summary.csv`",
                &format!("/outputs/{i}"),
            )),
            Some(path) => {
                let problem = unsafe_relpath(path).or_else(|| {
                    (!path.starts_with("out/")).then(|| "does not start with `out/`".to_owned())
                });
                if let Some(problem) = problem {
                    out.push(error(
                        located,
                        &format!("`srcRelpath` `{path}` {problem}"),
                        "outputs are collected from the run directory's `out/`",
                        &pointer,
                    ));
                } else if !sources.insert(path.as_str()) {
                    out.push(error(
                        located,
                        &format!("`srcRelpath` `{path}` is declared twice"),
                        "give every output its own file",
                        &pointer,
                    ));
                }
            }
        }
        if output.path.is_some() {
            out.push(error(
                located,
                "a slurm or hybrid output is located by `srcRelpath`, not `path`",
                "remove `path`",
                &format!("/outputs/{i}/path"),
            ));
        }
    }
    let declared: Vec<OutputKey<'_>> = pack
        .outputs
        .iter()
        .map(|o| {
            output_key(&o.role, &o.artifact_type, o.label.as_deref(), o.src_relpath.as_deref())
        })
        .collect();
    let planned: Vec<OutputKey<'_>> = io
        .outputs
        .iter()
        .map(|o| output_key(&o.role, &o.artifact_type, o.label.as_deref(), Some(&o.src_relpath)))
        .collect();
    let mut declared_sorted = declared.clone();
    declared_sorted.sort_unstable();
    let mut planned_sorted = planned.clone();
    planned_sorted.sort_unstable();
    if declared_sorted != planned_sorted {
        let describe = |list: &[(&str, &str, Option<&str>, Option<&str>)],
                        other: &[(&str, &str, Option<&str>, Option<&str>)]| {
            list.iter()
                .filter(|o| !other.contains(o))
                .map(|(role, _, _, _)| format!("`{role}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let only_declared = describe(&declared, &planned);
        let only_planned = describe(&planned, &declared);
        let mut message =
            "`execution.io.outputs` must match the declared `outputs` exactly (role, type, label, srcRelpath)".to_owned();
        if !only_declared.is_empty() {
            message
                .push_str(&format!("; declared but not in the plan or different: {only_declared}"));
        }
        if !only_planned.is_empty() {
            message
                .push_str(&format!("; in the plan but not declared or different: {only_planned}"));
        }
        out.push(error(
            located,
            &message,
            "so that collecting the job is unambiguous (seed 001): copy the declared outputs into the plan",
            "/execution/io/outputs",
        ));
    }
}

/// What must match between a declared output and the plan's: role, type, label, srcRelpath.
type OutputKey<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>);

fn output_key<'a>(
    role: &'a str,
    kind: &'a str,
    label: Option<&'a str>,
    src: Option<&'a str>,
) -> OutputKey<'a> {
    (role, kind, label, src)
}

fn check_env(located: &Located, env: &BTreeMap<String, String>, out: &mut Vec<Diagnostic>) {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let pattern =
        PATTERN.get_or_init(|| Regex::new(ENV_NAME_PATTERN).unwrap_or_else(|e| panic!("{e}")));
    for name in env.keys() {
        let pointer = crate::yaml::pointer_push("/execution/env", name);
        if !pattern.is_match(name) {
            out.push(error(
                located,
                &format!(
                    "environment variable name `{name}` is not upper-case letters, digits and `_`"
                ),
                "e.g. `REPORT_STYLE`",
                &pointer,
            ));
        } else if jig_model::toolpack::loader_variable(name) {
            out.push(located.at(super::loader_variable(name), &pointer));
        }
    }
}

fn check_resources(located: &Located, resources: &Resources, out: &mut Vec<Diagnostic>) {
    if let Some(limit) = &resources.time_limit
        && parse_duration(limit).is_none_or(|d| d.is_zero())
    {
        out.push(error(
            located,
            &format!("`timeLimit` `{limit}` is not a duration"),
            "a whole number and a unit: `90s`, `10m`, `2h`",
            "/execution/resources/timeLimit",
        ));
    }
    if let Some(partition) = &resources.partition
        && (partition.is_empty()
            || !partition.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)))
    {
        out.push(error(
            located,
            &format!("partition `{partition}` is not a Slurm partition name"),
            "letters, digits, `_`, `-` and `.`",
            "/execution/resources/partition",
        ));
    }
}

fn declares(pack: &Toolpack, effect: SideEffect) -> bool {
    pack.side_effects.as_ref().is_some_and(|effects| effects.contains(&effect))
}

/// Why `path` is not a safe, whitespace-strict relative path, if it is not.
fn unsafe_relpath(path: &str) -> Option<String> {
    if path.is_empty() {
        return Some("is empty".to_owned());
    }
    if path.trim() != path || path.chars().any(char::is_control) {
        return Some("has surrounding whitespace or control characters".to_owned());
    }
    let parsed = Path::new(path);
    if parsed.is_absolute() {
        return Some("is absolute".to_owned());
    }
    if path.ends_with('/') || path.contains("//") {
        return Some("has an empty segment".to_owned());
    }
    if parsed.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Some("has `.` or `..` segments".to_owned());
    }
    None
}

fn error(located: &Located, message: &str, hint: &str, pointer: &str) -> Diagnostic {
    located.at(Diagnostic::error(codes::TOOL_PLAN, message).with_hint(hint), pointer)
}

#[cfg(test)]
mod tests {
    use super::unsafe_relpath;

    #[test]
    fn relative_paths() {
        for good in ["report.md", "in/a.csv", "out/sub/x.txt", "a b.txt"] {
            assert_eq!(unsafe_relpath(good), None, "{good}");
        }
        for bad in
            ["", " x", "x ", "/abs", "../x", "in/../x", "./x", "in//x", "in/", "a\tb", "a\nb"]
        {
            assert!(unsafe_relpath(bad).is_some(), "{bad:?}");
        }
    }
}
