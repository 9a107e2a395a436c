//! What a long-running process does beside its requests — `jig serve`, `jig mcp` and the
//! desktop app with a project open — started in one place, so every such process does the same
//! and a duty that needs a person's consent is gated once:
//!
//! - the registry follows the project's files (clients hear the tool list change);
//! - jobs handed to a scheduler are watched, and the store is followed (decisions and
//!   cancellations made by other processes on it reach calls waiting here);
//! - upstream MCP servers' tools are kept current;
//! - the audit is forwarded to the receivers the person consented to.
//!
//! Opening it also says what a person should know at start: what waits for their consent,
//! where notices go, what the audit is forwarded as. Each surface shows those its own way.

use jig_engine::{Stop, WatchHandle};

use crate::{App, AppError};

/// The duties of a long-running process; dropping it stops the forwarders and the watch.
#[derive(Debug)]
pub struct Resident {
    _watch: WatchHandle,
    /// Asks the forwarders to stop (flushing what they hold) when the process ends.
    stop_forwarding: tokio::sync::watch::Sender<bool>,
    said: Vec<Said>,
}

/// One thing the process tells its person once, at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// How much it matters.
    pub level: Level,
    /// The sentence, as the terminal prints it.
    pub text: String,
}

/// How much a [`Said`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Where things go, for the record.
    Info,
    /// Something waits for the person (consent).
    Warning,
    /// A duty could not start (it names which and why).
    Error,
}

impl Resident {
    /// What the person should know at start, in order.
    pub fn said(&self) -> &[Said] {
        &self.said
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.stop_forwarding.send(true);
    }
}

impl App {
    /// Start this process's duties beside its requests, once (a second call starts nothing
    /// twice: the engine's duties are idempotent, and its watch is handed out once).
    pub fn open_resident(&self) -> Result<Resident, AppError> {
        let engine = &self.engine;
        engine.watch_jobs();
        engine.follow_store();
        let watch = engine.watch()?;
        engine.keep_upstream_current();
        let mut said = waiting_consent(engine);
        said.extend(notices_go_to(engine));
        let (stop_forwarding, stop) = Stop::pair();
        match engine.forward_audit(&stop) {
            Ok(names) if !names.is_empty() => said.push(Said {
                level: Level::Info,
                text: format!("forwarding the audit as {}", names.join(", ")),
            }),
            Ok(_) => {}
            Err(why) => said.push(Said {
                level: Level::Error,
                text: format!("error[E_VALIDATION_FAIL]: the audit is not forwarded: {why}"),
            }),
        }
        Ok(Resident { _watch: watch, stop_forwarding, said })
    }
}

/// What the manifest names that waits for a person's consent (and so does nothing yet), and
/// how to give it.
fn waiting_consent(engine: &jig_engine::Engine) -> Vec<Said> {
    let waiting = engine.waiting_consent();
    if waiting.is_empty() {
        return Vec::new();
    }
    let mut said: Vec<Said> = waiting
        .iter()
        .map(|item| Said {
            level: Level::Warning,
            text: format!("waiting for your consent: {}", item.describe()),
        })
        .collect();
    said.push(Said {
        level: Level::Warning,
        text: format!(
            "  none of these takes effect until you read them and run `jig trust` in {}",
            engine.root().display()
        ),
    });
    said
}

/// The hosts the manifest's `notifications:` sends notices to: a manifest that came with a
/// repository chooses them, so the person running Jig is told (docs/policy.md, "a webhook").
fn notices_go_to(engine: &jig_engine::Engine) -> Option<Said> {
    let snapshot = engine.snapshot();
    let notifications = snapshot.notifications()?;
    // `host:port`, each once.
    let hosts: std::collections::BTreeSet<String> = notifications
        .webhooks
        .iter()
        .map(|hook| match url::Url::parse(&hook.url) {
            Ok(url) => url[url::Position::BeforeHost..url::Position::AfterPort].to_owned(),
            Err(_) => hook.url.clone(),
        })
        .collect();
    if hosts.is_empty() {
        return None;
    }
    let hosts: Vec<String> = hosts.into_iter().collect();
    Some(Said {
        level: Level::Info,
        text: format!(
            "notices of approvals and paused runs go to {} (`notifications:` in the manifest)",
            hosts.join(", ")
        ),
    })
}
