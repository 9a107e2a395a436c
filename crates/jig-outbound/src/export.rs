//! The record in the shapes other systems ingest: each packet as it is (JSON lines), as a
//! CloudEvents 1.0 event, or as an OCSF API Activity event inside a CloudEvent — what a SIEM
//! reads without a custom parser. One packet makes one event, in chain order; nothing is
//! dropped or merged, so a receiver can check it has every seq.

use serde_json::{Map, Value, json};

use jig_audit::time::rfc3339;
use jig_audit::{Packet, RunState};
use jig_model::runbook::kernel::GovernanceAction;

/// The OCSF schema version the events follow.
pub const OCSF_VERSION: &str = "1.3.0";

/// What `jig audit export --format` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportFormat {
    /// The packet as stored.
    #[default]
    Jsonl,
    /// A CloudEvents 1.0 event (structured JSON) whose data is the packet.
    CloudEvents,
    /// A CloudEvents 1.0 event whose data is an OCSF API Activity event.
    Ocsf,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "jsonl" => Ok(Self::Jsonl),
            "cloudevents" => Ok(Self::CloudEvents),
            "ocsf" => Ok(Self::Ocsf),
            other => Err(format!("unknown format `{other}` (jsonl, cloudevents, ocsf)")),
        }
    }
}

/// `packet` in `format`; `source` names the chain (its checkpoint origin).
pub fn render(packet: &Packet, format: ExportFormat, source: &str) -> Value {
    match format {
        ExportFormat::Jsonl => serde_json::to_value(packet).unwrap_or(Value::Null),
        ExportFormat::CloudEvents => {
            let data = serde_json::to_value(packet).unwrap_or(Value::Null);
            cloud_event(packet, source, data, None)
        }
        ExportFormat::Ocsf => {
            let schema = format!("https://schema.ocsf.io/{OCSF_VERSION}/classes/api_activity");
            cloud_event(packet, source, ocsf(packet, source), Some(schema))
        }
    }
}

/// The CloudEvents envelope: the packet's hash is its id (unique, and stable across exports,
/// so a receiver that gets one twice can drop the copy).
fn cloud_event(packet: &Packet, source: &str, data: Value, schema: Option<String>) -> Value {
    let mut event = json!({
        "specversion": "1.0",
        "id": packet.hash,
        "source": source,
        "type": format!("dev.jig.audit.{}", packet.kind),
        "time": rfc3339(packet.ts_us),
        "datacontenttype": "application/json",
        // Extension attributes: where the event sits in the chain.
        "jigseq": packet.seq,
        "jigprevhash": packet.prev_hash,
    });
    event["data"] = data;
    if let Some(subject) = packet.request_id.as_ref().or(packet.run_id.as_ref()) {
        event["subject"] = json!(subject);
    }
    if let Some(schema) = schema {
        event["dataschema"] = json!(schema);
    }
    event
}

/// What a packet says, as OCSF API Activity (class 6003): who (actor), what (api, resources),
/// what the policy or a person decided (actor.authorizations, disposition) and how it ended
/// (status); the rest of the packet under `unmapped.jig`.
fn ocsf(packet: &Packet, source: &str) -> Value {
    let kind = packet.kind.as_str();
    let decided = packet.call_decided();
    let (status_id, status) = match kind {
        "tool.call.result" | "tool.select.result" => (1, "Success"),
        "tool.call.failed" => (2, "Failure"),
        _ if decided.as_ref().is_some_and(|d| d.action == GovernanceAction::Deny) => (2, "Failure"),
        _ => (0, "Unknown"),
    };
    let decision = match kind {
        "tool.call.decision" => decided.as_ref().map(|d| d.action.as_str()),
        "approval.decided" => packet.approval_decided().map(|d| d.verdict.as_str()),
        "tool.call.pending_approval" => Some("require-approval"),
        _ => None,
    };
    // The Security Control profile's disposition, for the events that decide.
    let disposition = decision.map(|d| match d {
        "allow" => (1, "Allowed"),
        "deny" | "denied" => (2, "Blocked"),
        "approved" => (8, "Approved"),
        _ => (99, "Other"),
    });
    let (severity_id, severity) = match (status_id, disposition) {
        (2, _) | (_, Some((2, _))) => (3, "Medium"),
        _ => (1, "Informational"),
    };
    let mut actor = json!({ "user": { "name": packet.principal, "uid": packet.principal } });
    if let Some(session) = &packet.session_id {
        actor["session"] = json!({ "uid": session });
    }
    if let Some(decision) = decision {
        let mut authorization = json!({ "decision": decision });
        if let Some(decided) = &decided {
            authorization["policy"] = json!({ "name": decided.rule, "uid": decided.policy_hash });
        }
        actor["authorizations"] = json!([authorization]);
    }
    let mut event = json!({
        "category_uid": 6,
        "category_name": "Application Activity",
        "class_uid": 6003,
        "class_name": "API Activity",
        // Calling a tool is none of create/read/update/delete as OCSF counts them.
        "activity_id": 99,
        "activity_name": kind,
        "type_uid": 600_399,
        "type_name": "API Activity: Other",
        "time": packet.ts_us / 1000,
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "message": message(packet),
        "actor": actor,
        "api": {
            "operation": kind,
            "service": { "name": "jig" },
            "request": { "uid": packet.request_id },
        },
        "src_endpoint": { "svc_name": "jig" },
        "metadata": {
            "version": OCSF_VERSION,
            "product": { "name": "Jig", "vendor_name": "Jig", "version": env!("CARGO_PKG_VERSION") },
            "uid": packet.hash,
            "sequence": packet.seq,
            "log_name": source,
            "original_time": rfc3339(packet.ts_us),
            "profiles": ["security_control"],
        },
        "unmapped": { "jig": unmapped(packet) },
    });
    if let Some(tool) = &packet.tool {
        event["resources"] = json!([{ "name": tool, "type": "tool", "uid": packet.run_id }]);
    }
    if let Some(run) = &packet.run_id {
        event["metadata"]["correlation_uid"] = json!(run);
    }
    if let Some((id, name)) = disposition {
        event["disposition_id"] = json!(id);
        event["disposition"] = json!(name);
    }
    if let Some(error) = first_error(packet) {
        event["status_detail"] = json!(error);
    }
    event
}

