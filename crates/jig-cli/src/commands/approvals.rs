//! `jig approvals list|approve|deny`: the reviewer's side of calls that need approval.

use std::io::Write;

use jig_engine::time::{now_us, rfc3339};
use jig_engine::{ApprovalRecord, ApprovalState};

use crate::cli::ApprovalsCommand;
use crate::exit::Code;
use crate::output::{Settings, print_json};

pub async fn run(
    settings: &Settings,
    command: &ApprovalsCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    match command {
        ApprovalsCommand::List { json, all } => list(settings, *json, *all, out).await,
        ApprovalsCommand::Approve { ids, comment } if ids.len() > 1 => {
            many(settings, ids, jig_app::Choice::Approve, comment.as_deref(), out).await
        }
        ApprovalsCommand::Deny { ids, reason } if ids.len() > 1 => {
            many(settings, ids, jig_app::Choice::Deny, reason.as_deref(), out).await
        }
        ApprovalsCommand::Approve { ids, comment } => {
            let id = &ids[0];
            let app = match deciding_app(settings).await {
                Ok(app) => app,
                Err(code) => return Ok(code),
            };
            match app.approve(&settings.actor(), id, comment.as_deref()).await {
                Ok(done) if !done.granted => {
                    eprintln!(
                        "recorded {}'s approval of {id}: {} of {} ({}); it is granted when the others approve",
                        settings.principal,
                        done.approvers.len(),
                        done.required,
                        done.approvers.join(", ")
                    );
                    Ok(Code::Ok)
                }
                Ok(done) => {
                    match &done.token {
                        // Your own call: the token is yours to pass.
                        Some(token) => {
                            writeln!(out, "{token}")?;
                            eprintln!(
                                "approved {id} as {}; pass the token once (jig call … --approve <token>), or call again",
                                settings.principal
                            );
                        }
                        None => eprintln!(
                            "approved {id} as {}; the call runs where it waits, or at its caller's next identical call",
                            settings.principal
                        ),
                    }
                    report_run(done.runbook_run.as_ref());
                    Ok(Code::Ok)
                }
                Err(error) => {
                    eprintln!("error[{}]: {error}", error.code());
                    Ok(Code::Failed)
                }
            }
        }
        ApprovalsCommand::Deny { ids, reason } => {
            let id = &ids[0];
            let app = match deciding_app(settings).await {
                Ok(app) => app,
                Err(code) => return Ok(code),
            };
            match app.deny(&settings.actor(), id, reason.as_deref()).await {
                Ok(done) => {
                    eprintln!("denied {id} as {}", settings.principal);
                    report_run(done.runbook_run.as_ref());
                    Ok(Code::Ok)
                }
                Err(error) => {
                    eprintln!("error[{}]: {error}", error.code());
                    Ok(Code::Failed)
                }
            }
        }
    }
}

/// The application, for the person at the machine to decide as (the code to exit with when
/// the project does not open or they may not act as who they say).
async fn deciding_app(settings: &Settings) -> Result<jig_app::App, Code> {
    let Ok(engine) = settings.engine().await else { return Err(Code::Failed) };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Err(Code::Usage);
    }
    Ok(jig_app::App::new(engine))
}

/// One decision for several approvals: a line per approval on stdout (`ID OUTCOME [detail]`),
/// and a failure for any that could not be decided (someone else was quicker, say).
async fn many(
    settings: &Settings,
    ids: &[String],
    choice: jig_app::Choice,
    note: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let app = match deciding_app(settings).await {
        Ok(app) => app,
        Err(code) => return Ok(code),
    };
    let outcomes = match app.decide_many(&settings.actor(), ids, choice, note).await {
        Ok(outcomes) => outcomes,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(if matches!(error, jig_app::AppError::Invalid(_)) {
                Code::Usage
            } else {
                Code::Failed
            });
        }
    };
    let mut failed = 0;
    for outcome in &outcomes {
        match (&outcome.code, &outcome.message) {
            (Some(code), Some(message)) => {
                failed += 1;
                writeln!(out, "{} error", outcome.id)?;
                eprintln!("error[{code}]: {}: {message}", outcome.id);
            }
            _ => writeln!(out, "{} {}", outcome.id, outcome.outcome)?,
        }
    }
    eprintln!(
        "{} of {} {} as {}",
        outcomes.len() - failed,
        outcomes.len(),
        if choice == jig_app::Choice::Deny { "denied" } else { "approved" },
        settings.principal
    );
    Ok(if failed == 0 { Code::Ok } else { Code::Failed })
}

