//! The audit, forwarded live (`config.audit.forward`, docs/forwarding.md): every packet of the
//! chain, in order, at least once, to a SIEM's syslog over TLS or its HTTP intake.
//!
//! The store is the queue. A forwarder keeps its place in the store (`forward_cursors`: the
//! last seq its receiver took), reads the packets after it, sends them, and moves its place on
//! only once they are taken: an HTTP receiver says so (2xx); over syslog, which has no answer,
//! a batch counts as taken once the receiver's TCP acknowledged its bytes and the connection
//! was still up [`GRACE`] later (time for the receiver to read what its kernel holds), or —
//! where the acknowledgement cannot be seen — still up [`SETTLE`] after it was written.
//! A restart, a receiver that is down or stops mid-stream, or a slow one loses nothing: the
//! forwarder goes back to its place and sends again from there, so a receiver may get a
//! packet twice and drops the copy by its seq (each event carries it). Nothing is held in
//! memory but the batch in flight, so no queue fills.
//!
//! One process at a time forwards each forwarder: it holds a lease in the store, renewed as it
//! goes; another instance on the same store takes over when the lease runs out.

mod http;
mod syslog;

use std::path::Path;
use std::time::{Duration, Instant};

use jig_audit::{Packet, Store};
use jig_model::manifest::AuditForward;
use jig_model::policy::NetworkPolicy;

use crate::export::ExportFormat;

/// How long a syslog connection must stay up after the receiver's TCP acknowledged a batch
/// for the batch to count as taken.
pub const GRACE: Duration = Duration::from_millis(250);
/// The same, counted from when the batch was written, where acknowledgements cannot be seen.
pub const SETTLE: Duration = Duration::from_secs(2);
/// How long a forwarder that has caught up lets the next batch gather.
const LINGER: Duration = Duration::from_millis(200);
/// How often a forwarder with batches not yet taken looks again.
const RECHECK: Duration = Duration::from_millis(50);
/// At most this many packets a batch.
const BATCH: i64 = 500;
/// How long a lease lasts; it is renewed a third of the way through.
const LEASE: Duration = Duration::from_secs(30);
/// The longest wait between two tries to reach a receiver.
const MOST_BACKOFF: Duration = Duration::from_secs(10);

/// One forwarder, ready to run.
#[derive(Debug, Clone)]
pub struct Forwarder {
    store: Store,
    config: AuditForward,
    target: Target,
    format: ExportFormat,
    /// The chain's name: the source of each event.
    origin: String,
    /// This process's name in the lease.
    holder: String,
    /// The policy's network rules, which the receiver's address must pass.
    network: NetworkPolicy,
}

/// Asks forwarders to stop (see [`Forwarder::run`]); one that is never asked runs as long as
/// the process.
#[derive(Debug, Clone, Default)]
pub struct Stop(Option<tokio::sync::watch::Receiver<bool>>);

impl Stop {
    /// A stop, and the sender that asks it (`send(true)`).
    pub fn pair() -> (tokio::sync::watch::Sender<bool>, Self) {
        let (sender, receiver) = tokio::sync::watch::channel(false);
        (sender, Self(Some(receiver)))
    }

    fn asked(&self) -> bool {
        self.0.as_ref().is_some_and(|r| *r.borrow())
    }

    /// Resolves once asked (never, for a stop without a sender).
    async fn wait(&mut self) {
        match &mut self.0 {
            Some(receiver) => {
                if receiver.wait_for(|stop| *stop).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending().await,
        }
    }
}

/// How far a forwarder has got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The forwarder's name.
    pub name: String,
    /// The last seq its receiver took.
    pub seq: i64,
}

impl Forwarder {
    /// The forwarder `config` (the `index`th of `config.audit.forward`) of the project at
    /// `root`, forwarding `store`'s chain named `origin`, as `holder` in the lease, to a
    /// receiver the `network` rules allow; or why it cannot run (a CA file that cannot be
    /// read, a token variable not set), naming it. Whether it may run at all — the person's
    /// consent — is the caller's to have asked.
    pub fn new(
        store: Store,
        config: &AuditForward,
        root: &Path,
        origin: &str,
        holder: &str,
        network: &NetworkPolicy,
    ) -> Result<Self, String> {
        Ok(Self {
            store,
            format: config.format.as_deref().unwrap_or("cloudevents").parse().unwrap_or_default(),
            target: Target::new(config, root)?,
            config: config.clone(),
            origin: origin.to_owned(),
            holder: holder.to_owned(),
            network: network.clone(),
        })
    }

