//! `kind: docker`: one container per call, through the Docker Engine API (bollard) — Docker,
//! Podman's API service, or any engine speaking it, local or remote. No `docker` CLI.
//!
//! create → upload `in/` → start → wait (streaming the log) → download `out/` → remove.
//!
//! Confinement is the engine's, and not optional: no network (`none`) unless the plan names
//! one that the policy lists and the tool declares the `network` side effect; a read-only root
//! filesystem; every capability dropped and `no-new-privileges`; the plan's CPU, memory (no
//! swap) and process limits; a wall-clock limit. The container sees exactly its inputs, read-only
//! under `/work/in`, an empty writable `/work/out` and a small private `/tmp`. An engine on this
//! machine (a unix socket) gets the run directory's `in/` and `out/` bound there; a remote one
//! gets the inputs copied into the container's read-only root and the outputs copied out of a
//! fresh volume, as tar archives through the API.
//!
//! The container is removed whatever happens (its volume with it); cancelling stops it first.
//! The exit code is read from the engine's wait answer (Podman 4.3 reports 0 for `--rm`
//! containers, so containers are never created with auto-remove).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{
    CreateContainerOptions, DownloadFromContainerOptions, LogsOptions, RemoveContainerOptions,
    UploadToContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;
use jig_exec::rundir::{Placement, RunDir};
use jig_exec::{Execution, Executor, Invocation, Output, ToolError};
use jig_model::plan::{CONTAINER_IN, CONTAINER_OUT, DockerPlan};
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution as Kind;
use jig_model::{ErrorCode, SideEffect};
use jig_policy::Policy;
use serde_json::json;

use crate::archive;
use crate::render::{self, LOG_MAX};

/// The engine's name in errors and results.
const ENGINE: &str = "docker";

/// Processes a container may run when the plan does not say.
const DEFAULT_PIDS: i64 = 256;

/// Seconds the client waits for one API request (a container's run is bounded separately).
const API_TIMEOUT: u64 = 120;

/// The API version Jig speaks: everything it uses is in 1.41, which Docker 20.10 and later and
/// Podman 4 serve. Fixed rather than negotiated: asking Podman 4.3 for its version takes ~0.9 s.
const API_VERSION: bollard::ClientVersion =
    bollard::ClientVersion { major_version: 1, minor_version: 41 };

/// Runs `kind: docker` plans.
#[derive(Default)]
pub struct DockerExecutor {
    /// Clients by engine address and TLS settings.
    clients: Mutex<HashMap<String, Docker>>,
}

impl DockerExecutor {
    /// An executor with no connection yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client for the engine the policy names (else `DOCKER_HOST`, else the local socket),
    /// and whether the engine is on this machine (a unix socket).
    fn client(&self, policy: &Policy) -> Result<(Docker, bool), ToolError> {
        let engine = &policy.config().plans.docker;
        let host = engine
            .host
            .clone()
            .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
            .unwrap_or_else(|| "unix:///var/run/docker.sock".to_owned());
        let local = host.starts_with("unix://") && !engine.copy;
        // Keyed by the TLS settings too: a reloaded policy with other certificates connects anew.
        let key = format!("{host} {:?}", engine.tls);
        if let Some(client) = self.clients.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok((client, local));
        }
        let connected = if let Some(path) = host.strip_prefix("unix://") {
            Docker::connect_with_unix(path, API_TIMEOUT, &API_VERSION)
        } else if host.starts_with("tcp://") || host.starts_with("https://") {
            match &engine.tls {
                Some(tls) => Ok(crate::docker_tls::connect(
                    &host,
                    tls,
                    expand_home,
                    API_TIMEOUT,
                    &API_VERSION,
                )
                .map_err(|message| {
                    ToolError::new(ErrorCode::Policy, format!("{ENGINE}: {host}: {message}"))
                        .with_details(json!({ "rule": "plans.docker.tls" }))
                })?),
                None => {
                    return Err(ToolError::new(
                        ErrorCode::Policy,
                        format!(
                            "the Docker engine at `{host}` is reached over TCP without TLS; set `plans.docker.tls` (ca, cert, key)"
                        ),
                    )
                    .with_details(json!({ "rule": "plans.docker.tls" })));
                }
            }
        } else {
            return Err(ToolError::new(
                ErrorCode::Policy,
                format!("the Docker engine address `{host}` is neither unix:// nor tcp://"),
            ));
        };
        let client = connected.map_err(|e| render::engine_error(ENGINE, &host, &e))?;
        if let Ok(mut clients) = self.clients.lock() {
            clients.insert(key, client.clone());
        }
        Ok((client, local))
    }
}

