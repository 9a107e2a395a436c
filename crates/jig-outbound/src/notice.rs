//! Notices to the webhooks a project names (`notifications: {webhooks: [{url, secret}]}`):
//! when something waits for a person (an approval asked, a runbook run paused for people) and
//! when an approval is decided. Each is a JSON POST signed with HMAC-SHA256 under the webhook's
//! secret over `<timestamp>.<body>` (`X-Jig-Signature: <hex>`, and the same as
//! `X-Jig-Signature-256: sha256=<hex>`), the timestamp being `X-Jig-Timestamp` (Unix seconds,
//! also in the body). The timestamp is signed with the body, so a receiver that refuses old
//! ones refuses a captured notice replayed with a fresh header, and a forged one.
//!
//! Only the process that recorded what happened sends its notice (a decision heard from
//! another instance is that instance's to send), so a team of instances sends each once.
//! Sending never holds a call: it runs on its own task, retried with backoff (1, 2, 4 … 128 s)
//! while the receiver fails or answers 5xx/429. A short-lived process (`jig call`) waits for
//! its notices at most [`FLUSH_WITHIN`] before it exits ([`notices_sent`]).

use jig_model::ApprovalId;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jig_model::manifest::Webhook;
use jig_model::policy::NetworkPolicy;
use ring::hmac;
use serde::Serialize;
use serde_json::Value;

/// How many times a notice is tried: the pauses between (1, 2, 4 … 128 s) add up to about
/// four minutes, so a chat's intake that is down for a few minutes still gets the notice, and
/// the last try is still inside the five minutes a receiver commonly accepts a signed
/// notice's timestamp for.
const ATTEMPTS: u32 = 9;
/// The first pause between tries; it doubles.
const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// How long one POST may take.
const POST_WITHIN: Duration = Duration::from_secs(10);
/// How long a process about to exit waits for its notices.
pub const FLUSH_WITHIN: Duration = Duration::from_secs(20);

/// What happened, for the people a webhook reaches: serialised as the notice's `type` and
/// its fields.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type")]
pub enum Notice {
    /// A call waits for a person's approval.
    #[serde(rename = "approval.requested")]
    ApprovalRequested {
        /// The approval.
        approval_id: ApprovalId,
        /// The tool asked for.
        tool: String,
        /// Who asked.
        asked_by: String,
        /// The rule that asks for approval.
        rule: String,
    },
    /// An approval was decided (approved, denied), withdrawn or expired.
    #[serde(rename = "approval.decided")]
    ApprovalDecided {
        /// The approval.
        approval_id: ApprovalId,
        /// The tool asked for.
        tool: String,
        /// How it ended.
        verdict: jig_model::Verdict,
        /// Who decided.
        by: String,
        /// Why, when a denial gave a reason.
        reason: Option<String>,
    },
    /// A runbook run waits for people (a manual step, a choice, a go-ahead).
    #[serde(rename = "runbook.paused")]
    RunbookPaused {
        /// The run.
        run_id: String,
        /// Its runbook.
        runbook: String,
    },
}

impl Notice {
    /// The workbench's path to what the notice is about.
    pub fn path(&self) -> String {
        match self {
            Self::ApprovalRequested { approval_id, .. }
            | Self::ApprovalDecided { approval_id, .. } => format!("/#/approvals/{approval_id}"),
            Self::RunbookPaused { run_id, .. } => format!("/#/runbooks/runs/{run_id}"),
        }
    }

    /// One line for a chat.
    pub fn text(&self, project: &str) -> String {
        match self {
            Self::ApprovalRequested { tool, asked_by, rule, .. } => {
                format!(
                    "{asked_by} asks to run {tool} in {project} ({rule}): it waits for an approver"
                )
            }
            Self::ApprovalDecided { tool, verdict, by, reason, .. } => {
                let why = reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                format!("{by} {verdict} a call of {tool} in {project}{why}")
            }
            Self::RunbookPaused { runbook, .. } => {
                format!("runbook {runbook} in {project} waits for people")
            }
        }
    }
}

/// Notices this process is still sending (all engines of the process: it is the process
/// that must not exit before they go).
static SENDING: AtomicUsize = AtomicUsize::new(0);
/// Woken when the last notice in flight was sent or given up.
static SENT: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Wait (at most `within`) until this process's notices were sent or given up: a process
/// about to exit calls this so a notice is not lost with it.
pub async fn notices_sent(within: Duration) {
    let wait = async {
        loop {
            let sent = SENT.notified();
            if SENDING.load(Ordering::SeqCst) == 0 {
                return;
            }
            sent.await;
        }
    };
    let _ = tokio::time::timeout(within, wait).await;
}

/// Send `payload` to `hook` in the background (on `runtime`), signed with `timestamp` (Unix
/// seconds), through the `network` rules, trusting `ca` when the webhook names one. Counted
/// among the notices [`notices_sent`] waits for.
pub fn send(
    runtime: &tokio::runtime::Handle,
    hook: Webhook,
    payload: Value,
    timestamp: i64,
    network: NetworkPolicy,
    ca: Option<std::path::PathBuf>,
) {
    SENDING.fetch_add(1, Ordering::SeqCst);
    runtime.spawn(async move {
        deliver(&hook, &payload, timestamp, &network, ca.as_deref()).await;
        if SENDING.fetch_sub(1, Ordering::SeqCst) == 1 {
            SENT.notify_waiters();
        }
    });
}

/// POST `payload` to `hook` until it is taken (2xx), refused for good (4xx but 429), or the
/// tries are spent. Nothing of it reaches the caller: a webhook down is said in the log.
async fn deliver(
    hook: &Webhook,
    payload: &Value,
    timestamp: i64,
    network: &NetworkPolicy,
    ca: Option<&std::path::Path>,
) {
    // Through the network policy, pinned to the addresses it checked (a receiver on loopback
    // or a private address needs `network.allow_private`).
    let client = match crate::client::checked_client(&hook.url, network, POST_WITHIN, ca).await {
        Ok(client) => client,
        Err(error) => {
            tracing::warn!(url = %hook.url, %error, "the webhook is not reached: the network policy refuses it");
            return;
        }
    };
    let body = payload.to_string();
    let signature = sign(&hook.secret, format!("{timestamp}.{body}").as_bytes());
    let mut pause = FIRST_PAUSE;
    for attempt in 1..=ATTEMPTS {
        let sent = client
            .post(&hook.url)
            .header("content-type", "application/json")
            .header("x-jig-timestamp", timestamp.to_string())
            .header("x-jig-signature", &signature)
            .header("x-jig-signature-256", format!("sha256={signature}"))
            .body(body.clone())
            .send()
            .await;
        let status = sent.as_ref().map(reqwest::Response::status);
        match status {
            Ok(status) if status.is_success() => return,
            Ok(status) if status.is_client_error() && status.as_u16() != 429 => {
                tracing::warn!(url = %hook.url, %status, "the webhook refused a notice");
                return;
            }
            _ if attempt == ATTEMPTS => {
                tracing::warn!(url = %hook.url, attempts = ATTEMPTS, "a notice was not delivered");
                return;
            }
            _ => {
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
        }
    }
}

/// HMAC-SHA256 of `body` under `secret`, hex.
fn sign(secret: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    jig_model::canonical::hex(hmac::sign(&key, body).as_ref())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_signature_is_rfc_4231s_hmac_sha256() {
        // RFC 4231, test case 2.
        assert_eq!(
            super::sign("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
