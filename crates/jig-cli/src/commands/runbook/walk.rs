//! `jig runbook run --step`: a reviewer walks the run at the terminal, one step at a time:
//! each step shows what it will do (the tool and its rendered inputs, the instructions) and
//! waits for a key — run, skip, evidence, approve, retry, pause.
//!
//! At a terminal a key answers at once (keys.rs); from a pipe, keys are read as lines. Pausing
//! (`p`, Ctrl-C, the end of input) leaves the run where it stands: `jig runbook resume RUN`
//! picks it up, from this or any other process. A step a person may not take (their own
//! approval, someone else acted first) is said and asked again: the walk goes on.

use std::io::{BufRead, Write};

use jig_app::runbooks::{Action, Need, RunView, Waiting};
use jig_app::{Actor, App, AppError};
use jig_model::runbook::legacy::{EvidenceKind, EvidenceRequirement};
use serde_json::{Map, Value};

use super::keys;
use super::print;

/// What the reviewer chose for one waiting step.
enum Choice {
    Act(Action),
    Pause,
}

/// Walk `view` until it ends or the reviewer pauses.
pub async fn walk(
    app: &App,
    actor: &Actor,
    mut view: RunView,
    out: &mut impl Write,
) -> Result<RunView, AppError> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let Some(waiting) = view.progress.waiting.first().cloned() else { return Ok(view) };
        describe(out, &waiting);
        let choice = match ask(&mut input, out, &waiting) {
            Some(choice) => choice,
            None => Choice::Pause, // end of input
        };
        match choice {
            Choice::Pause => {
                let _ = writeln!(out, "paused; resume with: jig runbook resume {}", view.id);
                return Ok(view);
            }
            Choice::Act(action) => {
                match app.act_on_run(actor, &view.id, &waiting.key, action).await {
                    Ok(next) => view = next,
                    // What the store or the walk itself fails at ends the walk; what a person
                    // may not do here (approve their own step, act after someone else) is
                    // said, and the step asked again: they can pause or choose otherwise.
                    Err(error) if error.code() == jig_model::ErrorCode::Internal => {
                        return Err(error);
                    }
                    Err(error) => {
                        let _ = writeln!(out, "! [{}] {error}", error.code());
                        view = app.run(&view.id).await?;
                    }
                }
            }
        }
    }
}

fn describe(out: &mut impl Write, w: &Waiting) {
    let title = w.title.as_deref().map(|t| format!(" — {t}")).unwrap_or_default();
    let _ = writeln!(out, "\n▶ {} ({}){title}", w.key, w.step_type);
    if let Some(text) = &w.instructions {
        for line in text.lines() {
            let _ = writeln!(out, "  │ {line}");
        }
    }
    if let Some(tool) = &w.tool {
        let inputs =
            w.inputs.as_ref().map(|i| Value::Object(i.clone()).to_string()).unwrap_or_default();
        let _ = writeln!(out, "  will call {tool} {inputs}");
    }
    if let Some(contract) = &w.contract {
        let _ = writeln!(
            out,
            "  contract: side effects {}, idempotent {}, deterministic {}, risk {}",
            contract.side_effects,
            contract.idempotent,
            contract.deterministic,
            jig_app::runbooks::risk(contract).as_str()
        );
    }
}

fn prompt(input: &mut impl BufRead, out: &mut impl Write, text: &str) -> Option<String> {
    let _ = write!(out, "{text}");
    let _ = out.flush();
    keys::line(input)
}

