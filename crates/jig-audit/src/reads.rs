//! The store's reads of the chain and of what it records beside it: packets in order, of a
//! run or of a request; runs; idempotency keys; approvals; a session's usage.

use sqlx::{AssertSqlSafe, Row};

use crate::error::AuditError;
use crate::packet::Packet;
use crate::records::{
    ApprovalRecord, ApprovalState, KeyRecord, ReplayIdentity, RunRecord, SessionUsage,
};
use crate::rows::{approval_from_row, key_from_row, packet_from_row, run_from_row};
use crate::store::Store;

impl Store {
    /// Packets after `after_seq`, at most `limit`, in order.
    pub async fn packets(&self, after_seq: i64, limit: i64) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind(after_seq)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The last `limit` packets (of one tool, if given), in order.
    pub async fn latest_packets(
        &self,
        limit: i64,
        tool: Option<&str>,
    ) -> Result<Vec<Packet>, AuditError> {
        let rows = match tool {
            Some(tool) => {
                sqlx::query(
                    "SELECT * FROM (SELECT * FROM packets WHERE tool = $1 ORDER BY seq DESC LIMIT $2) AS latest ORDER BY seq",
                )
                .bind(tool)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
            None => {
                sqlx::query("SELECT * FROM (SELECT * FROM packets ORDER BY seq DESC LIMIT $1) AS latest ORDER BY seq")
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(packet_from_row).collect()
    }

    /// The packets a runbook run appended (its trace, the people's acts), in order.
    pub async fn packets_of_run(&self, run_id: &str) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE run_id = $1 ORDER BY seq")
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The packets of one request, in order.
    pub async fn packets_of(&self, request_id: &str) -> Result<Vec<Packet>, AuditError> {
        let rows = sqlx::query("SELECT * FROM packets WHERE request_id = $1 ORDER BY seq")
            .bind(request_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(packet_from_row).collect()
    }

    /// The most recent runs first.
    pub async fn runs(&self, limit: i64) -> Result<Vec<RunRecord>, AuditError> {
        let rows = sqlx::query("SELECT * FROM runs ORDER BY created_us DESC, request_id LIMIT $1")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// A run by request id, or the latest run of a run id (a unique prefix of either works).
    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>, AuditError> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let row = sqlx::query(
            "SELECT * FROM runs WHERE request_id LIKE $1 OR run_id LIKE $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(pattern)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// The run of exactly this request id.
    pub async fn run_of_request(&self, request_id: &str) -> Result<Option<RunRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM runs WHERE request_id = $1")
            .bind(request_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// The latest succeeded, non-replayed run of `identity` with a recorded response: what a
    /// deterministic tool replays (if this store vouched for it: the latest, so that a run
    /// this store recorded comes before one that came with the file).
    pub async fn replay_source(
        &self,
        identity: &ReplayIdentity<'_>,
    ) -> Result<Option<RunRecord>, AuditError> {
        self.latest_run_of(identity, "state = 'succeeded'").await
    }

    /// The latest run of `identity` in a state `states` (an SQL condition of this module's)
    /// with a recorded response, not itself a replay.
    pub(crate) async fn latest_run_of(
        &self,
        identity: &ReplayIdentity<'_>,
        states: &str,
    ) -> Result<Option<RunRecord>, AuditError> {
        let person = if identity.person.is_some() { "AND person = $3" } else { "" };
        // Put together from this module's constants only; every value is bound.
        let sql = AssertSqlSafe(format!(
            "SELECT * FROM runs WHERE run_id = $1 AND {states} AND response IS NOT NULL \
             AND replayed_from IS NULL AND definition = $2 {person} ORDER BY created_us DESC LIMIT 1"
        ));
        let mut query = sqlx::query(sql).bind(identity.run_id).bind(identity.definition);
        if let Some(person) = identity.person {
            query = query.bind(person);
        }
        let row = query.fetch_optional(&self.pool).await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// An idempotency key's record.
    pub async fn key(&self, key: &str) -> Result<Option<KeyRecord>, AuditError> {
        let row = sqlx::query("SELECT * FROM idempotency WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    /// Approvals, newest first; only those in `state` when given.
    pub async fn approvals(
        &self,
        state: Option<ApprovalState>,
    ) -> Result<Vec<ApprovalRecord>, AuditError> {
        let rows = match state {
            Some(state) => {
                sqlx::query("SELECT * FROM approvals WHERE state = $1 ORDER BY created_us DESC")
                    .bind(state.as_str())
                    .fetch_all(&self.pool)
                    .await?
            }
            None => {
                sqlx::query("SELECT * FROM approvals ORDER BY created_us DESC")
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(approval_from_row).collect()
    }

    /// One approval (a unique prefix of its id works).
    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, AuditError> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let rows = sqlx::query("SELECT * FROM approvals WHERE id LIKE $1 LIMIT 2")
            .bind(pattern)
            .fetch_all(&self.pool)
            .await?;
        match rows.as_slice() {
            [one] => approval_from_row(one).map(Some),
            _ => Ok(None),
        }
    }

    /// The latest approval asked for exactly this request (its hash), whatever its state.
    pub async fn approval_for_request(
        &self,
        request_hash: &str,
    ) -> Result<Option<ApprovalRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM approvals WHERE request_hash = $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(request_hash)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    /// The approval the call `request_id` waits (or waited) for.
    pub async fn approval_waited_for(
        &self,
        request_id: &str,
    ) -> Result<Option<ApprovalRecord>, AuditError> {
        let row = sqlx::query(
            "SELECT * FROM approvals WHERE request_id = $1 ORDER BY created_us DESC LIMIT 1",
        )
        .bind(request_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(approval_from_row).transpose()
    }

    /// Pending approvals whose time was over at `now`.
    pub async fn approvals_expired(&self, now: i64) -> Result<Vec<ApprovalRecord>, AuditError> {
        let rows = sqlx::query(
            "SELECT * FROM approvals WHERE state = 'pending' AND expires_us IS NOT NULL \
             AND expires_us <= $1 ORDER BY created_us LIMIT 500",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(approval_from_row).collect()
    }

    /// What a session has used.
    pub async fn usage(&self, session_id: &str) -> Result<SessionUsage, AuditError> {
        let row = sqlx::query("SELECT calls, bytes, wall_ms FROM sessions WHERE id = $1")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => SessionUsage {
                calls: row.try_get("calls")?,
                bytes: row.try_get("bytes")?,
                wall_ms: row.try_get("wall_ms")?,
            },
            None => SessionUsage::default(),
        })
    }
}
