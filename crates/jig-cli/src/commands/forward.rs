//! `jig audit forward`: the project's audit forwarders (`config.audit.forward`) in the
//! foreground — for a team that runs no `jig serve`, or to catch a receiver up and stop.

use std::io::Write;

use crate::exit::Code;
use crate::output::Settings;

pub async fn run(
    settings: &Settings,
    until_caught_up: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let Ok(engine) = settings.engine().await else { return Ok(Code::Invalid) };
    let waiting: Vec<_> = engine
        .waiting_consent()
        .into_iter()
        .filter(|item| item.kind == jig_load::trust::OutboundKind::Forwarder)
        .collect();
    if !waiting.is_empty() {
        for item in &waiting {
            eprintln!(
                "error[{}]: {} waits for your consent",
                jig_model::ErrorCode::Policy,
                item.describe()
            );
        }
        eprintln!("  = hint: read it, then `jig trust` (nothing is forwarded until you consent)");
        return Ok(Code::Failed);
    }
    let forwarders = match engine.forwarders() {
        Ok(forwarders) => forwarders,
        Err(why) => {
            crate::fail!(ValidationFail, "{why}");
            return Ok(Code::Failed);
        }
    };
    if forwarders.is_empty() {
        crate::fail!(
            NotFound,
            "config.audit.forward: the manifest names no receiver to forward the audit to"
        );
        return Ok(Code::Failed);
    }
    // Caught up means: every packet recorded now is taken.
    let until = if until_caught_up { Some(engine.history().head().await?.0) } else { None };
    let (stop, stopped) = jig_engine::Stop::pair();
    // Each forwards on its own task, at the same time.
    let tasks: Vec<_> = forwarders
        .into_iter()
        .map(|forwarder| {
            if until.is_none() {
                eprintln!("forwarding the audit as `{}`", forwarder.name());
            }
            let stopped = stopped.clone();
            tokio::spawn(async move { forwarder.run(until, stopped).await })
        })
        .collect();
    if until.is_none() {
        crate::signals::interrupted().await;
        // Each records where it got to and gives up its lease before the process ends.
        let _ = stop.send(true);
    }
    for task in tasks {
        let progress = task.await?;
        writeln!(out, "{}: taken up to seq {}", progress.name, progress.seq)?;
    }
    Ok(Code::Ok)
}
