//! The `jig` binary: parse the command line, run one command, exit with its code.

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod commands;
mod exit;
mod files;
mod output;
mod progress;
mod signals;

use std::process::ExitCode;

use clap::Parser;

/// Loading a project allocates many small values from several threads; mimalloc does that
/// markedly faster than the system allocator (see docs/benchmarks.md). Built with `no_thp`:
/// a short-lived process that faults in huge pages spends its time zeroing them (a third of
/// a large `grep`'s time, and twice the resident memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_logging();
    let settings = output::Settings::from_args(&cli.global);
    // Not locked for the whole run: `validate --watch` prints from the watcher thread.
    let mut out = std::io::stdout();
    let result = match &cli.command {
        cli::Command::Validate(args) => commands::validate::run(&settings, args, &mut out),
        cli::Command::List(args) => commands::list::run(&settings, args, &mut out),
        cli::Command::Doctor(args) => commands::doctor::run(args, &mut out),
        cli::Command::Show(args) => commands::show::run(&settings, args, &mut out),
        cli::Command::Call(args) => block_on(commands::call::run(&settings, args, &mut out)),
        cli::Command::Select(args) => block_on(commands::select::run(&settings, args, &mut out)),
        cli::Command::Approvals(command) => {
            block_on(commands::approvals::run(&settings, command, &mut out))
        }
        cli::Command::Audit(command) => {
            block_on(commands::audit::run(&settings, command, &mut out))
        }
        cli::Command::Runs(command) => block_on(commands::runs::run(&settings, command, &mut out)),
        cli::Command::Serve(args) => block_on(commands::serve::run(&settings, args, &mut out)),
        cli::Command::Runbook(command) => {
            block_on(commands::runbook::run(&settings, command, &mut out))
        }
        cli::Command::Mcp(args) => block_on(commands::mcp::run(&settings, args, &mut out)),
        cli::Command::Trust(args) => commands::trust::run(&settings, args, &mut out),
        cli::Command::Policy(command) => commands::policy::run(&settings, command, &mut out),
    };
    match result {
        Ok(code) => code.into(),
        // The reader went away (`jig list | head`): nothing more to say.
        Err(error) if is_broken_pipe(&error) => exit::Code::Ok.into(),
        Err(error) => {
            eprintln!("error: {error:#}");
            exit::Code::Failed.into()
        }
    }
}

/// Commands that use the engine run on a small multi-threaded runtime (the audit writer, the
/// tool's process and the call itself proceed side by side).
fn block_on<F: std::future::Future<Output = anyhow::Result<exit::Code>>>(
    future: F,
) -> anyhow::Result<exit::Code> {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let result = runtime.block_on(async {
        // Spans, when the environment asks for them (OTEL_EXPORTER_OTLP_ENDPOINT).
        jig_engine::telemetry::start_from_env();
        future.await
    });
    // A notice to the project's webhooks is the one thing still owed to someone else; then
    // the spans of what the command did.
    runtime.block_on(jig_engine::notices_sent(jig_engine::FLUSH_WITHIN));
    runtime.block_on(jig_engine::telemetry::flush(jig_engine::telemetry::FLUSH_WITHIN));
    // Do not wait for heartbeats and idle tasks: everything the command needed is done.
    runtime.shutdown_background();
    result
}

/// Seed 003's named log events (`tools.dispatch.started`, …) go to stderr at the level of
/// `JIG_LOG` (e.g. `JIG_LOG=info`); warnings only by default, so stdout stays clean.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JIG_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
