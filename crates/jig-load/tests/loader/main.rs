//! Integration tests of jig-load: real files in temporary directories, one module per area.

mod examples;
mod gert;
mod hostile;
mod rendering;
mod resolution;
mod runbooks;
mod snapshot;
mod support;
mod toolpack;
mod watch;
