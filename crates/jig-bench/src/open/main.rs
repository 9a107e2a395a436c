//! `open-bench`: what a surface that stays open (`jig serve`, `jig mcp`, the desktop app) waits
//! for before it serves its project: `Engine::open` and `Engine::watch`, in-process.
//!
//! Two ways side by side, alternating which goes first: the watch begun at open
//! (`EngineOptions::watch`, the project loaded once, as the surfaces do since 2026-11-29) and
//! begun after open (the project loaded again by `Engine::watch`, as they did before).
//!
//! ```text
//! open-bench [--runs N] [--project DIR]     default: 30 runs on a copy of toolpacks/examples
//! ```
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it copies the example project with the system's cp"
)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use jig_engine::{Engine, EngineOptions};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let mut runs = 30;
    let mut project: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().context("--runs N")?.parse()?,
            "--project" => project = Some(PathBuf::from(args.next().context("--project DIR")?)),
            other => anyhow::bail!("unknown argument `{other}` (try --runs N, --project DIR)"),
        }
    }
    let scratch = tempfile::tempdir()?;
    let project = match project {
        Some(dir) => dir,
        None => {
            let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolpacks/examples");
            let copy = scratch.path().join("acme");
            let status =
                std::process::Command::new("cp").arg("-r").arg(&examples).arg(&copy).status()?;
            anyhow::ensure!(status.success(), "cannot copy {}", examples.display());
            copy
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        // The store exists, as it does for a returning user.
        open_and_watch(&project, true).await?;
        let (mut once, mut twice) = (Vec::new(), Vec::new());
        for run in 0..runs {
            let order = if run % 2 == 0 { [true, false] } else { [false, true] };
            for watched in order {
                let took = open_and_watch(&project, watched).await?;
                if watched { once.push(took) } else { twice.push(took) }
            }
        }
        println!("`Engine::open` + `Engine::watch` on {}, {runs} runs each:\n", project.display());
        println!("| watch begun | project loaded | median | min | max |");
        println!("|---|---|---:|---:|---:|");
        for (name, loads, samples) in
            [("at open", "once", &mut once), ("after open", "twice", &mut twice)]
        {
            samples.sort_by(f64::total_cmp);
            let median = samples[samples.len() / 2];
            let (min, max) = (samples[0], samples[samples.len() - 1]);
            println!("| {name} | {loads} | {median:.1} ms | {min:.1} ms | {max:.1} ms |");
        }
        anyhow::Ok(())
    })
}

/// Open the engine (watching from the load when `watched`), start the watch, and say how long
/// that took in milliseconds; everything is dropped again before the next run.
async fn open_and_watch(project: &Path, watched: bool) -> anyhow::Result<f64> {
    let began = Instant::now();
    let engine = Engine::open(EngineOptions {
        project: project.to_path_buf(),
        watch: watched,
        ..EngineOptions::default()
    })
    .await?;
    let watch = engine.watch()?;
    let took = began.elapsed().as_secs_f64() * 1000.0;
    drop(watch);
    drop(engine);
    Ok(took)
}
