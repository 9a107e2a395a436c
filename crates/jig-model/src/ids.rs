//! Ids that cross the seams between crates, typed so one cannot be passed for another: an
//! approval's id is not a request's, though both are UUIDs written as text.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An approval: one person's (or several people's) decision on exactly one request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalId(String);

impl ApprovalId {
    /// The id as the store keeps it.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id as text (the store's key, the CLI's argument).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as people see it in a list: its first eight characters, a prefix that names it
    /// wherever an approval is looked up.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }

    /// The id's text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ApprovalId {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

impl From<String> for ApprovalId {
    fn from(id: String) -> Self {
        Self(id)
    }
}

impl PartialEq<str> for ApprovalId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ApprovalId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// So that maps keyed by the id are looked up by its text.
impl std::borrow::Borrow<str> for ApprovalId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ApprovalId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_id_is_its_text_on_the_wire() {
        let id = ApprovalId::new("1f3a");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"1f3a\"");
        assert_eq!(serde_json::from_str::<ApprovalId>("\"1f3a\"").unwrap(), id);
        assert_eq!(id.to_string(), "1f3a");
    }
}
