//! `jig runbook record RUN --name NAME`: a finished run saved as a scenario of its runbook, in
//! gert's layout (`scenarios/<runbook>/<name>/` beside the runbook file), for `jig runbook test`.

use std::io::Write;
use std::path::PathBuf;

use jig_app::App;

use crate::exit::Code;
use crate::output::Settings;

pub async fn run(
    settings: &Settings,
    run: &str,
    name: &str,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || name.starts_with('.')
    {
        crate::fail!(ValidationFail, "`--name {name}`: use letters, digits, `-`, `_` and `.`");
        return Ok(Code::Usage);
    }
    let Ok(engine) = settings.engine().await else { return Ok(Code::Failed) };
    let app = App::new(std::sync::Arc::clone(&engine));
    let recorded = match app.record_scenario(run).await {
        Ok(recorded) => recorded,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Failed);
        }
    };
    let Ok(view) = app.run(run).await else { return Ok(Code::Failed) };
    let snapshot = engine.snapshot();
    let Some(entry) = snapshot.runbook(&view.runbook) else {
        crate::fail!(NotFound, "runbook `{}` is no longer in the project", view.runbook);
        return Ok(Code::Failed);
    };
    // Where the loader looks for it, so `jig runbook test` finds it.
    let dir: PathBuf = jig_load::scenarios_beside(&snapshot.root().join(&entry.file)).join(name);
    if dir.exists() {
        crate::fail!(
            Conflict,
            "{} exists; pick another --name (a recorded scenario is never overwritten)",
            dir.display()
        );
        return Ok(Code::Failed);
    }
    // JSON is YAML: written as JSON, the files need no YAML writer and read back exactly.
    let header = format!("# Recorded from run {run} by `jig runbook record`.\n");
    let scenario = format!("{header}{}\n", serde_json::to_string_pretty(&recorded.scenario)?);
    let test = format!("{header}{}\n", serde_json::to_string_pretty(&recorded.test)?);
    // Written beside, then moved in: a failure leaves no half-written scenario behind.
    let parent = dir.parent().unwrap_or(snapshot.root());
    fs_err::create_dir_all(parent)?;
    let staging = parent.join(format!(".{name}.recording-{}", std::process::id()));
    let written = fs_err::create_dir(&staging)
        .and_then(|()| fs_err::write(staging.join("scenario.yaml"), scenario))
        .and_then(|()| fs_err::write(staging.join("test.yaml"), test))
        .and_then(|()| fs_err::rename(&staging, &dir));
    if let Err(error) = written {
        let _ = fs_err::remove_dir_all(&staging);
        crate::fail!(FileIo, "{error}");
        return Ok(Code::Failed);
    }
    let shown = dir.strip_prefix(snapshot.root()).unwrap_or(&dir);
    writeln!(out, "recorded run {run} as {}", shown.display())?;
    eprintln!("replay it with: jig runbook test {}", entry.file);
    Ok(Code::Ok)
}
