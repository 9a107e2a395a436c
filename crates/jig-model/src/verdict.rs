//! How a decision on an approval came out: the one word the chain's `approval.decided` packets,
//! the engine's events, the notices and the API all use for it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What became of an approval when someone (or the clock) decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
// `ApprovalVerdict` in the API's document: the API has a tool's policy `Verdict` of its own.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ApprovalVerdict))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Approved: the call may run.
    Approved,
    /// One approval of several the rule asks for; the call still waits.
    Seconded,
    /// Refused, with a reason.
    Denied,
    /// Nobody decided in time.
    Expired,
    /// Its caller withdrew the request before anyone decided.
    Withdrawn,
    /// Someone who may not decide it tried to (their own request, where the policy forbids
    /// approving oneself); the approval still waits, and the attempt is on the record.
    Refused,
}

impl Verdict {
    /// The word on the wire and in the chain.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Seconded => "seconded",
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
            Self::Refused => "refused",
        }
    }

    /// Whether the request it decided will never run: denied, expired or withdrawn.
    pub fn ends_the_request(self) -> bool {
        matches!(self, Self::Denied | Self::Expired | Self::Withdrawn)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_verdict_is_its_word_on_the_wire_and_back() {
        use Verdict::*;
        for verdict in [Approved, Seconded, Denied, Expired, Withdrawn, Refused] {
            let wire = serde_json::to_value(verdict).unwrap();
            assert_eq!(wire, verdict.as_str());
            assert_eq!(serde_json::from_value::<Verdict>(wire).unwrap(), verdict);
        }
        assert!(serde_json::from_value::<Verdict>("approve".into()).is_err());
        assert!(!Verdict::Approved.ends_the_request() && !Verdict::Seconded.ends_the_request());
        assert!(!Verdict::Refused.ends_the_request() && Verdict::Expired.ends_the_request());
    }
}
