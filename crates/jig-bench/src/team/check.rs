//! The run held against the store, and its figures.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use sqlx::Row;
use sqlx::any::AnyPoolOptions;

use super::approver::Heard;
use super::client::{Report, Seen};
use super::cluster::{self, Cluster};

/// What a run left to check.
pub struct Gathered<'a> {
    pub cluster: &'a Cluster,
    pub db: &'a str,
    /// Each client's instance and report, in client order.
    pub reports: Vec<(usize, Report)>,
    pub heard: Vec<Heard>,
    pub approved: usize,
    pub unheard: usize,
    pub wall: Duration,
    pub killed: Option<(usize, Duration)>,
}

/// What a run came to.
pub struct Outcome {
    calls: Vec<Seen>,
    wall: Duration,
    writes_ok: usize,
    approvals_by_state: Vec<(String, i64)>,
    runs_by_state: Vec<(String, i64)>,
    duplicate_runs: i64,
    left_approved: i64,
    file_problems: Vec<String>,
    disagreements: Vec<String>,
    lost: usize,
    gaps: usize,
    resent: usize,
    interrupted: usize,
    approved: usize,
    unheard: usize,
    across_ms: Vec<f64>,
    same_ms: Vec<f64>,
    chain: Result<(), String>,
    killed: Option<(usize, Duration)>,
}

impl Outcome {
    pub async fn gather(run: Gathered<'_>) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new().max_connections(2).connect(run.db).await?;
        let approvals = sqlx::query("SELECT id, principal, state, created_us FROM approvals")
            .fetch_all(&pool)
            .await?;
        let mut created = HashMap::new();
        let mut approvals_by_state: HashMap<String, i64> = HashMap::new();
        for row in &approvals {
            let id: String = row.try_get("id")?;
            let principal: Option<String> = row.try_get("principal")?;
            created
                .insert(id, (principal.unwrap_or_default(), row.try_get::<i64, _>("created_us")?));
            *approvals_by_state.entry(row.try_get("state")?).or_default() += 1;
        }
        let runs_by_state = sqlx::query("SELECT state, COUNT(*) AS n FROM runs GROUP BY state")
            .fetch_all(&pool)
            .await?
            .iter()
            .map(|row| Ok((row.try_get("state")?, row.try_get("n")?)))
            .collect::<Result<Vec<(String, i64)>, sqlx::Error>>()?;
        // Each write's arguments are its own: two successful runs of one is a call run twice.
        // (A run that waited and was then run by another request carries `resumed_as`.)
        let duplicate_runs = sqlx::query(
            "SELECT params_hash FROM runs WHERE tool = 'file_write' AND state = 'succeeded' \
             AND resumed_as IS NULL GROUP BY params_hash HAVING COUNT(*) > 1",
        )
        .fetch_all(&pool)
        .await?
        .len() as i64;
        let left_approved: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM approvals WHERE state = 'approved'")
                .fetch_one(&pool)
                .await?
                .try_get("n")?;
        pool.close().await;

        let instances = run.cluster.instances.len();
        let (mut across_ms, mut same_ms) = (Vec::new(), Vec::new());
        for heard in &run.heard {
            let Some((principal, at)) = created.get(&heard.approval) else { continue };
            let asker: usize =
                principal.strip_prefix("runner").and_then(|n| n.parse().ok()).unwrap_or(0);
            let ms = (heard.at_us - at) as f64 / 1e3;
            if asker % instances == heard.instance { &mut same_ms } else { &mut across_ms }
                .push(ms);
        }

        let mut file_problems = Vec::new();
        let mut writes_ok = 0;
        for (_, report) in &run.reports {
            for seen in &report.calls {
                let (Some(path), Some(true)) = (&seen.write, seen.ok) else { continue };
                writes_ok += 1;
                let holders: Vec<_> = run
                    .cluster
                    .instances
                    .iter()
                    .filter(|i| i.checkout.join(path).exists())
                    .collect();
                if holders.len() != 1 {
                    file_problems.push(format!("{path} is on {} checkouts", holders.len()));
                }
            }
        }

        let disagreements = disagreements(run.cluster, &run.reports).await;
        let chain = verify(run.cluster).await;
        let mut calls = Vec::new();
        let (mut lost, mut gaps, mut resent, mut interrupted) = (0, 0, 0, 0);
        for (_, report) in run.reports {
            lost += report.lost;
            gaps += report.gaps;
            resent += report.resent;
            interrupted += report.interrupted.len();
            calls.extend(report.calls);
        }
        let mut approvals_by_state: Vec<_> = approvals_by_state.into_iter().collect();
        approvals_by_state.sort();
        Ok(Self {
            calls,
            wall: run.wall,
            writes_ok,
            approvals_by_state,
            runs_by_state,
            duplicate_runs,
            left_approved,
            file_problems,
            disagreements,
            lost,
            gaps,
            resent,
            interrupted,
            approved: run.approved,
            unheard: run.unheard,
            across_ms,
            same_ms,
            chain,
            killed: run.killed,
        })
    }

    pub fn calls_per_second(&self) -> f64 {
        self.calls.len() as f64 / self.wall.as_secs_f64()
    }

