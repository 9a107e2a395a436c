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

/// Rounds of without-then-with for `--forward` and `--trace`.
const ROUNDS: usize = 3;

/// This process's CPU time so far (user and system), from `/proc/self/stat` (clock ticks).
fn cpu_seconds() -> f64 {
    let stat = fs_err::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and
    // 13th of those.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Linux reports these in USER_HZ, 100 a second on every architecture it runs on.
    (ticks(11) + ticks(12)) / 100.0
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(run(&options))
}

#[allow(
    clippy::too_many_lines,
    reason = "a benchmark's script, step after step; split when it next changes"
)]
async fn run(options: &Options) -> anyhow::Result<()> {
    let mut rows: Vec<(String, Figures)> = Vec::new();
    // Each pipeline's calls per second without, then with, forwarding and tracing.
    let mut compared: Vec<(String, [f64; 2], [f64; 2])> = Vec::new();
    let mut again: Vec<(String, Option<Option<String>>, usize)> = Vec::new();
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
                again.push((format!("{name}, {mode}"), postgres.clone(), callers));
            }
            rows.push((format!("{name}, {mode}, pipeline"), figures));
            let ceiling_db = target(&format!("ceiling-{callers}"));
            let figures = ceiling::measure(&ceiling_db, &sample, options.calls, callers).await?;
            rows.push((format!("{name}, {mode}, raw-insert ceiling"), figures));
        }
    }
    // Spans go to a receiver that takes them (and decodes nothing): what is measured is Jig's
    // side of it.
    let otlp = options.trace.then(|| {
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
    // Without and with, alternately, ROUNDS times each on fresh stores: this machine's noise
    // (±15 % between runs) is larger than the cost measured; the medians are compared.
    let ca = receiver.as_ref().map(jig_testkit::rsyslog::Rsyslog::ca);
    for (what, postgres, callers) in &again {
        let (mut without, mut with) = (Vec::new(), Vec::new());
        let (mut cpu_without, mut cpu_with) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            for on in [false, true] {
                jig_engine::telemetry::pause(!on);
                let db = match postgres {
                    None => work
                        .path()
                        .join(format!("ab-{callers}-{round}-{on}.db"))
                        .display()
                        .to_string(),
                    Some(Some(url)) => url.clone(),
                    Some(None) => jig_testkit::postgres_url(),
                };
                let forward = receiver
                    .as_ref()
                    .zip(ca.as_deref())
                    .filter(|_| on)
                    .map(|(r, ca)| (r.port(), ca));
                let cpu = cpu_seconds();
                let figures =
                    pipeline::measure(work.path(), &db, options.calls, *callers, forward).await?.0;
                // Per call, everything the process did for the round (opening the store and
                // the warm-up included, alike on both sides).
                let cpu = (cpu_seconds() - cpu) / options.calls as f64 * 1e6;
                if on { &mut with } else { &mut without }.push(figures.calls_per_second);
                if on { &mut cpu_with } else { &mut cpu_without }.push(cpu);
            }
        }
        compared.push((
            what.clone(),
            [median(&mut without), median(&mut cpu_without)],
            [median(&mut with), median(&mut cpu_with)],
        ));
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
    if let Some(otlp) = &otlp {
        jig_engine::telemetry::flush(jig_engine::telemetry::FLUSH_WITHIN).await;
        println!(
            "\nOTLP: {} exports received, {} spans dropped",
            otlp.requests().len(),
            jig_engine::telemetry::dropped_spans()
        );
    }
    if !compared.is_empty() {
        let with = match (options.forward, options.trace) {
            (true, true) => "with the audit forwarded and traces exported",
            (true, false) => "with the audit forwarded",
            _ => "with traces exported",
        };
        println!("\n| pipeline | calls/s | {with} | cost | CPU µs/call | {with} | cost |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for (what, [rate, cpu], [rate_with, cpu_with]) in compared {
            let cost = (1.0 - rate_with / rate) * 100.0;
            let cpu_cost = (cpu_with / cpu - 1.0) * 100.0;
            println!(
                "| {what} | {rate:.0} | {rate_with:.0} | {cost:+.1}% | {cpu:.0} | {cpu_with:.0} | {cpu_cost:+.1}% |"
            );
        }
    }
    Ok(())
}
