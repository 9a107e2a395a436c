//! Upstream MCP servers (the manifest's `mcp_servers:`, docs/mcp.md "Upstream servers"): each
//! server as the definition Jig starts it by, and its tools — as last discovered by a process
//! that started the server in its sandbox, kept in `.jig/mcp/NAME.json` — as registry entries
//! `NAME.TOOL`. The registry stays a pure function of files: discovery writes the file, a
//! load reads it.
//!
//! What a server says about its tools is believed only as far as it cannot widen anything:
//! `readOnlyHint` makes a tool a read, `destructiveHint` a write, no hint a write that needs a
//! person's approval (servers often set hints wrong; the project corrects them per tool), and
//! its schema must be an object schema Jig can check arguments against.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_model::gert_tool::{Startup, TransportMode};
use jig_model::mcp_server::{McpServer, server_name};
use jig_model::tool_def::{Dialect, GertExecution, SourceLocation, ToolExecution};
use jig_model::toolpack::{Caps, EnvSpec, FilesystemCaps, Limits, NetworkCap, Risk, SideEffect};
use jig_model::{Diagnostic, Sha256Hash, ToolDef, diagnostic::codes};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Where discovered tool lists are kept, under the project root.
pub const CACHE_DIR: &str = ".jig/mcp";

/// A server's call time limit: MCP tools are often slow (a search, a build).
const TIMEOUT_MS: u64 = 120_000;
/// Size limits of an upstream call: 1 MiB of arguments, 5 MiB of result.
const LIMITS: Limits = Limits { max_input_bytes: 1024 * 1024, max_output_bytes: 5 * 1024 * 1024 };
/// At most this many tools of one server enter the registry.
const MOST_TOOLS: usize = 500;

/// What discovery found, as kept on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Discovered {
    /// [`config_hash`] of the server's configuration when it was discovered: a list found
    /// with another command or other grants is not believed.
    pub config: String,
    /// The server's `tools/list`, as it answered (every page).
    pub tools: Vec<Value>,
    /// The server's name and version, from `initialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    /// Why it could not be asked the last time (its tools are then those found before, if
    /// any, with this configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The file holding what discovery found for server `name`.
pub fn cache_path(root: &Path, name: &str) -> PathBuf {
    root.join(CACHE_DIR).join(format!("{name}.json"))
}

/// The hash a cached tool list is tied to: the server's whole configuration.
pub fn config_hash(server: &McpServer) -> String {
    let bytes = serde_json::to_vec(server).unwrap_or_default();
    Sha256Hash::of_bytes(&bytes).to_hex()
}

/// The hash of the tools a server listed, as kept in its discovery file: what a consent binds.
pub fn tools_hash(tools: &[Value]) -> String {
    Sha256Hash::of_json(&Value::Array(tools.to_vec())).to_hex()
}

/// Largest program file hashed whole; a bigger one is bound by its size and first bytes.
const MOST_PROGRAM_BYTES: u64 = 64 * 1024 * 1024;

/// The hash of the files server's command and arguments name (a script in the project, an
/// installed entry point): each one that exists, by path and content. A server started by a
/// name on `PATH` (`npx`, `uvx`) binds only what its arguments name.
pub fn program_hash(root: &Path, server: &McpServer) -> String {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let named = server.command.iter().filter(|c| c.contains('/')).chain(&server.args);
    for word in named {
        if word.starts_with('-') {
            continue;
        }
        let path =
            if Path::new(word).is_absolute() { PathBuf::from(word) } else { root.join(word) };
        let Ok(meta) = fs_err::metadata(&path) else { continue };
        if !meta.is_file() {
            continue;
        }
        let mut bytes = word.as_bytes().to_vec();
        bytes.push(0);
        use std::io::Read as _;
        if let Ok(file) = fs_err::File::open(&path) {
            let _ = file.take(MOST_PROGRAM_BYTES).read_to_end(&mut bytes);
        }
        bytes.extend_from_slice(&meta.len().to_le_bytes());
        parts.push(bytes);
    }
    Sha256Hash::of_parts(parts.iter().map(Vec::as_slice)).to_hex()
}

