//! The API against a real engine on a temp copy of the example project, over real HTTP and a
//! real WebSocket on 127.0.0.1.

mod access;
mod artifacts;
mod calls;
mod decide;
mod desktop_signin;
mod local;
mod openapi;
mod records;
mod runbooks;
mod sso;
mod support;
