//! Reading the audit record: what every surface shows of the history (recent packets, one run
//! with its packets, approvals, the chain head) and the chain check ([`History::verify`]).
//!
//! A `History` opens the store alone, without loading the project, so a project with a broken
//! tool file can still be audited; [`crate::Engine::history`] gives the one of a running engine.

mod verify;

use jig_audit::{ApprovalRecord, ApprovalState, Packet, RunRecord, Store};
pub use jig_audit::{JobSummary, MAX_PAGE, RunPage, RunQuery, RunTotal};
use serde::Serialize;

use crate::EngineError;

pub use jig_audit::GENESIS;
pub use jig_audit::checkpoint::{Checkpoint, NoteError};
pub use jig_audit::signed_head::{SignatureError, SignedHead, generate_key};
pub use jig_outbound::export::{ExportFormat, OCSF_VERSION, render};
pub use verify::{ChainStatus, ExpectedHead, Head, verify_missing};

/// Who reads approvals, for what they may see of a pending request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reader {
    /// The person.
    pub person: String,
    /// Whether they may decide approvals (an approver; the person at the machine).
    pub may_approve: bool,
}

impl Reader {
    /// `approval` as this reader sees it: the request in clear for someone who may decide it
    /// or who asked it, else with its secrets redacted.
    fn sees(&self, approval: ApprovalRecord) -> ApprovalRecord {
        let reveal = self.may_approve
            || approval.principal.as_deref().map(crate::identity::canonical_principal)
                == Some(crate::identity::canonical_principal(&self.person));
        approval.seen_by(reveal)
    }
}

/// Read access to an audit store.
#[derive(Debug, Clone)]
pub struct History {
    store: Store,
}

/// The largest stored result a run's detail shows whole (bytes of JSON); a larger one stays
/// the reference to its blob.
pub const SHOWN_WHOLE: i64 = 1024 * 1024;

/// One run and every packet recorded for it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunDetail {
    /// The run.
    pub run: RunRecord,
    /// Its packets, in chain order.
    pub packets: Vec<Packet>,
    /// The batch job it submitted (seed 001's slurm and hybrid plans), if any.
    pub job: Option<JobSummary>,
}

impl History {
    /// Open the store at `target` (a path to an SQLite file or a database URL), creating it when
    /// needed.
    pub async fn open(target: &str) -> Result<Self, EngineError> {
        Ok(Self { store: Store::open(target).await? })
    }

    pub(crate) fn of(store: Store) -> Self {
        Self { store }
    }

    /// The latest `limit` packets, newest first, optionally of one tool.
    pub async fn latest(&self, limit: i64, tool: Option<&str>) -> Result<Vec<Packet>, EngineError> {
        Ok(self.store.latest_packets(limit.max(0), tool).await?)
    }

    /// Up to `limit` packets after `after_seq`, in chain order (an export pages through these).
    pub async fn packets(&self, after_seq: i64, limit: i64) -> Result<Vec<Packet>, EngineError> {
        Ok(self.store.packets(after_seq, limit).await?)
    }

    /// A page of runs, newest first, filtered by `query`.
    pub async fn runs(&self, query: &RunQuery) -> Result<RunPage, EngineError> {
        Ok(self.store.query_runs(query).await?)
    }

    /// The run whose request id or run id starts with `id`, with its packets; a result
    /// stored as a blob is shown whole (up to [`SHOWN_WHOLE`]).
    pub async fn run(&self, id: &str) -> Result<Option<RunDetail>, EngineError> {
        let Some(mut run) = self.store.run(id).await? else { return Ok(None) };
        let mut packets = self.store.packets_of(&run.request_id).await?;
        let job = self.store.job_summary(&run.request_id).await?;
        if let Some(response) = run.response.as_mut() {
            self.show_whole(&mut response["data"]).await;
        }
        for packet in &mut packets {
            if packet.data.get("data").is_some() {
                self.show_whole(&mut packet.data["data"]).await;
            }
        }
        Ok(Some(RunDetail { run, packets, job }))
    }