fn ask(input: &mut impl BufRead, out: &mut impl Write, w: &Waiting) -> Option<Choice> {
    loop {
        let (question, keys): (String, &[&str]) = match &w.need {
            Need::Go { reason, required, approved_by } => (
                format!(
                    "  go-ahead ({reason}{}): [r]un, [s]kip, [p]ause? ",
                    super::print::so_far(*required, approved_by)
                ),
                &["r", "s", "p"],
            ),
            Need::Paused => ("  paused: [r]un, [s]kip, [p]ause? ".to_owned(), &["r", "s", "p"]),
            Need::Evidence { .. } => ("  [e]vidence, [p]ause? ".to_owned(), &["e", "p"]),
            Need::Choice { .. } => ("  [c]hoose, [p]ause? ".to_owned(), &["c", "p"]),
            Need::Approval { approval_id, rule } => (
                format!("  needs approval {approval_id} ({rule}): [a]pprove, [d]eny, [p]ause? "),
                &["a", "d", "p"],
            ),
            Need::Failed { failure } => (
                format!(
                    "  failed: {}: [t] retry, [x] accept the failure, [p]ause? ",
                    failure.message
                ),
                &["t", "x", "p"],
            ),
        };
        let answer = keys::key(input, out, &question)?;
        let key = answer.trim().to_lowercase();
        if !keys.contains(&key.as_str()) {
            let _ = writeln!(out, "  (answer one of: {})", keys.join(", "));
            continue;
        }
        return Some(match key.as_str() {
            "p" => Choice::Pause,
            "r" => Choice::Act(Action::Run),
            "s" => Choice::Act(Action::Skip { reason: prompt(input, out, "  why skip? ")? }),
            "a" => Choice::Act(Action::Approve),
            "d" => Choice::Act(Action::Deny),
            "t" => Choice::Act(Action::Retry),
            "x" => Choice::Act(Action::Abort),
            "c" => {
                let Need::Choice { prompt: question, options } = &w.need else { continue };
                for (i, option) in options.iter().enumerate() {
                    let label = option.label.as_deref().unwrap_or(&option.value);
                    let _ = writeln!(out, "  {}. {label}", i + 1);
                }
                let picked = prompt(
                    input,
                    out,
                    &format!("  {} (number)? ", question.as_deref().unwrap_or("which")),
                )?;
                match picked
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| options.get(n.wrapping_sub(1)))
                {
                    Some(option) => Choice::Act(Action::Choose { value: option.value.clone() }),
                    None => continue,
                }
            }
            _ => {
                let Need::Evidence { required } = &w.need else { continue };
                Choice::Act(Action::Evidence { values: evidence(input, out, required)? })
            }
        });
    }
}

/// Ask for each piece of evidence: a line of text, each checklist item, a file's path.
fn evidence(
    input: &mut impl BufRead,
    out: &mut impl Write,
    required: &[EvidenceRequirement],
) -> Option<Map<String, Value>> {
    let mut values = Map::new();
    for requirement in required {
        let value = match requirement.kind {
            EvidenceKind::Text => {
                Value::String(prompt(input, out, &format!("  {} (text): ", requirement.name))?)
            }
            EvidenceKind::Checklist => {
                let mut ticked = Map::new();
                for item in &requirement.items {
                    let answer =
                        prompt(input, out, &format!("  {}: {item} [y/n]? ", requirement.name))?;
                    ticked
                        .insert(item.clone(), Value::Bool(answer.trim().eq_ignore_ascii_case("y")));
                }
                Value::Object(ticked)
            }
            EvidenceKind::Attachment => {
                let path =
                    prompt(input, out, &format!("  {} (path of a file): ", requirement.name))?;
                match fs_err::read(path.trim()) {
                    // The file itself; Jig keeps it by its hash.
                    Ok(bytes) => {
                        use base64::Engine as _;
                        let name = std::path::Path::new(path.trim())
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let content = base64::engine::general_purpose::STANDARD.encode(&bytes);
                        serde_json::json!({ "name": name, "content_base64": content })
                    }
                    Err(error) => {
                        let _ = writeln!(out, "  ! {error}");
                        return None;
                    }
                }
            }
        };
        values.insert(requirement.name.clone(), value);
    }
    Some(values)
}

/// Print where the walk left the run.
pub fn report(out: &mut impl Write, view: &RunView) {
    let _ = print::run(out, view);
}
