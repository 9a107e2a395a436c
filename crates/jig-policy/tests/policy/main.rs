//! Integration tests of jig-policy: a real workspace on disk, real tool definitions.

// Fixtures are written with std::fs; a failing test names the path in its message.
#![allow(clippy::disallowed_methods)]

mod decide;
mod layers;
mod sandbox;
