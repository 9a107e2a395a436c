//! The whole pipeline: `Engine::dispatch` of `file_read` on a small file.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use jig_audit::Packet;
use jig_engine::{CallContext, Engine, EngineOptions, ToolRequest};
use serde_json::json;

use crate::stats::Figures;

/// Calls before measuring (connections, caches, page cache).
const WARM_UP: usize = 200;

/// Measure `calls` calls by `callers` concurrent callers; also returns the packets one call
/// wrote, which the ceiling inserts raw. With `forward` (a syslog receiver over TLS: its port
/// and CA), the audit is forwarded to it while the calls run, in the same process, as
/// `jig serve` does.
pub async fn measure(
    work: &Path,
    db: &str,
    calls: usize,
    callers: usize,
    forward: Option<(u16, &Path)>,
) -> anyhow::Result<(Figures, Vec<Packet>)> {
    let project = tempfile::tempdir_in(work)?;
    let manifest = match forward {
        None => "name: dispatch-bench\n".to_owned(),
        Some((port, ca)) => format!(
            "name: dispatch-bench\nconfig:\n  audit:\n    forward:\n      - {{ name: siem, url: \"syslog+tls://127.0.0.1:{port}\", ca: \"{}\", format: ocsf }}\n",
            ca.display()
        ),
    };
    fs_err::write(project.path().join("jig.yaml"), manifest)?;
    fs_err::write(project.path().join("hello.txt"), "hello, bench\n")?;
    let options = EngineOptions {
        project: project.path().to_path_buf(),
        db: Some(db.to_owned()),
        ..EngineOptions::default()
    };
    let engine = Engine::open(options).await.context("open the engine")?;
    if forward.is_some() {
        let forwarding =
            engine.forward_audit(&jig_engine::Stop::default()).map_err(anyhow::Error::msg)?;
        anyhow::ensure!(forwarding == ["siem"], "not forwarding: {forwarding:?}");
    }

    let first = call(&engine, 0).await?;
    for i in 1..WARM_UP {
        call(&engine, i).await?;
    }
    let sample = engine.store().packets_of(&first).await?;

    let per_caller = calls / callers;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..callers {
        let engine = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_caller);
            for i in 0..per_caller {
                let t = Instant::now();
                call(&engine, WARM_UP + caller * per_caller + i).await?;
                latencies.push(t.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(calls);
    for task in tasks {
        latencies.extend(task.await??);
    }
    let figures = Figures::of(latencies, started.elapsed());
    let verification = engine.store().verify().await?;
    anyhow::ensure!(
        verification.first_broken.is_none(),
        "the chain does not verify: {verification:?}"
    );
    Ok((figures, sample))
}

/// One call; returns its request id.
async fn call(engine: &Engine, n: usize) -> anyhow::Result<String> {
    let request = ToolRequest {
        kind: Default::default(),
        tool: "file_read".to_owned(),
        args: json!({ "path": "hello.txt" }),
        request_id: format!("bench-{n:08}"),
        session_id: None,
        timestamp: None,
    };
    let response = engine.dispatch(request, CallContext::default()).await;
    anyhow::ensure!(response.ok, "the call failed: {response:?}");
    Ok(response.request_id)
}
