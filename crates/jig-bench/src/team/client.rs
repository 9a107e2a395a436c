//! A person at the workbench making calls: starts each call on their instance, follows it on
//! their event stream to its answer (through an approval when it needs one), and when the
//! stream dropped, re-reads it. What they saw is kept, to hold against the store at the end.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::stream::{self, Delivery};

/// How long an answer may take on a connected stream before it counts as lost.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// What one call came to, as its caller saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request the caller started first.
    pub request_id: String,
    /// The request that ran it, when it was held for approval and then run.
    pub ran_as: Option<String>,
    /// A write (needed approval).
    pub write: Option<String>,
    /// The approval it waited for.
    pub approval: Option<String>,
    /// The answer's `ok`, as the caller last learned it (event, or re-read after a gap);
    /// `None`: the process running it was killed, and nothing ended it.
    pub ok: Option<bool>,
    /// How long from start to answer.
    pub took: Duration,
}

/// Everything one client saw.
#[derive(Debug, Default)]
pub struct Report {
    pub calls: Vec<Seen>,
    /// Answers that never came on a stream that stayed connected (must be 0).
    pub lost: usize,
    /// Times the stream dropped and came back.
    pub gaps: usize,
    /// Calls started again because the instance was gone when they were sent.
    pub resent: usize,
    /// Calls whose instance was killed while they ran: the store has no end for them.
    pub interrupted: Vec<String>,
}

pub struct Client {
    pub index: usize,
    pub addr: String,
    pub token: String,
    pub http: reqwest::Client,
    events: mpsc::UnboundedReceiver<Delivery>,
    /// Whether the stream dropped since the mark was last cleared.
    gap: bool,
    /// Whether it dropped since the current call started (its instance may have been
    /// restarted, losing the call it held).
    gap_in_call: bool,
    pub report: Report,
}

