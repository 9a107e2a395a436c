//! Integration tests of jig-model: canonical JSON, envelopes, error codes, generated schemas.

mod canonical;
mod envelopes;
mod schemas;
