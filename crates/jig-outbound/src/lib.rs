//! What leaves the machine, each in its own module:
//!
//! - [`client`]: Jig's own outgoing HTTP client, and the check of a receiver's address against
//!   the policy's network rules (pinned to the addresses checked);
//! - [`forward`]: the audit forwarded live to a SIEM (syslog over TLS, HTTP intakes), the store
//!   being the queue;
//! - [`export`]: a packet as it is written for outside readers (CloudEvents, OCSF, …);
//! - [`notice`]: webhook notices, signed, sent in the background;
//! - [`telemetry`]: OpenTelemetry traces and metrics over OTLP.
//!
//! None of it decides whether something may leave: the engine asks the person's consent
//! (`jig trust`) and the policy first, then hands what may go to these. This crate depends on
//! the store and the model, never on the engine.

pub mod client;
pub mod export;
pub mod forward;
pub mod notice;
pub mod telemetry;

pub use forward::{Forwarder, Progress, Stop};
