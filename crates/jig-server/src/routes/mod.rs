//! The API's routes, one file per concern; each handler asks the engine and shapes the answer.

pub mod approvals;
pub mod artifacts;
pub mod audit;
pub mod calls;
pub mod download;
pub mod events;
pub mod export;
pub mod jobs;
pub mod presets;
pub mod project;
pub mod prometheus;
pub mod runbooks;
pub mod series;
pub mod tokens;
pub mod tools;