    /// A name for this process in forwarders' leases: the host, the pid and a random part.
    pub fn holder_name(random: &str) -> String {
        format!("{}:{}:{random}", host_name(), std::process::id())
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Forward until `stop` is asked, or — with `until` — until its receiver has taken every
    /// packet up to that seq. Failures are logged and retried with backoff; they never end it.
    /// Asked to stop, it waits for what is in flight to be taken (a moment), records its place
    /// and gives up its lease, so the next process goes on at once and sends nothing twice.
    pub async fn run(&self, until: Option<i64>, mut stop: Stop) -> Progress {
        let mut backoff = Duration::from_millis(500);
        loop {
            let pause = match self.session(until, &mut stop).await {
                Ok(Some(done)) => return done,
                // Another process holds the lease.
                Ok(None) => LEASE / 3,
                Err(error) => {
                    tracing::warn!(forwarder = %self.config.name, %error, "forwarding the audit");
                    let pause = backoff;
                    backoff = (backoff * 2).min(MOST_BACKOFF);
                    pause
                }
            };
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = stop.wait() => {}
            }
            if stop.asked() {
                let _ = self.store.release_forward(&self.config.name, &self.holder).await;
                let places = self.store.forward_places().await.unwrap_or_default();
                let seq = places.iter().find(|(n, _)| *n == self.config.name).map_or(0, |p| p.1);
                return Progress { name: self.config.name.clone(), seq };
            }
        }
    }

    /// One connection's worth: from the forwarder's place, send until `until` is taken or
    /// `stop` asked (`Ok(Some)`), another process holds the lease (`Ok(None)`), or the
    /// receiver fails.
    async fn session(
        &self,
        until: Option<i64>,
        stop: &mut Stop,
    ) -> Result<Option<Progress>, String> {
        let name = &self.config.name;
        let Some(place) = self.claim().await? else { return Ok(None) };
        let mut renewed = Instant::now();
        let mut sink = Sink::connect(&self.target, &self.config.url, &self.network).await?;
        // Sent, not yet counted as taken, oldest first.
        let mut unsettled: std::collections::VecDeque<InFlight> = Default::default();
        let (mut taken, mut sent) = (place.seq, place.seq);
        loop {
            if renewed.elapsed() >= LEASE / 3 {
                if self.claim().await?.is_none() {
                    return Ok(None);
                }
                renewed = Instant::now();
            }
            let stopping = stop.asked();
            let packets = if stopping {
                // What is in flight gets its moment to be taken; nothing more is sent.
                tokio::time::sleep(sink.grace()).await;
                Vec::new()
            } else {
                self.store.packets(sent, BATCH).await.map_err(|e| e.to_string())?
            };
            if let Some(last) = packets.last() {
                let events = packets.iter().map(|p| self.event(p)).collect::<Vec<_>>();
                sink.send(&packets, &events).await?;
                sent = last.seq;
                unsettled.push_back(InFlight { seq: sent, written: Instant::now(), acked: None });
            }
            sink.check()?;
            let before = taken;
            taken = settle(&mut unsettled, sink.acknowledged(), sink.grace(), taken);
            if taken > before
                && !self
                    .store
                    .advance_forward(name, &self.holder, taken)
                    .await
                    .map_err(|e| e.to_string())?
            {
                return Ok(None);
            }
            if stopping || until.is_some_and(|until| taken >= until) {
                let _ = self.store.release_forward(name, &self.holder).await;
                return Ok(Some(Progress { name: name.clone(), seq: taken }));
            }
            if packets.is_empty() {
                // Nothing new: wait for the store, or look again at what is in flight.
                // The store is read again after a moment rather than watched: a watcher on
                // the database's log would cost every call's commit a wake-up, and a receiver
                // a fifth of a second behind loses nothing.
                let wait = if unsettled.is_empty() { LINGER } else { RECHECK };
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = stop.wait() => {}
                    closed = sink.closed() => return Err(closed),
                }
            } else if packets.len() < BATCH as usize && until.is_none() {
                // Caught up: let the next batch gather instead of sending each call's packets
                // on their own (a batch costs about as much to send as its first packet).
                tokio::select! {
                    () = tokio::time::sleep(LINGER) => {}
                    () = stop.wait() => {}
                    closed = sink.closed() => return Err(closed),
                }
            }
        }
    }

    async fn claim(&self) -> Result<Option<jig_audit::forward::Place>, String> {
        let now = jig_audit::time::now_us();
        let until = now + i64::try_from(LEASE.as_micros()).unwrap_or(i64::MAX);
        self.store
            .claim_forward(&self.config.name, &self.holder, now, until)
            .await
            .map_err(|e| e.to_string())
    }

    /// One packet as the receiver's events are written.
    fn event(&self, packet: &Packet) -> serde_json::Value {
        crate::export::render(packet, self.format, &self.origin)
    }
}

