//! The audit forwarded to Debian's rsyslog over TLS (docs/forwarding.md), at volume: a store
//! of real runs (`workbench-fill`: `file_read` calls through `Engine::dispatch`, three packets
//! each) forwarded by a `jig audit forward` process, once with the receiver left alone and once
//! with it stopped and started again `--restarts` times mid-stream. Each pass is held to what
//! the forwarder promises — every packet delivered, in order once copies are dropped by seq —
//! and reports its time, packets a second and the copies the restarts cost.
//!
//!   cargo build --release -p jig-cli -p jig-bench --bin jig --bin workbench-fill --bin forward-bench
//!   target/release/forward-bench --runs 33334 --restarts 2

// A harness, not Jig: it prints its report and starts the processes it measures itself.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use jig_testkit::rsyslog::Rsyslog;

struct Options {
    jig: PathBuf,
    fill: PathBuf,
    runs: usize,
    restarts: usize,
}

fn options() -> anyhow::Result<Options> {
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_owned());
    let bin = PathBuf::from(target).join(profile);
    let mut options = Options {
        jig: bin.join("jig"),
        fill: bin.join("workbench-fill"),
        runs: 33_334,
        restarts: 2,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} takes a value"));
        match flag.as_str() {
            "--jig" => options.jig = value()?.into(),
            "--fill" => options.fill = value()?.into(),
            "--runs" => options.runs = value()?.parse()?,
            "--restarts" => options.restarts = value()?.parse()?,
            other => bail!("unknown flag {other} (--jig, --fill, --runs, --restarts)"),
        }
    }
    Ok(options)
}

/// What one pass measured.
struct Pass {
    packets: i64,
    elapsed: Duration,
    copies: usize,
    rewinds: Vec<i64>,
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let work = tempfile::tempdir()?;
    let project = work.path().join("project");
    let filled = Command::new(&options.fill)
        .arg(&project)
        .arg(options.runs.to_string())
        .status()
        .context("workbench-fill")?;
    ensure!(filled.success(), "workbench-fill failed");
    let head = head(&options.jig, &project)?;
    println!("store: {head} packets of {} runs\n", options.runs);
    println!("| pass | packets | time | packets/s | copies | went back |");
    println!("|---|---:|---:|---:|---:|---|");
    for (name, restarts) in [("steady", 0), ("restarted", options.restarts)] {
        let pass = forward(&options.jig, &project, name, restarts, head)?;
        println!(
            "| {name} ({restarts} receiver restarts) | {} | {:.1} s | {:.0} | {} | {:?} |",
            pass.packets,
            pass.elapsed.as_secs_f64(),
            pass.packets as f64 / pass.elapsed.as_secs_f64(),
            pass.copies,
            pass.rewinds,
        );
    }
    Ok(())
}

/// Forward the whole store as forwarder `name` (a new place, so from the first packet) to a
/// fresh rsyslog, stopping and starting it `restarts` times; check what arrived.
fn forward(
    jig: &Path,
    project: &Path,
    name: &str,
    restarts: usize,
    head: i64,
) -> anyhow::Result<Pass> {
    let mut receiver = Rsyslog::start();
    fs_err::write(
        project.join("jig.yaml"),
        format!(
            "name: workbench-bench\nconfig:\n  audit:\n    forward:\n      - {{ name: {name}, url: \"syslog+tls://127.0.0.1:{}\", ca: \"{}\", format: ocsf }}\n",
            receiver.port(),
            receiver.ca().display()
        ),
    )?;
    let started = Instant::now();
    let forwarder = Command::new(jig)
        .args(["audit", "forward"])
        .current_dir(project)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("jig audit forward")?;
    let total = usize::try_from(head)?;
    for k in 1..=restarts {
        receiver.wait_for(total * k / (restarts + 1), Duration::from_secs(600));
        receiver.stop();
        std::thread::sleep(Duration::from_secs(1));
        receiver.resume();
    }
    receiver.wait_for(total, Duration::from_secs(900));
    let elapsed = started.elapsed();
    let _ = Command::new("kill").args(["-TERM", &forwarder.id().to_string()]).status();
    let stopped = forwarder.wait_with_output()?;
    let said = String::from_utf8_lossy(&stopped.stdout);
    ensure!(
        said.trim() == format!("{name}: taken up to seq {head}"),
        "the forwarder said {said:?}"
    );
    receiver.stop();

    let arrived = receiver.seqs();
    let distinct: BTreeSet<i64> = arrived.iter().copied().collect();
    ensure!(distinct == (1..=head).collect(), "{} of {head} packets arrived", distinct.len());
    let mut seen = BTreeSet::new();
    let firsts: Vec<i64> = arrived.iter().copied().filter(|seq| seen.insert(*seq)).collect();
    ensure!(firsts.windows(2).all(|w| w[1] == w[0] + 1), "out of order");
    let rewinds = arrived.windows(2).filter(|w| w[1] <= w[0]).map(|w| w[0] - w[1] + 1).collect();
    Ok(Pass { packets: head, elapsed, copies: arrived.len() - distinct.len(), rewinds })
}

fn head(jig: &Path, project: &Path) -> anyhow::Result<i64> {
    let out = Command::new(jig).args(["audit", "head"]).current_dir(project).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.split_whitespace().next().context("no head")?.parse()?)
}