/// Say where a runbook run waiting on the decision stands now.
fn report_run(run: Option<&jig_app::Walked>) {
    if let Some(run) = run {
        eprintln!(
            "runbook run {} walked on: {} (`jig runbook show {}`)",
            run.id, run.status, run.id
        );
    }
}

async fn list(
    settings: &Settings,
    json: bool,
    all: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let approvals = match settings.history().await? {
        // The person at the machine reads the store itself: they see what they could decide.
        Some(history) => {
            let reader =
                jig_engine::Reader { person: settings.principal.clone(), may_approve: true };
            history.approvals(!all, &reader).await?
        }
        None => Vec::new(),
    };
    if json {
        print_json(out, &approvals)?;
        return Ok(Code::Ok);
    }
    if approvals.is_empty() {
        eprintln!("{}", if all { "no approvals" } else { "nothing waits for approval" });
        return Ok(Code::Ok);
    }
    writeln!(
        out,
        "{:<10} {:<9} {:<20} {:<12} {:<8} ARGS",
        "ID", "STATE", "TOOL", "ASKED BY", "AGE"
    )?;
    for approval in &approvals {
        writeln!(out, "{}", row(approval))?;
        writeln!(out, "{:<10} {}: {}", "", approval.rule, approval.reason)?;
        // A reviewer approves what they saw: arguments too long for the row are shown whole,
        // and the command line the call starts, as JSON (a space inside an argument shows).
        let args = approval.request.get("args").map(ToString::to_string).unwrap_or_default();
        if args.chars().count() > ARGS_SHOWN {
            writeln!(out, "{:<10} args: {args}", "")?;
        }
        if let Some(argv) = approval.request.get("argv") {
            writeln!(out, "{:<10} runs: {argv}", "")?;
        }
        if approval.required > 1 {
            let so_far = if approval.approvers.is_empty() {
                "none yet".to_owned()
            } else {
                approval.approvers.join(", ")
            };
            writeln!(
                out,
                "{:<10} needs {} different approvers: {so_far} ({} of {})",
                "",
                approval.required,
                approval.approvers.len(),
                approval.required
            )?;
        }
    }
    Ok(Code::Ok)
}

/// How much of the arguments fits the table's row.
const ARGS_SHOWN: usize = 60;

fn row(approval: &ApprovalRecord) -> String {
    let args = approval.request.get("args").map(ToString::to_string).unwrap_or_default();
    let args = if args.chars().count() > ARGS_SHOWN {
        format!("{}…", args.chars().take(ARGS_SHOWN - 1).collect::<String>())
    } else {
        args
    };
    let mut state = approval.state.to_string();
    if approval.state == ApprovalState::Approved
        && approval.expires_us.is_some_and(|e| e < now_us())
    {
        state = "expired".to_owned();
    }
    format!(
        "{:<10} {:<9} {:<20} {:<12} {:<8} {args}",
        approval.id.short(),
        state,
        approval.tool,
        approval.principal.as_deref().unwrap_or("-"),
        age(approval.created_us),
    )
    .trim_end()
    .to_owned()
}

/// `42s`, `5m`, `3h`, `2d`, or the date when older.
pub fn age(us: i64) -> String {
    let seconds = (now_us() - us).max(0) / 1_000_000;
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86_400 => format!("{}h", seconds / 3600),
        86_400..2_592_000 => format!("{}d", seconds / 86_400),
        _ => rfc3339(us).get(..10).unwrap_or_default().to_owned(),
    }
}
