//! Runbook runs as people drive them: start, read, act on a waiting step, pause, resume and
//! continue — each in an [`Actor`]'s name, with what their role allows checked here, once, for
//! every surface (the terminal, the workbench's API, MCP prompts).
//!
//! The runbook service below walks runs from their journals; this layer decides who may ask it
//! to, and records who asserted a name (`jig --as bob`) with every decision, as the queue does.

use jig_audit::{Packet, RunbookRunRecord};
use serde_json::{Map, Value};

pub use jig_runbook::scenario;
pub use jig_runbook::{
    Action, Need, Progress, Recorded, RunStatus, RunView, RunbookDetail, RunbookSummary, Waiting,
    risk,
};

use crate::{Actor, App, AppError};

impl App {
    /// The project's runbooks, by name.
    pub fn runbook_list(&self) -> Vec<RunbookSummary> {
        self.runbooks.list()
    }

    /// One runbook with the graph of its steps.
    pub fn runbook(&self, name: &str) -> Result<RunbookDetail, AppError> {
        Ok(self.runbooks.detail(name)?)
    }

    /// The latest runs, newest first.
    pub async fn runbook_runs(&self, limit: i64) -> Result<Vec<RunbookRunRecord>, AppError> {
        Ok(self.runbooks.runs(limit).await?)
    }

    /// A run as last walked (nothing runs).
    pub async fn run(&self, id: &str) -> Result<RunView, AppError> {
        Ok(self.runbooks.show(id).await?)
    }

    /// The packets run `id` appended to the audit chain, in order.
    pub async fn run_trace(&self, id: &str) -> Result<Vec<Packet>, AppError> {
        Ok(self.runbooks.trace(id).await?)
    }

    /// A file attached to run `id` as evidence, by its SHA-256: its name, media type and bytes.
    pub async fn run_attachment(
        &self,
        id: &str,
        sha256: &str,
    ) -> Result<(String, Option<String>, Vec<u8>), AppError> {
        Ok(self.runbooks.attachment(id, sha256).await?)
    }

    /// Start a run of `name` in `actor`'s name and walk it until it needs people. `stepwise`:
    /// every step waits for a go-ahead.
    pub async fn start_run(
        &self,
        actor: &Actor,
        name: &str,
        inputs: Map<String, Value>,
        stepwise: bool,
    ) -> Result<RunView, AppError> {
        self.may_run(actor)?;
        Ok(self.runbooks_of(actor).start(name, inputs, stepwise, &actor.principal).await?)
    }

    /// Walk a run again from its journal (after a restart, or to pick up a decision made
    /// elsewhere).
    pub async fn resume_run(&self, actor: &Actor, id: &str) -> Result<RunView, AppError> {
        self.may_run(actor)?;
        Ok(self.runbooks_of(actor).resume(id).await?)
    }

    /// Hold a run before its next step that would do something.
    pub async fn pause_run(&self, actor: &Actor, id: &str) -> Result<RunView, AppError> {
        self.may_run(actor)?;
        Ok(self.runbooks_of(actor).pause(id, &actor.principal).await?)
    }

    /// Continue an ended run with the runbook its outcome names, `inputs` over the outcome's.
    pub async fn follow_run(
        &self,
        actor: &Actor,
        id: &str,
        inputs: Map<String, Value>,
    ) -> Result<RunView, AppError> {
        self.may_run(actor)?;
        Ok(self.runbooks_of(actor).follow(id, inputs, &actor.principal).await?)
    }

    /// `actor` acts on the step waiting at `key`, and the run walks on. Deciding an approval,
    /// or giving a go-ahead governance asked for, is an approver's; giving a stepwise run's
    /// go-ahead, evidence or a choice is anyone's who may run. The service itself refuses a
    /// person's go-ahead to their own step where the runbook says so.
    pub async fn act_on_run(
        &self,
        actor: &Actor,
        id: &str,
        key: &str,
        action: Action,
    ) -> Result<RunView, AppError> {
        self.may_run(actor)?;
        if self.is_approving(id, key, &action).await? {
            self.may_approve(actor)?;
        }
        Ok(self.runbooks_of(actor).act(id, key, action, &actor.principal).await?)
    }

    /// A finished run as a scenario of its runbook (what `jig runbook test` replays).
    pub async fn record_scenario(&self, id: &str) -> Result<Recorded, AppError> {
        Ok(self.runbooks.record_scenario(id).await?)
    }

    /// Whether `action` at `key` decides something only an approver may: an approval, or a
    /// go-ahead the runbook's governance (not a stepwise walk) waits for.
    async fn is_approving(&self, id: &str, key: &str, action: &Action) -> Result<bool, AppError> {
        Ok(match action {
            Action::Approve | Action::Deny => true,
            Action::Run => self.runbooks.show(id).await?.progress.waiting.iter().any(|w| {
                w.key == key && matches!(&w.need, Need::Go { reason, .. } if reason != "stepwise")
            }),
            _ => false,
        })
    }

    /// The service acting for `actor`: decisions record who asserted their name.
    fn runbooks_of(&self, actor: &Actor) -> jig_runbook::Runbooks {
        self.runbooks.clone().asserted_by(actor.asserted_by.clone())
    }
}