/// How Jig starts server `name` (and lists its tools): a tool/v0 `mcp` transport whose process
/// is confined by `grants`. Its tools share the definition's file and command, so one process
/// serves them all.
pub fn server_def(name: &str, server: &McpServer, package: &str) -> ToolDef {
    // A server at a URL is reached by Jig over the network: nothing is started, and every
    // call is a network call the policy's allow-list decides.
    let remote = server.url.is_some();
    let argv = if remote {
        Vec::new()
    } else {
        let mut argv = vec![server.command.clone().unwrap_or_default()];
        argv.extend(server.args.iter().cloned());
        argv
    };
    let network = server.grants.network || remote;
    let grants = &server.grants;
    let mut read: Vec<String> = grants.read.clone();
    read.extend(grants.programs.iter().map(|p| expand_home(p)));
    let mut def = ToolDef {
        id: name.to_owned(),
        version: "0.0.0".to_owned(),
        description: format!("The MCP server `{name}`"),
        tags: vec!["mcp".to_owned()],
        package: package.to_owned(),
        dialect: Dialect::GertV0,
        deterministic: false,
        idempotent: false,
        side_effects: if network { vec![SideEffect::Network] } else { Vec::new() },
        risk: Risk::Medium,
        timeout_ms: TIMEOUT_MS,
        limits: LIMITS,
        input_schema: json!({ "type": "object" }),
        output_schema: json!({}),
        execution: ToolExecution::Gert(Box::new(GertExecution {
            kind: TransportMode::Mcp,
            binary: None,
            argv: Vec::new(),
            method: None,
            mcp_tool: None,
            connect: server.url.clone(),
            startup: (!remote).then(|| Startup {
                argv,
                ready_signal: None,
                timeout: Some("30s".to_owned()),
                shutdown_method: None,
            }),
            extract: BTreeMap::new(),
            capture: BTreeMap::new(),
            redact: Vec::new(),
            platform: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            effect_tags: Vec::new(),
            requires_approval: false,
            headers: server.headers.clone(),
        })),
        caps: Some(Caps {
            network: if network { vec![NetworkCap::Http, NetworkCap::Https] } else { Vec::new() },
            // Always given, even empty: without it a process reads the whole workspace.
            filesystem: Some(FilesystemCaps { read, write: grants.paths.clone() }),
            subprocess: true,
        }),
        env: Some(EnvSpec { passthrough: server.env_from.clone(), set: server.env.clone() }),
        templating: None,
        outputs: Vec::new(),
        // The process's key: one server per file and command. The file is the discovery
        // cache, so the manifest's directory (the whole workspace) is not granted with it.
        source: SourceLocation { file: format!("{CACHE_DIR}/{name}.json"), line: 1 },
        hash: String::new(),
    };
    def.hash = def.compute_hash();
    def
}

/// What the root manifest's upstream servers bring: their tools as registry entries, and each
/// server Jig may start (one whose configuration has no error and that has a `command`).
#[derive(Debug, Default)]
pub struct Upstream {
    /// The registry entries `NAME.TOOL`, from the discovery cache.
    pub tools: Vec<Arc<ToolDef>>,
    /// The servers, by name.
    pub servers: BTreeMap<String, crate::UpstreamServer>,
}

