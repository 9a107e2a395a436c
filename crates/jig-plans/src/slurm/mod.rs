//! `kind: slurm` and `kind: hybrid`: batch jobs on a Slurm cluster.
//!
//! Submitting stages the inputs in the run directory (`in/…` by `dest_relpath`), writes the
//! tool's script and Jig's wrapper (`script.rs`) beside them, and hands the wrapper to
//! `sbatch`; the call answers at once with the job queued. Polling maps the scheduler's state
//! (`squeue`) to the run's — queued, running, then finished — and, once the job is over,
//! collects exactly the declared outputs by `srcRelpath` as artifacts, with the job's output as
//! the `log` role. Everything a poll needs is in the run directory and the job's id, so a job
//! outlives the Jig process that submitted it.

mod commands;
pub mod script;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use jig_exec::rundir::{Placement, RunDir};
use jig_exec::{Execution, Executor, Invocation, Job, JobStatus, Output, ToolError};
use jig_model::ErrorCode;
use jig_model::policy::SandboxEnforcement;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;
use jig_model::{ToolDef, plan::SlurmIo};
use jig_policy::Policy;
use serde_json::json;

use crate::render;
use commands::Cluster;

/// The engine's name in jobs and errors.
pub const ENGINE: &str = "slurm";

/// The file the tool's own script is written to.
const SCRIPT: &str = "script.sh";

/// The file Jig's wrapper is written to (what `sbatch` runs).
const JOB: &str = "job.sh";

/// How far past its limit a job may run before Jig cancels it (polls are not instant).
const TIME_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `kind: slurm` and `kind: hybrid` plans.
#[derive(Default)]
pub struct SlurmExecutor {
    cluster: Arc<Cluster>,
}

impl SlurmExecutor {
    /// An executor for both kinds, sharing one view of the queue.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl Executor for SlurmExecutor {
    fn submits_jobs(&self) -> bool {
        true
    }

    fn job_log(&self, job: &Job) -> Option<PathBuf> {
        Some(job.dir.join(script::LOG_FILE))
    }

    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let (io, resources, args) = match &invocation.tool.execution {
            ToolExecution::Toolpack(Kind::Slurm(plan)) => (&plan.io, &plan.resources, &plan.args),
            ToolExecution::Toolpack(Kind::Hybrid(plan)) => (&plan.io, &plan.resources, &plan.args),
            _ => return Err(ToolError::new(ErrorCode::Internal, "not a slurm plan")),
        };
        let settings = &invocation.policy.config().plans.slurm;
        let run = RunDir::prepare_plan(&invocation, &placements(io, invocation.tool))?;
        let dir = run.dir().to_path_buf();
        let io_error = |e: std::io::Error| {
            ToolError::new(
                ErrorCode::FileIo,
                format!("writing the job's files in `{}`: {e}", dir.display()),
            )
        };
        fs_err::create_dir_all(dir.join("tmp")).map_err(io_error)?;
        let request = invocation.events.request_id();
        let header = format!(
            "Written by Jig for request {request} of `{}` {}.",
            invocation.tool.id, invocation.tool.version
        );
        let wrapper = match &invocation.tool.execution {
            ToolExecution::Toolpack(Kind::Hybrid(plan)) => {
                let argv = render::argv(&invocation, &plan.command, &plan.args, &run.args)?;
                let runtime = &invocation.policy.config().plans.hybrid.runtime;
                let runtime =
                    if runtime.is_empty() { vec!["podman".to_owned()] } else { runtime.clone() };
                script::containerized(
                    &dir,
                    plan,
                    &render::environment(&plan.env, invocation.traceparent.as_deref()),
                    &runtime,
                    &container_name(request),
                    &argv,
                    &header,
                )
            }
            ToolExecution::Toolpack(Kind::Slurm(plan)) => {
                let rendered = jig_exec::template::render_all(
                    args,
                    &run.args,
                    invocation.tool.templating.as_ref(),
                )?;
                let script_path = dir.join(SCRIPT);
                fs_err::write(&script_path, &plan.script).map_err(io_error)?;
                let required =
                    invocation.policy.config().sandbox.enforce == SandboxEnforcement::Required;
                let env = render::environment(&plan.env, invocation.traceparent.as_deref());
                let wrapper =
                    script::confined(&dir, &script_path, &rendered, &env, required, &header)?;
                fs_err::write(dir.join(script::SANDBOX_OPTIONS), &wrapper.options)
                    .map_err(io_error)?;
                wrapper.script
            }
            _ => unreachable!("matched above"),
        };
        let job_path = dir.join(JOB);
        fs_err::write(&job_path, wrapper).map_err(io_error)?;

