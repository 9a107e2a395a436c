//! `jig runbook run|resume|show`: a run through the engine, recorded in the audit store, that
//! any later process can pick up.

use std::io::Write;
use std::path::PathBuf;

use jig_app::runbooks::{Action, Need, RunView};
use jig_app::{Actor, App, AppError};
use serde_json::{Map, Value};

use super::print;
use crate::cli::{RunbookResumeArgs, RunbookRunArgs};
use crate::exit::Code;
use crate::output::{Settings, print_json};

pub async fn start(
    settings: &Settings,
    args: &RunbookRunArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let inputs = match parse_inputs(&args.inputs) {
        Ok(inputs) => inputs,
        Err(message) => {
            crate::fail!(ValidationFail, "{message}");
            return Ok(Code::Usage);
        }
    };
    let (settings, extra, name) = if super::is_path(&args.runbook) {
        let path = std::path::absolute(&args.runbook)?;
        let settings = super::settings_for(settings, std::slice::from_ref(&path));
        (settings, vec![path], None)
    } else {
        (settings.clone(), Vec::new(), Some(args.runbook.clone()))
    };
    let Ok(engine) = settings.engine_with(&extra).await else { return Ok(Code::Failed) };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Ok(Code::Usage);
    }
    let name = match name {
        Some(name) => name,
        None => {
            let snapshot = engine.snapshot();
            let file = extra.first().cloned().unwrap_or_default();
            match snapshot.runbooks().find(|r| snapshot.root().join(&r.file) == file) {
                Some(entry) => entry.name.clone(),
                None => {
                    crate::fail!(NotFound, "{} is not a runbook of the project", args.runbook);
                    return Ok(Code::Failed);
                }
            }
        }
    };
    let app = App::new(engine);
    let actor = settings.actor();
    let view = match app.start_run(&actor, &name, inputs, args.step).await {
        Ok(view) => view,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Failed);
        }
    };
    let evidence = match read_evidence(&args.evidence) {
        Ok(evidence) => evidence,
        Err(message) => {
            crate::fail!(FileIo, "{message}");
            return Ok(Code::Usage);
        }
    };
    let view = match answer(&app, &actor, view, &evidence, &[], &[], &[]).await {
        Ok(view) => view,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Failed);
        }
    };
    if args.step && !args.json {
        // The walk prompts on stderr's terminal neighbour, stdout: the reviewer reads both.
        let view = match super::walk::walk(&app, &actor, view, out).await {
            Ok(view) => view,
            Err(error) => {
                eprintln!("error[{}]: {error}", error.code());
                return Ok(Code::Failed);
            }
        };
        writeln!(out)?;
        super::walk::report(out, &view);
        return Ok(print::code(&view));
    }
    finish(out, &view, args.json)
}

pub async fn resume(
    settings: &Settings,
    args: &RunbookResumeArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let engine = match open(settings).await {
        Some(engine) => engine,
        None => return Ok(Code::Failed),
    };
    let app = App::new(engine);
    let actor = settings.actor();
    let evidence = match read_evidence(&args.evidence) {
        Ok(evidence) => evidence,
        Err(message) => {
            crate::fail!(FileIo, "{message}");
            return Ok(Code::Usage);
        }
    };
    let result = async {
        let view = app.resume_run(&actor, &args.run).await?;
        answer(&app, &actor, view, &evidence, &args.go, &args.approve, &args.retry).await
    }
    .await;
    let result = match result {
        Ok(view) if args.step && !args.json => super::walk::walk(&app, &actor, view, out).await,
        other => other,
    };
    report(out, result, args.json)
}

pub async fn show(
    settings: &Settings,
    run: &str,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let Some(engine) = open(settings).await else { return Ok(Code::Failed) };
    report(out, App::new(engine).run(run).await, json)
}

pub async fn pause(
    settings: &Settings,
    run: &str,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let Some(engine) = open(settings).await else { return Ok(Code::Failed) };
    report(out, App::new(engine).pause_run(&settings.actor(), run).await, json)
}

pub async fn follow(
    settings: &Settings,
    run: &str,
    inputs: &[String],
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let inputs = match parse_inputs(inputs) {
        Ok(inputs) => inputs,
        Err(message) => {
            crate::fail!(ValidationFail, "{message}");
            return Ok(Code::Usage);
        }
    };
    let Some(engine) = open(settings).await else { return Ok(Code::Failed) };
    report(out, App::new(engine).follow_run(&settings.actor(), run, inputs).await, json)
}

