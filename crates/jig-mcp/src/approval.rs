//! A call that needs approval, asked of the person at the client through MCP elicitation.
//!
//! The person sees exactly what will run (the tool, the arguments as the engine recorded them
//! for the reviewer, a command's argv, the rule and why) and answers approve or deny; the answer
//! goes through the application layer's approve or deny in that person's name, bound to that
//! exact request, and the call is then dispatched again to consume the approval. Where the
//! client cannot be asked (no elicitation, the policy turns it off, or the person may not
//! approve their own agent's call), the call answers with the approval's id instead and a
//! retry with the same arguments runs once someone approved it elsewhere.

use jig_engine::{ApprovalRecord, Engine};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

/// What the person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Approved: dispatch the call again to run it.
    Approved,
    /// Denied, recorded.
    Denied,
    /// Not decided here (dismissed, unsupported, or refused by the engine, with why): the
    /// approval stays pending for someone else.
    Undecided(String),
}

/// Whether `peer` can be asked, and the policy lets Jig ask `person` about `approval`.
pub fn can_ask(
    engine: &Engine,
    peer: &Peer<RoleServer>,
    approval: &ApprovalRecord,
    person: &str,
) -> bool {
    let policy = engine.policy();
    let config = policy.config();
    if !config.mcp.elicit_approvals {
        return false;
    }
    let supports = peer.peer_info().is_some_and(|info| info.capabilities.elicitation.is_some());
    // Where self-approval is forbidden the person behind an agent may not approve its calls.
    let own = approval.principal.as_deref().map(jig_engine::canonical_principal)
        == Some(jig_engine::canonical_principal(person));
    supports && (config.approvals.self_approval || !own)
}

/// Ask the person at `peer` about `approval`, and record their answer as `person`.
pub async fn ask(
    app: &jig_app::App,
    peer: &Peer<RoleServer>,
    approval: &ApprovalRecord,
    person: &jig_app::Actor,
) -> Answer {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(approval),
        requested_schema: schema(),
    };
    let answer = match peer.create_elicitation(params).await {
        Ok(answer) => answer,
        Err(error) => return Answer::Undecided(format!("the client could not be asked: {error}")),
    };
    let decision = answer.content.as_ref().and_then(|c| c.get("decision")).and_then(Value::as_str);
    // The person's words, kept in the record with their decision and shown to the asker.
    let note = answer
        .content
        .as_ref()
        .and_then(|c| c.get("note"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|note| !note.is_empty())
        .map(|note| note.chars().take(NOTE_CHARS).collect::<String>());
    match (answer.action, decision) {
        (ElicitationAction::Accept, Some("approve")) => {
            match app.approve(person, approval.id.as_str(), note.as_deref()).await {
                Ok(done) if done.granted => Answer::Approved,
                Ok(done) => Answer::Undecided(format!(
                    "approved by {} of the {} people this call needs; it runs once the others approve (`jig approvals list`, the workbench), when it is called again",
                    done.approvers.len(),
                    done.required
                )),
                Err(error) => Answer::Undecided(error.to_string()),
            }
        }
        (ElicitationAction::Accept, _) | (ElicitationAction::Decline, _) => {
            let reason = note.as_deref().unwrap_or("declined at the MCP client");
            match app.deny(person, approval.id.as_str(), Some(reason)).await {
                Ok(_) => Answer::Denied,
                Err(error) => Answer::Undecided(error.to_string()),
            }
        }
        _ => Answer::Undecided("the person dismissed the question".into()),
    }
}

/// What the person reads: exactly what will run, and why it needs them.
fn message(approval: &ApprovalRecord) -> String {
    let request = &approval.request;
    let mut text = format!("Approve this call of `{}`?\n", approval.tool);
    if let Some(argv) = request.get("argv") {
        text.push_str(&format!("\nCommand (argv, exactly as it runs): {argv}"));
    }
    let args = request.get("args").cloned().unwrap_or(Value::Null);
    let args = serde_json::to_string_pretty(&args).unwrap_or_default();
    text.push_str(&format!("\nArguments:\n{args}\n"));
    text.push_str(&format!(
        "\nWhy it needs approval: {} (rule `{}`)",
        approval.reason, approval.rule
    ));
    text.push_str(&format!("\nApproval {} is for this exact request only, once.", approval.id));
    text
}

/// The longest note kept, in characters.
const NOTE_CHARS: usize = 500;

fn schema() -> ElicitationSchema {
    // `deny` is the default: a client that fills a form with its defaults refuses, never runs.
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "approve runs this exact call once; deny refuses it",
                "enum": ["approve", "deny"],
                "default": "deny",
            },
            "note": {
                "type": "string",
                "title": "Note",
                "description": "Why (optional): kept in the audit with your decision, and shown to who asked",
                "maxLength": NOTE_CHARS,
            }
        },
        "required": ["decision"],
    });
    // A fixed, valid schema (its test deserialises it); an empty one only if rmcp changed.
    serde_json::from_value(schema)
        .unwrap_or_else(|_| ElicitationSchema::new(std::collections::BTreeMap::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_is_a_valid_elicitation_schema() {
        let schema = serde_json::to_value(schema()).unwrap();
        assert_eq!(schema["properties"]["decision"]["enum"], json!(["approve", "deny"]));
        assert_eq!(schema["required"], json!(["decision"]));
        assert_eq!(schema["properties"]["decision"]["default"], json!("deny"));
        assert_eq!(schema["properties"]["note"]["maxLength"], json!(NOTE_CHARS));
    }
}