        let limit = render::time_limit(resources, invocation.timeout);
        let mut options = vec![
            format!("--job-name={}", container_name(request)),
            format!("--chdir={}", dir.display()),
            format!("--output={}", dir.join(script::LOG_FILE).display()),
            // Slurm counts whole minutes.
            format!("--time={}", limit.as_secs().div_ceil(60).max(1)),
        ];
        if let Some(cpus) = resources.cpus {
            options.push(format!("--cpus-per-task={cpus}"));
        }
        if let Some(mb) = resources.memory_mb {
            options.push(format!("--mem={mb}M"));
        }
        if let Some(partition) = &resources.partition {
            options.push(format!("--partition={partition}"));
        }
        let handle = self.cluster.submit(settings, &options, &job_path).await?;
        invocation.events.progress(None, format!("submitted as Slurm job {handle}"));
        Ok(Execution::Submitted(Job { engine: ENGINE.to_owned(), handle, dir: run.keep() }))
    }

    async fn poll(
        &self,
        tool: &ToolDef,
        policy: &Policy,
        root: &Path,
        job: &Job,
    ) -> Result<JobStatus, ToolError> {
        let settings = &policy.config().plans.slurm;
        if !job.dir.is_dir() {
            // Collected (and cleaned up) by another process a moment ago, or lost: either way
            // not this poll's to decide.
            return Err(ToolError::new(
                ErrorCode::FileIo,
                format!("the run directory of Slurm job {} is gone", job.handle),
            ));
        }
        let entry = self.cluster.status(settings, &job.handle).await?;
        let exit = read_exit(&job.dir);
        // The scheduler enforces limits in whole minutes and checks them now and then; the
        // plan's own limit is enforced here, to the second.
        let limit = time_limit(tool);
        if let Some(used) = entry.as_ref().and_then(|e| e.used)
            && exit.is_none()
            && used > limit + TIME_GRACE
        {
            self.cluster.cancel(settings, &job.handle).await?;
            return Ok(JobStatus::Finished(Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "Slurm job {} ran past its time limit of {} s; Jig cancelled it",
                    job.handle,
                    limit.as_secs()
                ),
            )
            .with_details(
                json!({ "engine": ENGINE, "job": job.handle, "limit_s": limit.as_secs() }),
            ))));
        }
        let state = entry.as_ref().map(|e| e.state.as_str());
        match state {
            Some(
                "PENDING" | "CONFIGURING" | "REQUEUED" | "RESV_DEL_HOLD" | "REQUEUE_HOLD"
                | "SUSPENDED",
            ) => {
                return Ok(JobStatus::Queued(entry.map(|e| e.reason).filter(|r| r != "None")));
            }
            Some("RUNNING" | "COMPLETING" | "STAGE_OUT" | "SIGNALING") if exit.is_none() => {
                return Ok(JobStatus::Running);
            }
            Some("CANCELLED") => return Ok(JobStatus::Cancelled),
            _ => {}
        }
        // What the job printed, as much as a tool's output may be: a job can print anything.
        let (log, _) = jig_exec::rundir::read_head(
            &job.dir.join(script::LOG_FILE),
            jig_exec::process::MAX_CAPTURE as u64,
        )
        .unwrap_or_default();
        let log = render::log_text(&log);
        let run = RunDir::reopen(root, &job.dir);
        let failure = |code: ErrorCode, message: String| {
            Ok(JobStatus::Finished(Err(ToolError::new(code, message).with_details(json!({
                "engine": ENGINE, "job": job.handle, "state": state, "exit_code": exit, "log_tail": render::tail(&log),
            })))))
        };
        match (state, exit) {
            (Some("TIMEOUT" | "DEADLINE"), _) => failure(
                ErrorCode::Timeout,
                format!("Slurm job {} reached its time limit", job.handle),
            ),
            (Some("OUT_OF_MEMORY"), _) => {
                failure(ErrorCode::Limit, format!("Slurm job {} ran out of memory", job.handle))
            }
            (_, Some(0)) => {
                let mut data =
                    json!({ "exit_code": 0, "job": { "engine": ENGINE, "id": job.handle } });
                match run.collect(tool, policy, &log, &mut data).await {
                    Ok(()) => Ok(JobStatus::Finished(Ok(Output::data(data)))),
                    Err(error) => Ok(JobStatus::Finished(Err(error))),
                }
            }
            (_, Some(script::NO_SANDBOX)) => failure(
                ErrorCode::Policy,
                format!(
                    "Slurm job {} could not be confined on its node (no bubblewrap)",
                    job.handle
                ),
            ),
            (_, Some(code)) => {
                failure(ErrorCode::Shell, format!("Slurm job {} exited with {code}", job.handle))
            }
            (Some(other), None) => failure(
                ErrorCode::Shell,
                format!("Slurm job {} ended {other} without an exit status", job.handle),
            ),
            (None, None) => failure(
                ErrorCode::Internal,
                format!(
                    "the scheduler no longer knows Slurm job {} and it left no exit status (its node failed, or the cluster lost it)",
                    job.handle
                ),
            ),
        }
    }

    async fn cancel_job(&self, policy: &Policy, job: &Job) -> Result<(), ToolError> {
        self.cluster.cancel(&policy.config().plans.slurm, &job.handle).await
    }
}