    /// `value` (a call's result) read back from its blob when it is a reference to one no
    /// larger than [`SHOWN_WHOLE`]: what a person or an agent reading the record sees. The
    /// chain covers the reference; `jig audit verify` checks the blob against it.
    async fn show_whole(&self, value: &mut serde_json::Value) {
        let Some(hash) = jig_audit::blob::referenced(value) else { return };
        if value["bytes"].as_i64().is_none_or(|bytes| bytes > SHOWN_WHOLE) {
            return;
        }
        if let Ok(Some(whole)) = self.store.blob(hash).await {
            *value = whole;
        }
    }

    /// The latest `limit` batch jobs with where their runs stand, newest first.
    pub async fn jobs(&self, limit: i64) -> Result<Vec<JobSummary>, EngineError> {
        Ok(self.store.job_summaries(limit.clamp(1, MAX_PAGE)).await?)
    }

    /// The scheduler job of the call `request_id`, if it handed one over.
    pub async fn job(&self, request_id: &str) -> Result<Option<jig_audit::JobRecord>, EngineError> {
        Ok(self.store.job(request_id).await?)
    }

    /// The run of exactly this request id, without its packets (its result shown whole, as
    /// in [`History::run`]).
    pub async fn call(&self, request_id: &str) -> Result<Option<RunRecord>, EngineError> {
        let mut run = self.store.run_of_request(request_id).await?;
        if let Some(response) = run.as_mut().and_then(|r| r.response.as_mut()) {
            self.show_whole(&mut response["data"]).await;
        }
        Ok(run)
    }

    /// Approvals, all or only those still pending, newest first, as `reader` sees them: a
    /// pending request in clear for someone who may decide it (or who asked it), else with its
    /// secrets redacted.
    pub async fn approvals(
        &self,
        pending_only: bool,
        reader: &Reader,
    ) -> Result<Vec<ApprovalRecord>, EngineError> {
        let state = pending_only.then_some(ApprovalState::Pending);
        let approvals = self.store.approvals(state).await?;
        Ok(approvals.into_iter().map(|approval| reader.sees(approval)).collect())
    }

    /// One approval as `reader` sees it (as in [`History::approvals`]).
    pub async fn approval(
        &self,
        id: &str,
        reader: &Reader,
    ) -> Result<Option<ApprovalRecord>, EngineError> {
        Ok(self.store.approval(id).await?.map(|approval| reader.sees(approval)))
    }

    /// Runs counted by tool and state, with their summed execution time.
    pub async fn run_totals(&self) -> Result<Vec<RunTotal>, EngineError> {
        Ok(self.store.run_totals().await?)
    }

    /// Calls over a window, per tool and bucket (the metrics charts).
    pub async fn series(
        &self,
        query: jig_audit::SeriesQuery,
    ) -> Result<jig_audit::Series, EngineError> {
        Ok(self.store.series(query).await?)
    }

    /// The chain's head: the last seq and its hash.
    pub async fn head(&self) -> Result<(i64, String), EngineError> {
        Ok(self.store.head().await?)
    }

    /// The head signed with the Ed25519 key whose seed (hex) is `seed`, with the same head as a
    /// checkpoint signed note under `origin`.
    pub async fn signed_head(
        &self,
        seed: &str,
        origin: &str,
    ) -> Result<Result<SignedHead, NoteError>, EngineError> {
        let (seq, hash) = self.store.head().await?;
        Ok(sign_head(seq, hash, seed, origin))
    }
}

/// `(seq, hash)` signed with `seed`, with its checkpoint note under `origin`.
fn sign_head(seq: i64, hash: String, seed: &str, origin: &str) -> Result<SignedHead, NoteError> {
    let mut head = SignedHead::sign(seq, &hash, seed)?;
    let checkpoint = Checkpoint { origin: origin.to_owned(), size: seq, hash };
    head.checkpoint = Some(checkpoint.sign(seed)?);
    Ok(head)
}
