//! What this process appended to the store: the ranges of seqs its writer committed, and the
//! range it is committing. A feed (`crate::feed`) skips the first and waits out the second: a
//! commit is visible to readers before its writer has recorded it, and a packet read in that
//! moment must not be taken for another process's.
//!
//! Seqs are the chain's positions, shared by every process on the store, so a range of seqs
//! that is wholly this process's own holds nothing of anyone else's.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use crate::bell::Bell;

/// Whose a packet is, as far as this process knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Whose {
    /// Appended by this process's writer.
    Mine,
    /// In the range this process's writer is committing: ask again when it has settled.
    Unsettled,
    /// Another process's.
    Other,
}

/// Ranges are kept up to this many (a feed that never reads would let them grow).
const KEPT: usize = 65_536;

/// This process's appends to one store, and its doorbell.
#[derive(Debug, Default)]
pub(crate) struct Own {
    ranges: Mutex<Ranges>,
    /// Told whenever the range being committed is over (recorded or abandoned).
    settled: Notify,
    /// An SQLite store's doorbell (`crate::bell`), rung after each commit that appended.
    bell: Option<Bell>,
}

#[derive(Debug, Default)]
struct Ranges {
    committed: VecDeque<(i64, i64)>,
    committing: Option<(i64, i64)>,
}

impl Own {
    /// Appends announced on `bell`, when there is one.
    pub(crate) fn new(bell: Option<Bell>) -> Self {
        Self { ranges: Mutex::default(), settled: Notify::new(), bell }
    }

    /// The store's doorbell.
    pub(crate) fn bell(&self) -> Option<&Bell> {
        self.bell.as_ref()
    }

    /// The writer is about to commit `first..=last`.
    pub(crate) fn committing(&self, first: i64, last: i64) {
        if last >= first
            && let Ok(mut ranges) = self.ranges.lock()
        {
            ranges.committing = Some((first, last));
        }
    }

    /// The writer committed `first..=last`: remembered (in the same step that ends
    /// [`Own::committing`]), then announced on the bell, so this process's feeds, woken by
    /// it, know it as their own.
    pub(crate) fn committed(&self, first: i64, last: i64) {
        if last < first {
            return;
        }
        if let Ok(mut ranges) = self.ranges.lock() {
            ranges.committing = None;
            ranges.committed.push_back((first, last));
            while ranges.committed.len() > KEPT {
                ranges.committed.pop_front();
            }
        }
        self.settled.notify_waiters();
        if let Some(bell) = &self.bell {
            bell.ring(last);
        }
    }

    /// The writer's commit is over, whatever came of it.
    pub(crate) fn settled(&self) {
        if let Ok(mut ranges) = self.ranges.lock() {
            ranges.committing = None;
        }
        self.settled.notify_waiters();
    }

    /// Wait, for at most `limit`, until no commit of this process's is under way.
    pub(crate) async fn until_settled(&self, limit: Duration) {
        let notified = self.settled.notified();
        let mut notified = std::pin::pin!(notified);
        // Registered before looking, so a commit that settles in between is not missed.
        notified.as_mut().enable();
        let under_way = self.ranges.lock().is_ok_and(|ranges| ranges.committing.is_some());
        if under_way {
            let _ = tokio::time::timeout(limit, notified).await;
        }
    }

    /// Whose packet `seq` is. Ranges wholly before `seq` are dropped (a feed reads in order).
    pub(crate) fn whose(&self, seq: i64) -> Whose {
        let Ok(mut ranges) = self.ranges.lock() else { return Whose::Other };
        while ranges.committed.front().is_some_and(|(_, last)| *last < seq) {
            ranges.committed.pop_front();
        }
        if ranges.committed.front().is_some_and(|(first, last)| (*first..=*last).contains(&seq)) {
            Whose::Mine
        } else if ranges.committing.is_some_and(|(first, last)| (first..=last).contains(&seq)) {
            Whose::Unsettled
        } else {
            Whose::Other
        }
    }

    /// Whether every seq after `after` up to `upto` is this process's: then a feed at
    /// `after` that heard of `upto` has nothing to read. Ranges wholly at or before `after`
    /// are dropped.
    pub(crate) fn covers(&self, after: i64, upto: i64) -> Cover {
        let Ok(mut ranges) = self.ranges.lock() else { return Cover::No };
        while ranges.committed.front().is_some_and(|(_, last)| *last <= after) {
            ranges.committed.pop_front();
        }
        let mut next = after + 1;
        for (first, last) in &ranges.committed {
            if next > upto {
                break;
            }
            if *first > next {
                return Cover::No;
            }
            next = next.max(last + 1);
        }
        match ranges.committing {
            _ if next > upto => Cover::Mine,
            Some((first, last)) if first <= next && last >= upto => Cover::Unsettled,
            _ => Cover::No,
        }
    }
}

/// Whether a range of seqs is this process's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cover {
    /// All of it, committed.
    Mine,
    /// All of it if the commit under way succeeds: ask again when it has settled.
    Unsettled,
    /// Not all of it.
    No,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_only_what_was_committed_here_without_a_gap() {
        let own = Own::new(None);
        own.committed(3, 5);
        own.committed(6, 6);
        own.committed(9, 10);
        assert_eq!(own.covers(2, 6), Cover::Mine);
        assert_eq!(own.covers(4, 5), Cover::Mine);
        assert_eq!(own.covers(2, 7), Cover::No, "7 and 8 are someone else's");
        assert_eq!(own.covers(1, 4), Cover::No, "2 is someone else's");
        assert_eq!(own.covers(8, 10), Cover::Mine);
        assert_eq!(own.covers(10, 10), Cover::Mine, "nothing after 10 up to 10");
        own.committing(11, 13);
        assert_eq!(own.covers(10, 13), Cover::Unsettled);
        assert_eq!(own.covers(10, 14), Cover::No);
    }

    #[test]
    fn a_packet_being_committed_is_unsettled_until_its_writer_records_it() {
        let own = Own::new(None);
        own.committing(7, 9);
        assert_eq!(own.whose(6), Whose::Other);
        assert_eq!(own.whose(8), Whose::Unsettled);
        own.committed(7, 9);
        assert_eq!(own.whose(8), Whose::Mine);
        own.committing(10, 12);
        own.settled();
        assert_eq!(own.whose(11), Whose::Other, "a commit that failed appended nothing");
    }
}
