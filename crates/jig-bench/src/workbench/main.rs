//! Fills a project's audit store with many runs, for the workbench's benchmark
//! (`scripts/bench-workbench`): `workbench-fill DIR RUNS` makes DIR a project (a manifest and a
//! small file) and records RUNS calls of `file_read` through `Engine::dispatch`, so every row is
//! a real run with its packets, decision and chain.
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it starts Jig and the reference programs it measures against"
)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use anyhow::Context;
use jig_engine::{CallContext, Engine, EngineOptions, ToolRequest};
use serde_json::json;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CALLERS: usize = 4;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().context("usage: workbench-fill DIR RUNS")?;
    let runs: usize = args.next().context("usage: workbench-fill DIR RUNS")?.parse()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(fill(std::path::Path::new(&dir), runs))
}

async fn fill(dir: &std::path::Path, runs: usize) -> anyhow::Result<()> {
    fs_err::create_dir_all(dir)?;
    fs_err::write(dir.join("jig.yaml"), "name: workbench-bench\n")?;
    for i in 0..16 {
        fs_err::write(dir.join(format!("notes-{i:02}.txt")), format!("note {i}\n"))?;
    }
    let options = EngineOptions { project: dir.to_path_buf(), ..EngineOptions::default() };
    let engine = Engine::open(options).await.context("open the engine")?;
    let per_caller = runs.div_ceil(CALLERS);
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..CALLERS {
        let engine = Arc::clone(&engine);
        tasks.push(tokio::spawn(async move {
            for i in 0..per_caller {
                let n = caller * per_caller + i;
                let request = ToolRequest {
                    kind: Default::default(),
                    tool: "file_read".to_owned(),
                    args: json!({ "path": format!("notes-{:02}.txt", n % 16) }),
                    request_id: format!("fill-{n:08}"),
                    session_id: Some(format!("session-{}", n % 50)),
                    timestamp: None,
                };
                let context = CallContext {
                    session_id: format!("session-{}", n % 50),
                    principal: ["alice", "bob", "carol", "dave"][n % 4].to_owned(),
                    ..CallContext::default()
                };
                let response = engine.dispatch(request, context).await;
                anyhow::ensure!(response.ok, "call {n} failed: {response:?}");
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    println!("recorded {} runs in {:.1} s", per_caller * CALLERS, started.elapsed().as_secs_f64());
    Ok(())
}
