//! A reviewer: hears every request for approval on their instance's stream and approves the
//! ones that are theirs (the reviewers split the queue), each through an instance picked at
//! random — the load balancer sends them anywhere. After a gap in the stream they read the
//! queue, as the workbench does.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::stream::{self, Delivery};

/// When a reviewer heard of an approval.
#[derive(Debug, Clone)]
pub struct Heard {
    pub approval: String,
    /// Wall clock, µs since the epoch (to hold against the store's `created_us`).
    pub at_us: i64,
    /// The instance the reviewer listens on.
    pub instance: usize,
}

pub struct Reviewer {
    pub index: usize,
    pub of: usize,
    pub instance: usize,
    pub token: String,
    pub addrs: Vec<String>,
}

impl Reviewer {
    /// Review until `stop`: what was heard, how many approvals this reviewer gave, and how many
    /// it found only by reading the queue (never heard of on a connected stream).
    pub async fn run(self, stop: Arc<AtomicBool>) -> (Vec<Heard>, usize, usize) {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("an HTTP client");
        let mut events = stream::follow(self.addrs[self.instance].clone(), self.token.clone());
        let mut heard = Vec::new();
        let mut approved = 0;
        let mut seed = now_us().unsigned_abs() | 1;
        let mut unheard = 0;
        let mut swept = std::time::Instant::now();
        while !stop.load(Ordering::SeqCst) {
            // Every few seconds the queue is read too: a request never heard of shows here.
            if swept.elapsed() > Duration::from_secs(5) {
                swept = std::time::Instant::now();
                let known: std::collections::HashSet<&str> =
                    heard.iter().map(|h: &Heard| h.approval.as_str()).collect();
                let settled = now_us() - 2_000_000;
                let missed: Vec<String> = self
                    .queue(&http)
                    .await
                    .into_iter()
                    .filter(|(id, created)| {
                        *created < settled && self.mine(id) && !known.contains(id.as_str())
                    })
                    .map(|(id, _)| id)
                    .collect();
                for id in missed {
                    unheard += 1;
                    if self.approve(&http, &id, seed).await {
                        approved += 1;
                    }
                }
            }
            let delivery =
                match tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
                    Ok(Some(delivery)) => delivery,
                    Ok(None) => break,
                    Err(_) => continue,
                };
            let ids = match delivery {
                Delivery::Event(event) if event["event"] == "ApprovalRequested" => {
                    let id = event["approval_id"].as_str().unwrap_or_default().to_owned();
                    heard.push(Heard {
                        approval: id.clone(),
                        at_us: now_us(),
                        instance: self.instance,
                    });
                    vec![id]
                }
                // Back after a gap: what waits now, read from the queue.
                Delivery::Connected => {
                    self.queue(&http).await.into_iter().map(|(id, _)| id).collect()
                }
                _ => continue,
            };
            for id in ids.into_iter().filter(|id| self.mine(id)) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if self.approve(&http, &id, seed).await {
                    approved += 1;
                }
            }
        }
        (heard, approved, unheard)
    }

    fn mine(&self, id: &str) -> bool {
        id.bytes().fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b))) % self.of
            == self.index
    }

    /// Approve `id` through a random instance, the next one when that one is down.
    async fn approve(&self, http: &reqwest::Client, id: &str, seed: u64) -> bool {
        let n = self.addrs.len();
        let start = usize::try_from(seed % n as u64).unwrap_or(0);
        for attempt in 0..n * 3 {
            let addr = &self.addrs[(start + attempt) % n];
            let sent = http
                .post(format!("http://{addr}/api/approvals/{id}/approve"))
                .bearer_auth(&self.token)
                .json(&serde_json::json!({}))
                .send()
                .await;
            match sent.map(|r| r.status().as_u16()) {
                Ok(200) => return true,
                // Decided already (another reviewer's sweep, or a retry that landed).
                Ok(409 | 404) => return false,
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        false
    }

    /// The pending approvals (id, when asked), read from this reviewer's instance.
    async fn queue(&self, http: &reqwest::Client) -> Vec<(String, i64)> {
        let read = http
            .get(format!("http://{}/api/approvals", self.addrs[self.instance]))
            .bearer_auth(&self.token)
            .send()
            .await;
        let Ok(response) = read else { return Vec::new() };
        let list: Value = response.json().await.unwrap_or(Value::Null);
        list.as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|a| Some((a["id"].as_str()?.to_owned(), a["created_us"].as_i64()?)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
