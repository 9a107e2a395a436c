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
        Some(McpCommand::Discover) => return discover(settings).await,
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

/// `jig mcp discover`: ask every upstream server for its tools; one line per server on stderr,
/// exit 1 when any could not be asked.
pub async fn discover(settings: &Settings) -> anyhow::Result<Code> {
    let Ok(engine) = settings.engine().await else { return Ok(Code::Invalid) };
    // What the person consents to, before it runs: the command and what it may reach.
    for (name, server) in engine.snapshot().mcp_servers() {
        eprintln!("{}", consent_line(name, &server.settings));
    }
    let found = engine.discover_mcp(jig_engine::Discovery::Asked).await?;
    if found.is_empty() {
        eprintln!(
            "the manifest names no MCP server that can be started (`mcp_servers:` with a `command`)"
        );
        return Ok(Code::Ok);
    }
    let mut failed = false;
    for server in &found {
        match &server.outcome {
            Ok(count) => eprintln!("{}: {count} tools", server.name),
            Err(message) => {
                failed = true;
                crate::fail!(Shell, "{}: {message}", server.name);
            }
        }
    }
    Ok(if failed { Code::Failed } else { Code::Ok })
}

/// One server as `jig mcp discover` shows it before starting it: its command line (quoted for a
/// shell) and what its sandbox may reach.
fn consent_line(name: &str, server: &jig_model::mcp_server::McpServer) -> String {
    if let Some(url) = &server.url {
        let headers: Vec<&str> = server.headers.keys().map(String::as_str).collect();
        let sent = if headers.is_empty() { "no headers".to_owned() } else { headers.join(", ") };
        return format!(
            "connecting to {name}: {url} (sending {sent}); the policy's network allow-list decides whether it may be reached"
        );
    }
    let mut argv = vec![server.command.clone().unwrap_or_default()];
    argv.extend(server.args.iter().cloned());
    let list =
        |paths: &[String]| if paths.is_empty() { "nothing".to_owned() } else { paths.join(", ") };
    let grants = &server.grants;
    format!(
        "starting {name}: {}\n  in the workspace it may change {} and read {}; outside it, read {}; network {}",
        jig_policy::command::render(&argv),
        list(&grants.paths),
        list(&grants.read),
        list(&grants.programs),
        if grants.network { "if the policy allows it" } else { "none" },
    )
}
