//! Seed 001's plans on real engines.
//!
//! A toolpack of `kind: docker` runs one container through the Docker Engine API
//! ([`docker::DockerExecutor`]); `kind: slurm` submits a batch job and `kind: hybrid` a batch
//! job that runs a pinned container on its node ([`slurm::SlurmExecutor`]). The engine decides,
//! records and replays; these executors only run, follow and collect, each behind
//! `jig_exec::Executor`.
//!
//! Inputs reach a plan only as the workspace files its arguments name, staged in its run
//! directory; outputs leave it only as the declared roles, stored content-addressed
//! (`jig_exec::rundir`).

mod archive;
pub mod docker;
mod docker_tls;
mod render;
pub mod slurm;

use std::sync::Arc;

use jig_exec::Executor;

/// The plan executors by execution kind, for a composition root to register.
pub fn executors() -> Vec<(&'static str, Arc<dyn Executor>)> {
    let slurm: Arc<dyn Executor> = Arc::new(slurm::SlurmExecutor::new());
    vec![
        ("docker", Arc::new(docker::DockerExecutor::new())),
        ("slurm", Arc::clone(&slurm)),
        ("hybrid", slurm),
    ]
}
