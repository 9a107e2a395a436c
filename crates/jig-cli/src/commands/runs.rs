//! `jig runs …`: calls whose work runs on a scheduler — seed 001's slurm and hybrid plans.
//! Every command polls the jobs it looks at first, so what it prints is the scheduler's news,
//! recorded in the audit, not a stale row.

use std::io::Write;
use std::time::Duration;

use jig_engine::{Engine, ToolResponse};
use serde_json::json;

use crate::cli::RunsCommand;
use crate::exit::Code;
use crate::output::{Settings, print_json};

/// How often `--wait` polls.
const WAIT_POLL: Duration = Duration::from_millis(500);

pub async fn run(
    settings: &Settings,
    command: &RunsCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let engine = match settings.engine().await {
        Ok(engine) => engine,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Failed);
        }
    };
    match command {
        RunsCommand::List { json, limit } => {
            engine.poll_jobs().await?;
            let jobs = engine.history().jobs(*limit).await?;
            if !*json && jobs.is_empty() {
                eprintln!(
                    "no jobs yet: a call of a slurm or hybrid plan tool submits one (`jig call TOOL`)"
                );
            } else if !*json {
                writeln!(out, "{:<34} {:<28} {:<12} {:<10}", "REQUEST", "TOOL", "JOB", "STATE")?;
            }
            for job in jobs {
                let state = job.state.as_str();
                if *json {
                    let line = json!({ "request_id": job.request_id, "tool": job.tool, "engine": job.engine, "job": job.handle, "state": state, "created_us": job.created_us });
                    writeln!(out, "{line}")?;
                } else {
                    let handle = format!("{} {}", job.engine, job.handle);
                    writeln!(
                        out,
                        "{:<34} {:<28} {handle:<12} {state:<10}",
                        job.request_id, job.tool
                    )?;
                }
            }
            Ok(Code::Ok)
        }
        RunsCommand::Show { request } => {
            let Some(run) = engine.poll_job(request).await? else {
                crate::fail!(NotFound, "no call `{request}`");
                return Ok(Code::Failed);
            };
            let response = engine.response_of(request).await?;
            let job = engine.history().job(request).await?;
            // While the job runs, what it printed so far; once collected, the log is an artifact.
            let log = engine.job_log(request).await?;
            print_json(out, &json!({ "run": run, "job": job, "response": response, "log": log }))?;
            Ok(Code::Ok)
        }
        RunsCommand::Cancel { request } => {
            match engine.cancel_job(request, Some(&settings.principal)).await {
                Ok(true) => {
                    eprintln!("cancelled `{request}`");
                    Ok(Code::Ok)
                }
                Ok(false) => {
                    crate::fail!(NotFound, "`{request}` has no open job");
                    Ok(Code::Failed)
                }
                Err(error) => {
                    eprintln!("error[{}]: {error}", error.code());
                    Ok(Code::Failed)
                }
            }
        }
        RunsCommand::Collect { request: Some(request), wait } => {
            let response = if *wait {
                wait_for(&engine, request).await?
            } else {
                engine.poll_job(request).await?;
                engine.response_of(request).await?
            };
            let Some(response) = response else {
                crate::fail!(NotFound, "no call `{request}`");
                return Ok(Code::Failed);
            };
            print_json(out, &response)?;
            Ok(if response.ok && response.job.is_none() { Code::Ok } else { Code::Failed })
        }
        RunsCommand::Collect { request: None, wait } => {
            let mut open = engine.poll_jobs().await?;
            while *wait && open > 0 {
                eprintln!("{open} job(s) still open");
                tokio::time::sleep(WAIT_POLL).await;
                open = engine.poll_jobs().await?;
            }
            eprintln!("{open} job(s) open");
            Ok(Code::Ok)
        }
    }
}

/// Poll the job of `request` until its run is final, telling stderr about each change; its
/// final response. Ctrl-C stops waiting (the job keeps running; `jig runs cancel` stops it).
pub async fn wait_for(engine: &Engine, request: &str) -> anyhow::Result<Option<ToolResponse>> {
    let mut last = String::new();
    let interrupted = crate::signals::interrupted();
    tokio::pin!(interrupted);
    loop {
        let Some(run) = engine.poll_job(request).await? else { return Ok(None) };
        let state = run.state.as_str().to_owned();
        if state != last {
            let job = engine.history().job(request).await?;
            let on = job.map(|j| format!(" ({} job {})", j.engine, j.handle)).unwrap_or_default();
            eprintln!("{request}: {state}{on}");
            last = state;
        }
        if run.state.is_final() {
            return Ok(engine.response_of(request).await?);
        }
        tokio::select! {
            () = tokio::time::sleep(WAIT_POLL) => {}
            () = &mut interrupted => {
                eprintln!("stopped waiting; the job goes on (`jig runs show {request}`, `jig runs cancel {request}`)");
                return Ok(engine.response_of(request).await?);
            }
        }
    }
}
