//! HTTP intakes: Splunk's HTTP Event Collector (`hec`: one JSON object a packet, the event
//! inside, in one POST) and Elasticsearch's bulk API (`elastic`: a `create` action a packet
//! whose `_id` is the packet's hash, so a packet sent twice is refused as already there, not
//! stored twice). A batch is taken when the answer is 2xx and — for the bulk API, which answers
//! 200 for a partly failed batch — when no item failed except as a copy.

use std::path::Path;
use std::time::Duration;

use jig_audit::Packet;
use jig_model::manifest::AuditForward;
use serde_json::{Value, json};

/// How long one batch's request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub(super) struct Http {
    client: reqwest::Client,
    /// The CAs trusted for the receiver, when the forwarder names them.
    ca: Option<std::path::PathBuf>,
    url: String,
    elastic: bool,
    authorization: Option<String>,
    host: String,
}

impl Http {
    pub(super) fn new(config: &AuditForward, root: &Path) -> Result<Self, String> {
        let elastic = config.shape.as_deref() == Some("elastic");
        let authorization = match config.token_env.as_deref() {
            Some(variable) => {
                let token = std::env::var(variable)
                    .map_err(|_| format!("`token_env`: `{variable}` is not set"))?;
                Some(if elastic { format!("ApiKey {token}") } else { format!("Splunk {token}") })
            }
            None => None,
        };
        let ca = config.ca.as_deref().map(|ca| root.join(ca));
        Ok(Self {
            client: crate::client::http_client_trusting(TIMEOUT, ca.as_deref())?,
            ca,
            url: config.url.clone(),
            elastic,
            authorization,
            host: super::host_name(),
        })
    }

    /// The same, connecting only to the addresses of `url` the policy's `network` allows.
    pub(super) async fn pinned(
        &self,
        url: &str,
        network: &jig_model::policy::NetworkPolicy,
    ) -> Result<Self, String> {
        let client =
            crate::client::checked_client(url, network, TIMEOUT, self.ca.as_deref()).await?;
        Ok(Self { client, ..self.clone() })
    }

    pub(super) async fn send(
        &mut self,
        packets: &[Packet],
        events: &[Value],
    ) -> Result<(), String> {
        let mut body = String::new();
        for (packet, event) in packets.iter().zip(events) {
            if self.elastic {
                body.push_str(&json!({ "create": { "_id": packet.hash } }).to_string());
                body.push('\n');
                body.push_str(&event.to_string());
            } else {
                // HEC's time: seconds, with the microseconds as its fraction.
                let time = packet.ts_us as f64 / 1e6;
                body.push_str(
                    &json!({ "time": time, "host": self.host, "sourcetype": "jig:audit", "event": event })
                        .to_string(),
                );
            }
            body.push('\n');
        }
        let content_type = if self.elastic { "application/x-ndjson" } else { "application/json" };
        let mut request =
            self.client.post(&self.url).header("content-type", content_type).body(body);
        if let Some(authorization) = &self.authorization {
            request = request.header("authorization", authorization);
        }
        let answer = request.send().await.map_err(|e| format!("{}: {e}", self.url))?;
        let status = answer.status();
        let text = answer.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(format!("{} answered {status}: {}", self.url, first_line(&text)));
        }
        if self.elastic {
            refused_items(&text)?;
        }
        Ok(())
    }
}

/// A bulk answer's failed items, other than copies (409: that `_id` is there already).
fn refused_items(text: &str) -> Result<(), String> {
    let answer: Value = serde_json::from_str(text).map_err(|e| format!("the bulk answer: {e}"))?;
    if answer["errors"] != Value::Bool(true) {
        return Ok(());
    }
    let items = answer["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let refused = items.iter().find_map(|item| {
        let result = item.as_object()?.values().next()?;
        let status = result["status"].as_u64().unwrap_or(0);
        (status >= 300 && status != 409).then(|| format!("{status}: {}", result["error"]))
    });
    refused.map_or(Ok(()), |why| Err(format!("the bulk API refused an event ({why})")))
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    &line[..line.len().min(200)]
}

#[cfg(test)]
mod tests {
    use super::refused_items;

    #[test]
    fn a_bulk_answer_fails_a_batch_for_a_refused_item_but_not_for_a_copy() {
        let copy = r#"{"errors":true,"items":[{"create":{"status":201}},{"create":{"status":409,"error":{"type":"version_conflict_engine_exception"}}}]}"#;
        assert!(refused_items(copy).is_ok());
        let refused = r#"{"errors":true,"items":[{"create":{"status":400,"error":{"type":"mapper_parsing_exception"}}}]}"#;
        assert!(refused_items(refused).unwrap_err().contains("400"));
        assert!(refused_items(r#"{"errors":false,"items":[]}"#).is_ok());
    }
}
