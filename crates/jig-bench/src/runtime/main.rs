//! `runtime-bench`: the built-ins against the reference tools, in the same run, on the same
//! trees (each tool warmed once, then the median of `--runs` timed runs):
//!
//! - `grep` vs `rg` and `fs_list` vs `fd` on a large real tree — by default the Rust sources of
//!   the crates in Cargo's registry (the first ~8,000 files, copied into a scratch directory);
//! - `ast_generate` cold on ≥ 100,000 lines of Rust, then after one changed file;
//! - `shell_exec` of `true` vs spawning `true` directly;
//! - `git_status` vs `git status --porcelain` on a repository of 10,000 files.
//!
//! Built-ins run through their executor (what the engine calls after validation and policy),
//! so the figures are the tools', not the audit store's.
//!
//! ```text
//! runtime-bench [--corpus DIR] [--files N] [--runs N]
//! ```

// A benchmark reports on stdout, and starts the reference programs it measures against.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod corpus;
mod run;

use std::path::PathBuf;

use anyhow::Context;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Options {
    corpus: Option<PathBuf>,
    files: usize,
    runs: usize,
}

fn options() -> anyhow::Result<Options> {
    let mut options = Options { corpus: None, files: 8000, runs: 5 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--corpus" => options.corpus = Some(PathBuf::from(value()?)),
            "--files" => options.files = value()?.parse().context("--files")?,
            "--runs" => options.runs = value()?.parse().context("--runs")?,
            other => {
                anyhow::bail!("unknown argument `{other}` (try --corpus DIR, --files N, --runs N)")
            }
        }
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(run::all(&options))
}