/// Every upstream server of the root manifest (`file` is its display path), with its tools from
/// the discovery cache under `root`; problems of the configuration are errors, a server not
/// discovered yet or a tool Jig cannot take a warning.
pub fn entries(
    root: &Path,
    file: &str,
    package: &str,
    servers: &BTreeMap<String, McpServer>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Upstream {
    let mut out = Upstream::default();
    for (name, server) in servers {
        let at_server = |diagnostic: Diagnostic| {
            diagnostic.in_file(file).at_pointer(format!("/mcp_servers/{name}"))
        };
        let at = |field: &str| format!("/mcp_servers/{name}/{field}");
        let before = diagnostics.len();
        if !server_name(name) {
            diagnostics.push(at_server(Diagnostic::error(codes::FIELD_PATTERN, format!("the MCP server name `{name}` is not lowercase letters, digits, `-` and `_` (it starts its tools' ids)"))));
        }
        for (field, message) in server.problems() {
            diagnostics.push(
                Diagnostic::error(codes::FIELD_INVALID, format!("MCP server `{name}`: {message}"))
                    .in_file(file)
                    .at_pointer(at(field)),
            );
        }
        if diagnostics.len() > before {
            continue;
        }
        let server_def = server_def(name, server, package);
        let config = config_hash(server);
        let cached = read_cache(root, name, &config);
        // A repository can carry the discovery file, not a person's consent; and a consent
        // binds the program its command runs and what the server listed when it was asked.
        let consent = crate::consent::server(root, name).filter(|c| c.config == config);
        let program_changed =
            consent.as_ref().is_some_and(|c| c.program != program_hash(root, server));
        let asked = consent.is_some() && !program_changed;
        let believed = |found: &Discovered| {
            consent.as_ref().is_some_and(|c| c.tools == tools_hash(&found.tools))
        };
        match &cached {
            Ok(Some(_)) if program_changed => diagnostics.push(at_server(
                Diagnostic::warning(
                    codes::MCP_SERVER,
                    format!("MCP server `{name}`: the files its command runs changed since a person here asked for it; it is not started and its tools are not in the registry"),
                )
                .with_hint("read what changed; then `jig mcp discover` starts it and asks again"),
            )),
            Ok(Some(found)) if asked && !believed(found) => diagnostics.push(at_server(
                Diagnostic::warning(
                    codes::MCP_SERVER,
                    format!("MCP server `{name}`: `{CACHE_DIR}/{name}.json` is not what the server listed when it was asked (it changed since); its tools are not believed"),
                )
                .with_hint("Jig asks the server again when it runs (`jig serve`, `jig mcp`), or now with `jig mcp discover`"),
            )),
            Ok(Some(found)) if asked => {
                if let Some(error) = &found.error {
                    diagnostics.push(at_server(
                        Diagnostic::warning(
                            codes::MCP_SERVER,
                            format!("MCP server `{name}` could not be asked for its tools: {error}"),
                        )
                        .with_hint("check its command and `grants`; `jig mcp discover` asks again"),
                    ));
                }
                out.tools.extend(tools_of(name, server, &server_def, found, file, diagnostics));
            }
            Ok(Some(_)) => diagnostics.push(at_server(
                Diagnostic::warning(
                    codes::MCP_SERVER,
                    format!("MCP server `{name}`: `{CACHE_DIR}/{name}.json` came with the project, but nobody here has asked for this server; its tools are not in the registry"),
                )
                .with_hint("read its `command` and `grants`; then `jig mcp discover` starts it and asks"),
            )),
            Ok(None) => diagnostics.push(at_server(
                Diagnostic::warning(
                    codes::MCP_SERVER,
                    format!("MCP server `{name}` has not been asked for its tools yet"),
                )
                .with_hint(
                    "`jig mcp discover` starts it and asks: Jig starts a server only once a person has asked for its present configuration",
                ),
            )),
            Err(message) => {
                diagnostics.push(at_server(Diagnostic::warning(codes::FILE_IO, message.clone())));
            }
        }
        out.servers.insert(
            name.clone(),
            crate::UpstreamServer {
                def: Arc::new(server_def),
                config,
                // A person here asked for this configuration (whatever the answer): only then
                // may Jig start it on its own, to ask again.
                discovered: asked && matches!(cached, Ok(Some(_))),
                settings: server.clone(),
            },
        );
    }
    out
}

/// What was found for `name` with this configuration before, if anything.
pub fn previous(root: &Path, name: &str, server: &McpServer) -> Option<Discovered> {
    read_cache(root, name, &config_hash(server)).ok().flatten()
}

/// What discovery last found for `name`, when it was found with the configuration hashed
/// `config`.
fn read_cache(root: &Path, name: &str, config: &str) -> Result<Option<Discovered>, String> {
    let path = cache_path(root, name);
    let bytes = match fs_err::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error.to_string()),
    };
    let found: Discovered = serde_json::from_slice(&bytes)
        .map_err(|e| format!("`{CACHE_DIR}/{name}.json` is not what discovery writes: {e}"))?;
    Ok((found.config == config).then_some(found))
}