/// A batch sent and not yet counted as taken.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    /// Its last seq.
    seq: i64,
    /// When it was written.
    written: Instant,
    /// When the receiver was first seen to have acknowledged it.
    acked: Option<Instant>,
}

/// Count as taken the batches that are: marks those `acknowledged` now covers, then takes
/// from the front those acknowledged `grace` ago or written [`SETTLE`] ago; the new place.
fn settle(
    unsettled: &mut std::collections::VecDeque<InFlight>,
    acknowledged: Option<bool>,
    grace: Duration,
    mut taken: i64,
) -> i64 {
    let now = Instant::now();
    if acknowledged == Some(true) {
        for batch in unsettled.iter_mut().filter(|b| b.acked.is_none()) {
            batch.acked = Some(now);
        }
    }
    while let Some(batch) = unsettled.front() {
        let acked = batch.acked.is_some_and(|at| now.duration_since(at) >= grace);
        if !acked && now.duration_since(batch.written) < SETTLE {
            break;
        }
        taken = batch.seq;
        unsettled.pop_front();
    }
    taken
}

/// Where a forwarder sends, as read from its configuration once.
#[derive(Debug, Clone)]
enum Target {
    Syslog(syslog::Endpoint),
    Http(http::Http),
}

impl Target {
    fn new(config: &AuditForward, root: &Path) -> Result<Self, String> {
        if config.url.starts_with("syslog+tls://") {
            Ok(Self::Syslog(syslog::Endpoint::new(config, root)?))
        } else {
            Ok(Self::Http(http::Http::new(config, root)?))
        }
    }
}

/// A forwarder's connection to its receiver.
enum Sink {
    Syslog(syslog::Syslog),
    Http(http::Http),
}

impl Sink {
    /// Connect to the receiver at `url`, at the addresses the policy's `network` allows.
    async fn connect(target: &Target, url: &str, network: &NetworkPolicy) -> Result<Self, String> {
        let (_, addresses) = crate::client::checked_addresses(url, network).await?;
        Ok(match target {
            Target::Syslog(endpoint) => {
                Self::Syslog(syslog::Syslog::connect(endpoint, &addresses).await?)
            }
            Target::Http(http) => Self::Http(http.pinned(url, network).await?),
        })
    }

    async fn send(
        &mut self,
        packets: &[Packet],
        events: &[serde_json::Value],
    ) -> Result<(), String> {
        match self {
            Self::Syslog(sink) => sink.send(packets, events).await,
            Self::Http(sink) => sink.send(packets, events).await,
        }
    }

    /// Whether the receiver has acknowledged everything sent so far: `Some(true)` for an HTTP
    /// receiver (it answered); for syslog whether the receiver's TCP acknowledged the last
    /// batch, `None` where that cannot be seen.
    fn acknowledged(&self) -> Option<bool> {
        match self {
            Self::Syslog(sink) => sink.acknowledged(),
            Self::Http(_) => Some(true),
        }
    }

    /// How long after its acknowledgement a batch counts as taken: nothing for an HTTP
    /// answer; [`GRACE`] for syslog, whose receiver may not have read what its kernel took.
    fn grace(&self) -> Duration {
        match self {
            Self::Syslog(_) => GRACE,
            Self::Http(_) => Duration::ZERO,
        }
    }

    /// Whether the receiver is still there (a syslog receiver that closed its end is not).
    fn check(&self) -> Result<(), String> {
        match self {
            Self::Syslog(sink) => sink.check(),
            Self::Http(_) => Ok(()),
        }
    }

    /// Resolves when the receiver goes away (never, for HTTP).
    async fn closed(&self) -> String {
        match self {
            Self::Syslog(sink) => sink.closed().await,
            Self::Http(_) => std::future::pending().await,
        }
    }
}

/// This machine's name, for syslog's HOSTNAME and the lease's holder.
pub fn host_name() -> String {
    fs_err::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or_else(|| "-".to_owned())
}
