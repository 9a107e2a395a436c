//! The project's policy beneath the layers above it, compiled from a snapshot, and the account
//! of it rule by rule that `jig policy show` and `/api/policy` give.

use jig_load::Snapshot;
use jig_policy::Policy;
use jig_policy::report::PolicyReport;

use crate::{Engine, EngineError};

/// The project's policy (an empty one is seed 003's defaults: side effects need approval)
/// beneath the layers the load read (the machine's and the person's; docs/policy.md,
/// "Layers"). A layer that cannot be read failed the load already: Jig never runs on the
/// project's word alone.
pub fn compile(snapshot: &Snapshot) -> Result<Policy, EngineError> {
    let project = snapshot.policy().cloned().unwrap_or_default();
    Ok(Policy::layered(project, snapshot.layers().to_vec())?)
}

/// The effective `policy` over `snapshot`'s tools, rule by rule, each with its layer.
pub fn report(snapshot: &Snapshot, policy: &Policy) -> PolicyReport {
    let manifest = snapshot.packages().first().and_then(|p| p.manifest.clone());
    let source = manifest.unwrap_or_else(|| "(no manifest: seed 003's defaults)".to_owned());
    policy.report(&source, snapshot.list().map(AsRef::as_ref))
}

impl Engine {
    /// The effective policy now, rule by rule.
    pub fn policy_report(&self) -> PolicyReport {
        let registry = self.registry();
        report(&registry.snapshot, &registry.policy)
    }
}
