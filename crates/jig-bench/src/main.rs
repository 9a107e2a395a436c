//! `load-bench`: how fast Jig loads a large project, cold and after a one-file edit.
//!
//! It generates projects of toolpacks spread over packages, each tool with its own schemas that
//! `$ref` shared definitions, then measures:
//! - a cold load in a fresh process (page cache dropped first when the OS allows it, else
//!   warm), with the process's peak RSS;
//! - the reload after editing one tool file (`Loader::reload`, as the watcher calls it).
//!
//! Run: `cargo run --release -p jig-bench -- [--sizes 10000x50,100000x500] [--runs 5]`.
//! Results are recorded in docs/benchmarks.md.
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it starts Jig and the reference programs it measures against"
)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod generate;
mod measure;

use std::path::PathBuf;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir] = args.as_slice()
        && flag == "--child-load"
    {
        return measure::child_load(&PathBuf::from(dir));
    }
    let mut sizes = vec![(10_000, 50), (100_000, 500)];
    let mut runs = 5;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--sizes" => sizes = parse_sizes(iter.next().map(String::as_str).unwrap_or_default())?,
            "--runs" => runs = iter.next().map(|r| r.parse()).transpose()?.unwrap_or(runs),
            other => anyhow::bail!("unknown argument {other}; see the doc comment in src/main.rs"),
        }
    }
    println!(
        "| toolpacks | packages | cold load, page cache dropped | cold load, page cache warm | peak RSS | reload after one edit |"
    );
    println!("|---:|---:|---|---|---:|---|");
    for (tools, packages) in sizes {
        let dir = tempfile::tempdir()?;
        generate::project(dir.path(), tools, packages)?;
        let dropped = measure::cold_loads(dir.path(), runs, true)?;
        let warm = measure::cold_loads(dir.path(), runs, false)?;
        let reload = measure::reloads(dir.path(), 40)?;
        let dropped =
            if dropped.dropped_cache { dropped.summary() } else { "(not permitted)".to_owned() };
        println!(
            "| {tools} | {packages} | {dropped} | {} | {:.0} MiB | {} |",
            warm.summary(),
            warm.peak_rss_kib as f64 / 1024.0,
            reload.summary_with_p95(),
        );
    }
    println!(
        "\nTimes: median (min–max) of {runs} fresh processes; reload: median (p95) of 40 edits."
    );
    Ok(())
}

fn parse_sizes(text: &str) -> anyhow::Result<Vec<(usize, usize)>> {
    text.split(',')
        .map(|pair| {
            let (tools, packages) = pair
                .split_once('x')
                .ok_or_else(|| anyhow::anyhow!("expected TOOLSxPACKAGES, got {pair}"))?;
            Ok((tools.parse()?, packages.parse()?))
        })
        .collect()
}