/// One line for people reading the SIEM.
fn message(packet: &Packet) -> String {
    let who = packet.principal.as_deref().unwrap_or("someone");
    let tool = packet.tool.as_deref().unwrap_or("a tool");
    match packet.kind.as_str() {
        "tool.call.request" => format!("{who} called {tool}"),
        "tool.call.decision" => match packet.call_decided() {
            Some(d) => format!("the policy decided {} for {tool} ({})", d.action.as_str(), d.rule),
            None => format!("the policy decided ? for {tool} (no rule)"),
        },
        "tool.call.pending_approval" => format!("{tool} waits for a person's approval"),
        "approval.decided" => {
            let verdict = packet.approval_decided().map_or("decided", |d| d.verdict.as_str());
            format!("{who} {verdict} a call of {tool}")
        }
        "tool.call.result" => format!("{tool} succeeded"),
        "tool.call.failed" => {
            let state = packet.call_moved().and_then(|m| m.state).unwrap_or(RunState::Failed);
            format!("{tool} ended {state}")
        }
        other => format!("{other} by {who}"),
    }
}

fn first_error(packet: &Packet) -> Option<String> {
    let moved = packet.call_moved()?;
    let error = moved.first_error()?;
    let code = if error.code.is_empty() { "E_INTERNAL" } else { &error.code };
    Some(format!("{code}: {}", error.message))
}

/// The packet's own fields that OCSF has no place for, so nothing recorded is lost.
fn unmapped(packet: &Packet) -> Value {
    let mut jig = Map::new();
    jig.insert("kind".to_owned(), json!(packet.kind));
    jig.insert("seq".to_owned(), json!(packet.seq));
    jig.insert("prev_hash".to_owned(), json!(packet.prev_hash));
    jig.insert("hash".to_owned(), json!(packet.hash));
    for (key, value) in [
        ("thread_id", &packet.thread_id),
        ("run_id", &packet.run_id),
        ("args_hash", &packet.args_hash),
    ] {
        if let Some(value) = value {
            jig.insert(key.to_owned(), json!(value));
        }
    }
    jig.insert("data".to_owned(), packet.data.clone());
    Value::Object(jig)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(kind: &str, data: Value) -> Packet {
        Packet {
            seq: 7,
            kind: kind.to_owned(),
            ts_us: 1_795_886_192_663_861,
            session_id: Some("cli".to_owned()),
            thread_id: None,
            principal: Some("alice".to_owned()),
            request_id: Some("r1".to_owned()),
            run_id: Some("run1".to_owned()),
            tool: Some("file_write".to_owned()),
            args_hash: Some("aa".to_owned()),
            data,
            prev_hash: "00".repeat(32),
            hash: "ab".repeat(32),
        }
    }

    #[test]
    fn a_cloud_event_carries_the_packet_under_its_hash() {
        let p = packet("tool.call.request", json!({ "args": { "path": "x" } }));
        let event = render(&p, ExportFormat::CloudEvents, "jig/acme");
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["id"], p.hash);
        assert_eq!(event["type"], "dev.jig.audit.tool.call.request");
        assert_eq!(event["subject"], "r1");
        assert_eq!(event["time"], "2026-11-28T17:16:32.663Z");
        assert_eq!(event["jigseq"], 7);
        assert_eq!(event["data"], serde_json::to_value(&p).expect("json"));
    }

    #[test]
    fn an_ocsf_event_says_who_what_and_what_was_decided() {
        let denied = packet(
            "tool.call.decision",
            json!({ "action": "deny", "rule": "rules[2]", "policy_hash": "ph" }),
        );
        let event = render(&denied, ExportFormat::Ocsf, "jig/acme");
        let ocsf = &event["data"];
        assert_eq!(event["dataschema"], "https://schema.ocsf.io/1.3.0/classes/api_activity");
        assert_eq!(
            (ocsf["class_uid"].as_i64(), ocsf["type_uid"].as_i64()),
            (Some(6003), Some(600_399))
        );
        assert_eq!(ocsf["actor"]["user"]["name"], "alice");
        assert_eq!(ocsf["actor"]["authorizations"][0]["decision"], "deny");
        assert_eq!(ocsf["actor"]["authorizations"][0]["policy"]["name"], "rules[2]");
        assert_eq!(
            (ocsf["disposition_id"].as_i64(), ocsf["status_id"].as_i64()),
            (Some(2), Some(2))
        );
        assert_eq!(ocsf["resources"][0]["name"], "file_write");
        assert_eq!(ocsf["time"], 1_795_886_192_663_i64);
        assert_eq!(ocsf["unmapped"]["jig"]["data"]["rule"], "rules[2]");
        let approved =
            packet("approval.decided", json!({ "approval_id": "a1", "verdict": "approved" }));
        let ocsf = &render(&approved, ExportFormat::Ocsf, "jig/acme")["data"];
        assert_eq!(
            (ocsf["disposition_id"].as_i64(), ocsf["severity_id"].as_i64()),
            (Some(8), Some(1))
        );
    }
}
