//! `runbook-bench`: the runbook engine's two figures (issue #10).
//!
//! 1. `jig runbook test` on a generated runbook of 1,000 steps (tool steps answered by a
//!    scenario, 20 branches, a `for_each` over 100 items): the whole `jig` process, median of
//!    fresh processes; and the same play in-process (load + play), to say where the time goes.
//! 2. The per-step overhead of a real tool step (the engine, the policy, the audit; the
//!    runbook's journal and trace) over a plain in-process call of the same tool, 200 steps
//!    against 200 calls on SQLite, for two tools: `file_read` of a small file (a built-in: the
//!    cheapest call there is, so the overhead's upper bound) and a tool/v0 action that starts a
//!    process in the tool sandbox (`echo`, the kind of step gert's runbooks are made of).
//!
//! ```text
//! runbook-bench [--runs N] [--jig PATH]
//! ```
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it starts Jig and the reference programs it measures against"
)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod generate;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use jig_engine::{CallContext, Engine, EngineOptions, ToolRequest};
use serde_json::{Map, json};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let mut runs = 7;
    let mut jig = PathBuf::from("target/release/jig");
    let mut overhead_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().context("--runs N")?.parse()?,
            "--jig" => jig = PathBuf::from(args.next().context("--jig PATH")?),
            // The per-step figure alone: for a profiler's record of the steps.
            "--overhead-only" => overhead_only = true,
            other => anyhow::bail!(
                "unknown argument `{other}` (try --runs N, --jig PATH, --overhead-only)"
            ),
        }
    }
    if overhead_only {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        return runtime.block_on(report_overhead(runs));
    }
    let dir = tempfile::tempdir()?;
    let steps = generate::big_runbook(dir.path())?;
    println!("## `jig runbook test` on a runbook of {steps} steps\n");
    let mut walls = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let output =
            Command::new(&jig).args(["runbook", "test"]).current_dir(dir.path()).output()?;
        walls.push(started.elapsed());
        anyhow::ensure!(
            output.status.success(),
            "jig runbook test failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let inner = runtime.block_on(play_in_process(dir.path(), runs))?;
    println!("| what | median | min | max |");
    println!("|---|---:|---:|---:|");
    println!("| whole `jig runbook test` process ({runs} runs) | {} |", summary(&mut walls));
    let (mut loads, mut plays) = inner;
    println!("| in-process: load the project | {} |", summary(&mut loads));
    println!(
        "| in-process: play the scenario (1,000 steps, 1,040 tool answers) | {} |",
        summary(&mut plays)
    );

    runtime.block_on(report_overhead(runs))?;
    Ok(())
}

async fn play_in_process(
    dir: &Path,
    runs: usize,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut loads, mut plays) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = Instant::now();
        let snapshot = jig_load::load(dir)
            .map_err(|f| anyhow::anyhow!("{} diagnostics", f.diagnostics.len()))?;
        loads.push(started.elapsed());
        let entry = snapshot.runbook("big").context("the runbook")?.clone();
        let scenario = entry.scenarios[0].scenario.clone().context("scenario")?;
        let started = Instant::now();
        let host = jig_runbook::scenario::ReplayHost::new(
            &scenario,
            jig_runbook::scenario::resolver(Arc::clone(&snapshot), &entry),
        );
        let progress =
            jig_runbook::scenario::play(&entry.runbook, &entry.name, &entry.hash, &scenario, &host)
                .await?;
        plays.push(started.elapsed());
        anyhow::ensure!(progress.status == jig_runbook::RunStatus::Completed, "{progress:?}");
    }
    Ok((loads, plays))
}

/// The tool a comparison calls, plainly and as runbook steps.
#[derive(Clone, Copy)]
enum Subject {
    /// `file_read` of a small file: a built-in, in process.
    FileRead,
    /// `say.echo`: a tool/v0 action starting `echo` in the sandbox.
    Process,
}

