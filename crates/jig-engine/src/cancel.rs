//! Calls in flight by request id, so any surface can stop one it did not start (the browser's
//! Cancel button, MCP's `notifications/cancelled`) through the engine — in this process, or
//! in another on the same store: a cancel asked for a call running elsewhere is recorded
//! (`tool.call.cancel_requested`), and the process running it stops it when it hears that
//! on the store's feed (`crate::follow`).

use std::collections::HashMap;
use std::sync::Mutex;

use jig_audit::{Op, PacketKind, RunState};
use jig_exec::Cancel;
use serde_json::json;

use crate::{Engine, EngineError};

/// The calls running now: each one's cancel token and who made it.
#[derive(Debug, Default)]
pub(crate) struct Running(Mutex<HashMap<String, (Cancel, String)>>);

/// Removes its call from [`Running`] when the call ends, however it ends.
pub(crate) struct Tracked<'e> {
    running: &'e Running,
    request_id: String,
}

impl Running {
    pub(crate) fn track(&self, request_id: &str, cancel: &Cancel, principal: &str) -> Tracked<'_> {
        if let Ok(mut map) = self.0.lock() {
            map.insert(request_id.to_owned(), (cancel.clone(), principal.to_owned()));
        }
        Tracked { running: self, request_id: request_id.to_owned() }
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.running.0.lock() {
            map.remove(&self.request_id);
        }
    }
}

impl Engine {
    /// Stop the call with this request id, if it is running here. The call then ends as
    /// cancelled, with its record. `by` is who asks: only the principal who made the call may
    /// stop it (`None` stops anyone's, for an administrator). Returns whether such a call was
    /// running.
    pub fn cancel(&self, request_id: &str, by: Option<&str>) -> Result<bool, EngineError> {
        let running = self.running.0.lock().ok().and_then(|map| map.get(request_id).cloned());
        let Some((cancel, principal)) = running else { return Ok(false) };
        if let Some(by) = by.filter(|by| *by != principal) {
            return Err(EngineError::NotYours {
                request_id: request_id.to_owned(),
                by: by.to_owned(),
            });
        }
        cancel.cancel();
        Ok(true)
    }

    /// Ask whichever process runs the call `request_id` to stop it: recorded, with who asked
    /// (`by`), for the process running it to hear. The caller has checked that `by` may (its
    /// own call, or an administrator). `true` when the call is recorded running, so that the
    /// request was made; `false` when it is not running anywhere.
    pub async fn request_cancel(&self, request_id: &str, by: &str) -> Result<bool, EngineError> {
        let Some(run) = self.store.run(request_id).await? else { return Ok(false) };
        if run.state != RunState::Running {
            return Ok(false);
        }
        let packet =
            crate::jobs::run_packet(&run, PacketKind::CallCancelRequested, by, json!({ "by": by }));
        self.store.apply(vec![Op::Append(packet)]).await?;
        // Running here after all (it started between the check and now): stopped here too.
        let _ = self.cancel(request_id, None);
        Ok(true)
    }

    /// Whether the call with this request id is running here now.
    pub fn is_running(&self, request_id: &str) -> bool {
        self.running.0.lock().is_ok_and(|map| map.contains_key(request_id))
    }
}
