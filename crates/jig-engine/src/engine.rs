//! The engine: the one API every surface calls.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use jig_audit::Store;
use jig_exec::Executors;
use jig_load::{LoadOptions, Loader, Snapshot};
use jig_model::envelope::{Heartbeat, ToolResponse};
use jig_model::{SideEffect, ToolDef};
use jig_policy::Policy;
use jig_policy::budget::{Remaining, SessionUsage};
use jig_policy::sandbox::Workspace;
use serde_json::Value;

use crate::emit::MetricsExecutor;
use crate::error::EngineError;
use crate::events::{Event, EventBus};
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::validation::{ValidationResult, Validators};

/// How to open an engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Where the project is (the manifest is found by walking up from here).
    pub project: PathBuf,
    /// The audit store: a `postgres://` URL, or an SQLite path (default `<root>/.jig/audit.db`).
    pub db: Option<String>,
    /// Runbook files named explicitly.
    pub extra_runbooks: Vec<PathBuf>,
    /// How often sessions with calls in flight get a heartbeat (default 5 s).
    pub heartbeat: Option<Duration>,
    /// How many calls started in the background run at once (default
    /// [`crate::BACKGROUND_CALLS`]).
    pub background_calls: Option<usize>,
    /// How long a start waits for one of those places before it is refused as busy (default
    /// [`crate::START_WAIT`]).
    pub start_wait: Option<Duration>,
    /// Start watching the project's files right after loading them, for a surface that stays
    /// open and calls [`Engine::watch`]: the project is loaded once, and a change made while
    /// the rest opens is not missed. One-shot commands leave it off (no watcher to set up).
    pub watch: bool,
}

/// What a runbook walk commits with a call's outcome, made from its response: the records to
/// write before the call's own, and those after. A runbook records its step with the call, in
/// one transaction instead of three (the engine makes them the store's operations).
#[derive(Clone)]
pub struct CommitHook(pub Arc<CommitFn>);

/// What a [`CommitHook`] runs: a response in, the records before and after the call's own out.
pub type CommitFn =
    dyn Fn(&ToolResponse) -> (Vec<crate::WalkRecord>, Vec<crate::WalkRecord>) + Send + Sync;

impl std::fmt::Debug for CommitHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommitHook")
    }
}

/// Who calls, and in which conversation.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The session (budgets and approvals are per session).
    pub session_id: String,
    /// The thread inside the session (idempotency keys are per thread).
    pub thread_id: Option<String>,
    /// Who is calling.
    pub principal: String,
    /// Who asserted `principal`, when it was named rather than known (the OS user behind the
    /// CLI's `--as`); recorded with the request.
    pub asserted_by: Option<String>,
    /// A one-time approval token for this exact request.
    pub approval_token: Option<String>,
    /// A rule outside the policy (a runbook's own governance) that asks for a person's
    /// approval of this call: the policy's decision is raised to at least that.
    pub required_approval: Option<String>,
    /// How many different people must approve this call when it needs approval (a runbook
    /// rule's `min_approvers`); 1 otherwise.
    pub required_approvers: u32,
    /// Writes of the caller's to commit in the same transaction as the call's outcome.
    pub commit_with: Option<CommitHook>,
    /// Stops the call when fired.
    pub cancel: jig_exec::Cancel,
    /// A limit tighter than the tool's own `timeoutMs` (a runbook step's `timeout`).
    pub timeout: Option<std::time::Duration>,
    /// The caller takes a large result as the built-in prepared it (canonical JSON text) instead
    /// of a value: for surfaces that only forward it ([`Engine::dispatch_prepared`]).
    pub prepared_results: bool,
    /// A call needing approval that a person already approved for exactly this request (tool,
    /// arguments, session, principal) runs without the token, and one still pending is not
    /// asked again: for callers that cannot carry a token and simply retry (MCP clients).
    pub retry_approved: bool,
    /// The approval this request runs on behalf of, when it is a held call resumed after its
    /// approval (`Engine::on_approval_decided`): if the caller's own identical call used the
    /// approval first, this one does not ask again — the call ran once, as that request.
    pub resumes_approval: Option<String>,
    /// Where the call's trace continues from (`crate::telemetry`).
    pub trace: crate::telemetry::TraceOrigin,
}