    /// p50 and p95 of the calls that did not wait for a person, in ms.
    pub fn call_latency(&self) -> (f64, f64) {
        let mut ms: Vec<f64> = self
            .calls
            .iter()
            .filter(|c| c.approval.is_none())
            .map(|c| c.took.as_secs_f64() * 1e3)
            .collect();
        (percentile(&mut ms, 0.5), percentile(&mut ms, 0.95))
    }

    pub fn print(&self, instances: usize) {
        let (p50, p95) = self.call_latency();
        println!(
            "{} calls through {instances} instances in {:.1} s: {:.0} calls/s (calls without approval p50 {p50:.1} ms, p95 {p95:.1} ms)",
            self.calls.len(),
            self.wall.as_secs_f64(),
            self.calls_per_second()
        );
        if let Some((victim, at)) = self.killed {
            println!(
                "instance {victim} killed with SIGKILL at {:.1} s and started again 1 s later",
                at.as_secs_f64()
            );
        }
        println!(
            "writes that ran: {}; approvals given: {}; found only by reading the queue: {}; approvals by state: {:?}",
            self.writes_ok, self.approved, self.unheard, self.approvals_by_state
        );
        println!("runs by state: {:?}", self.runs_by_state);
        println!(
            "stream gaps: {}; calls sent again: {}; calls running where the process was killed: {}",
            self.gaps, self.resent, self.interrupted
        );
        let mut across = self.across_ms.clone();
        let mut same = self.same_ms.clone();
        println!(
            "request for approval → a reviewer on another instance: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms ({} heard); on the asker's instance: p50 {:.1} ms, p95 {:.1} ms ({} heard)",
            percentile(&mut across, 0.5),
            percentile(&mut across, 0.95),
            across.last().copied().unwrap_or(0.0),
            across.len(),
            percentile(&mut same, 0.5),
            percentile(&mut same, 0.95),
            same.len()
        );
    }

    /// What did not hold.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.duplicate_runs > 0 {
            failures.push(format!("{} writes ran more than once", self.duplicate_runs));
        }
        if self.left_approved > 0 {
            failures.push(format!("{} approvals were approved and never used", self.left_approved));
        }
        failures.extend(self.file_problems.iter().take(10).cloned());
        failures.extend(self.disagreements.iter().take(10).cloned());
        if self.disagreements.len() > 10 {
            failures.push(format!("… {} disagreements in all", self.disagreements.len()));
        }
        if self.lost > 0 {
            failures.push(format!("{} answers never came on a connected stream", self.lost));
        }
        if self.unheard > 0 {
            failures.push(format!(
                "{} requests for approval were never heard on a reviewer's connected stream",
                self.unheard
            ));
        }
        if let Err(why) = &self.chain {
            failures.push(format!("the chain does not verify: {why}"));
        }
        failures
    }
}

/// Each call as its caller saw it against the store's answer (`GET /api/calls/{id}`).
async fn disagreements(cluster: &Cluster, reports: &[(usize, Report)]) -> Vec<String> {
    let http = reqwest::Client::new();
    let addr = cluster.instances[0].addr();
    let checks = reports.iter().enumerate().flat_map(|(i, (_, report))| {
        let token = cluster::runner(i).1;
        report.calls.iter().map(move |seen| (token.clone(), seen.clone()))
    });
    futures_util::stream::iter(checks)
        .map(|(token, seen)| {
            let (http, addr) = (http.clone(), addr.clone());
            async move {
                let url = format!("http://{addr}/api/calls/{}", seen.request_id);
                let call: Value = match http.get(url).bearer_auth(token).send().await {
                    Ok(response) => response.json().await.unwrap_or(Value::Null),
                    Err(error) => return Some(format!("{}: {error}", seen.request_id)),
                };
                let state = call["state"].as_str().unwrap_or("?");
                // Run by another request (resumed, or called again): the store names that one.
                if let Some(ran_as) = &seen.ran_as
                    && seen.ok == Some(true)
                    && call["resumed_as"].as_str() != Some(ran_as.as_str())
                {
                    return Some(format!(
                        "{}: ran as {ran_as}, the store says it ran as {}",
                        seen.request_id, call["resumed_as"]
                    ));
                }
                let agrees = match seen.ok {
                    Some(true) => state == "succeeded",
                    Some(false) => !matches!(state, "succeeded" | "running" | "pending_approval"),
                    // Killed while it ran (nothing ended it), or before it was recorded at all.
                    None => state == "running" || call["state"].is_null(),
                };
                (!agrees).then(|| {
                    format!(
                        "{}: the caller saw {:?}, the store says {state}",
                        seen.request_id, seen.ok
                    )
                })
            }
        })
        .buffer_unordered(16)
        .filter_map(|x| async { x })
        .collect()
        .await
}

/// `jig audit verify` on the store.
async fn verify(cluster: &Cluster) -> Result<(), String> {
    let output = tokio::process::Command::new(&cluster.jig)
        .arg("--project")
        .arg(&cluster.instances[0].checkout)
        .args(["--db", &cluster.db, "audit", "verify"])
        .output()
        .await
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn percentile(values: &mut [f64], q: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let index = ((values.len() as f64 * q).ceil() as usize).saturating_sub(1);
    values.get(index).copied().unwrap_or(0.0)
}
