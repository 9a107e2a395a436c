//! Paged, filtered queries over runs: what the audit timeline shows.
//!
//! Pages are keyset-paged (newest first, by creation time then request id), so the page after a
//! cursor costs the same at row 100 as at row 100,000 and a row recorded meanwhile never shifts
//! a page. Listed runs leave out their recorded response (a page stays small); one run's detail
//! has it.

use serde::{Deserialize, Serialize};

use crate::records::{RunRecord, RunState};
use crate::rows::run_from_row;
use crate::{AuditError, Store};
use sqlx::Row;

/// The most rows one page holds.
pub const MAX_PAGE: i64 = 1000;

/// Which runs, from where.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunQuery {
    /// Only this tool.
    pub tool: Option<String>,
    /// Only runs in this state (`approved`: also the calls a person approved, whatever their
    /// approved run did).
    pub state: Option<RunState>,
    /// Only this session.
    pub session: Option<String>,
    /// Only this principal.
    pub principal: Option<String>,
    /// Created at or after (µs since the epoch).
    pub since_us: Option<i64>,
    /// Created before (µs since the epoch).
    pub until_us: Option<i64>,
    /// Text in the tool, ids, principal, session, rule, error or the request's arguments
    /// (case-insensitive).
    pub text: Option<String>,
    /// Continue after this cursor (from the previous page).
    pub after: Option<String>,
    /// Rows wanted (at most [`MAX_PAGE`]).
    pub limit: i64,
}

/// One page of runs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunPage {
    /// The runs (their `response` left out).
    pub runs: Vec<RunRecord>,
    /// The cursor of the next page, when there is one.
    pub next: Option<String>,
}

/// Columns of a listed run: all but the response.
const LISTED: &str = "request_id, run_id, tool, version, session_id, thread_id, principal, \
    params_hash, policy_hash, deterministic, state, rule, created_us, updated_us, duration_ms, \
    CAST(NULL AS TEXT) AS response, error, replayed_from, owner, deadline_us, person, definition, resumed_as, resumes";

/// Arguments bound in order, each named by its `$n`.
#[derive(Default)]
struct Binds(Vec<Bind>);

enum Bind {
    Text(String),
    Int(i64),
}

impl Binds {
    fn text(&mut self, value: impl Into<String>) -> String {
        self.0.push(Bind::Text(value.into()));
        format!("${}", self.0.len())
    }

    fn int(&mut self, value: i64) -> String {
        self.0.push(Bind::Int(value));
        format!("${}", self.0.len())
    }
}

/// Columns whose text the free-text filter searches.
const SEARCHED: [&str; 7] = [
    "tool",
    "request_id",
    "run_id",
    "COALESCE(principal, '')",
    "COALESCE(session_id, '')",
    "COALESCE(rule, '')",
    "COALESCE(error, '')",
];

impl Store {
    /// A page of runs matching `query`.
    pub async fn query_runs(&self, query: &RunQuery) -> Result<RunPage, AuditError> {
        let mut binds = Binds::default();
        let mut clauses: Vec<String> = Vec::new();
        if let Some(tool) = &query.tool {
            clauses.push(format!("tool = {}", binds.text(tool)));
        }
        match query.state {
            // A call a person approved reads as what its approved run did (`succeeded` …),
            // linked to that run: asking for the approved ones finds those too.
            Some(RunState::Approved) => clauses.push(format!(
                "(state = {} OR resumed_as IS NOT NULL)",
                binds.text(RunState::Approved.as_str())
            )),
            Some(state) => clauses.push(format!("state = {}", binds.text(state.as_str()))),
            None => {}
        }
        if let Some(session) = &query.session {
            clauses.push(format!("session_id = {}", binds.text(session)));
        }
        if let Some(principal) = &query.principal {
            clauses.push(format!("LOWER(principal) = LOWER({})", binds.text(principal)));
        }
        if let Some(needle) = query.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let at = binds.text(format!("%{}%", escape_like(&needle.to_lowercase())));
            let like = |column: &str| format!("LOWER({column}) LIKE {at} ESCAPE '\\'");
            let mut any: Vec<String> = SEARCHED.iter().map(|c| like(c)).collect();
            // The request's arguments are in its request packet.
            any.push(format!(
                "EXISTS (SELECT 1 FROM packets p WHERE p.request_id = runs.request_id \
                 AND p.kind = 'tool.call.request' AND {})",
                like("p.payload")
            ));
            clauses.push(format!("({})", any.join(" OR ")));
        }
        if let Some(since) = query.since_us {
            clauses.push(format!("created_us >= {}", binds.int(since)));
        }
        if let Some(until) = query.until_us {
            clauses.push(format!("created_us < {}", binds.int(until)));
        }
        if let Some(cursor) = &query.after {
            let (created, request_id) = parse_cursor(cursor)?;
            let (created, request_id) = (binds.int(created), binds.text(request_id));
            clauses.push(format!(
                "(created_us < {created} OR (created_us = {created} AND request_id > {request_id}))"
            ));
        }
        let limit = query.limit.clamp(1, MAX_PAGE);
        let filter = if clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", clauses.join(" AND "))
        };
        let sql = format!(
            "SELECT {LISTED} FROM runs {filter} ORDER BY created_us DESC, request_id LIMIT {}",
            binds.int(limit + 1)
        );
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for bind in binds.0 {
            statement = match bind {
                Bind::Text(value) => statement.bind(value),
                Bind::Int(value) => statement.bind(value),
            };
        }
        let rows = statement.fetch_all(&self.pool).await?;
        let mut runs = rows.iter().map(run_from_row).collect::<Result<Vec<_>, _>>()?;
        let wanted = usize::try_from(limit).unwrap_or(0);
        let next = if runs.len() > wanted {
            runs.truncate(wanted);
            runs.last().map(|run| format!("{}.{}", run.created_us, run.request_id))
        } else {
            None
        };
        Ok(RunPage { runs, next })
    }
}

/// How many runs a tool has in one state, and their summed execution time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunTotal {
    /// The tool.
    pub tool: String,
    /// The state.
    pub state: RunState,
    /// How many runs.
    pub count: i64,
    /// Their execution time, summed (ms).
    pub duration_ms: i64,
}

impl Store {
    /// Runs counted by tool and state, over the whole store (for dashboards: `/metrics`).
    pub async fn run_totals(&self) -> Result<Vec<RunTotal>, AuditError> {
        // SUM over a BIGINT is NUMERIC on PostgreSQL: cast it back.
        let rows = sqlx::query(
            "SELECT tool, state, COUNT(*) AS n, CAST(COALESCE(SUM(duration_ms), 0) AS BIGINT) AS ms \
             FROM runs GROUP BY tool, state ORDER BY tool, state",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let state: String = row.try_get("state")?;
                Ok(RunTotal {
                    tool: row.try_get("tool")?,
                    state: RunState::parse(&state).ok_or_else(|| {
                        AuditError::BadQuery(format!("stored state `{state}` is unknown"))
                    })?,
                    count: row.try_get("n")?,
                    duration_ms: row.try_get("ms")?,
                })
            })
            .collect()
    }
}

/// `CREATED.REQUEST_ID` → its parts.
fn parse_cursor(cursor: &str) -> Result<(i64, String), AuditError> {
    cursor
        .split_once('.')
        .and_then(|(created, id)| Some((created.parse().ok()?, id.to_owned())))
        .ok_or_else(|| AuditError::BadQuery(format!("`{cursor}` is not a cursor of this listing")))
}

/// `%`, `_` and `\` match themselves.
fn escape_like(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