impl Default for CallContext {
    fn default() -> Self {
        Self {
            session_id: "default".to_owned(),
            thread_id: None,
            principal: "anonymous".to_owned(),
            asserted_by: None,
            approval_token: None,
            required_approval: None,
            required_approvers: 1,
            commit_with: None,
            cancel: jig_exec::Cancel::new(),
            timeout: None,
            prepared_results: false,
            retry_approved: false,
            resumes_approval: None,
            trace: crate::telemetry::TraceOrigin::default(),
        }
    }
}

/// What an approval did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Granted: the one-time token for exactly that request.
    Granted(String),
    /// Recorded; more people must approve before it is granted (`min_approvers`).
    Seconded {
        /// Who has approved so far, in order.
        approvers: Vec<String>,
        /// How many must.
        required: u32,
    },
}

impl Approval {
    /// The token, once granted.
    pub fn token(&self) -> Option<&str> {
        match self {
            Self::Granted(token) => Some(token),
            Self::Seconded { .. } => None,
        }
    }
}

/// The engine.
#[derive(Debug)]
pub struct Engine {
    pub(crate) registry: RwLock<Registry>,
    pub(crate) store: Store,
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) executors: Executors,
    pub(crate) events: EventBus,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) validators: Validators,
    /// Sessions with calls in flight, for heartbeats.
    pub(crate) in_flight: Mutex<HashMap<String, usize>>,
    /// Calls running now, by request id (to cancel them).
    pub(crate) running: crate::cancel::Running,
    /// Started calls waiting for approval, kept to run when approved.
    pub(crate) parked: crate::background::Parked,
    /// How long a start waits for a free place before it is refused as busy.
    pub(crate) start_wait: Duration,
    /// Free places for calls started in the background.
    pub(crate) slots: Arc<tokio::sync::Semaphore>,
    /// How many places there are.
    pub(crate) background_calls: usize,
    /// Jobs this process is polling now.
    pub(crate) polling: crate::jobs::PollingSet,
    /// The watcher's last diagnostics (empty while the project loads).
    pub(crate) problems: Mutex<Vec<jig_model::Diagnostic>>,
    /// Held while upstream servers are asked for their tools (one discovery at a time).
    pub(crate) discovering: tokio::sync::Mutex<()>,
    /// Where the project was loaded from, and how (for live reload).
    pub(crate) source: (PathBuf, LoadOptions),
    /// The watch begun at open ([`EngineOptions::watch`]), until [`Engine::watch`] takes it.
    pub(crate) watching: Mutex<Option<jig_load::watch::Watching>>,
}

/// The loaded snapshot, the policy compiled from its root manifest, and tools registered at
/// run time.
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    pub snapshot: Arc<Snapshot>,
    pub policy: Arc<Policy>,
    pub registered: BTreeMap<String, Arc<ToolDef>>,
}

impl Registry {
    pub fn get(&self, id: &str) -> Option<Arc<ToolDef>> {
        self.snapshot.get(id).cloned().or_else(|| self.registered.get(id).cloned())
    }

    pub fn all(&self) -> Vec<Arc<ToolDef>> {
        let mut all: BTreeMap<&str, Arc<ToolDef>> =
            self.snapshot.list().map(|t| (t.id.as_str(), Arc::clone(t))).collect();
        all.extend(self.registered.iter().map(|(id, t)| (id.as_str(), Arc::clone(t))));
        all.into_values().collect()
    }
}