#[async_trait]
impl Executor for DockerExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let ToolExecution::Toolpack(Kind::Docker(plan)) = &invocation.tool.execution else {
            return Err(ToolError::new(ErrorCode::Internal, "not a docker plan"));
        };
        let network = network(&invocation, plan)?;
        let placements: Vec<Placement> = plan
            .inputs
            .iter()
            .map(|input| Placement {
                role: input.role.clone(),
                relpath: format!("in/{}", input.dest_name),
                seen_as: format!("{CONTAINER_IN}/{}", input.dest_name),
            })
            .collect();
        let run = RunDir::prepare_plan(&invocation, &placements)?;
        let argv = render::argv(&invocation, &plan.command, &plan.args, &run.args)?;
        let (client, local) = self.client(invocation.policy)?;
        let transfer =
            if local { Transfer::Bind(run.dir().to_path_buf()) } else { Transfer::Archive };
        let limit = render::time_limit(&plan.resources, invocation.timeout);
        invocation.events.progress(None, format!("creating a container of {}", plan.image));
        let config = container_config(&invocation, plan, argv, network, &transfer);
        let created = client
            .create_container(None::<CreateContainerOptions>, config)
            .await
            .map_err(|e| create_error(&plan.image, &e))?;
        let container = Container { client: client.clone(), id: created.id, transfer };
        let outcome = container.run(&invocation, &run, limit).await;
        container.remove().await;
        let (code, log) = outcome?;
        if code != 0 {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!("the container of `{}` exited with {code}", invocation.tool.id),
            )
            .with_details(
                json!({ "exit_code": code, "log_tail": render::tail(&log), "engine": ENGINE }),
            ));
        }
        let mut data = json!({ "exit_code": code, "image": plan.image });
        run.collect(invocation.tool, invocation.policy, &log, &mut data).await?;
        Ok(Execution::Done(Output::data(data)))
    }
}

/// How inputs reach a container and outputs leave it.
enum Transfer {
    /// The engine is on this machine: the run directory's `in/` is bound read-only at
    /// `/work/in` and its `out/` read-write at `/work/out` (nothing is copied).
    Bind(std::path::PathBuf),
    /// A remote engine: inputs are copied into the container's read-only root and outputs out
    /// of a fresh volume, as tar through the API.
    Archive,
}

/// A created container; removed by its owner on every path.
struct Container {
    client: Docker,
    id: String,
    transfer: Transfer,
}

impl Container {
    /// Upload the inputs, start, wait within `limit` (or until cancelled), read the log and
    /// download `out/` into the run directory; the exit code and the log.
    async fn run(
        &self,
        invocation: &Invocation<'_>,
        run: &RunDir,
        limit: Duration,
    ) -> Result<(i64, String), ToolError> {
        if matches!(self.transfer, Transfer::Archive) {
            let inputs = archive::pack_inputs(&run.dir().join("in"))?;
            self.client
                .upload_to_container(
                    &self.id,
                    Some(UploadToContainerOptions { path: "/".to_owned(), ..Default::default() }),
                    bollard::body_full(inputs.into()),
                )
                .await
                .map_err(|e| render::engine_error(ENGINE, "copying the inputs in", &e))?;
        }
        self.client
            .start_container(&self.id, None)
            .await
            .map_err(|e| render::engine_error(ENGINE, "starting the container", &e))?;
        invocation.events.progress(None, "running");

        let log = Arc::new(Mutex::new(Vec::<u8>::new()));
        let follow = self.follow_log(invocation, Arc::clone(&log));
        let waited = async {
            let mut wait = self.client.wait_container(&self.id, None::<WaitContainerOptions>);
            match wait.next().await {
                Some(Ok(answer)) => Ok(answer.status_code),
                // bollard reports a non-zero exit as an error carrying the code.
                Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => {
                    Ok(code)
                }
                Some(Err(e)) => Err(render::engine_error(ENGINE, "waiting for the container", &e)),
                None => Err(render::engine_error(
                    ENGINE,
                    "waiting for the container",
                    &std::io::Error::other("no answer"),
                )),
            }
        };
        let code = tokio::select! {
            code = waited => code?,
            () = tokio::time::sleep(limit) => {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("`{}` did not finish within {} s; its container was stopped", invocation.tool.id, limit.as_secs()),
                ));
            }
            () = invocation.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::Internal, "cancelled; the container was stopped"));
            }
        };
        // The log stream ends when the container does; a little grace for its last bytes.
        let _ = tokio::time::timeout(Duration::from_secs(5), follow).await;
        let bytes = log.lock().map(|l| l.clone()).unwrap_or_default();
        let log = render::log_text(&bytes);
        invocation.events.progress(Some(100.0), format!("exited with {code}; collecting outputs"));
        if code == 0 && matches!(self.transfer, Transfer::Archive) {
            let mut stream = self.client.download_from_container(
                &self.id,
                Some(DownloadFromContainerOptions { path: CONTAINER_OUT.to_owned() }),
            );
            let mut tar = Vec::new();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk
                    .map_err(|e| render::engine_error(ENGINE, "copying the outputs out", &e))?;
                if tar.len() + chunk.len() > archive::OUT_MAX {
                    return Err(archive::too_large());
                }
                tar.extend_from_slice(&chunk);
            }
            archive::unpack_outputs(&tar, &run.dir().join("out"))?;
        }
        Ok((code, log))
    }

    /// Stream the container's output into `log` and as `OutputChunk` events.
    fn follow_log(
        &self,
        invocation: &Invocation<'_>,
        log: Arc<Mutex<Vec<u8>>>,
    ) -> tokio::task::JoinHandle<()> {
        let mut stream = self.client.logs(
            &self.id,
            Some(LogsOptions { follow: true, stdout: true, stderr: true, ..Default::default() }),
        );
        let events = invocation.events.clone();
        tokio::spawn(async move {
            while let Some(Ok(chunk)) = stream.next().await {
                let (name, bytes) = match chunk {
                    bollard::container::LogOutput::StdErr { message } => ("stderr", message),
                    bollard::container::LogOutput::StdOut { message }
                    | bollard::container::LogOutput::Console { message } => ("stdout", message),
                    bollard::container::LogOutput::StdIn { .. } => continue,
                };
                events.output(name, &String::from_utf8_lossy(&bytes));
                if let Ok(mut log) = log.lock()
                    && log.len() <= LOG_MAX
                {
                    log.extend_from_slice(&bytes);
                }
            }
        })
    }

    /// Stop and remove the container and its volume; a failure is logged, not returned (the
    /// call's own outcome matters more).
    async fn remove(&self) {
        let options = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        if let Err(error) = self.client.remove_container(&self.id, Some(options)).await {
            tracing::warn!(container = %self.id, %error, "could not remove a plan's container");
        }
    }
}

