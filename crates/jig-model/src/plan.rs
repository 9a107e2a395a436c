//! Seed 001's plans: a toolpack whose work runs on an engine outside Jig — a container through
//! the Docker Engine API (`kind: docker`), a batch job on Slurm (`kind: slurm`), or a Slurm job
//! that runs a pinned container on its node (`kind: hybrid`).
//!
//! A plan is declarative: the image (pinned by digest), the command, argument templates, the
//! inputs it is handed and the outputs it must produce. The tool's author writes no code that
//! runs in Jig; what the user's arguments change is only the templated `args` (passed as argv,
//! never through a shell) and which workspace files are handed in. The loader checks every rule
//! of seed 001 (`jig-load`, `toolfile/plan.rs`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Pattern of an image pinned by digest: `name@sha256:<64 hex>` (a tag before `@` is allowed
/// and ignored by the engine).
pub const PINNED_IMAGE_PATTERN: &str = r"^[a-z0-9]([a-z0-9._/:-]*[a-z0-9])?@sha256:[0-9a-f]{64}$";

/// Directory inside a container where inputs appear (read-only).
pub const CONTAINER_IN: &str = "/work/in";

/// Directory inside a container where the declared outputs are written.
pub const CONTAINER_OUT: &str = "/work/out";

/// `kind: docker`: one container, run to completion through the Docker Engine API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DockerPlan {
    /// The image, pinned by digest: `registry/name@sha256:…` (the loader explains a tag).
    pub image: String,
    /// The program and its fixed arguments (the container's entrypoint is not used).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Arguments appended to `command`, each a Jinja2 template over the tool's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Workspace files handed in, one per input argument (`format: workspace-path`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<DockerInput>,
    /// Environment of the container, fixed values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Limits the engine enforces.
    #[serde(default)]
    pub resources: Resources,
    /// The network the container joins; without one it has none. Needs the `network` side
    /// effect and the policy's `plans.docker.networks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
}

/// A docker plan's input: the argument (`role`) and its file name under `/work/in/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DockerInput {
    /// The input argument (a `format: workspace-path` property of `inputSchema`).
    pub role: String,
    /// Its path under `/work/in/`: unique, relative, no surrounding whitespace.
    pub dest_name: String,
}

/// `kind: slurm`: a batch job. `script` is the job's shell script, written by the tool's
/// author and never templated; the templated `args` reach it as `$1 … $n`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlurmPlan {
    /// The job script (POSIX shell). It runs in the run directory: inputs under `in/`, outputs
    /// written where `io.outputs[].srcRelpath` say.
    #[schemars(length(min = 1))]
    pub script: String,
    /// Positional arguments of the script, each a Jinja2 template over the tool's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// What is staged in and collected.
    pub io: SlurmIo,
    /// Environment of the job, fixed values (nothing else is exported to it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// What the job asks the scheduler for.
    #[serde(default)]
    pub resources: Resources,
}

/// `kind: hybrid`: a Slurm job whose work is a pinned container run on the node by its
/// container engine (docs/runtime.md, "Hybrid plans").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HybridPlan {
    /// The image, pinned by digest (the loader explains a tag).
    pub image: String,
    /// The program and its fixed arguments.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Arguments appended to `command`, each a Jinja2 template over the tool's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// What is staged in (`in/…`, seen as `/work/in/…`) and collected (`out/…`, written to
    /// `/work/out/…`).
    pub io: SlurmIo,
    /// Environment of the container, fixed values.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// What the job asks the scheduler for, and the container's limits.
    #[serde(default)]
    pub resources: Resources,
}

/// A Slurm plan's staging: seed 001's `plan.io`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmIo {
    /// One per input argument.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<SlurmInput>,
    /// Exactly the tool's declared `outputs` (role, type, label, `srcRelpath`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<SlurmOutput>,
}

/// A Slurm plan's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmInput {
    /// The input argument (a `format: workspace-path` property of `inputSchema`).
    pub role: String,
    /// Where it is staged, relative to the run directory: a safe path under `in/`.
    pub dest_relpath: String,
}

/// A Slurm plan's output, as seed 001's `plan.io.outputs[]` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlurmOutput {
    /// The declared role.
    pub role: String,
    /// The declared type.
    #[serde(rename = "type")]
    pub artifact_type: String,
    /// The declared label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Where the job leaves it, relative to the run directory.
    pub src_relpath: String,
}

/// What a plan asks its engine for.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resources {
    /// CPUs (a container's CPU quota; a job's `--cpus-per-task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub cpus: Option<u32>,
    /// Memory in MiB (a container's hard limit; a job's `--mem`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4))]
    pub memory_mb: Option<u64>,
    /// Wall-clock limit (`30s`, `10m`, `2h`); the tool's `timeoutMs` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<String>,
    /// Slurm partition; the cluster's default when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// Most processes in the container (its pids limit); 256 when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub pids: Option<u32>,
}
