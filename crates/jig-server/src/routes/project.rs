//! `/api/session`, `/api/problems`, `/api/policy`, `/api/metrics`: who is acting, the watcher's
//! diagnostics, the effective policy, and the counters.

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::{Person, Via};
use crate::error::ApiError;
use crate::extract::Body;
use crate::state::AppState;
use jig_model::envelope::ErrorMessage;

/// Who is acting, where.
#[derive(Debug, Serialize, ToSchema)]
pub struct Session {
    /// The person behind the token.
    pub person: Person,
    /// The project's name.
    pub project: String,
    /// The registry's hash (changes when the files do).
    pub registry_hash: String,
    /// How many tools it has.
    pub tools: usize,
    /// How you were recognised (a signed-in browser may sign out; personal tokens are made
    /// signed in).
    pub via: Via,
    /// Whether this server signs people in with an OpenID provider.
    pub sign_in: bool,
    /// Whether this server makes personal API tokens (`jig serve` does; the desktop app, whose
    /// one person is you, does not).
    pub tokens: bool,
    /// Whether the policy lets a person approve their own requests (`approvals.self_approval`):
    /// then what you asked also waits for you.
    pub self_approval: bool,
    /// Where this project's audit is sent while Jig runs here (`config.audit.forward`): shown
    /// so that a forwarder a manifest brought along is seen, not only run.
    pub forwarded_to: Vec<ForwardedTo>,
    /// What the manifest names that would send data off the machine or write outside the
    /// project, and waits for a person's consent (`jig trust` in the project): it does nothing
    /// until then.
    pub waiting_consent: Vec<WaitingConsent>,
}

/// One thing the manifest names that waits for consent.
#[derive(Debug, Serialize, ToSchema)]
pub struct WaitingConsent {
    /// `forwarder`, `webhook`, `oidc` or `publish`.
    pub kind: String,
    /// Its name in the manifest.
    pub name: String,
    /// Where it would go (no credentials, query or fragment).
    pub target: String,
    /// What a person reads before consenting.
    pub description: String,
}

/// One receiver of the project's audit.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForwardedTo {
    /// The forwarder's name.
    pub name: String,
    /// Its receiver's URL: scheme, host, port and path (no credentials, query or fragment).
    pub url: String,
}

/// The receivers of `config.audit.forward` a person consented to: those that forward.
fn forwarded_to(snapshot: &jig_load::Snapshot) -> Vec<ForwardedTo> {
    snapshot
        .audit_forward()
        .iter()
        .filter(|forward| jig_load::trust::Outbound::forwarder(forward).trusted(snapshot.root()))
        .map(|forward| ForwardedTo { name: forward.name.clone(), url: shown_url(&forward.url) })
        .collect()
}

/// `url` as anyone who may read the session may see it: its scheme, host, port and path,
/// without a `user:password@`, a query or a fragment (where an intake's key could be written).
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "(not a URL)".to_owned() };
    let rest = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let host_start = rest[..authority_end].rfind('@').map_or(0, |at| at + 1);
    format!("{scheme}://{}", &rest[host_start..])
}

/// Who you are.
#[utoipa::path(get, path = "/api/session", operation_id = "session", tag = "project", responses((status = 200, body = Session)))]
pub async fn session(
    State(state): State<AppState>,
    Extension(person): Extension<Person>,
    Extension(via): Extension<Via>,
) -> Json<Session> {
    let snapshot = state.engine.snapshot();
    Json(Session {
        person,
        via,
        sign_in: state.access.people.is_some() && state.engine.sign_in_trusted(),
        tokens: state.access.people.is_some(),
        self_approval: state.engine.policy().config().approvals.self_approval,
        project: state.project.clone(),
        registry_hash: snapshot.registry_hash().to_owned(),
        tools: state.engine.list(None, None).len(),
        forwarded_to: forwarded_to(&snapshot),
        waiting_consent: state
            .engine
            .waiting_consent()
            .into_iter()
            .map(|item| WaitingConsent {
                kind: item.kind.as_str().to_owned(),
                description: item.describe(),
                name: item.name,
                target: item.target,
            })
            .collect(),
    })
}

