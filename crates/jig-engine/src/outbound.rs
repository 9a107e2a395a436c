//! The audit's forwarders the project names (`config.audit.forward`) that a person consented
//! to, built from the engine's store, snapshot and policy, and started in the background. How
//! a forwarder sends is `jig_outbound::forward`'s; whether it may is decided here.

use jig_outbound::{Forwarder, Stop};

use crate::Engine;

impl Engine {
    /// The project's forwarders (`config.audit.forward`) a person consented to (`jig trust`),
    /// each to run on its own task; or why one cannot run (a CA file that cannot be read, a
    /// token variable not set), naming it. One that waits for consent is not among them
    /// ([`Engine::waiting_consent`] says which): its token variable is not even read.
    pub fn forwarders(&self) -> Result<Vec<Forwarder>, String> {
        let snapshot = self.snapshot();
        let holder = Forwarder::holder_name(&crate::new_id());
        let root = self.workspace.root();
        let network = self.policy().config().network.clone();
        let origin = snapshot.audit_origin();
        let mut out = Vec::new();
        for (i, config) in snapshot.audit_forward().iter().enumerate() {
            if !jig_load::trust::Outbound::forwarder(config).trusted(root) {
                continue;
            }
            let forwarder =
                Forwarder::new(self.store.clone(), config, root, origin, &holder, &network)
                    .map_err(|why| {
                        format!("config.audit.forward[{i}] (`{}`): {why}", config.name)
                    })?;
            out.push(forwarder);
        }
        Ok(out)
    }

    /// Start the project's forwarders in the background, until `stop` is asked (never, for
    /// `Stop::default()`: as long as the process runs); the names of those started.
    pub fn forward_audit(&self, stop: &Stop) -> Result<Vec<String>, String> {
        let forwarders = self.forwarders()?;
        let names = forwarders.iter().map(|f| f.name().to_owned()).collect();
        for forwarder in forwarders {
            let stop = stop.clone();
            tokio::spawn(async move { forwarder.run(None, stop).await });
        }
        Ok(names)
    }
}
