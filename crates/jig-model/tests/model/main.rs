//! Integration tests of jig-model: canonical JSON, envelopes, error codes, generated schemas.

// Test fixtures are written with std::fs; a failing test names the path in its message.
#![allow(clippy::disallowed_methods)]

mod canonical;
mod envelopes;
mod schemas;
