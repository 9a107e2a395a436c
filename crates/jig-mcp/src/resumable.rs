//! The events of `/mcp`'s streams, kept so a client that lost a stream (Jig closed it after
//! `policy.mcp.stream_hold`, or a proxy cut it) reconnects with `Last-Event-ID` and reads on
//! (MCP's SSE polling, SEP-1699). The service's own cache forgets a call's stream the moment
//! its answer is sent, so a client that reconnects after the answer would never read it; these
//! are kept a while after.
//!
//! An event's id is its stream's random token and its number: knowing one means having been
//! sent that stream (ids are only ever sent to the session that opened it, over the token that
//! opened it), so another session cannot read a stream by guessing. Bounded: at most
//! [`PER_STREAM`] events a stream, streams forgotten [`KEEP_ENDED`] after their answer or
//! [`KEEP_IDLE`] after their last event, and at most [`STREAMS`] streams.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use tokio::sync::Notify;

/// Events kept of one stream.
const PER_STREAM: usize = 256;
/// How long a stream's events are kept after its answer.
const KEEP_ENDED: Duration = Duration::from_secs(120);
/// How long a stream without an answer is kept after its last event.
const KEEP_IDLE: Duration = Duration::from_secs(3600);
/// Streams kept at most (the oldest goes first).
const STREAMS: usize = 10_000;
/// How long a replay waits for the rest of a stream that has no answer yet, before it ends
/// (the client then reconnects again).
const REPLAY_WAIT: Duration = Duration::from_secs(30);

/// The kept events, shared by every session of one service.
#[derive(Debug, Clone, Default)]
pub struct Events(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    streams: Mutex<Streams>,
    /// Wakes replays waiting for a stream's next event.
    appended: Notify,
}

/// The kept streams by the random token in their event ids (what a resume names), and each
/// stream's token by the service's stream id (what a new event names).
#[derive(Debug, Default)]
struct Streams {
    by_token: HashMap<String, Kept>,
    tokens: HashMap<String, String>,
    /// When old streams were last forgotten.
    swept: Option<Instant>,
}

#[derive(Debug)]
struct Kept {
    next: u64,
    events: VecDeque<(u64, ServerSseMessage)>,
    ended: Option<Instant>,
    touched: Instant,
}

/// Old streams are looked for at most this often (a new stream comes with every request).
const SWEEP: Duration = Duration::from_secs(1);

