//! Forwarders' places in the store: one process at a time holds a forwarder's lease, its place
//! only moves on, and a lease that ran out or was given up goes to the next process.

use crate::stores;

#[tokio::test]
async fn one_process_holds_a_forwarders_lease_and_its_place_only_moves_on() {
    for (store, _dir) in stores().await {
        // PostgreSQL's database is shared by the suite: a name of this run's own.
        let name = format!("siem-{}-{}", std::process::id(), jig_audit::time::now_us());
        let first = store.claim_forward(&name, "a", 1_000, 31_000).await.expect("claim");
        assert_eq!(first.map(|p| p.seq), Some(0), "a new forwarder starts from the first packet");
        // Held by `a` until 31,000: `b` waits.
        assert_eq!(store.claim_forward(&name, "b", 2_000, 32_000).await.expect("claim"), None);
        assert!(store.advance_forward(&name, "a", 40).await.expect("advance"));
        assert!(!store.advance_forward(&name, "b", 99).await.expect("advance"), "not b's");
        // Never back.
        assert!(store.advance_forward(&name, "a", 10).await.expect("advance"));
        // `a`'s lease ran out: `b` takes over from where `a` got to.
        let taken = store.claim_forward(&name, "b", 40_000, 70_000).await.expect("claim");
        assert_eq!(taken.map(|p| p.seq), Some(40));
        assert!(!store.advance_forward(&name, "a", 50).await.expect("advance"), "a lost it");
        // Given up: the next takes it at once.
        store.release_forward(&name, "b").await.expect("release");
        let next = store.claim_forward(&name, "c", 41_000, 71_000).await.expect("claim");
        assert_eq!(next.map(|p| p.seq), Some(40));
        let places = store.forward_places().await.expect("places");
        assert!(places.contains(&(name.clone(), 40)), "{places:?}");
    }
}
