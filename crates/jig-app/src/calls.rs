//! Calls: the one place a call's context is put together from who acts and what they ask.

use jig_engine::{CallContext, ToolRequest, ToolResponse};
use jig_model::ApprovalId;
use jig_model::prepared::PreparedJson;
use serde_json::Value;

use crate::{Actor, App, AppError};

/// A call as a surface received it.
#[derive(Debug, Clone, Default)]
pub struct CallSpec {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The request id, when the caller chose one (seed 003's fallback idempotency key).
    pub request_id: Option<String>,
    /// The session (budgets and approvals are per session).
    pub session: String,
    /// The thread (idempotency keys are per thread).
    pub thread: Option<String>,
    /// A one-time approval token for exactly this request.
    pub approval_token: Option<String>,
    /// A limit tighter than the tool's own.
    pub timeout: Option<std::time::Duration>,
    /// The caller forwards a large result as the built-in wrote it.
    pub prepared_results: bool,
    /// When the call was made (seconds since the epoch), if the caller says.
    pub timestamp: Option<i64>,
    /// Where the call's trace continues from, as the caller sent it.
    pub trace: jig_engine::telemetry::TraceOrigin,
}

impl App {
    /// The engine's view of `spec` made by `actor`. Every call a person or an agent makes runs
    /// with this context: a call that a person already approved for exactly this request runs
    /// without a token (its caller simply calls again), and one still pending is not asked
    /// again.
    pub fn context(&self, actor: &Actor, spec: &CallSpec) -> CallContext {
        CallContext {
            session_id: spec.session.clone(),
            thread_id: spec.thread.clone(),
            principal: actor.principal.clone(),
            asserted_by: actor.asserted_by.clone(),
            approval_token: spec.approval_token.clone(),
            timeout: spec.timeout,
            prepared_results: spec.prepared_results,
            retry_approved: true,
            trace: spec.trace.clone(),
            ..CallContext::default()
        }
    }

    /// The request `spec` is.
    fn request(spec: &CallSpec) -> ToolRequest {
        ToolRequest {
            kind: Default::default(),
            tool: spec.tool.clone(),
            args: spec.args.clone(),
            request_id: spec.request_id.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            session_id: Some(spec.session.clone()),
            timestamp: spec.timestamp,
        }
    }

    /// Run `spec` to its answer (and, when asked, a large result as its producer wrote it).
    pub async fn call(
        &self,
        actor: &Actor,
        spec: &CallSpec,
        context: Option<CallContext>,
    ) -> Result<(ToolResponse, Option<PreparedJson>), AppError> {
        self.may_run(actor)?;
        let context = context.unwrap_or_else(|| self.context(actor, spec));
        Ok(self.engine.dispatch_prepared(Self::request(spec), context).await)
    }

    /// Start `spec` and answer with its request id as soon as it runs (at once unless the
    /// engine is at its limit of calls in the background, and refused as busy when no place
    /// frees in time); its events and response follow on the engine's bus, and, if it waits
    /// for approval, it runs here once approved.
    pub async fn start(&self, actor: &Actor, spec: &CallSpec) -> Result<String, AppError> {
        self.may_run(actor)?;
        if self.engine.get(&spec.tool).is_none() {
            return Err(AppError::NotFound(format!("no tool `{}`", spec.tool)));
        }
        Ok(self.engine.start(Self::request(spec), self.context(actor, spec)).await?)
    }

    /// Stop a call: one running here, one running in another process on the store (asked of
    /// it through the store), the job it handed to a scheduler, or — while it waits for
    /// approval, wherever it was asked — withdraw the approval it waits for. Only one's own
    /// call, unless an administrator. `true` when something was stopped.
    pub async fn cancel(&self, actor: &Actor, request_id: &str) -> Result<bool, AppError> {
        self.may_run(actor)?;
        let by = (!actor.admin).then_some(actor.principal.as_str());
        if self.engine.cancel(request_id, by)? {
            return Ok(true);
        }
        if self.engine.cancel_job(request_id, by).await? {
            return Ok(true);
        }
        if let Some(run) = self.engine.history().call(request_id).await? {
            if !actor.admin && !actor.asked(run.principal.as_deref()) {
                return Err(AppError::Forbidden(format!(
                    "`{request_id}` is {}'s call; only they or an administrator may stop it",
                    run.principal.unwrap_or_default()
                )));
            }
            // Running in another process on the store (another instance behind the same load
            // balancer, the CLI, an agent's `jig mcp`): asked of it through the store.
            if self.engine.request_cancel(request_id, &actor.principal).await? {
                return Ok(true);
            }
            return Ok(self.engine.withdraw(request_id, &actor.principal).await?);
        }
        Ok(false)
    }

    pub(crate) fn may_run(&self, actor: &Actor) -> Result<(), AppError> {
        if actor.may_run {
            Ok(())
        } else {
            Err(AppError::Forbidden(format!("`{}` may not run tools here", actor.principal)))
        }
    }
}

/// What a call came to, as a surface acts on it: answered, or waiting for a person.
#[derive(Debug, Clone)]
pub enum Called {
    /// It answered: it ran (succeeded or failed), or it was refused.
    Answered(ToolResponse),
    /// It waits for approval `approval`; `response` says so (the rule, the reason), and the
    /// same request called again once it is approved runs it.
    Waiting {
        /// The approval it waits for.
        approval: ApprovalId,
        /// The answer while it waits.
        response: ToolResponse,
    },
}

impl Called {
    /// What `response` means for whoever called.
    pub fn of(response: ToolResponse) -> Self {
        match response.waits_for() {
            Some(approval) => Self::Waiting { approval, response },
            None => Self::Answered(response),
        }
    }

    /// The approval it waits for, while it waits.
    pub fn waits_for(&self) -> Option<&ApprovalId> {
        match self {
            Self::Waiting { approval, .. } => Some(approval),
            Self::Answered(_) => None,
        }
    }

    /// The answer, whichever it is.
    pub fn response(&self) -> &ToolResponse {
        match self {
            Self::Answered(response) | Self::Waiting { response, .. } => response,
        }
    }

    /// The answer, owned.
    pub fn into_response(self) -> ToolResponse {
        match self {
            Self::Answered(response) | Self::Waiting { response, .. } => response,
        }
    }
}

impl App {
    /// Run `spec` for `actor` in `context` (the surface's own, from [`App::context`] with its
    /// cancellation), answered as the caller acts on it: done, or waiting with its approval.
    pub async fn run_call(
        &self,
        actor: &Actor,
        spec: &CallSpec,
        context: CallContext,
    ) -> Result<Called, AppError> {
        self.may_run(actor)?;
        Ok(Called::of(self.engine.dispatch(Self::request(spec), context).await))
    }

    /// Approval `id` as the store has it now (its state, who decided and why), seen as
    /// `actor` may see it.
    pub async fn approval(
        &self,
        actor: &Actor,
        id: &ApprovalId,
    ) -> Result<Option<jig_engine::ApprovalRecord>, AppError> {
        let reader =
            jig_engine::Reader { person: actor.principal.clone(), may_approve: actor.may_approve };
        Ok(self.engine.history().approval(id.as_str(), &reader).await?)
    }
}