impl Subject {
    fn title(self) -> &'static str {
        match self {
            Self::FileRead => "`file_read` of a small file (a built-in, in process)",
            Self::Process => "a tool/v0 action starting a process (`echo`, sandboxed)",
        }
    }

    fn plain_call(self, i: usize) -> (String, serde_json::Value) {
        match self {
            Self::FileRead => {
                ("file_read".to_owned(), json!({ "path": format!("files/g{i}.txt") }))
            }
            Self::Process => ("say.echo".to_owned(), json!({ "word": format!("plain{i}") })),
        }
    }

    fn runbook(self) -> &'static str {
        match self {
            Self::FileRead => "reads",
            Self::Process => "says",
        }
    }
}

/// Median total time of `OVERHEAD_STEPS` plain calls, and of a run of as many tool steps.
async fn overhead(subject: Subject, runs: usize) -> anyhow::Result<(Duration, Duration)> {
    let (mut plain, mut stepped) = (Vec::new(), Vec::new());
    for round in 0..runs {
        let dir = tempfile::tempdir()?;
        generate::overhead_project(dir.path())?;
        let engine = Engine::open(EngineOptions {
            project: dir.path().to_path_buf(),
            ..EngineOptions::default()
        })
        .await?;
        // Alternate which goes first, so neither always meets a cold store.
        let order = if round % 2 == 0 { [true, false] } else { [false, true] };
        for first_plain in order {
            if first_plain {
                plain.push(plain_calls(&engine, subject).await?);
            } else {
                stepped.push(runbook_steps(&engine, subject).await?);
            }
        }
    }
    Ok((median(&mut plain), median(&mut stepped)))
}

async fn plain_calls(engine: &Arc<Engine>, subject: Subject) -> anyhow::Result<Duration> {
    let started = Instant::now();
    for i in 0..generate::OVERHEAD_STEPS {
        let (tool, args) = subject.plain_call(i);
        let request = ToolRequest {
            kind: Default::default(),
            tool,
            args,
            request_id: uuid::Uuid::new_v4().to_string(),
            session_id: None,
            timestamp: None,
        };
        let context = CallContext {
            session_id: format!("plain-{i}"),
            thread_id: Some(format!("plain-{i}")),
            principal: "bench".to_owned(),
            ..CallContext::default()
        };
        let response = engine.dispatch(request, context).await;
        anyhow::ensure!(response.ok && !response.replayed, "{response:?}");
    }
    Ok(started.elapsed())
}

async fn runbook_steps(engine: &Arc<Engine>, subject: Subject) -> anyhow::Result<Duration> {
    let runbooks = jig_runbook::Runbooks::new(Arc::clone(engine));
    let started = Instant::now();
    let view = runbooks.start(subject.runbook(), Map::new(), false, "bench").await?;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        view.progress.status == jig_runbook::RunStatus::Completed,
        "{:?}",
        view.progress
    );
    Ok(elapsed)
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn summary(values: &mut [Duration]) -> String {
    values.sort();
    let ms = |d: Duration| format!("{:.0} ms", d.as_secs_f64() * 1000.0);
    format!(
        "{} | {} | {}",
        ms(values[values.len() / 2]),
        ms(values[0]),
        ms(values[values.len() - 1])
    )
}

/// Print the per-step figures: a real tool step against a plain call of the same tool.
async fn report_overhead(runs: usize) -> anyhow::Result<()> {
    for subject in [Subject::FileRead, Subject::Process] {
        println!("\n## A real tool step over a plain call of the same tool: {}\n", subject.title());
        let (plain, stepped) = overhead(subject, runs).await?;
        let per = |d: Duration, n: usize| d.as_secs_f64() * 1e6 / n as f64;
        println!("| what | per call or step (median of {runs}) |");
        println!("|---|---:|");
        println!("| plain `Engine::dispatch` | {:.0} µs |", per(plain, generate::OVERHEAD_STEPS));
        println!("| runbook tool step | {:.0} µs |", per(stepped, generate::OVERHEAD_STEPS));
        println!(
            "| overhead | {:+.0} % |",
            (stepped.as_secs_f64() / plain.as_secs_f64() - 1.0) * 100.0
        );
    }
    Ok(())
}
