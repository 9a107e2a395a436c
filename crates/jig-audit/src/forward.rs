//! The places of the audit's live forwarders (`forward_cursors`): the last seq each receiver
//! took, and the lease that lets one process at a time forward it. A forwarder reads packets
//! after its place, sends them, and only then moves its place on, so whatever is not known to
//! have arrived is sent again (at least once; a receiver drops copies by seq).

use sqlx::Row as _;

use crate::error::AuditError;
use crate::store::Store;

/// A forwarder's place, as the process holding its lease sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The last seq the receiver took (0: nothing yet).
    pub seq: i64,
}

impl Store {
    /// Take or renew the lease of forwarder `name` for `holder` until `until_us` — when nobody
    /// holds it, `holder` does, or the holder's lease ran out before `now_us` — and its place.
    /// `None`: another process forwards it.
    pub async fn claim_forward(
        &self,
        name: &str,
        holder: &str,
        now_us: i64,
        until_us: i64,
    ) -> Result<Option<Place>, AuditError> {
        sqlx::query(
            "INSERT INTO forward_cursors (name, seq, holder, lease_until_us) VALUES ($1, 0, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
             lease_until_us = excluded.lease_until_us \
             WHERE forward_cursors.holder = excluded.holder OR forward_cursors.lease_until_us < $4",
        )
        .bind(name)
        .bind(holder)
        .bind(until_us)
        .bind(now_us)
        .execute(self.pool())
        .await?;
        let row = sqlx::query("SELECT seq, holder FROM forward_cursors WHERE name = $1")
            .bind(name)
            .fetch_one(self.pool())
            .await?;
        let held: String = row.try_get("holder")?;
        Ok((held == holder).then(|| Place { seq: row.try_get("seq").unwrap_or(0) }))
    }

    /// Move forwarder `name`'s place on to `seq` (never back), if `holder` still holds its
    /// lease; `false` when it does not (another process took over: stop sending).
    pub async fn advance_forward(
        &self,
        name: &str,
        holder: &str,
        seq: i64,
    ) -> Result<bool, AuditError> {
        let done = sqlx::query(
            "UPDATE forward_cursors SET seq = CASE WHEN seq < $1 THEN $1 ELSE seq END \
             WHERE name = $2 AND holder = $3",
        )
        .bind(seq)
        .bind(name)
        .bind(holder)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Give up `holder`'s lease of forwarder `name` (a process stopping): the next process
    /// takes it at once instead of when it runs out.
    pub async fn release_forward(&self, name: &str, holder: &str) -> Result<(), AuditError> {
        sqlx::query(
            "UPDATE forward_cursors SET lease_until_us = 0 WHERE name = $1 AND holder = $2",
        )
        .bind(name)
        .bind(holder)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every forwarder's place, by name.
    pub async fn forward_places(&self) -> Result<Vec<(String, i64)>, AuditError> {
        let rows = sqlx::query("SELECT name, seq FROM forward_cursors ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(|row| Ok((row.try_get("name")?, row.try_get("seq")?))).collect()
    }
}
