//! Notices of what waits for people and what was decided, to the webhooks a project names
//! (`notifications:`) and a person consented to: the engine decides what is sent and to whom;
//! `jig_outbound::notice` signs and sends it in the background.

use serde_json::json;

pub(crate) use jig_outbound::notice::Notice;

use crate::Engine;

impl Engine {
    /// Send `notice` to the project's webhooks, in the background.
    pub(crate) fn notify(&self, notice: &Notice) {
        let snapshot = self.snapshot();
        let Some(settings) = snapshot.notifications() else { return };
        if settings.webhooks.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let project = snapshot.packages().first().map(|p| p.name.clone()).unwrap_or_default();
        let now = jig_audit::time::now_us();
        let link = format!(
            "{}{}",
            settings.workbench_url.as_deref().unwrap_or_default().trim_end_matches('/'),
            notice.path()
        );
        let mut body = serde_json::to_value(notice).unwrap_or_else(|_| json!({}));
        if let Some(fields) = body.as_object_mut() {
            fields.extend([
                ("id".to_owned(), json!(crate::identity::new_id())),
                ("time".to_owned(), json!(jig_audit::time::rfc3339(now))),
                ("project".to_owned(), json!(project)),
                ("link".to_owned(), json!(link)),
            ]);
        }
        let text = format!("{} — {link}", notice.text(&project));
        let root = self.workspace.root().to_path_buf();
        let network = self.policy().config().network.clone();
        for (index, hook) in settings.webhooks.iter().enumerate() {
            // A webhook named by the manifest sends nothing until a person consented to it.
            if !jig_load::trust::Outbound::webhook(index, hook).trusted(&root) {
                tracing::warn!(url = %hook.url, "a webhook waits for consent (`jig trust`); no notice was sent to it");
                continue;
            }
            let payload = if hook.format.as_deref() == Some("slack") {
                json!({ "text": text, "jig": body })
            } else {
                body.clone()
            };
            let ca = hook.ca.as_deref().map(|ca| root.join(ca));
            let (hook, network) = (hook.clone(), network.clone());
            jig_outbound::notice::send(&runtime, hook, payload, now / 1_000_000, network, ca);
        }
    }
}
