//! `docker-bare IMAGE [DOCKER_HOST]`: the reference of the docker-plan benchmark — one
//! container of `IMAGE` running `true`, through the same Docker Engine API client Jig uses
//! (bollard), with nothing else: create, start, wait, remove. Prints the exit code.
//! scripts/bench-plans times this whole process against `jig call` of a trivial docker plan.
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it starts Jig and the reference programs it measures against"
)]
// A benchmark's report is its output.
#![allow(clippy::print_stdout)]

use std::collections::HashMap;

use anyhow::Context;
use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptions, RemoveContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let image = args.next().context("usage: docker-bare IMAGE [DOCKER_HOST]")?;
    let host = args
        .next()
        .or_else(|| std::env::var("DOCKER_HOST").ok())
        .context("DOCKER_HOST is not set")?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let code = runtime.block_on(run(&image, &host))?;
    println!("{code}");
    Ok(())
}

async fn run(image: &str, host: &str) -> anyhow::Result<i64> {
    let path = host.strip_prefix("unix://").context("a unix:// DOCKER_HOST")?;
    // The API version Jig speaks, not negotiated: neither side pays for Podman's slow
    // `/version`.
    let version = bollard::ClientVersion { major_version: 1, minor_version: 41 };
    let docker = Docker::connect_with_unix(path, 120, &version)?;
    let config = ContainerCreateBody {
        image: Some(image.to_owned()),
        cmd: Some(vec!["true".to_owned()]),
        host_config: Some(HostConfig {
            network_mode: Some("none".to_owned()),
            readonly_rootfs: Some(true),
            ..Default::default()
        }),
        labels: Some(HashMap::from([("dev.jig.bench".to_owned(), "bare".to_owned())])),
        ..Default::default()
    };
    let created = docker.create_container(None::<CreateContainerOptions>, config).await?;
    docker.start_container(&created.id, None).await?;
    let code = match docker.wait_container(&created.id, None::<WaitContainerOptions>).next().await {
        Some(Ok(answer)) => answer.status_code,
        Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => code,
        Some(Err(error)) => return Err(error.into()),
        None => anyhow::bail!("no answer to wait"),
    };
    let remove = RemoveContainerOptions { force: true, v: true, ..Default::default() };
    docker.remove_container(&created.id, Some(remove)).await?;
    Ok(code)
}
