//! `jig call TOOL`: one call through the engine; exactly one ToolResponse on stdout.

use std::io::Write;

use jig_engine::{EngineError, ToolRequest, ToolResponse, decode_request, parse_json_strict};
use jig_model::ErrorCode;
use serde_json::Value;

use crate::cli::CallArgs;
use crate::exit::Code;
use crate::output::{Settings, print_json, read_input};

pub async fn run(
    settings: &Settings,
    args: &CallArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let request = match build_request(args) {
        Ok(request) => request,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Code::Usage);
        }
    };
    let engine = match settings.engine().await {
        Ok(engine) => engine,
        Err(error) => {
            print_json(out, &unopened(&request, &error))?;
            return Ok(Code::Failed);
        }
    };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Ok(Code::Usage);
    }
    let app = jig_app::App::new(std::sync::Arc::clone(&engine));
    let spec = jig_app::CallSpec {
        tool: request.tool.clone(),
        args: request.args.clone(),
        request_id: Some(request.request_id.clone()),
        session: request.session_id.clone().unwrap_or_else(|| Settings::session(None)),
        thread: args.thread.clone(),
        // An empty token is none: a script passing what `jig approvals approve` printed for
        // someone else's call (nothing) simply calls again, which uses the approval.
        approval_token: args.approve.clone().filter(|token| !token.trim().is_empty()),
        // A large result is printed as the built-in wrote it, never parsed into a value.
        prepared_results: true,
        timestamp: request.timestamp,
        // A traced program that runs `jig call` continues its trace through the call.
        trace: jig_engine::telemetry::TraceOrigin::from_env(),
        ..jig_app::CallSpec::default()
    };
    let context = app.context(&settings.actor(), &spec);
    // Ctrl-C (SIGINT) or SIGTERM stops the tool through the engine; the (cancelled) response
    // is still recorded and printed. (SIGKILL cannot be caught: the tool's sandbox dies with
    // Jig, and the next start marks the run incomplete.)
    let cancel = context.cancel.clone();
    let interrupt = tokio::spawn(async move {
        crate::signals::interrupted().await;
        cancel.cancel();
    });
    let progress = crate::progress::show(&engine, &request.request_id);
    let (response, prepared) = match app.call(&settings.actor(), &spec, Some(context)).await {
        Ok(answer) => answer,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Failed);
        }
    };
    interrupt.abort();
    if let Some(progress) = progress {
        progress.abort();
        let _ = progress.await;
    }
    let response = match &response.job {
        Some(job) if args.wait => {
            match crate::commands::runs::wait_for(&engine, &job.request_id).await? {
                Some(done) => done,
                None => response,
            }
        }
        _ => response,
    };
    match &prepared {
        Some(data) => crate::output::print_prepared(out, &response, data)?,
        None => print_json(out, &response)?,
    }
    Ok(if response.ok { Code::Ok } else { Code::Failed })
}

/// The request from `--request`, or from TOOL and `--args`; a usage error names the argument.
fn build_request(args: &CallArgs) -> Result<ToolRequest, String> {
    let mut request = if let Some(source) = &args.request {
        let text = read_input(source)?;
        let request = decode_request(&text).map_err(|e| format!("--request {source}: {e}"))?;
        if let Some(tool) = args.tool.as_ref().filter(|t| **t != request.tool) {
            return Err(format!(
                "TOOL is `{tool}` but the request in {source} is for `{}`",
                request.tool
            ));
        }
        request
    } else {
        let tool = args.tool.clone().ok_or("name the TOOL to call, or give --request FILE")?;
        let arguments = match &args.args {
            Some(text) => {
                parse_json_strict(text).map_err(|e| format!("--args is not valid JSON: {e}"))?
            }
            None => Value::Object(serde_json::Map::new()),
        };
        ToolRequest {
            kind: Default::default(),
            tool,
            args: arguments,
            request_id: uuid::Uuid::new_v4().simple().to_string(),
            session_id: None,
            timestamp: Some(jig_engine::time::now_us() / 1_000_000),
        }
    };
    if !request.args.is_object() {
        return Err(
            "the arguments must be a JSON object, e.g. --args '{\"path\": \"README.md\"}'".into()
        );
    }
    if request.request_id.trim().is_empty() {
        return Err("the request's request_id is empty".into());
    }
    match (&request.session_id, &args.session) {
        (Some(inside), Some(flag)) if inside != flag => {
            return Err(format!("--session is `{flag}` but the request says `{inside}`"));
        }
        (None, flag) => request.session_id = Some(Settings::session(flag.as_ref())),
        _ => {}
    }
    Ok(request)
}

/// The response when the engine cannot start (the details are on stderr already).
fn unopened(request: &ToolRequest, error: &EngineError) -> ToolResponse {
    let (code, message) = match error {
        EngineError::Invalid(failure) => (
            ErrorCode::ValidationFail,
            format!(
                "the project has {} (see stderr, or run `jig validate`); nothing was run",
                crate::output::plural(failure.errors().count(), "error")
            ),
        ),
        other => (other.code(), format!("{other}; nothing was run")),
    };
    ToolResponse::refused(&request.tool, &request.request_id, code, message)
}