impl Engine {
    /// Load the project (it must be valid), open its audit store, and mark anything a previous
    /// process left unfinished.
    pub async fn open(options: EngineOptions) -> Result<Arc<Self>, EngineError> {
        let load_options = LoadOptions {
            extra_runbooks: options.extra_runbooks.clone(),
            ..LoadOptions::default()
        };
        let mut loader = Loader::with_options(&options.project, load_options.clone());
        let snapshot = loader.load()?;
        let watching = if options.watch { Some(start_watching(loader, &snapshot)?) } else { None };
        let policy = Arc::new(crate::policy_view::compile(&snapshot)?);
        let root = snapshot.root().to_path_buf();
        check_state_dir(&root)?;
        let db = options.db.clone().unwrap_or_else(|| default_db(&root));
        let store = Store::open(&db).await?;
        let recovery = store.recover().await?;
        if recovery.runs + recovery.keys > 0 {
            tracing::warn!(
                runs = recovery.runs,
                keys = recovery.keys,
                "marked calls left unfinished by a previous process"
            );
        }
        // Every package manifest inside the project stays read-only for tools (the root's too).
        let manifests: Vec<std::path::PathBuf> = snapshot
            .packages()
            .iter()
            .filter_map(|package| package.manifest.as_deref())
            .filter(|manifest| !manifest.starts_with('<') && !manifest.starts_with(".."))
            .map(std::path::PathBuf::from)
            .collect();
        let workspace = Arc::new(Workspace::open(&root)?.with_read_only(manifests));
        let metrics = Arc::new(Metrics::default());
        let mut executors = jig_tools::standard_executors();
        for (kind, executor) in jig_plans::executors() {
            executors.insert(kind, executor);
        }
        executors.insert_builtin(
            "emit_metrics",
            Arc::new(MetricsExecutor { metrics: Arc::clone(&metrics), store: store.clone() }),
        );
        tracing::info!(name: "tools.registered", count = snapshot.len(), registry_hash = snapshot.registry_hash(), "tools.registered");
        let background_calls =
            options.background_calls.unwrap_or(crate::background::BACKGROUND_CALLS).max(1);
        let engine = Arc::new(Self {
            registry: RwLock::new(Registry { snapshot, policy, registered: BTreeMap::new() }),
            store,
            workspace,
            executors,
            events: EventBus::new(1024),
            metrics,
            validators: Validators::default(),
            in_flight: Mutex::new(HashMap::new()),
            running: crate::cancel::Running::default(),
            parked: crate::background::Parked::default(),
            slots: Arc::new(tokio::sync::Semaphore::new(background_calls)),
            background_calls,
            start_wait: options.start_wait.unwrap_or(crate::background::START_WAIT),
            polling: crate::jobs::PollingSet::default(),
            problems: Mutex::new(Vec::new()),
            discovering: tokio::sync::Mutex::new(()),
            source: (options.project.clone(), load_options),
            watching: Mutex::new(watching),
        });
        spawn_heartbeats(
            Arc::downgrade(&engine),
            options.heartbeat.unwrap_or(Duration::from_secs(5)),
        );
        Ok(engine)
    }

    /// Swap in a new snapshot (the watcher's job); calls in flight keep the one they started with.
    pub fn swap(&self, snapshot: Arc<Snapshot>) -> Result<(), EngineError> {
        let policy = Arc::new(crate::policy_view::compile(&snapshot)?);
        if let Ok(mut registry) = self.registry.write() {
            tracing::info!(name: "tools.registered", count = snapshot.len(), registry_hash = snapshot.registry_hash(), "tools.registered");
            registry.snapshot = snapshot;
            registry.policy = policy;
        }
        Ok(())
    }

    pub(crate) fn registry(&self) -> Registry {
        self.registry
            .read()
            .map(|r| r.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.registry().snapshot
    }

    /// The current policy.
    pub fn policy(&self) -> Arc<Policy> {
        self.registry().policy
    }

    /// What the audit record holds: the queries every surface shows.
    pub fn history(&self) -> crate::History {
        crate::History::of(self.store.clone())
    }

    /// The raw audit store, for tests and benchmarks (the `testing` feature); everything else
    /// reads through [`Engine::history`], [`Engine::people`] or [`Engine::walk_reads`].
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Seed 003 `tools.register`: add a tool at run time (it must not clash with a loaded one).
    pub fn register(&self, tool: ToolDef) -> Result<(), EngineError> {
        let mut registry =
            self.registry.write().map_err(|_| EngineError::Duplicate(tool.id.clone()))?;
        if registry.snapshot.get(&tool.id).is_some() || registry.registered.contains_key(&tool.id) {
            return Err(EngineError::Duplicate(tool.id));
        }
        tracing::info!(name: "tools.registered", tool = %tool.id, "tools.registered");
        registry.registered.insert(tool.id.clone(), Arc::new(tool));
        Ok(())
    }

    /// Seed 003 `tools.list`: every tool, sorted by id, filtered by tags (any of) and by side
    /// effects (only tools whose effects are all among those given).
    pub fn list(
        &self,
        tags: Option<&[String]>,
        side_effects: Option<&[SideEffect]>,
    ) -> Vec<Arc<ToolDef>> {
        self.registry()
            .all()
            .into_iter()
            .filter(|tool| tags.is_none_or(|tags| tool.tags.iter().any(|t| tags.contains(t))))
            .filter(|tool| {
                side_effects
                    .is_none_or(|allowed| tool.side_effects.iter().all(|e| allowed.contains(e)))
            })
            .collect()
    }

    /// Seed 003 `tools.get`.
    pub fn get(&self, id: &str) -> Option<Arc<ToolDef>> {
        self.registry().get(id)
    }

    /// Seed 003 `tools.validate`: the arguments against the tool's input schema.
    pub fn validate(&self, id: &str, args: &Value) -> Option<ValidationResult> {
        let tool = self.get(id)?;
        let errors = self.validators.check(&tool, true, args);
        Some(ValidationResult { valid: errors.is_empty(), errors })
    }

    /// Tell every subscriber that a runbook run moved.
    pub fn announce_runbook(&self, event: crate::events::RunbookEvent) {
        if event.status == "paused" {
            self.notify(&crate::notify::Notice::RunbookPaused {
                run_id: event.run_id.clone(),
                runbook: event.runbook.clone(),
            });
        }
        self.events.publish(Event::Runbook(event));
    }

    /// Subscribe to events of every call.
    pub fn subscribe(&self) -> crate::events::Subscription {
        self.events.subscribe()
    }

    /// Seed 003's metrics.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot(self.registry().all().len())
    }

