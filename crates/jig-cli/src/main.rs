//! The `jig` binary: parse the command line, run one command, exit with its code.

// The CLI's job is to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod commands;
mod exit;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let settings = output::Settings::from_args(&cli.global);
    let result = match &cli.command {
        cli::Command::Validate(args) => commands::validate::run(&settings, args),
        cli::Command::List(args) => commands::list::run(&settings, args),
        cli::Command::Show(args) => commands::show::run(&settings, args),
    };
    match result {
        Ok(code) => code.into(),
        Err(error) => {
            eprintln!("error: {error:#}");
            exit::Code::Failed.into()
        }
    }
}
