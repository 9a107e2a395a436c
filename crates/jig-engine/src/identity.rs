//! Identities of a call: request hash (what an approval is bound to), idempotency key, tokens.

use std::io::Read as _;
use std::path::Path;

use jig_model::ToolDef;
use jig_model::canonical::Sha256Hash;
use serde_json::{Value, json};

/// The keyed hash of the exact request an approval is for: the tool and the code it runs
/// ([`code_identity`]), the canonical arguments in clear, the session and who asks — under the
/// store's binding key (`jig_audit::BindingKey`), so that the record, which shows arguments
/// with their secrets redacted, holds nothing a guessed secret could be checked against.
pub fn request_hash(
    key: &jig_audit::BindingKey,
    tool: &str,
    code: &Value,
    args: &Value,
    session: &str,
    principal: &str,
) -> String {
    key.hash(&json!({
        "tool": tool,
        "code": code,
        "args": args,
        "session": session,
        "principal": canonical_principal(principal),
    }))
}

/// At most this much of an entry file is hashed (scripts are small; this bounds a huge one).
const ENTRY_MAX: u64 = 16 * 1024 * 1024;

/// What runs when `tool` is called in the project at `root`, as an approval is bound to it: the
/// definition's content hash and the SHA-256 of each project file holding its code
/// ([`ToolDef::entry_files`]; `null` for one that is missing). A person approves a call of the
/// tool as it is now: a changed definition or script makes the approval not fit.
pub fn code_identity(tool: &ToolDef, root: &Path) -> Value {
    let files: Vec<Value> = tool
        .entry_files()
        .into_iter()
        .map(|path| {
            let sha256 = fs_err::File::open(root.join(&path)).ok().and_then(|f| {
                let mut bytes = Vec::new();
                f.take(ENTRY_MAX).read_to_end(&mut bytes).ok()?;
                Some(sha256_hex(&bytes))
            });
            json!({ "path": path, "sha256": sha256 })
        })
        .collect();
    json!({ "definition": tool.hash, "files": files })
}

/// What a recorded run must have run to answer a call of `tool` again (a deterministic
/// replay, an idempotency key): its definition's hash, or, for a tool that starts code in the
/// project, the hash of its `code` ([`code_identity`]) — a script edited since does not replay
/// the answers of the one before.
pub fn code_hash(tool: &ToolDef, code: &Value) -> String {
    let starts_code = code["files"].as_array().is_some_and(|files| !files.is_empty());
    if !starts_code {
        return tool.hash.clone();
    }
    sha256_hex(jig_model::canonical::canonical_json(code).as_bytes())
}

/// A principal as compared: trimmed and lower-cased (Unicode), so `Alice` and `alice` are one
/// person to self-approval and token checks. An agent acting for a person
/// ([`agent_principal`]: `alice (via claude-code)`) is that person here: alice may not approve
/// her own agent's call where self-approval is forbidden, and sees and may cancel its calls.
pub fn canonical_principal(principal: &str) -> String {
    let person = match principal.trim().strip_suffix(')') {
        Some(rest) => rest.rsplit_once(AGENT_MARK).map_or(principal, |(person, _)| person),
        None => principal,
    };
    person.trim().to_lowercase()
}

const AGENT_MARK: &str = " (via ";

/// The principal of `client` (an MCP client, as it names itself) acting for `person` (who
/// is known: the OS user, or the holder of a token): `alice (via claude-code)`. The client's
/// name is reduced to letters, digits and `._-` (at most 64), so it cannot pose as someone.
pub fn agent_principal(person: &str, client: &str) -> String {
    let client: String = client
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(64)
        .collect();
    let client = if client.is_empty() { "mcp-client" } else { client.as_str() };
    format!("{person}{AGENT_MARK}{client})")
}

/// Seed 003's primary idempotency key: `thread + tool + params_hash`.
pub fn idempotency_key(thread: &str, tool: &str, params_hash: &str) -> String {
    format!("{thread}:{tool}:{params_hash}")
}

/// A fresh random id (UUID v4, 32 hex digits).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A one-time token: 244 random bits as 64 hex digits (two UUIDs v4).
pub fn new_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// SHA-256 as hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256Hash::of_bytes(bytes).to_hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_acts_for_its_person() {
        let agent = agent_principal("Alice", "claude-code");
        assert_eq!(agent, "Alice (via claude-code)");
        assert_eq!(canonical_principal(&agent), "alice");
        assert_eq!(canonical_principal(" Bob "), "bob");
        // A client cannot smuggle another person in through its name.
        let sneaky = agent_principal("mallory", "x (via y) alice");
        assert_eq!(sneaky, "mallory (via xviayalice)");
        assert_eq!(canonical_principal(&sneaky), "mallory");
        assert_eq!(canonical_principal(&agent_principal("carol", "")), "carol");
    }
}
