//! Test support shared by Jig's crates: real servers on loopback.
//!
//! - [`postgres_url`]: a fresh database on a real PostgreSQL server.
//! - [`http::Server`]: a small HTTP/1.1 server on 127.0.0.1 whose answers a test scripts.

// Test support reports problems by panicking with the command that failed.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]

pub mod http;
mod postgres;

pub use postgres::postgres_url;
