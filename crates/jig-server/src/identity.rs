//! Who a token names: the people of the `--users` file, their roles, and the cookie that carries
//! a browser's token. Below both [`crate::auth`] (the middleware that asks) and
//! [`crate::people`] (the people the store knows), which each build on it.

use std::collections::HashMap;
use std::path::Path;

use axum::http::{HeaderMap, header};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;
/// The name of the cookie holding the token.
pub const COOKIE: &str = "jig_token";

/// What a person may do. Each role may do what the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads tools, previews calls, reads the audit.
    Viewer,
    /// Also runs and cancels calls.
    Runner,
    /// Also approves and denies pending calls (the policy still decides whose).
    Approver,
    /// Everything.
    Admin,
}

/// Who is acting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Person {
    /// The principal recorded in the audit.
    pub name: String,
    /// What they may do.
    pub role: Role,
}

impl Person {
    /// `Ok` when this person has at least `role`, else 403 naming what they lack.
    pub fn require(&self, role: Role) -> Result<(), ApiError> {
        if self.role >= role {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!(
                "`{}` is a {:?} here; this needs the {role:?} role",
                self.name, self.role
            )))
        }
    }
}

/// Tokens and the people they name (only the tokens' hashes are kept).
#[derive(Debug, Clone, Default)]
pub struct Users {
    by_hash: HashMap<String, Person>,
}

/// One entry of a `--users` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    name: String,
    role: Role,
    token: String,
}

/// Why a users file was refused.
#[derive(Debug, thiserror::Error)]
pub enum UsersError {
    /// It cannot be read.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// An entry is wrong.
    #[error("{path}: user {index}: {message}")]
    Entry {
        /// The file.
        path: String,
        /// Which entry (1-based).
        index: usize,
        /// Why.
        message: String,
    },
}

impl Users {
    /// One person holding one token: the desktop app, or a plain `jig serve`.
    pub fn single(person: Person, token: &str) -> Self {
        let mut users = Self::default();
        users.by_hash.insert(hash(token), person);
        users
    }

    /// People from a YAML or JSON file: `users: [{name, role, token}]`. Tokens must be at least
    /// 24 characters and unique.
    pub fn from_file(path: &Path) -> Result<Self, UsersError> {
        let shown = path.display().to_string();
        let read = |message: String| UsersError::Read { path: shown.clone(), message };
        let text = fs_err::read_to_string(path).map_err(|e| read(e.to_string()))?;
        let document =
            jig_load::yaml::parse(&text, &jig_load::yaml::Caps::DEFAULT).map_err(|e| {
                match e.pos {
                    Some(pos) => read(format!("line {}: {}", pos.line, e.message)),
                    None => read(e.message),
                }
            })?;
        let entries = document
            .value
            .get("users")
            .cloned()
            .ok_or_else(|| read("expected `users: [{name, role, token}]`".to_owned()))?;
        let entries: Vec<serde_json::Value> = serde_json::from_value(entries)
            .map_err(|_| read("`users` must be a list".to_owned()))?;
        let mut users = Self::default();
        for (index, entry) in entries.into_iter().enumerate() {
            let entry_error = |message: String| UsersError::Entry {
                path: shown.clone(),
                index: index + 1,
                message,
            };
            let entry: UserEntry =
                serde_json::from_value(entry).map_err(|e| entry_error(e.to_string()))?;
            if entry.token.len() < 24 {
                return Err(entry_error("`token` must be at least 24 characters".to_owned()));
            }
            if entry.name.trim().is_empty() {
                return Err(entry_error("`name` is empty".to_owned()));
            }
            let person = Person { name: entry.name, role: entry.role };
            if users.by_hash.insert(hash(&entry.token), person).is_some() {
                return Err(entry_error("this token is already another user's".to_owned()));
            }
        }
        if users.by_hash.is_empty() {
            return Err(read("`users` is empty".to_owned()));
        }
        Ok(users)
    }

    /// The person holding `token`.
    pub fn find(&self, token: &str) -> Option<&Person> {
        self.by_hash.get(&hash(token))
    }

    /// The role of the person named `name` in this file, if they are in it.
    pub fn role_of(&self, name: &str) -> Option<Role> {
        self.by_hash.values().find(|p| p.name == name).map(|p| p.role)
    }
}

/// SHA-256 of a token or cookie, as hex: what is kept of it (a `--users` file's, the store's).
pub fn hash(secret: &str) -> String {
    jig_model::Sha256Hash::of_bytes(secret.as_bytes()).to_hex()
}

/// A new random token (244 bits).
pub fn new_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// The token in the request's cookie, decoded ([`encode_cookie`]).
pub fn cookie_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, COOKIE)
}

/// The value of cookie `name`, decoded ([`encode_cookie`]).
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(cookie, _)| *cookie == name)
        .and_then(|(_, value)| decode_cookie(value))
}

/// A token as a cookie value: bytes outside `A-Za-z0-9-._~` percent-encoded, so nothing in a
/// token (`;`, spaces) can end the value or add attributes.
pub fn encode_cookie(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    for byte in token.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The inverse of [`encode_cookie`]; `None` for a malformed value.
fn decode_cookie(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