impl Client {
    /// A client of the instance at `addr`, its stream open.
    pub async fn connect(index: usize, addr: String, token: String) -> anyhow::Result<Self> {
        let mut events = stream::follow(addr.clone(), token.clone());
        loop {
            match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
                Ok(Some(Delivery::Connected)) => break,
                Ok(Some(_)) => {}
                _ => anyhow::bail!("client {index}: no event stream from {addr}"),
            }
        }
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
        Ok(Self {
            index,
            addr,
            token,
            http,
            events,
            gap: false,
            gap_in_call: false,
            report: Report::default(),
        })
    }

    /// Make calls until `budget` is spent: one in ten a write that needs approval.
    pub async fn run(mut self, budget: Arc<AtomicUsize>, writes_every: usize) -> Report {
        let mut n = 0usize;
        while budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1))
            .is_ok()
        {
            n += 1;
            let write = (n + self.index).is_multiple_of(writes_every);
            let seen = if write {
                let path = format!("out/c{}-{n}.txt", self.index);
                let args = json!({ "path": path, "content": format!("{}:{n}\n", self.index) });
                self.call("file_write", args, Some(path)).await
            } else {
                self.call("file_read", json!({ "path": "note.txt" }), None).await
            };
            self.report.calls.push(seen);
        }
        self.report
    }

    /// One call, to its end.
    async fn call(&mut self, tool: &str, args: Value, write: Option<String>) -> Seen {
        let began = Instant::now();
        self.gap_in_call = false;
        let body =
            json!({ "tool": tool, "args": args, "session": format!("client-{}", self.index) });
        let mut request_id = self.start(&body).await;
        let first = request_id.clone();
        let mut approval = None;
        let mut ran_as = None;
        loop {
            match self.answer(&first, &request_id, approval.as_deref()).await {
                Step::Done(ok) => {
                    let ok = Some(ok);
                    return Seen {
                        request_id: first,
                        ran_as,
                        write,
                        approval,
                        ok,
                        took: began.elapsed(),
                    };
                }
                Step::Waits(id) => approval = Some(id),
                // `answer` reads the call itself on a recheck; nothing new to act on.
                Step::Recheck => {}
                Step::Interrupted => {
                    self.report.interrupted.push(request_id.clone());
                    return Seen {
                        request_id: first,
                        ran_as,
                        write,
                        approval,
                        ok: None,
                        took: began.elapsed(),
                    };
                }
                Step::Runs(resumed) => {
                    if resumed != request_id {
                        ran_as = Some(resumed.clone());
                    }
                    request_id = resumed;
                }
                // Approved, but the process that held it is gone: call again, as a person
                // would; the identical request runs on the approval.
                Step::Again => {
                    request_id = self.start(&body).await;
                    ran_as = Some(request_id.clone());
                    self.report.resent += 1;
                }
            }
        }
    }

    /// `POST /api/calls` until an instance takes it (it may be restarting).
    async fn start(&mut self, body: &Value) -> String {
        loop {
            let sent = self
                .http
                .post(format!("http://{}/api/calls", self.addr))
                .bearer_auth(&self.token)
                .json(body)
                .send()
                .await;
            if let Ok(response) = sent
                && response.status().as_u16() == 202
                && let Ok(started) = response.json::<Value>().await
                && let Some(id) = started["request_id"].as_str()
            {
                return id.to_owned();
            }
            self.report.resent += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Wait for what happens next to `request_id` (or the approval it waits for); the call
    /// began as `first`.
    async fn answer(&mut self, first: &str, request_id: &str, approval: Option<&str>) -> Step {
        self.gap = false;
        let deadline = Instant::now() + ANSWER_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let delivery = match tokio::time::timeout(left, self.events.recv()).await {
                Ok(Some(delivery)) => delivery,
                Ok(None) => return self.reread(first, request_id).await,
                Err(_) => {
                    if !self.gap {
                        self.report.lost += 1;
                    }
                    return self.reread(first, request_id).await;
                }
            };
            match delivery {
                Delivery::Gap => {
                    self.gap = true;
                    self.gap_in_call = true;
                    self.report.gaps += 1;
                }
                // What was missed while it was down is read, as the workbench does.
                Delivery::Connected => return self.reread(first, request_id).await,
                Delivery::Event(event) => match step_of(&event, request_id, approval) {
                    Some(Step::Recheck) => return self.reread(first, request_id).await,
                    Some(step) => return step,
                    None => {}
                },
            }
        }
    }

    /// `GET /api/calls/{first}`: what the store says of the call, when the stream could not.
    /// The call as first asked is read, not `request_id` that was said to run it: the process
    /// that said so may have died before that request was recorded, and the first call's
    /// record follows whichever request ran it (`resumed_as`).
    async fn reread(&mut self, first: &str, request_id: &str) -> Step {
        let since = Instant::now();
        loop {
            let read = self
                .http
                .get(format!("http://{}/api/calls/{first}", self.addr))
                .bearer_auth(&self.token)
                .send()
                .await;
            if let Ok(response) = read
                && let Ok(call) = response.json::<Value>().await
            {
                let state = call["state"].as_str().unwrap_or_default();
                match state {
                    "succeeded" => return Step::Done(true),
                    "failed" | "denied" | "cancelled" | "expired" | "withdrawn" => {
                        return Step::Done(false);
                    }
                    // Approved and not run: called again only when the instance holding it
                    // may have restarted since (else the holder runs it, and says so).
                    "approved" if self.gap_in_call => return Step::Again,
                    "approved" => return Step::Runs(request_id.to_owned()),
                    // Run by another request than the one followed (resumed elsewhere, or
                    // called again): follow that one.
                    "running" => {
                        if let Some(ran) = call["resumed_as"].as_str()
                            && ran != request_id
                        {
                            return Step::Runs(ran.to_owned());
                        }
                    }
                    // Still waiting or running: back to the stream.
                    "pending_approval" => {
                        let asked = &call["response"]["errors"][0]["details"]["approval_id"];
                        if let Some(id) = asked.as_str() {
                            return Step::Waits(id.to_owned());
                        }
                    }
                    _ => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            if !self.gap {
                return Step::Runs(request_id.to_owned());
            }
            // Running on an instance that was killed: nothing will end it.
            if since.elapsed() > Duration::from_secs(10) {
                return Step::Interrupted;
            }
        }
    }
}

/// What an answer said.
enum Step {
    /// The call ended, ok or not.
    Done(bool),
    /// It waits for approval `id`.
    Waits(String),
    /// It runs (again) as this request.
    Runs(String),
    /// Approved, and nobody holds it: call again.
    Again,
    /// Approved without word of where it runs: read the call.
    Recheck,
    /// It was running where the process was killed.
    Interrupted,
}

/// What `event` says about `request_id` or `approval`, if anything.
fn step_of(event: &Value, request_id: &str, approval: Option<&str>) -> Option<Step> {
    if event["type"] == "ToolResponse" && event["request_id"] == request_id {
        let pending = event["errors"]
            .as_array()
            .and_then(|errors| errors.first())
            .and_then(|error| error["details"]["approval_id"].as_str());
        return Some(match (event["ok"].as_bool(), pending) {
            (Some(false), Some(id)) if approval.is_none() || approval == Some(id) => {
                Step::Waits(id.to_owned())
            }
            (ok, _) => Step::Done(ok == Some(true)),
        });
    }
    let approval = approval?;
    if event["event"] == "ApprovalDecided" && event["approval_id"] == approval {
        return match (event["verdict"].as_str(), event["resumed_as"].as_str()) {
            (Some("approved"), Some(resumed)) => Some(Step::Runs(resumed.to_owned())),
            (Some("denied" | "expired" | "withdrawn"), _) => Some(Step::Done(false)),
            // Approved, and this instance does not hold it (it restarted): read the call.
            (Some("approved"), None) => Some(Step::Recheck),
            _ => None,
        };
    }
    None
}
