//! Deciding several approvals at once: a reviewer facing the same request asked again and
//! again (by an agent's retries, or by several people) approves or denies them with one note.
//! Each approval is still decided on its own — its own packet in the chain, its own waiting
//! call run or ended — so one that someone else decided meanwhile fails alone.

use serde::Serialize;

use crate::{Actor, App, AppError};

/// At most this many approvals in one decision: a reviewer reads what they decide.
pub const MOST_AT_ONCE: usize = 200;

/// Approve or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Run each request.
    Approve,
    /// End each request, with the note as the reason.
    Deny,
}

/// What became of one approval of a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The approval.
    pub id: String,
    /// `approved`, `seconded` (recorded; more people must approve), `denied`, or `error`.
    pub outcome: &'static str,
    /// The request now running the approved call, when it waits in this process.
    pub resumed_as: Option<String>,
    /// Why it failed (`outcome` = `error`): the stable code and what happened.
    pub code: Option<String>,
    /// What happened, when it failed.
    pub message: Option<String>,
}

impl App {
    /// Decide `ids` as `actor` with one `note` (a deny's reason, which must be given; an
    /// approval's comment). The list is checked whole before anything is decided — empty,
    /// too long, repeated ids or a deny without a reason decide nothing.
    pub async fn decide_many(
        &self,
        actor: &Actor,
        ids: &[String],
        choice: Choice,
        note: Option<&str>,
    ) -> Result<Vec<Outcome>, AppError> {
        check(ids, choice, note)?;
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        let mut outcomes = Vec::with_capacity(ids.len());
        for id in ids {
            let done = match choice {
                Choice::Approve => self.approve(actor, id, note).await.map(|done| {
                    let outcome = if done.granted { "approved" } else { "seconded" };
                    (outcome, done.resumed_as)
                }),
                Choice::Deny => self.deny(actor, id, note).await.map(|_| ("denied", None)),
            };
            outcomes.push(match done {
                Ok((outcome, resumed_as)) => {
                    Outcome { id: id.clone(), outcome, resumed_as, code: None, message: None }
                }
                // Not being allowed to decide at all refuses the whole list, not each item.
                Err(error @ AppError::Forbidden(_)) => return Err(error),
                Err(error) => Outcome {
                    id: id.clone(),
                    outcome: "error",
                    resumed_as: None,
                    code: Some(error.code().as_str().to_owned()),
                    message: Some(error.to_string()),
                },
            });
        }
        Ok(outcomes)
    }
}

fn check(ids: &[String], choice: Choice, note: Option<&str>) -> Result<(), AppError> {
    if ids.is_empty() {
        return Err(AppError::Invalid("`ids`: name at least one approval".into()));
    }
    if ids.len() > MOST_AT_ONCE {
        return Err(AppError::Invalid(format!(
            "`ids`: {} approvals at once; at most {MOST_AT_ONCE}",
            ids.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
        return Err(AppError::Invalid(format!("`ids`: `{twice}` is named twice")));
    }
    if choice == Choice::Deny && note.is_none_or(|n| n.trim().is_empty()) {
        return Err(AppError::Invalid(
            "`note`: denying several requests at once needs the reason each asker reads".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("a{i}")).collect()
    }

    #[test]
    fn a_list_is_checked_whole() {
        assert!(check(&[], Choice::Approve, None).unwrap_err().to_string().contains("`ids`"));
        let long = check(&ids(MOST_AT_ONCE + 1), Choice::Approve, None).unwrap_err();
        assert!(long.to_string().contains("at most 200"), "{long}");
        let twice = check(&["x".into(), "y".into(), "x".into()], Choice::Approve, None);
        assert!(twice.unwrap_err().to_string().contains("`x` is named twice"));
        let bare = check(&ids(2), Choice::Deny, Some("  ")).unwrap_err();
        assert!(bare.to_string().contains("`note`"), "{bare}");
        assert_eq!(bare.code(), jig_model::ErrorCode::ValidationFail);
        check(&ids(MOST_AT_ONCE), Choice::Deny, Some("not today")).unwrap();
        check(&ids(1), Choice::Approve, None).unwrap();
    }
}
