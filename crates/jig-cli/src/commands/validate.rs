//! `jig validate`: load everything, report every problem, exit 0 or 3.

use std::io::Write;
use std::sync::Arc;

use jig_load::{LoadFailure, Snapshot};
use serde_json::json;

use crate::cli::ValidateArgs;
use crate::exit::Code;
use crate::output::{Settings, plural, summary_of_failure};

pub fn run(settings: &Settings, args: &ValidateArgs, out: &mut impl Write) -> anyhow::Result<Code> {
    let mut loader = settings.loader(&args.files);
    let result = loader.load();
    if !args.watch {
        return Ok(report(settings, args.json, &result, out)?);
    }
    let json = args.json;
    let root = loader.root().map_or_else(String::new, |r| r.display().to_string());
    let reporting = settings.clone();
    // Watch before the first report: a change made once the first report is out (an editor, a
    // test) must reach the watcher.
    let _handle =
        jig_load::watch::watch(loader, jig_load::watch::DEFAULT_DEBOUNCE, move |update| {
            if !json {
                let names: Vec<String> =
                    update.changed.iter().map(|p| p.display().to_string()).collect();
                eprintln!(
                    "\nchanged: {}",
                    if names.is_empty() { "(rescan)".to_owned() } else { names.join(", ") }
                );
            }
            // Watch mode prints from the watcher's thread, to its own handle on stdout.
            let _ = report(&reporting, json, &update.result, &mut std::io::stdout().lock());
        })?;
    report(settings, json, &result, out)?;
    out.flush()?;
    if !json {
        eprintln!("watching {root} for changes (Ctrl-C to stop)");
    }
    loop {
        std::thread::park();
    }
}

fn report(
    settings: &Settings,
    json: bool,
    result: &Result<Arc<Snapshot>, LoadFailure>,
    out: &mut impl Write,
) -> std::io::Result<Code> {
    if json {
        let value = match result {
            Ok(snapshot) => json!({
                "valid": true,
                "tools": snapshot.len(),
                "runbooks": snapshot.runbooks().count(),
                "packages": snapshot.packages(),
                "registry_hash": snapshot.registry_hash(),
                "diagnostics": snapshot.warnings(),
            }),
            Err(failure) => json!({ "valid": false, "diagnostics": failure.diagnostics }),
        };
        writeln!(out, "{value}")?;
        out.flush()?;
    }
    match result {
        Ok(snapshot) => {
            if !json {
                eprint!(
                    "{}",
                    jig_load::render::render(snapshot.warnings(), snapshot.root(), settings.color)
                );
                eprintln!(
                    "valid: {}, {}, {} ({}); registry {}",
                    plural(snapshot.len(), "tool"),
                    plural(snapshot.runbooks().count(), "runbook"),
                    plural(snapshot.packages().len(), "package"),
                    plural(snapshot.warnings().len(), "warning"),
                    &snapshot.registry_hash()[..12],
                );
            }
            Ok(Code::Ok)
        }
        Err(failure) => {
            if !json {
                eprint!(
                    "{}",
                    jig_load::render::render(&failure.diagnostics, &failure.root, settings.color)
                );
                eprintln!("{}", summary_of_failure(failure));
            }
            Ok(Code::Invalid)
        }
    }
}