/// The watcher's diagnostics: empty while the project loads.
#[utoipa::path(get, path = "/api/problems", operation_id = "problems", tag = "project",
    responses((status = 200, body = Vec<jig_model::Diagnostic>)))]
pub async fn problems(State(state): State<AppState>) -> Json<Vec<jig_model::Diagnostic>> {
    Json(state.engine.problems())
}

/// The effective policy.
#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyView {
    /// `policy_hash`: recorded with every run, part of its run id.
    pub hash: String,
    /// The effective policy's settings: the manifest's, defaults filled in, narrowed where a
    /// layer above the project says so. (Each layer's rules are in `report`.)
    #[schema(value_type = Object)]
    pub config: Value,
    /// The effective policy rule by rule: the layers above the project and its own, the tools
    /// each rule decides and what it overrode.
    pub report: jig_policy::report::PolicyReport,
}

/// The effective policy: the manifest's beneath the layers above it.
#[utoipa::path(get, path = "/api/policy", operation_id = "policy", tag = "project",
    responses((status = 200, body = PolicyView)))]
pub async fn policy(State(state): State<AppState>) -> Json<PolicyView> {
    let policy = state.engine.policy();
    Json(PolicyView {
        hash: policy.hash().to_owned(),
        config: serde_json::to_value(policy.config()).unwrap_or_default(),
        report: state.engine.policy_report(),
    })
}

/// The engine's counters and latency summaries.
#[utoipa::path(get, path = "/api/metrics", operation_id = "metrics", tag = "project",
    responses((status = 200, body = jig_engine::MetricsSnapshot)))]
pub async fn metrics(State(state): State<AppState>) -> Json<jig_engine::MetricsSnapshot> {
    Json(state.engine.metrics())
}

/// A draft policy to replay against the history.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WhatIfRequest {
    /// The draft: the `policy:` section as YAML or JSON.
    pub draft: String,
    /// How many of the latest calls to replay (1–1000, default 200).
    #[serde(default)]
    pub last: Option<usize>,
    /// Only calls of this tool.
    #[serde(default)]
    pub tool: Option<String>,
    /// Only calls by this principal.
    #[serde(default)]
    pub principal: Option<String>,
    /// Only calls at or after (µs since the epoch).
    #[serde(default)]
    pub since_us: Option<i64>,
    /// Only calls before (µs since the epoch).
    #[serde(default)]
    pub until_us: Option<i64>,
}

/// Which past calls a draft policy would now allow, ask about or deny, and by which rule;
/// nothing runs and nothing is recorded.
#[utoipa::path(post, path = "/api/policy/what-if", operation_id = "whatIf", tag = "project",
    request_body = WhatIfRequest,
    responses((status = 200, body = jig_engine::WhatIf), (status = 400, body = ErrorMessage)))]
pub async fn what_if(
    State(state): State<AppState>,
    Body(request): Body<WhatIfRequest>,
) -> Result<Json<jig_engine::WhatIf>, ApiError> {
    let draft = jig_engine::parse_draft(&request.draft)?;
    let query = jig_engine::history::RunQuery {
        tool: request.tool,
        principal: request.principal,
        since_us: request.since_us,
        until_us: request.until_us,
        ..Default::default()
    };
    let last = request.last.unwrap_or(200);
    Ok(Json(state.engine.what_if(draft, query, last).await?))
}

#[cfg(test)]
mod tests {
    use super::shown_url;

    #[test]
    fn a_receivers_url_is_shown_without_the_credentials_written_in_it() {
        assert_eq!(
            shown_url("https://jig:s3cret@siem.example:8088/services/collector/event"),
            "https://siem.example:8088/services/collector/event"
        );
        assert_eq!(shown_url("syslog+tls://siem.example:6514"), "syslog+tls://siem.example:6514");
        assert_eq!(
            shown_url("https://es.example/jig/_bulk?api_key=k@y#x"),
            "https://es.example/jig/_bulk"
        );
        assert_eq!(shown_url("https://a:b@es.example?key=1"), "https://es.example");
        assert_eq!(shown_url("no scheme"), "(not a URL)");
    }
}
