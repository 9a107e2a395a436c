//! Jig's policy engine.
//!
//! A [`Policy`] is compiled from a manifest's `policy:` section and answers, for one call, with a
//! [`Decision`] that names its rule: the built-in checks of seed 002 §7 — the path sandbox
//! ([`sandbox`]), the network allow-list ([`network`]), the shell allow-list ([`command`]), git
//! guards — and then governance rules in gert's shape ([`governance`]), where side effects are
//! deny-by-default. [`redact`] keeps secrets out of everything that is stored or shown, and
//! [`budget`] tracks what a session may still spend.

pub mod arguments;
pub mod budget;
pub mod command;
mod decision;
pub mod governance;
pub mod layers;
pub mod network;
mod policy;
pub mod redact;
pub mod report;
pub mod sandbox;

pub use decision::{Decision, Denial};
pub use policy::{Policy, PolicyError};
