//! The `jig` binary: parse the command line, run one command, exit with its code.

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod commands;
mod exit;
mod output;

use std::process::ExitCode;

use clap::Parser;

/// Loading a project allocates many small values from several threads; mimalloc does that
/// markedly faster than the system allocator (see docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let settings = output::Settings::from_args(&cli.global);
    // Not locked for the whole run: `validate --watch` prints from the watcher thread.
    let mut out = std::io::stdout();
    let result = match &cli.command {
        cli::Command::Validate(args) => commands::validate::run(&settings, args, &mut out),
        cli::Command::List(args) => commands::list::run(&settings, args, &mut out),
        cli::Command::Show(args) => commands::show::run(&settings, args, &mut out),
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

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
