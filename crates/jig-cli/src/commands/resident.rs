//! The duties of a long-running `jig serve` or `jig mcp`, opened through the application layer
//! (the desktop app opens the same), with what they say at start printed on stderr.

use std::sync::Arc;

use jig_app::{App, Resident};
use jig_engine::Engine;

/// Open `engine`'s duties beside its requests, saying on stderr what the person should know.
pub fn open(engine: &Arc<Engine>) -> anyhow::Result<Resident> {
    let resident = App::new(Arc::clone(engine)).open_resident()?;
    for said in resident.said() {
        eprintln!("{}", said.text);
    }
    Ok(resident)
}
