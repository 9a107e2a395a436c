//! Calls in flight by request id, so any surface can stop one it did not start (the browser's
//! Cancel button, MCP's `notifications/cancelled`) through the engine.

use std::collections::HashMap;
use std::sync::Mutex;

use jig_exec::Cancel;

use crate::Engine;

/// The cancel tokens of the calls running now.
#[derive(Debug, Default)]
pub(crate) struct Running(Mutex<HashMap<String, Cancel>>);

/// Removes its call from [`Running`] when the call ends, however it ends.
pub(crate) struct Tracked<'e> {
    running: &'e Running,
    request_id: String,
}

impl Running {
    pub(crate) fn track(&self, request_id: &str, cancel: &Cancel) -> Tracked<'_> {
        if let Ok(mut map) = self.0.lock() {
            map.insert(request_id.to_owned(), cancel.clone());
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
    /// cancelled, with its record. Returns whether such a call was running.
    pub fn cancel(&self, request_id: &str) -> bool {
        let cancel = self.running.0.lock().ok().and_then(|map| map.get(request_id).cloned());
        cancel.inspect(Cancel::cancel).is_some()
    }

    /// Whether the call with this request id is running here now.
    pub fn is_running(&self, request_id: &str) -> bool {
        self.running.0.lock().is_ok_and(|map| map.contains_key(request_id))
    }
}
