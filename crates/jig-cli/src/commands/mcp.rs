//! `jig mcp`: the project's tools for MCP clients, on stdio or Streamable HTTP, each call
//! through the engine (policy, approvals, audit) with the client acting for a known person.

use std::io::Write;

use jig_server::serve::Bound;

use crate::cli::{McpArgs, McpCommand};
use crate::exit::Code;
use crate::output::Settings;

pub async fn run(
    settings: &Settings,
    args: &McpArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    match &args.command {
        Some(McpCommand::Import { file, replace }) => {
            return super::mcp_import::run(settings, file, *replace, out).await;
        }
        Some(McpCommand::Discover) => return super::mcp_discover::run(settings).await,
        None => {}
    }
    let Ok(engine) = settings.engine_watched().await else { return Ok(Code::Invalid) };
    if let Err(message) = settings.check_identity(&engine) {
        crate::fail!(Policy, "{message}");
        return Ok(Code::Usage);
    }
    // The registry follows the files; clients hear `notifications/tools/list_changed`.
    let _resident = super::resident::open(&engine)?;
    let Some(addr) = args.http else {
        jig_mcp::serve_stdio(engine, settings.principal.clone()).await?;
        return Ok(Code::Ok);
    };
    if !addr.ip().is_loopback() && !args.allow_remote {
        crate::fail!(
            Policy,
            "--http {addr}: not a loopback address; add --allow-remote to serve other machines"
        );
        return Ok(Code::Usage);
    }
    let Some((users, token)) = super::serve::people(settings, args.users.as_deref()) else {
        return Ok(Code::Usage);
    };
    let project = engine
        .snapshot()
        .root()
        .file_name()
        .map_or_else(|| "project".to_owned(), |name| name.to_string_lossy().into_owned());
    let bound = Bound::bind(addr, engine, users, project, &[]).await?;
    if !bound.addr.ip().is_loopback() {
        eprintln!(
            "warning: serving MCP on {}, reachable from other machines; only the tokens stand between them and this project",
            bound.addr
        );
    }
    writeln!(out, "http://{}{}", bound.addr, jig_server::mcp::PATH)?;
    if let Some(token) = &token {
        writeln!(out, "Authorization: Bearer {token}")?;
    }
    out.flush()?;
    bound.run_mcp(crate::signals::interrupted()).await?;
    Ok(Code::Ok)
}
