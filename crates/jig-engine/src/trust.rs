//! What the project's manifest sends off the machine or writes outside it, and whether a
//! person consented (`jig_load::trust`): the engine's duties that send (forwarders, notices)
//! start only what was consented to, and every surface says what waits.

use jig_load::trust::{Outbound, TrustState};

use crate::Engine;

impl Engine {
    /// The project's root directory.
    pub fn root(&self) -> &std::path::Path {
        self.workspace.root()
    }

    /// Everything the manifest names that sends or writes outside the project, with where a
    /// person's consent to each stands.
    pub fn outbound(&self) -> Vec<(Outbound, TrustState)> {
        let root = self.workspace.root();
        jig_load::trust::of_snapshot(&self.snapshot())
            .into_iter()
            .map(|item| {
                let state = item.state(root);
                (item, state)
            })
            .collect()
    }

    /// What waits for a person's consent (never given, or given to another configuration).
    pub fn waiting_consent(&self) -> Vec<Outbound> {
        self.outbound()
            .into_iter()
            .filter(|(_, state)| *state != TrustState::Trusted)
            .map(|(item, _)| item)
            .collect()
    }

    /// Whether a person consented to the sign-in provider as the manifest names it now.
    pub fn sign_in_trusted(&self) -> bool {
        let snapshot = self.snapshot();
        snapshot
            .auth()
            .and_then(|auth| auth.oidc.as_ref())
            .is_some_and(|oidc| Outbound::oidc(oidc).trusted(self.workspace.root()))
    }
}
