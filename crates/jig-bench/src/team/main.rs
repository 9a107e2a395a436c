//! The team under load: N `jig serve` instances on one PostgreSQL database, people calling
//! through them at once, one call in ten needing a reviewer who decides it through an instance
//! picked at random, and one instance killed with SIGKILL mid-run and started again. At the
//! end the store is held against what everyone saw:
//!
//! - every approved call ran exactly once (one successful run per write, the file on one
//!   checkout), and no approval is left approved and unused;
//! - no call answered `ok` is recorded otherwise, and each client's view of its calls (from
//!   its event stream, re-read after a gap) is the store's;
//! - no answer was lost on a stream that stayed connected;
//! - the chain verifies.
//!
//! Measured: how long a request for approval takes to reach a reviewer on another instance
//! (from the moment the store recorded it), and, with `--compare`, calls/s of the same load on
//! N instances against one.
//!
//!   cargo build --release -p jig-cli
//!   cargo run --release -p jig-bench --bin team-bench -- --calls 10000 --compare

// A harness, not Jig: it prints its report and starts the `jig` processes it measures itself.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

mod approver;
mod check;
mod client;
mod cluster;
mod stream;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use approver::Reviewer;
use client::Client;
use cluster::{APPROVERS, Cluster, RUNNERS};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Options {
    jig: PathBuf,
    db: Option<String>,
    instances: usize,
    calls: usize,
    writes_every: usize,
    kill: bool,
    compare: bool,
}

fn options() -> anyhow::Result<Options> {
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_owned());
    let mut options = Options {
        jig: PathBuf::from(target).join(profile).join("jig"),
        db: None,
        instances: 4,
        calls: 10_000,
        writes_every: 10,
        kill: true,
        compare: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--jig" => options.jig = PathBuf::from(value()?),
            "--db" => options.db = Some(value()?),
            "--instances" => options.instances = value()?.parse()?,
            "--calls" => options.calls = value()?.parse()?,
            "--writes-every" => options.writes_every = value()?.parse()?,
            "--no-kill" => options.kill = false,
            "--compare" => options.compare = true,
            other => bail!(
                "unknown option `{other}` (--jig PATH, --db URL, --instances N, --calls N, \
                 --writes-every N, --no-kill, --compare)"
            ),
        }
    }
    if !options.jig.is_file() {
        bail!("no jig binary at {} (build it, or pass --jig)", options.jig.display());
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(run(&options))
}

async fn run(options: &Options) -> anyhow::Result<()> {
    let database = || options.db.clone().unwrap_or_else(jig_testkit::postgres_url);
    let load = Load {
        instances: options.instances,
        calls: options.calls,
        writes_every: options.writes_every,
        kill: options.kill,
    };
    let outcome = load.run(&options.jig, &database()).await?;
    outcome.print(options.instances);
    let failures = outcome.failures();
    if options.compare {
        let reads = Load { writes_every: 0, kill: false, ..load };
        let many = reads.run(&options.jig, &database()).await?;
        let one = Load { instances: 1, ..reads }.run(&options.jig, &database()).await?;
        println!();
        println!("| read-only load, {RUNNERS} clients | calls/s | p50 ms | p95 ms |");
        println!("|---|---:|---:|---:|");
        for (label, run) in
            [(format!("{} instances", options.instances), &many), ("1 instance".to_owned(), &one)]
        {
            let (p50, p95) = run.call_latency();
            println!("| {label} | {:.0} | {p50:.1} | {p95:.1} |", run.calls_per_second());
        }
    }
    if failures.is_empty() {
        println!("\nall checks passed");
        Ok(())
    } else {
        for failure in &failures {
            eprintln!("FAILED: {failure}");
        }
        bail!("{} check(s) failed", failures.len())
    }
}

/// One run's shape.
#[derive(Clone, Copy)]
struct Load {
    instances: usize,
    calls: usize,
    writes_every: usize,
    kill: bool,
}

impl Load {
    async fn run(self, jig: &std::path::Path, db: &str) -> anyhow::Result<check::Outcome> {
        let work = tempfile::tempdir()?;
        let mut cluster = Cluster::start(jig, db, work.path(), self.instances).await?;
        let addrs: Vec<String> = cluster.instances.iter().map(cluster::Instance::addr).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let mut reviewers = Vec::new();
        for k in 0..APPROVERS {
            let reviewer = Reviewer {
                index: k,
                of: APPROVERS,
                // Not on the instance that is killed: what they hear is the measure.
                instance: (k + 2) % self.instances,
                token: cluster::approver(k).1,
                addrs: addrs.clone(),
            };
            reviewers.push(tokio::spawn(reviewer.run(Arc::clone(&stop))));
        }
        let budget = Arc::new(AtomicUsize::new(self.calls));
        let mut clients = Vec::new();
        for i in 0..RUNNERS {
            let instance = i % self.instances;
            let client = Client::connect(i, addrs[instance].clone(), cluster::runner(i).1).await?;
            let writes_every = if self.writes_every == 0 { usize::MAX } else { self.writes_every };
            clients.push((instance, tokio::spawn(client.run(Arc::clone(&budget), writes_every))));
        }
        let began = Instant::now();
        // One instance killed when 40 % of the calls are made, and started again a second later.
        let mut killed = None;
        if self.kill && self.instances > 1 {
            while budget.load(Ordering::SeqCst) > self.calls * 6 / 10 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let victim = 1;
            cluster.instances[victim].kill().await;
            killed = Some((victim, began.elapsed()));
            tokio::time::sleep(Duration::from_secs(1)).await;
            cluster.launch(victim).await?;
        }
        let mut reports = Vec::new();
        for (instance, client) in clients {
            reports.push((instance, client.await?));
        }
        let wall = began.elapsed();
        // The last approvals reach their reviewers and the last events settle.
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.store(true, Ordering::SeqCst);
        let mut heard = Vec::new();
        let (mut approved, mut unheard) = (0, 0);
        for reviewer in reviewers {
            let (h, a, u) = reviewer.await?;
            heard.extend(h);
            approved += a;
            unheard += u;
        }
        let outcome = check::Outcome::gather(check::Gathered {
            cluster: &cluster,
            db,
            reports,
            heard,
            approved,
            unheard,
            wall,
            killed,
        })
        .await;
        cluster.stop().await;
        outcome
    }
}
