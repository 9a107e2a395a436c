//! A runbook run as text: its status, its outcome or failure, and what each waiting step needs.

use std::io::Write;

use jig_app::runbooks::{Need, RunStatus, RunView};
use jig_model::runbook::OutcomeCategory;

use crate::exit::Code;

pub fn run(out: &mut impl Write, view: &RunView) -> std::io::Result<()> {
    let p = &view.progress;
    writeln!(out, "run {} of {} — {}", view.id, view.runbook, status_word(p.status))?;
    if let Some(outcome) = &p.outcome {
        let code = outcome.code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        writeln!(out, "outcome: {}{code}", outcome.category.as_str())?;
        for (k, v) in outcome.meta.iter().filter(|(k, _)| *k != "next_runbook") {
            writeln!(out, "  {k}: {}", jig_expr::text(v))?;
        }
        if let Some(next) = outcome.meta.get("next_runbook") {
            let file = next["file"].as_str().unwrap_or_default();
            match next["runbook"].as_str() {
                Some(name) => {
                    writeln!(out, "  next: {name} — continue with: jig runbook follow {}", view.id)?
                }
                None => writeln!(out, "  next: `{file}`, which is not a runbook of this project")?,
            }
        }
    }
    if let Some(failure) = &p.failure {
        writeln!(
            out,
            "stopped at {}: [{}] {}",
            if failure.key.is_empty() { "the end" } else { &failure.key },
            failure.failure.kind,
            failure.failure.message
        )?;
    }
    for w in &p.waiting {
        let title = w.title.as_deref().map(|t| format!(" — {t}")).unwrap_or_default();
        writeln!(out, "waiting at {} ({}){title}", w.key, w.step_type)?;
        if let Some(text) = &w.instructions {
            for line in text.lines() {
                writeln!(out, "  │ {line}")?;
            }
        }
        if let Some(tool) = &w.tool {
            let inputs = w
                .inputs
                .as_ref()
                .map(|i| serde_json::Value::Object(i.clone()).to_string())
                .unwrap_or_default();
            writeln!(out, "  will call {tool} {inputs}")?;
        }
        let hint = match &w.need {
            Need::Go { reason, required, approved_by } => format!(
                "needs a go-ahead ({reason}{}): jig runbook resume {} --go {}",
                so_far(*required, approved_by),
                view.id,
                w.step_id
            ),
            Need::Evidence { required } if required.is_empty() => {
                format!(
                    "needs an acknowledgement: jig runbook resume {} --evidence {}=/dev/null",
                    view.id, w.step_id
                )
            }
            Need::Evidence { required } => {
                let names: Vec<String> = required
                    .iter()
                    .map(|r| format!("{} ({:?})", r.name, r.kind).to_lowercase())
                    .collect();
                // One piece: the file's text is it. More: a JSON object names each.
                let file = if required.len() == 1 { "FILE" } else { "FILE.json" };
                format!(
                    "needs evidence {}: jig runbook resume {} --evidence {}={file}",
                    names.join(", "),
                    view.id,
                    w.step_id
                )
            }
            Need::Choice { prompt, options } => {
                let values: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
                format!(
                    "needs a choice{}: {}",
                    prompt.as_deref().map(|p| format!(" ({p})")).unwrap_or_default(),
                    values.join(" | ")
                )
            }
            Need::Approval { approval_id, rule } => {
                format!(
                    "needs approval {approval_id} ({rule}): jig runbook resume {} --approve {}",
                    view.id, w.step_id
                )
            }
            Need::Failed { failure } => format!(
                "failed ({}); retry: jig runbook resume {} --retry {}",
                failure.message, view.id, w.step_id
            ),
            Need::Paused => format!(
                "paused{}: jig runbook resume {} --go {}",
                view.paused_by.as_deref().map(|by| format!(" by {by}")).unwrap_or_default(),
                view.id,
                w.step_id
            ),
        };
        writeln!(out, "  {hint}")?;
    }
    Ok(())
}

fn status_word(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
        RunStatus::Error => "error",
        RunStatus::Denied => "denied",
        RunStatus::Paused => "waiting for people",
    }
}

/// The exit code of a run (see `jig runbook run --help`).
pub fn code(view: &RunView) -> Code {
    match (view.progress.status, view.progress.outcome.as_ref().map(|o| o.category)) {
        (RunStatus::Paused, _) => Code::Waiting,
        (RunStatus::Completed, Some(OutcomeCategory::Escalated)) => Code::Escalated,
        (RunStatus::Completed, Some(OutcomeCategory::NeedsRca)) => Code::NeedsRca,
        (RunStatus::Completed, _) => Code::Ok,
        _ => Code::Failed,
    }
}

/// `; 1 of 2 approvals: alice` where several people must say go; nothing for one.
pub fn so_far(required: u32, approved_by: &[String]) -> String {
    if required <= 1 {
        return String::new();
    }
    let who = if approved_by.is_empty() {
        String::new()
    } else {
        format!(": {}", approved_by.join(", "))
    };
    format!("; {} of {required} go-aheads given{who}", approved_by.len())
}
