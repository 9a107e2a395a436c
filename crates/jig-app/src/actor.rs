//! Who acts, as the surface established it: the OS user at the machine, a token's or a session's
//! holder, an agent acting for a person.

/// Who acts, and what they may do here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The principal recorded (`alice`, `alice (via claude-code)`).
    pub principal: String,
    /// Who named `principal` when it was not known but asserted (`--as`).
    pub asserted_by: Option<String>,
    /// May run and cancel calls (not a viewer).
    pub may_run: bool,
    /// May decide approvals (the policy still decides whose).
    pub may_approve: bool,
    /// May act on anyone's calls (cancel them), not only their own.
    pub admin: bool,
}

impl Actor {
    /// The person at this machine (the CLI, the desktop app on a local project), who may do
    /// everything the policy allows.
    pub fn owner(principal: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
            asserted_by: None,
            may_run: true,
            may_approve: true,
            admin: true,
        }
    }

    /// Whether this actor is the person who asked `asked_by` (an agent is its person).
    pub fn asked(&self, asked_by: Option<&str>) -> bool {
        asked_by.map(jig_engine::canonical_principal)
            == Some(jig_engine::canonical_principal(&self.principal))
    }
}
