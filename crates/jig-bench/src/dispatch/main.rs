//! `dispatch-bench`: a trivial built-in call (`file_read` of a small file) through the whole
//! pipeline — validation, policy, audit — with the store durable, sequentially and with several
//! concurrent callers, on SQLite and PostgreSQL; and, in the same run, the ceiling: raw inserts of
//! the same rows with the same durability settings, one transaction per call.
//!
//! ```text
//! dispatch-bench [--calls N] [--callers C] [--postgres URL|auto|none] [--forward] [--trace]
//! ```
//! `--postgres auto` (the default) starts a throwaway cluster like the tests do. `--forward`
//! and `--trace` also measure each pipeline again with the audit forwarded live to Debian's
//! rsyslog over TLS (docs/forwarding.md) and with each call's spans exported over OTLP/HTTP to
//! a receiver on 127.0.0.1 (docs/telemetry.md), in the same process, after all the runs
//! without them (a process exports spans from the moment it starts to).
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark: it starts Jig and the reference programs it measures against"
)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ceiling;
mod pipeline;
mod stats;

use anyhow::Context;

use crate::stats::Figures;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Options {
    calls: usize,
    callers: usize,
    postgres: Option<String>,
    forward: bool,
    trace: bool,
}

fn options() -> anyhow::Result<Options> {
    let mut options = Options {
        calls: 4000,
        callers: 4,
        postgres: Some("auto".to_owned()),
        forward: false,
        trace: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--calls" => options.calls = value()?.parse().context("--calls")?,
            "--callers" => options.callers = value()?.parse().context("--callers")?,
            "--forward" => options.forward = true,
            "--trace" => options.trace = true,
            "--postgres" => {
                let v = value()?;
                options.postgres = (v != "none").then_some(v);
            }
            other => anyhow::bail!(
                "unknown argument `{other}` (try --calls N, --callers C, --postgres URL|auto|none, --forward, --trace)"
            ),
        }
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(run(&options))
}

async fn run(options: &Options) -> anyhow::Result<()> {
    let mut rows: Vec<(String, Figures)> = Vec::new();
    // Each pipeline's calls per second without, then with, forwarding and tracing.
    let mut compared: Vec<(String, f64, f64)> = Vec::new();
    let mut again: Vec<(String, String, usize)> = Vec::new();
    let receiver = options.forward.then(jig_testkit::rsyslog::Rsyslog::start);
    let work = tempfile::tempdir()?;
    let mut backends = vec![("SQLite".to_owned(), None)];
    if let Some(postgres) = &options.postgres {
        let url = if postgres == "auto" { None } else { Some(postgres.clone()) };
        backends.push(("PostgreSQL".to_owned(), Some(url)));
    }
    for (name, postgres) in &backends {
        let target = |label: &str| -> String {
            match postgres {
                None => work.path().join(format!("{label}.db")).display().to_string(),
                Some(Some(url)) => url.clone(),
                Some(None) => jig_testkit::postgres_url(),
            }
        };
        let mut modes = vec![1, options.callers];
        modes.dedup();
        for callers in modes {
            let mode =
                if callers == 1 { "sequential".to_owned() } else { format!("{callers} callers") };
            let pipeline_db = target(&format!("pipeline-{callers}"));
            let (figures, sample) =
                pipeline::measure(work.path(), &pipeline_db, options.calls, callers, None).await?;
            if options.forward || options.trace {
                compared.push((format!("{name}, {mode}"), figures.calls_per_second, 0.0));
                again.push((name.clone(), target(&format!("with-{callers}")), callers));
            }
            rows.push((format!("{name}, {mode}, pipeline"), figures));
            let ceiling_db = target(&format!("ceiling-{callers}"));
            let figures = ceiling::measure(&ceiling_db, &sample, options.calls, callers).await?;
            rows.push((format!("{name}, {mode}, raw-insert ceiling"), figures));
        }
    }
    // Spans go to a receiver that takes them (and decodes nothing): what is measured is Jig's
    // side of it.
    let _otlp = options.trace.then(|| {
        let server = jig_testkit::http::Server::start(|_| jig_testkit::http::Response {
            status: 200,
            headers: vec![("content-type".to_owned(), "application/x-protobuf".to_owned())],
            body: Vec::new(),
        });
        let endpoint = server.url("");
        jig_engine::telemetry::start_from(&|name| {
            (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| endpoint.clone())
        });
        server
    });
    let ca = receiver.as_ref().map(jig_testkit::rsyslog::Rsyslog::ca);
    for ((_, db, callers), row) in again.iter().zip(compared.iter_mut()) {
        let forward = receiver.as_ref().zip(ca.as_deref()).map(|(r, ca)| (r.port(), ca));
        let with = pipeline::measure(work.path(), db, options.calls, *callers, forward).await?.0;
        row.2 = with.calls_per_second;
    }
    println!("| what | calls/s | p50 ms | p99 ms | share of ceiling |");
    println!("|---|---:|---:|---:|---:|");
    for pair in rows.chunks(2) {
        let [(pipeline_name, pipeline), (ceiling_name, ceiling)] = pair else { continue };
        let share = pipeline.calls_per_second / ceiling.calls_per_second * 100.0;
        println!(
            "| {pipeline_name} | {:.0} | {:.3} | {:.3} | {share:.0}% |",
            pipeline.calls_per_second, pipeline.p50_ms, pipeline.p99_ms
        );
        println!(
            "| {ceiling_name} | {:.0} | {:.3} | {:.3} | |",
            ceiling.calls_per_second, ceiling.p50_ms, ceiling.p99_ms
        );
    }
    if !compared.is_empty() {
        let with = match (options.forward, options.trace) {
            (true, true) => "with the audit forwarded and traces exported",
            (true, false) => "with the audit forwarded",
            _ => "with traces exported",
        };
        println!("\n| pipeline | calls/s | {with} | cost |");
        println!("|---|---:|---:|---:|");
        for (what, without, with) in compared {
            let cost = (1.0 - with / without) * 100.0;
            println!("| {what} | {without:.0} | {with:.0} | {cost:+.1}% |");
        }
    }
    Ok(())
}
