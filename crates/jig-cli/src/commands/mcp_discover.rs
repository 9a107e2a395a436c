//! `jig mcp discover`: each upstream server's tools, asked after the person has seen what it will
//! start and reach. Also the last step of `jig mcp import`.

use crate::exit::Code;
use crate::output::Settings;

/// `jig mcp discover`: ask every upstream server for its tools; one line per server on stderr,
/// exit 1 when any could not be asked.
pub async fn run(settings: &Settings) -> anyhow::Result<Code> {
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
