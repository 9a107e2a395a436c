//! `jig runbook list|run|resume|pause|follow|show|test|record`.

mod keys;
mod print;
mod record;
mod run;
mod test;
mod walk;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::RunbookCommand;
use crate::exit::Code;
use crate::output::Settings;

pub async fn run(
    settings: &Settings,
    command: &RunbookCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    match command {
        RunbookCommand::List { json } => list(settings, *json, out),
        RunbookCommand::Run(args) => run::start(settings, args, out).await,
        RunbookCommand::Resume(args) => run::resume(settings, args, out).await,
        RunbookCommand::Show { run, json } => run::show(settings, run, *json, out).await,
        RunbookCommand::Pause { run, json } => run::pause(settings, run, *json, out).await,
        RunbookCommand::Follow { run, inputs, json } => {
            run::follow(settings, run, inputs, *json, out).await
        }
        RunbookCommand::Test(args) => test::run(settings, args, out).await,
        RunbookCommand::Record { run, name } => record::run(settings, run, name, out).await,
    }
}

fn list(settings: &Settings, json: bool, out: &mut impl Write) -> anyhow::Result<Code> {
    let Ok(snapshot) = settings.load_or_report() else { return Ok(Code::Invalid) };
    let runbooks: Vec<_> = snapshot.runbooks().collect();
    if json {
        let rows: Vec<serde_json::Value> = runbooks
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name, "file": r.file, "api_version": r.runbook.api_version.as_str(),
                    "description": r.runbook.description, "inputs": r.runbook.inputs,
                    "scenarios": r.scenarios.iter().map(|s| &s.name).collect::<Vec<_>>(),
                })
            })
            .collect();
        crate::output::print_json(out, &rows)?;
        return Ok(Code::Ok);
    }
    if runbooks.is_empty() {
        eprintln!(
            "no runbooks (they are `*.runbook.yaml` files, or name one: jig runbook run PATH)"
        );
        return Ok(Code::Ok);
    }
    writeln!(
        out,
        "{:<32} {:<11} {:<6} {:<9} DESCRIPTION",
        "RUNBOOK", "FORMAT", "STEPS", "SCENARIOS"
    )?;
    for r in runbooks {
        let description =
            r.runbook.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
        writeln!(
            out,
            "{:<32} {:<11} {:<6} {:<9} {description}",
            r.name,
            r.runbook.api_version.as_str(),
            r.runbook.walk().len(),
            r.scenarios.len()
        )?;
    }
    Ok(Code::Ok)
}

/// Runbook files named on the command line are loaded with their project: the one around
/// the first file, unless `--project` says otherwise.
fn settings_for(settings: &Settings, paths: &[PathBuf]) -> Settings {
    let mut settings = settings.clone();
    if !settings.project_given
        && let Some(first) = paths.first()
        && let Some(dir) = first.parent()
    {
        settings.project =
            if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir.to_path_buf() };
    }
    settings
}

/// Whether the argument names a file rather than a runbook of the project.
fn is_path(reference: &str) -> bool {
    reference.ends_with(".yaml")
        || reference.ends_with(".yml")
        || reference.contains(std::path::MAIN_SEPARATOR) && Path::new(reference).is_file()
}
