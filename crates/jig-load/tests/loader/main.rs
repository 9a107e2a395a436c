//! Integration tests of jig-load: real files in temporary directories, one module per area.

// Test fixtures are written with std::fs; a failing test names the path in its message.
#![allow(clippy::disallowed_methods)]

mod examples;
mod gert;
mod hostile;
mod plans;
mod policy;
mod rendering;
mod resolution;
mod runbooks;
mod snapshot;
mod support;
mod toolpack;
mod watch;
