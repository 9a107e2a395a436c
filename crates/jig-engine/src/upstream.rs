//! Discovery of upstream MCP servers' tools (`mcp_servers:`): each server is started in its
//! sandbox by the executor that will serve its calls (so the process stays for them), asked
//! for its tools, and what it said — or why it could not be asked — is written to
//! `.jig/mcp/NAME.json`; the project is then loaded again, so the tools become registry entries
//! in this process, and every other watching the project reloads too.
//!
//! A server is started only once a person asked for its present configuration
//! ([`Discovery::Asked`]: `jig mcp discover`, `jig mcp import`), which is kept outside the
//! project ([`jig_load::consent`]): a file that came with a repository is no one's consent.
//! Opening a project
//! ([`Discovery::Refresh`]) asks again only servers whose configuration a person asked for
//! before: a cloned repository's manifest starts nothing by itself.

use std::sync::Arc;
use std::time::Duration;

use jig_exec::{Cancel, Events, Execution, Invocation};
use jig_load::upstream::{Discovered, cache_path};
use serde_json::Value;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::{Event, RegistryEvent};

/// How long a server gets to start and list its tools.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(60);

/// Which servers a discovery starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// Every server: a person asked.
    Asked,
    /// Only servers a person asked for before with their present configuration.
    Refresh,
}

/// What discovery found for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFound {
    /// The server's name.
    pub name: String,
    /// How many tools it listed, or why it could not be asked.
    pub outcome: Result<usize, String>,
}

/// What to say of `name`, which names no tool: `no tool `name``, and, when it is a tool of
/// an upstream server (`SERVER.TOOL`), why that server has no such tool.
pub(crate) fn no_tool(snapshot: &jig_load::Snapshot, name: &str) -> String {
    let server = name.split_once('.').and_then(|(server, _)| {
        snapshot.mcp_servers().get(server).map(|found| (server, found.discovered))
    });
    match server {
        Some((server, false)) => format!(
            "no tool `{name}`: `{server}` is an upstream MCP server (`mcp_servers:`) whose tools \
             are not known yet; a person starts it and lists them with `jig mcp discover`"
        ),
        Some((server, true)) => format!(
            "no tool `{name}`: the upstream MCP server `{server}` did not list it (`jig mcp \
             discover` asks it again)"
        ),
        None => format!("no tool `{name}`"),
    }
}

impl Engine {
    /// What to say of `name`, which names no tool: why, when it is an upstream server's.
    pub fn no_tool_message(&self, name: &str) -> String {
        no_tool(&self.registry().snapshot, name)
    }

    /// Ask every upstream server of the project for its tools, keep what each said, and load
    /// the project again when anything changed. A server that fails keeps its last list (its
    /// tools then fail when called, saying why) and is reported here.
    pub async fn discover_mcp(&self, which: Discovery) -> Result<Vec<ServerFound>, EngineError> {
        let _one_at_a_time = self.discovering.lock().await;
        let registry = self.registry();
        let servers = registry.snapshot.mcp_servers().clone();
        let mut found = Vec::with_capacity(servers.len());
        let mut changed = Vec::new();
        for (name, server) in servers {
            if which == Discovery::Refresh && !server.discovered {
                continue;
            }
            let (discovered, outcome) = match self.list_tools(&server.def, &registry.policy).await {
                Ok((tools, server_info)) => {
                    let count = tools.len();
                    let found =
                        Discovered { config: server.config, tools, server_info, error: None };
                    (found, Ok(count))
                }
                // The tools found before stay; why it failed is said with them.
                Err(message) => {
                    tracing::warn!(server = %name, %message, "an upstream MCP server could not be asked for its tools");
                    let before = jig_load::upstream::previous(
                        self.workspace.root(),
                        &name,
                        &server.settings,
                    );
                    let kept = before.unwrap_or(Discovered {
                        config: server.config,
                        tools: Vec::new(),
                        server_info: None,
                        error: None,
                    });
                    (Discovered { error: Some(message.clone()), ..kept }, Err(message))
                }
            };
            // Asking is the person's consent to this configuration and the program it runs,
            // kept outside the project; what the server listed is bound with it, and moves
            // on only when Jig itself asked again (a discovery file changed by anyone else
            // is then not believed).
            let root = self.workspace.root();
            let consent = jig_load::consent::ServerConsent {
                config: discovered.config.clone(),
                tools: jig_load::upstream::tools_hash(&discovered.tools),
                program: jig_load::upstream::program_hash(root, &server.settings),
            };
            let consented = match which {
                Discovery::Asked => jig_load::consent::give_server(root, &name, &consent),
                Discovery::Refresh => match jig_load::consent::server(root, &name) {
                    Some(kept)
                        if kept.config == consent.config && kept.program == consent.program =>
                    {
                        jig_load::consent::give_server(root, &name, &consent)
                    }
                    _ => Ok(false),
                },
            };
            let (newly, outcome) = match consented {
                Ok(newly) => (newly, outcome),
                Err(message) => (false, Err(format!("the consent could not be kept: {message}"))),
            };
            let outcome = match self.keep(&name, &discovered, newly) {
                Ok(true) => {
                    changed.push(format!("{}/{name}.json", jig_load::upstream::CACHE_DIR));
                    outcome
                }
                Ok(false) => outcome,
                Err(message) => Err(message),
            };
            found.push(ServerFound { name, outcome });
        }
        if !changed.is_empty() {
            self.load_again(changed)?;
        }
        Ok(found)
    }

