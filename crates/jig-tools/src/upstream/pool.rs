//! The running servers of the `jsonrpc` and `mcp` transports, one per tool file and startup
//! command. Each has a slot of its own, held only while its server is started, so a server
//! that is slow to start holds only the calls to it; once running, calls share it, several in
//! flight at once. A server that keeps dying is started again after a growing pause instead of
//! at every call.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jig_model::ErrorCode;
use jig_model::tool_def::GertExecution;
use tokio::sync::Mutex;

use super::ServerKey;
use super::server::Server;
use jig_exec::{Invocation, ToolError};

/// A start within this long of the previous one counts as a restart of a failing server.
const QUICK_DEATH: Duration = Duration::from_secs(30);
/// The longest pause before starting a failing server again.
const MOST_PAUSE: Duration = Duration::from_secs(30);

/// Running servers.
#[derive(Debug, Default)]
pub struct Servers {
    slots: std::sync::Mutex<HashMap<ServerKey, Arc<Mutex<Slot>>>>,
    /// Sessions with servers at a URL.
    pub(super) remote: super::remote::Sessions,
}

/// One server's place: the process while it runs, and its restarts.
#[derive(Debug, Default)]
pub(super) struct Slot {
    server: Option<Arc<Server>>,
    started: Option<Instant>,
    /// Starts in a row, each soon after the one before.
    restarts: u32,
    /// No start before this.
    not_before: Option<Instant>,
}

impl Servers {
    /// The server `invocation`'s tool speaks to, running: started (again) when it is not,
    /// unless it died too often too recently.
    pub(super) async fn session(
        &self,
        invocation: &Invocation<'_>,
        gert: &GertExecution,
        mcp: bool,
    ) -> Result<Arc<Server>, ToolError> {
        let key = key(invocation, gert);
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            // A server the same tool file started with another command (the file was edited)
            // is stopped: dropping its slot kills its process once no call holds it.
            slots.retain(|(file, argv), _| file != &key.0 || argv == &key.1);
            Arc::clone(slots.entry(key.clone()).or_default())
        };
        let mut slot = slot.lock().await;
        if let Some(server) = slot.server.as_ref().filter(|server| server.alive()) {
            return Ok(Arc::clone(server));
        }
        let now = Instant::now();
        if let Some(not_before) = slot.not_before.filter(|t| *t > now) {
            return Err(ToolError::new(
                ErrorCode::Shell,
                format!(
                    "server `{}` keeps stopping (started again {} times in a row); the next start is in {:.1} s",
                    key.1.first().map_or("?", String::as_str),
                    slot.restarts,
                    (not_before - now).as_secs_f64()
                ),
            ));
        }
        let quick = slot.started.is_some_and(|t| now.duration_since(t) < QUICK_DEATH);
        slot.restarts = if quick { slot.restarts + 1 } else { 0 };
        slot.started = Some(now);
        slot.not_before = (slot.restarts > 0).then(|| now + pause(slot.restarts));
        slot.server = None;
        let server = Arc::new(Server::start(invocation, gert, &key.1, mcp).await?);
        slot.server = Some(Arc::clone(&server));
        Ok(server)
    }
}

/// How long to wait before the next start after `restarts` quick ones: 0.5 s, doubling, at
/// most 30 s.
fn pause(restarts: u32) -> Duration {
    let doubled =
        Duration::from_millis(500).saturating_mul(1 << restarts.saturating_sub(1).min(10));
    doubled.min(MOST_PAUSE)
}

fn key(invocation: &Invocation<'_>, gert: &GertExecution) -> ServerKey {
    let argv = gert
        .startup
        .as_ref()
        .map(|s| s.argv.clone())
        .filter(|a| !a.is_empty())
        .or_else(|| gert.binary.clone().map(|b| vec![b]))
        .unwrap_or_default();
    (invocation.tool.source.file.clone(), argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_server_waits_longer_each_time_up_to_half_a_minute() {
        let pauses: Vec<u64> = (1..=9).map(|n| pause(n).as_millis() as u64).collect();
        assert_eq!(pauses, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
        assert_eq!(pause(u32::MAX), MOST_PAUSE);
    }
}