impl Inner {
    fn streams(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The events of the stream `token` after number `after`, and whether it has ended.
    fn after(&self, token: &str, after: u64) -> Option<(Vec<(u64, ServerSseMessage)>, bool)> {
        let streams = self.streams();
        let kept = streams.by_token.get(token)?;
        let events = kept.events.iter().filter(|(n, _)| *n > after).cloned().collect();
        Some((events, kept.ended.is_some()))
    }
}

impl Streams {
    /// Forget streams past their time (at most every [`SWEEP`]), and the oldest beyond
    /// [`STREAMS`].
    fn forget_old(&mut self) {
        let due = self.swept.is_none_or(|at| at.elapsed() >= SWEEP);
        if !due && self.by_token.len() < STREAMS {
            return;
        }
        self.swept = Some(Instant::now());
        self.by_token.retain(|_, kept| match kept.ended {
            Some(at) => at.elapsed() < KEEP_ENDED,
            None => kept.touched.elapsed() < KEEP_IDLE,
        });
        while self.by_token.len() >= STREAMS {
            let Some(oldest) = self
                .by_token
                .iter()
                .min_by_key(|(_, kept)| kept.touched)
                .map(|(token, _)| token.clone())
            else {
                break;
            };
            self.by_token.remove(&oldest);
        }
        let by_token = &self.by_token;
        self.tokens.retain(|_, token| by_token.contains_key(token));
    }
}

fn parse(event_id: &str) -> Option<(&str, u64)> {
    let (token, number) = event_id.rsplit_once('-')?;
    Some((token, number.parse().ok()?))
}

/// Where a replay is: the events read but not yet sent, the last number read.
struct Replay {
    inner: Arc<Inner>,
    token: String,
    after: u64,
    pending: VecDeque<(u64, ServerSseMessage)>,
    ended: bool,
    until: tokio::time::Instant,
}

impl Replay {
    async fn next(mut self) -> Option<(ServerSseMessage, Self)> {
        loop {
            if let Some((number, event)) = self.pending.pop_front() {
                self.after = number;
                return Some((event, self));
            }
            if self.ended {
                return None;
            }
            let inner = Arc::clone(&self.inner);
            let appended = inner.appended.notified();
            tokio::pin!(appended);
            // Registered before looking, so an event stored in between still wakes it.
            appended.as_mut().enable();
            let (events, ended) = inner.after(&self.token, self.after)?;
            self.pending.extend(events);
            self.ended = ended;
            if self.pending.is_empty() && !ended {
                tokio::time::timeout_at(self.until, appended).await.ok()?;
            }
        }
    }
}

#[async_trait::async_trait]
impl EventStore for Events {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<String, EventStoreError> {
        let id = {
            let mut streams = self.0.streams();
            let token = match streams.tokens.get(stream_id) {
                Some(token) => token.clone(),
                None => {
                    streams.forget_old();
                    let token = uuid::Uuid::new_v4().simple().to_string();
                    streams.tokens.insert(stream_id.to_owned(), token.clone());
                    token
                }
            };
            let kept = streams.by_token.entry(token.clone()).or_insert_with(|| Kept {
                next: 0,
                events: VecDeque::new(),
                ended: None,
                touched: Instant::now(),
            });
            let number = kept.next;
            kept.next += 1;
            let id = format!("{token}-{number}");
            let mut event = event.clone();
            event.event_id = Some(id.clone());
            let answer = event.message.as_deref().is_some_and(|message| {
                matches!(
                    message,
                    ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
                )
            });
            if kept.events.len() >= PER_STREAM {
                kept.events.pop_front();
            }
            kept.events.push_back((number, event));
            kept.touched = Instant::now();
            if answer {
                kept.ended = Some(Instant::now());
            }
            id
        };
        self.0.appended.notify_waiters();
        Ok(id)
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let Some((token, after)) = parse(last_event_id) else {
            return Err(format!("`{last_event_id}` is no event id of this server").into());
        };
        if self.0.after(token, after).is_none() {
            return Err(format!("no stream has the event `{last_event_id}` (any more)").into());
        }
        // What is kept, then what arrives, until the stream's answer or REPLAY_WAIT.
        let replay = Replay {
            inner: Arc::clone(&self.0),
            token: token.to_owned(),
            after,
            pending: VecDeque::new(),
            ended: false,
            until: tokio::time::Instant::now() + REPLAY_WAIT,
        };
        Ok(Box::pin(futures_util::stream::unfold(replay, Replay::next)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;
    use rmcp::model::{RequestId, ServerResult};

    fn answer() -> ServerSseMessage {
        let response =
            ServerJsonRpcMessage::response(ServerResult::empty(()), RequestId::Number(1));
        ServerSseMessage::from_message(response)
    }

    #[tokio::test]
    async fn a_replay_reads_on_from_the_last_event_until_the_answer() {
        let events = Events::default();
        let priming = ServerSseMessage::priming("", Duration::from_millis(250));
        let first = events.store_event("s", &priming).await.unwrap();
        let other = events.store_event("t", &priming).await.unwrap();
        // Each stream has its own random token: knowing one stream's ids tells nothing of another.
        assert_ne!(first.rsplit_once('-').unwrap().0, other.rsplit_once('-').unwrap().0);
        assert_eq!(first.rsplit_once('-').unwrap().0.len(), 32);
        let mut replay = events.replay_events_after(&first).await.unwrap();
        // Nothing after the first event yet: the replay waits for the answer, which ends it.
        let later = events.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            later.store_event("s", &answer()).await.unwrap();
        });
        let got = replay.next().await.expect("the answer");
        assert!(got.message.is_some());
        assert!(got.event_id.unwrap().ends_with("-1"));
        assert!(replay.next().await.is_none(), "the stream ends with its answer");
        // After the answer, a late reconnect still reads it.
        let again: Vec<_> = events.replay_events_after(&first).await.unwrap().collect().await;
        assert_eq!(again.len(), 1);
        assert!(events.replay_events_after("nobody-0").await.is_err());
        assert!(events.replay_events_after("not an id").await.is_err());
    }
}
