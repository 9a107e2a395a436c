//! One module per command.

pub mod list;
pub mod show;
pub mod validate;
