//! `jig select`: a deterministic tool selection for an intent, printed as JSON.

use std::io::Write;

use jig_engine::{CallContext, Intent, parse_json_strict};
use jig_model::SideEffect;

use crate::cli::SelectArgs;
use crate::exit::Code;
use crate::output::{Settings, print_json, read_input};

pub async fn run(
    settings: &Settings,
    args: &SelectArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let intent = match build_intent(args) {
        Ok(intent) => intent,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Code::Usage);
        }
    };
    let Ok(engine) = settings.engine().await else { return Ok(Code::Failed) };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Ok(Code::Usage);
    }
    let context = CallContext {
        session_id: Settings::session(args.session.as_ref()),
        principal: settings.principal.clone(),
        asserted_by: settings.asserted_by.clone(),
        ..CallContext::default()
    };
    match engine.select(&intent, &context, args.among.as_deref()).await {
        Ok(selection) => {
            print_json(out, &selection)?;
            Ok(Code::Ok)
        }
        Err(error) => {
            crate::fail!(NotFound, "{error}");
            eprintln!(
                "  = hint: add --tag or --keyword, or widen --allow; `jig list` shows every tool"
            );
            Ok(Code::Failed)
        }
    }
}

fn build_intent(args: &SelectArgs) -> Result<Intent, String> {
    if let Some(source) = &args.intent {
        let value = parse_json_strict(&read_input(source)?)
            .map_err(|e| format!("--intent {source}: {e}"))?;
        let mut intent: Intent =
            serde_json::from_value(value).map_err(|e| format!("--intent {source}: {e}"))?;
        if !args.summary.is_empty() {
            intent.summary = args.summary.join(" ");
        }
        return Ok(intent);
    }
    let allowed_side_effects = match &args.allow {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .filter(|n| !n.trim().is_empty())
                .map(|name| {
                    serde_json::from_value::<SideEffect>(serde_json::Value::String(name.trim().to_lowercase()))
                        .map_err(|_| format!("--allow: `{name}` is not a side effect (none, read, write, network, exec)"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let args_value = match &args.args {
        Some(text) => {
            Some(parse_json_strict(text).map_err(|e| format!("--args is not valid JSON: {e}"))?)
        }
        None => None,
    };
    if args_value.as_ref().is_some_and(|v| !v.is_object()) {
        return Err("--args must be a JSON object".into());
    }
    Ok(Intent {
        summary: args.summary.join(" "),
        tags: args.tag.clone(),
        keywords: args.keyword.clone(),
        allowed_side_effects,
        args: args_value,
    })
}
