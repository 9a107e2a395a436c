//! The feed of what other processes record (issue #27): two handles on one store are two
//! writers, as two processes are.

use std::time::{Duration, Instant};

use jig_audit::{Op, Store};

use crate::packet;

/// Two handles on each kind of store.
async fn pairs() -> Vec<(Store, Store, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join(".jig/audit.db").display().to_string();
    let a = Store::open(&file).await.expect("sqlite");
    let b = Store::open(&file).await.expect("sqlite again");
    let url = jig_testkit::postgres_url();
    let c = Store::open(&url).await.expect("postgres");
    let d = Store::open(&url).await.expect("postgres again");
    vec![(a, b, Some(dir)), (c, d, None)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_hears_the_other_writer_at_once_and_not_itself() {
    for (writer, reader, _dir) in pairs().await {
        let mut feed = reader.feed().await.expect("feed");
        // Its own packets are not news to it.
        reader.apply(vec![Op::Append(packet("own", 1))]).await.expect("own");
        let started = Instant::now();
        writer.apply(vec![Op::Append(packet("other", 2))]).await.expect("other");
        let heard = tokio::time::timeout(Duration::from_secs(5), feed.next())
            .await
            .expect("heard within 5 s")
            .expect("read");
        let took = started.elapsed();
        let requests: Vec<_> = heard.iter().filter_map(|p| p.request_id.clone()).collect();
        assert_eq!(requests, ["other"]);
        // Woken by the change itself, not by the once-a-second read.
        assert!(took < Duration::from_millis(500), "{:?} took {took:?}", reader.dialect());
        // Several at once arrive in order.
        for n in 0..3 {
            writer.apply(vec![Op::Append(packet(&format!("r{n}"), n))]).await.expect("append");
        }
        let mut got = Vec::new();
        while got.len() < 3 {
            let more = tokio::time::timeout(Duration::from_secs(5), feed.next())
                .await
                .expect("heard")
                .expect("read");
            got.extend(more.into_iter().filter_map(|p| p.request_id));
        }
        assert_eq!(got, ["r0", "r1", "r2"]);
    }
}

/// A process's own stream of commits costs its feed no reads: each commit's notification
/// names the head it reached, and the feed moves past what its own writer appended. Another
/// writer's commit among them is still read, and heard at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_does_not_read_the_store_for_its_own_commits() {
    for (other, own, _dir) in pairs().await {
        let mut feed = own.feed().await.expect("feed");
        let listening = tokio::spawn(async move {
            let heard = feed.next().await.expect("read");
            (heard, feed.reads())
        });
        // The feed has read once (on starting to wait) and waits; each of these wakes it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for n in 0..40 {
            own.apply(vec![Op::Append(packet(&format!("own{n}"), n))]).await.expect("own");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        other.apply(vec![Op::Append(packet("other", 99))]).await.expect("other");
        let (heard, reads) = tokio::time::timeout(Duration::from_secs(5), listening)
            .await
            .expect("heard within 5 s")
            .expect("task");
        let took = started.elapsed();
        let requests: Vec<_> = heard.iter().filter_map(|p| p.request_id.clone()).collect();
        assert_eq!(requests, ["other"], "{:?}", own.dialect());
        assert!(took < Duration::from_millis(500), "{:?} took {took:?}", own.dialect());
        // One read on starting, one for the other's commit; a notification that raced its
        // own writer's record of a commit may cost one more. Not one a commit.
        assert!(reads <= 3, "{:?}: {reads} reads for 40 own commits and 1 other", own.dialect());
    }
}

/// A notification is never trusted: on PostgreSQL anyone who can connect may `NOTIFY` the
/// channel with any payload; the feed only reads the store, and finds nothing new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_notification_injects_nothing() {
    let url = jig_testkit::postgres_url();
    let store = Store::open(&url).await.expect("postgres");
    let mut feed = store.feed().await.expect("feed");
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await.expect("connect");
    sqlx::query("SELECT pg_notify('jig_packets', '99999')")
        .execute(&mut conn)
        .await
        .expect("notify");
    sqlx::query("SELECT pg_notify('jig_packets', '{\"kind\":\"approval.decided\"}')")
        .execute(&mut conn)
        .await
        .expect("notify");
    let heard = tokio::time::timeout(Duration::from_millis(1500), feed.next()).await;
    assert!(heard.is_err(), "a forged notification delivered {heard:?}");
    assert_eq!(feed.cursor(), store.head().await.expect("head").0);
}