fn tools_of(
    name: &str,
    server: &McpServer,
    server_def: &ToolDef,
    found: &Discovered,
    file: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Arc<ToolDef>> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for tool in found.tools.iter().take(MOST_TOOLS) {
        let warn = |message: String| {
            Diagnostic::warning(codes::MCP_SERVER, format!("MCP server `{name}`: {message}"))
                .in_file(file)
                .at_pointer(format!("/mcp_servers/{name}"))
        };
        let Some(tool_name) = tool.get("name").and_then(Value::as_str) else {
            diagnostics.push(warn("a tool without a name was left out".to_owned()));
            continue;
        };
        if !tool_name_ok(tool_name) {
            diagnostics.push(warn(format!(
                "its tool `{}` was left out: a name is 1 to 128 of A-Z a-z 0-9 _ - .",
                tool_name.chars().take(64).collect::<String>()
            )));
            continue;
        }
        if server.exclude.iter().any(|x| x == tool_name) || !seen.insert(tool_name.to_owned()) {
            continue;
        }
        match tool_def(name, server, server_def, tool_name, tool, version_of(found)) {
            Ok(def) => out.push(Arc::new(def)),
            Err(message) => {
                diagnostics.push(warn(format!("its tool `{tool_name}` was left out: {message}")))
            }
        }
    }
    if found.tools.len() > MOST_TOOLS {
        diagnostics.push(
            Diagnostic::warning(
                codes::MCP_SERVER,
                format!(
                    "MCP server `{name}` lists {} tools; the first {MOST_TOOLS} are served",
                    found.tools.len()
                ),
            )
            .in_file(file)
            .at_pointer(format!("/mcp_servers/{name}")),
        );
    }
    out
}

/// One tool of server `name` as a registry entry `NAME.TOOL`.
fn tool_def(
    name: &str,
    server: &McpServer,
    server_def: &ToolDef,
    tool_name: &str,
    tool: &Value,
    version: String,
) -> Result<ToolDef, String> {
    let input_schema =
        tool.get("inputSchema").cloned().unwrap_or_else(|| json!({ "type": "object" }));
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("its `inputSchema` does not describe an object".to_owned());
    }
    let output_schema = tool
        .get("outputSchema")
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("object"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let hints = tool.get("annotations");
    let hint = |key: &str| hints.and_then(|h| h.get(key)).and_then(Value::as_bool);
    let corrected = server.tools.get(tool_name).and_then(|c| c.side_effects.clone());
    let (mut side_effects, needs_person) =
        match (&corrected, hint("readOnlyHint"), hint("destructiveHint")) {
            (Some(effects), _, _) => (effects.clone(), false),
            (None, Some(true), _) => (vec![SideEffect::Read], false),
            (None, Some(false), _) | (None, None, Some(_)) => (vec![SideEffect::Write], false),
            // No hint at all: a write, and a person decides (whatever the rules say of writes).
            (None, None, None) => (vec![SideEffect::Write], true),
        };
    if corrected.is_none() && hint("openWorldHint") == Some(true) {
        side_effects.push(SideEffect::Network);
    }
    side_effects.sort();
    side_effects.dedup();
    let risk = if hint("destructiveHint") == Some(true) && corrected.is_none() {
        Risk::High
    } else if side_effects.iter().any(|e| e.is_side_effect()) {
        Risk::Medium
    } else {
        Risk::Low
    };
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .map(|d| d.chars().take(2000).collect::<String>())
        .unwrap_or_default();
    let ToolExecution::Gert(base) = &server_def.execution else {
        unreachable!("server_def is gert")
    };
    let mut execution = (**base).clone();
    execution.mcp_tool = Some(tool_name.to_owned());
    execution.requires_approval = needs_person;
    let mut def = ToolDef {
        id: format!("{name}.{tool_name}"),
        version,
        description,
        tags: vec!["mcp".to_owned(), name.to_owned()],
        deterministic: false,
        idempotent: hint("idempotentHint") == Some(true),
        side_effects,
        risk,
        input_schema,
        output_schema,
        execution: ToolExecution::Gert(Box::new(execution)),
        hash: String::new(),
        ..server_def.clone()
    };
    def.hash = def.compute_hash();
    Ok(def)
}

/// The version a server gave of itself in `initialize` (`serverInfo.version`), as its tools'
/// version: `0.0.0` when it gave none a person could read as one.
fn version_of(found: &Discovered) -> String {
    found
        .server_info
        .as_ref()
        .and_then(|info| info["version"].as_str())
        .filter(|v| {
            (1..=64).contains(&v.len())
                && v.chars().all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
        })
        .unwrap_or("0.0.0")
        .to_owned()
}

/// MCP's tool names: 1 to 128 of `A-Z a-z 0-9 _ - .`.
fn tool_name_ok(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn expand_home(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest).display().to_string(),
        _ => path.to_owned(),
    }
}