/// The network the container joins: `none`, unless the plan names one the policy lists and the
/// tool declares the `network` side effect.
fn network(invocation: &Invocation<'_>, plan: &DockerPlan) -> Result<String, ToolError> {
    let Some(name) = &plan.network else { return Ok("none".to_owned()) };
    let allowed = &invocation.policy.config().plans.docker.networks;
    if !invocation.tool.side_effects.contains(&SideEffect::Network) || !allowed.contains(name) {
        return Err(ToolError::new(
            ErrorCode::Policy,
            format!(
                "`{}` asks for the network `{name}`, which the policy's `plans.docker.networks` does not list",
                invocation.tool.id
            ),
        )
        .with_details(json!({ "rule": "plans.docker.networks", "network": name })));
    }
    Ok(name.clone())
}

fn container_config(
    invocation: &Invocation<'_>,
    plan: &DockerPlan,
    argv: Vec<String>,
    network: String,
    transfer: &Transfer,
) -> ContainerCreateBody {
    let (binds, mounts) = match transfer {
        Transfer::Bind(dir) => (
            Some(vec![
                format!("{}:{CONTAINER_IN}:ro", dir.join("in").display()),
                format!("{}:{CONTAINER_OUT}:rw", dir.join("out").display()),
            ]),
            None,
        ),
        Transfer::Archive => (
            None,
            Some(vec![Mount {
                target: Some(CONTAINER_OUT.to_owned()),
                typ: Some(MountType::VOLUME),
                ..Default::default()
            }]),
        ),
    };
    let resources = &plan.resources;
    let memory = resources.memory_mb.map(|mb| i64::try_from(mb * 1024 * 1024).unwrap_or(i64::MAX));
    let labels = HashMap::from([
        ("dev.jig.request".to_owned(), invocation.events.request_id().to_owned()),
        ("dev.jig.tool".to_owned(), invocation.tool.id.clone()),
    ]);
    ContainerCreateBody {
        image: Some(plan.image.clone()),
        entrypoint: Some(Vec::new()),
        cmd: Some(argv),
        env: Some(
            render::environment(&plan.env, invocation.traceparent.as_deref())
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect(),
        ),
        working_dir: Some("/work".to_owned()),
        labels: Some(labels),
        network_disabled: Some(network == "none"),
        host_config: Some(HostConfig {
            network_mode: Some(network),
            readonly_rootfs: Some(true),
            privileged: Some(false),
            cap_drop: Some(vec!["ALL".to_owned()]),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            memory,
            memory_swap: memory,
            nano_cpus: resources.cpus.map(|c| i64::from(c) * 1_000_000_000),
            pids_limit: Some(resources.pids.map_or(DEFAULT_PIDS, i64::from)),
            tmpfs: Some(HashMap::from([(
                "/tmp".to_owned(),
                "rw,nosuid,nodev,noexec,size=64m".to_owned(),
            )])),
            binds,
            mounts,
            auto_remove: Some(false),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn create_error(image: &str, error: &bollard::errors::Error) -> ToolError {
    let missing = matches!(
        &error,
        bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }
    );
    if missing {
        return ToolError::new(
            ErrorCode::NotFound,
            format!(
                "the engine has no image `{image}`; pull or load it there first (Jig never pulls)"
            ),
        )
        .with_details(json!({ "engine": ENGINE, "image": image }));
    }
    render::engine_error(ENGINE, "creating the container", error)
}

fn expand_home(path: &str) -> std::path::PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map_or_else(|| Path::new(path).to_path_buf(), |h| Path::new(&h).join(rest)),
        None => Path::new(path).to_path_buf(),
    }
}