    /// Keep the upstream servers' tools current while the engine lives, without holding its
    /// start: ask again now the servers a person asked for before with their present
    /// configuration (nothing else is started: that takes `jig mcp discover`), and again
    /// whenever one says its tools changed. Every long-running surface calls this.
    pub fn keep_upstream_current(self: &Arc<Self>) {
        self.follow_upstream();
        if !self.snapshot().mcp_servers().values().any(|s| s.discovered) {
            return;
        }
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            if let Err(error) = engine.discover_mcp(Discovery::Refresh).await {
                tracing::warn!(%error, "asking the upstream MCP servers for their tools");
            }
        });
    }

    /// Ask a server for its tools again whenever it says they changed
    /// (`notifications/tools/list_changed`), for as long as the engine lives. Notices that
    /// come close together are answered once, and a server that keeps sending them is asked
    /// at most once a second.
    fn follow_upstream(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let mut changed = jig_tools::upstream::tools_changed();
        tokio::spawn(async move {
            loop {
                let file = match changed.recv().await {
                    Ok(file) => file,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => String::new(),
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(engine) = weak.upgrade() else { return };
                let ours = file.is_empty()
                    || engine.snapshot().mcp_servers().values().any(|s| s.def.source.file == file);
                if !ours {
                    continue;
                }
                // Let a burst of notices arrive, then answer them all with one discovery.
                tokio::time::sleep(Duration::from_millis(200)).await;
                while changed.try_recv().is_ok() {}
                if let Err(error) = engine.discover_mcp(Discovery::Refresh).await {
                    tracing::warn!(%error, "asking an upstream MCP server for its changed tools");
                }
                drop(engine);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    /// The server's `tools/list`, through the executor that serves its calls.
    async fn list_tools(
        &self,
        def: &Arc<jig_model::ToolDef>,
        policy: &Arc<jig_policy::Policy>,
    ) -> Result<(Vec<Value>, Option<Value>), String> {
        let executor = self
            .executors
            .for_tool(def)
            .ok_or_else(|| format!("this version of Jig cannot start `{}`", def.id))?;
        let args = Value::Object(serde_json::Map::new());
        let invocation = Invocation {
            tool: def,
            args: &args,
            workspace: &self.workspace,
            policy,
            timeout: DISCOVERY_TIMEOUT,
            cancel: Cancel::new(),
            events: Events::discard(format!("discover-{}", def.id)),
            traceparent: None,
        };
        let execution = tokio::time::timeout(DISCOVERY_TIMEOUT, executor.execute(invocation))
            .await
            .map_err(|_| format!("`{}` did not list its tools within a minute", def.id))?
            .map_err(|error| error.message)?;
        let Execution::Done(output) = execution else {
            return Err(format!("`{}` answered with a job, not its tools", def.id));
        };
        let tools = output.data["tools"].as_array().cloned().unwrap_or_default();
        let info = output.data.get("serverInfo").filter(|v| !v.is_null()).cloned();
        Ok((tools, info))
    }

    /// Write what `name` said, when it differs from what is kept or `always` (a consent given
    /// now: the write makes every process watching the project load it again); `true` when
    /// written. The file is replaced whole (a reader never sees half of it).
    fn keep(&self, name: &str, discovered: &Discovered, always: bool) -> Result<bool, String> {
        let path = cache_path(self.workspace.root(), name);
        let text = serde_json::to_vec_pretty(discovered).map_err(|e| e.to_string())?;
        if !always && fs_err::read(&path).ok().as_deref() == Some(text.as_slice()) {
            return Ok(false);
        }
        let dir = path.parent().ok_or("no directory")?;
        fs_err::create_dir_all(dir).map_err(|e| e.to_string())?;
        let temporary = dir.join(format!(".{name}.json.{}", std::process::id()));
        fs_err::write(&temporary, &text)
            .and_then(|()| fs_err::rename(&temporary, &path))
            .map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Load the project again and swap it in, announcing it as the watcher does.
    fn load_again(&self, changed: Vec<String>) -> Result<(), EngineError> {
        let (project, options) = &self.source;
        let snapshot = jig_load::Loader::with_options(project, options.clone()).load()?;
        let registry_hash = snapshot.registry_hash().to_owned();
        let tools = snapshot.len();
        self.swap(snapshot)?;
        self.events.publish(Event::Registry(RegistryEvent::RegistryReloaded {
            registry_hash,
            tools,
            changed,
        }));
        Ok(())
    }
}
