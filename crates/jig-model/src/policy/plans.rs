//! `policy.plans`: the engines seed 001's plans run on — Docker Engine API endpoints (Docker,
//! Podman's service), Slurm clusters, and the runtime of hybrid plans.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `plans`: the engines plan tools run on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlansPolicy {
    /// The Docker Engine API (Docker, Podman's service, any compatible engine).
    #[serde(default)]
    pub docker: DockerEngine,
    /// The Slurm cluster.
    #[serde(default)]
    pub slurm: SlurmCluster,
    /// How a hybrid plan's job runs its container on the node.
    #[serde(default)]
    pub hybrid: HybridRuntime,
}

impl PlansPolicy {
    pub(crate) fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// `plans.docker`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DockerEngine {
    /// The engine's address: `unix:///path/to.sock` or `tcp://host:2376` (with `tls`).
    /// `DOCKER_HOST` when omitted, else `unix:///var/run/docker.sock`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Client certificate, key and the CA that signed the engine's certificate, for `tcp://`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DockerTls>,
    /// Networks a plan may join (its `network`); none may otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
    /// Copy inputs and outputs through the API (tar) instead of binding the run directory: for
    /// a unix socket forwarded from another machine. A `tcp://` engine always copies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copy: bool,
}

/// `plans.docker.tls`: PEM files (`~` is the user's home).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DockerTls {
    /// The CA certificate.
    pub ca: String,
    /// The client certificate.
    pub cert: String,
    /// The client key.
    pub key: String,
}

/// `plans.slurm`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlurmCluster {
    /// The cluster's `slurm.conf` (`SLURM_CONF` for the client commands); the client's default
    /// (`SLURM_CONF`, else `/etc/slurm/slurm.conf`) when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conf: Option<String>,
    /// Directory holding `sbatch`, `squeue`, `scontrol` and `scancel`; `PATH` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin: Option<String>,
    /// How often jobs are polled (`500ms`, `5s`); 1 s when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll: Option<String>,
    /// The account jobs are charged to (`--account`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// `plans.hybrid`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridRuntime {
    /// The command that runs containers on a node (argv, e.g. `[podman]` or
    /// `[/opt/site/bin/podman, --root, /scratch/containers]`); `[podman]` when omitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtime: Vec<String>,
}