/// The run as it now stands, or the service's error with its code.
fn report(
    out: &mut impl Write,
    result: Result<RunView, AppError>,
    json: bool,
) -> anyhow::Result<Code> {
    match result {
        Ok(view) => finish(out, &view, json),
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            Ok(Code::Failed)
        }
    }
}

/// The engine for a run started earlier (its runbook is recorded with it, so one named by path
/// resumes without the path).
async fn open(settings: &Settings) -> Option<std::sync::Arc<jig_engine::Engine>> {
    settings.engine().await.ok()
}

fn finish(out: &mut impl Write, view: &RunView, json: bool) -> anyhow::Result<Code> {
    if json {
        print_json(out, view)?;
    } else {
        print::run(out, view)?;
    }
    Ok(print::code(view))
}

/// Answer what the command line answers, as long as the run waits for it.
async fn answer(
    app: &App,
    actor: &Actor,
    mut view: RunView,
    evidence: &[Evidence],
    go: &[String],
    approve: &[String],
    retry: &[String],
) -> Result<RunView, AppError> {
    let named =
        |list: &[String], step_id: &str, key: &str| list.iter().any(|s| s == step_id || s == key);
    if let Some(failure) = &view.progress.failure
        && retry
            .iter()
            .any(|s| *s == failure.key || failure.key.rsplit('/').next() == Some(s.as_str()))
    {
        let key = failure.key.clone();
        view = app.act_on_run(actor, &view.id, &key, Action::Retry).await?;
    }
    loop {
        let mut acted = false;
        for waiting in view.progress.waiting.clone() {
            let action = match &waiting.need {
                Need::Evidence { required } => evidence
                    .iter()
                    .find(|given| given.step == waiting.step_id || given.step == waiting.key)
                    .map(|given| Action::Evidence { values: evidence_values(given, required) }),
                Need::Go { .. } | Need::Paused if named(go, &waiting.step_id, &waiting.key) => {
                    Some(Action::Run)
                }
                Need::Approval { .. } if named(approve, &waiting.step_id, &waiting.key) => {
                    Some(Action::Approve)
                }
                Need::Failed { .. } if named(retry, &waiting.step_id, &waiting.key) => {
                    Some(Action::Retry)
                }
                _ => None,
            };
            if let Some(action) = action {
                view = app.act_on_run(actor, &view.id, &waiting.key, action).await?;
                acted = true;
                break;
            }
        }
        if !acted {
            return Ok(view);
        }
    }
}

/// Evidence given on the command line: `STEP=FILE`.
pub(super) struct Evidence {
    step: String,
    /// The file's name, for an attachment.
    name: String,
    bytes: Vec<u8>,
}

/// A file's evidence: the file itself when the step asks for one attachment; else a JSON object
/// as is, or text as the one piece a step asks for.
fn evidence_values(
    given: &Evidence,
    required: &[jig_model::runbook::legacy::EvidenceRequirement],
) -> Map<String, Value> {
    use base64::Engine as _;
    use jig_model::runbook::legacy::EvidenceKind;
    if let [one] = required
        && one.kind == EvidenceKind::Attachment
    {
        let content = base64::engine::general_purpose::STANDARD.encode(&given.bytes);
        let file = serde_json::json!({ "name": given.name, "content_base64": content });
        return Map::from_iter([(one.name.clone(), file)]);
    }
    let text = String::from_utf8_lossy(&given.bytes);
    let value = serde_json::from_str::<Value>(&text)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| Value::String(text.trim_end().to_owned()));
    match value {
        Value::Object(map) => map,
        other => match required {
            [one] => Map::from_iter([(one.name.clone(), other)]),
            _ => Map::from_iter([("text".to_owned(), other)]),
        },
    }
}

fn read_evidence(pairs: &[String]) -> Result<Vec<Evidence>, String> {
    pairs
        .iter()
        .map(|pair| {
            let (step, file) = pair
                .split_once('=')
                .ok_or_else(|| format!("`--evidence {pair}`: write STEP=FILE"))?;
            let path = PathBuf::from(file);
            let bytes = fs_err::read(&path).map_err(|e| e.to_string())?;
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(Evidence { step: step.to_owned(), name, bytes })
        })
        .collect()
}

fn parse_inputs(pairs: &[String]) -> Result<Map<String, Value>, String> {
    let mut inputs = Map::new();
    for pair in pairs {
        let (name, value) =
            pair.split_once('=').ok_or_else(|| format!("`--input {pair}`: write NAME=VALUE"))?;
        if inputs.insert(name.to_owned(), Value::String(value.to_owned())).is_some() {
            return Err(format!("`--input {name}` is given twice"));
        }
    }
    Ok(inputs)
}