/// Where each input goes: its `dest_relpath`, seen by the job as that relative path (the job
/// runs in its run directory) or, in a hybrid plan's container, under `/work/in`.
fn placements(io: &SlurmIo, tool: &ToolDef) -> Vec<Placement> {
    let hybrid = matches!(tool.execution, ToolExecution::Toolpack(Kind::Hybrid(_)));
    io.inputs
        .iter()
        .map(|input| Placement {
            role: input.role.clone(),
            relpath: input.dest_relpath.clone(),
            seen_as: if hybrid {
                format!(
                    "{}/{}",
                    jig_model::plan::CONTAINER_IN,
                    input.dest_relpath.strip_prefix("in/").unwrap_or(&input.dest_relpath)
                )
            } else {
                input.dest_relpath.clone()
            },
        })
        .collect()
}

/// The plan's wall-clock limit.
fn time_limit(tool: &ToolDef) -> std::time::Duration {
    let timeout = std::time::Duration::from_millis(tool.timeout_ms);
    match &tool.execution {
        ToolExecution::Toolpack(Kind::Slurm(plan)) => render::time_limit(&plan.resources, timeout),
        ToolExecution::Toolpack(Kind::Hybrid(plan)) => render::time_limit(&plan.resources, timeout),
        _ => timeout,
    }
}

/// A name for the request usable as a container or job name.
fn container_name(request: &str) -> String {
    let cleaned: String = request
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(60)
        .collect();
    format!("jig-{cleaned}")
}

/// The exit status the wrapper recorded, if it finished.
fn read_exit(dir: &Path) -> Option<i32> {
    fs_err::read_to_string(dir.join(script::EXIT_FILE)).ok()?.trim().parse().ok()
}