    /// What a session has spent and has left (seed 002's Coordinator asks this).
    pub async fn budget(&self, session_id: &str) -> Result<(SessionUsage, Remaining), EngineError> {
        let used = self.store.usage(session_id).await?;
        let usage = SessionUsage {
            calls: u64::try_from(used.calls).unwrap_or(0),
            bytes: u64::try_from(used.bytes).unwrap_or(0),
            wall_ms: u64::try_from(used.wall_ms).unwrap_or(0),
        };
        let budgets = self.policy().config().budgets.unwrap_or_default();
        Ok((usage, jig_policy::budget::remaining(&budgets, &usage)))
    }

    pub(crate) fn enter(&self, session: &str) {
        if let Ok(mut map) = self.in_flight.lock() {
            *map.entry(session.to_owned()).or_default() += 1;
        }
    }

    pub(crate) fn leave(&self, session: &str) {
        if let Ok(mut map) = self.in_flight.lock()
            && let Some(count) = map.get_mut(session)
        {
            *count -= 1;
            if *count == 0 {
                map.remove(session);
            }
        }
    }
}

/// `<root>/.jig/audit.db`.
pub fn default_db(root: &Path) -> String {
    root.join(".jig").join("audit.db").display().to_string()
}

/// Refuse a project whose `.jig` is not a directory of its own: a repository that ships `.jig`
/// as a symbolic link would choose where Jig keeps its audit and writes its run and scratch
/// directories (its home, another project's store), and where the sandbox's mask of Jig's
/// state lands. A missing `.jig` is made by Jig, as a directory.
pub fn check_state_dir(root: &Path) -> Result<(), EngineError> {
    match std::fs::symlink_metadata(root.join(".jig")) {
        Ok(meta) if !meta.is_dir() => {
            Err(EngineError::Workspace(jig_policy::sandbox::SandboxError::Protected {
                path: root.join(".jig").display().to_string(),
                why: "Jig keeps its state in a directory of the project itself; this one is a symbolic link or a file (remove it, and Jig makes its own)",
            }))
        }
        _ => Ok(()),
    }
}

/// Every `every`, a heartbeat for each session with calls in flight.
fn spawn_heartbeats(engine: std::sync::Weak<Engine>, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            let Some(engine) = engine.upgrade() else { return };
            let sessions: Vec<String> =
                engine.in_flight.lock().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            let timestamp = jig_audit::time::now_us() / 1_000_000;
            for session_id in sessions {
                engine.events.publish(Event::Heartbeat(Heartbeat {
                    kind: Default::default(),
                    session_id,
                    timestamp,
                }));
            }
        }
    });
}

/// Begin watching the project `loader` just loaded (`snapshot`).
pub(crate) fn start_watching(
    loader: Loader,
    snapshot: &Snapshot,
) -> Result<jig_load::watch::Watching, EngineError> {
    // Discovery from any process lands here; it is watched once it exists.
    if !snapshot.mcp_servers().is_empty() {
        let _ = fs_err::create_dir_all(snapshot.root().join(jig_load::upstream::CACHE_DIR));
    }
    Ok(jig_load::watch::start(loader, jig_load::watch::DEFAULT_DEBOUNCE)?)
}
