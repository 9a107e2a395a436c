//! People's state goes through the store's writer: a token's change and its packet are one
//! commit, a token's use is written at most once a minute, and the one-time things (sign-ins,
//! the desktop's grants) are taken once and bounded in number.

use jig_audit::{ApiToken, DesktopGrant, PacketKind, SignIn, Store};

use super::stores;

fn token(id: &str, owner: &str, now: i64) -> ApiToken {
    ApiToken {
        id: id.into(),
        owner: owner.into(),
        name: format!("{owner}'s laptop"),
        role: "runner".into(),
        token_hash: format!("hash-of-{id}"),
        created_us: now,
        last_used_us: None,
        expires_us: Some(now + 3_600_000_000),
        revoked_us: None,
        revoked_by: None,
    }
}

async fn kinds(store: &Store) -> Vec<(String, Option<String>)> {
    let packets = store.packets(0, 100).await.expect("packets");
    packets.into_iter().map(|packet| (packet.kind, packet.principal)).collect()
}

fn recorded(kind: PacketKind, by: &str) -> (String, Option<String>) {
    (kind.as_str().to_owned(), Some(by.to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_mint_and_revocation_are_each_one_commit_with_their_packet() {
    for (store, _dir) in stores().await {
        let now = jig_audit::time::now_us();
        let before = store.commits();
        store.mint_api_token(&token("t1", "ada", now)).await.expect("mint");
        assert_eq!(store.commits() - before, 1, "the token and its packet in one commit");
        assert_eq!(kinds(&store).await, vec![recorded(PacketKind::TokenMinted, "ada")]);

        // A second token with the same id is refused whole: no packet says it was made.
        assert!(store.mint_api_token(&token("t1", "ada", now)).await.is_err());
        assert_eq!(kinds(&store).await.len(), 1);

        let before = store.commits();
        let revoked = store.revoke_api_token(None, "t1", "bob", now + 1).await.expect("revoke");
        assert_eq!(revoked.map(|token| token.revoked_by), Some(Some("bob".into())));
        assert_eq!(store.commits() - before, 1);
        // Revoking what is not live changes nothing and records nothing.
        assert_eq!(store.revoke_api_token(None, "t1", "bob", now + 2).await.expect("again"), None);
        assert_eq!(
            kinds(&store).await,
            vec![
                recorded(PacketKind::TokenMinted, "ada"),
                recorded(PacketKind::TokenRevoked, "bob"),
            ]
        );
        let verified = store.verify().await.expect("verify");
        assert_eq!((verified.checked, verified.first_broken), (2, None));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_person_loses_every_token_and_session_with_a_packet_each() {
    for (store, _dir) in stores().await {
        let now = jig_audit::time::now_us();
        for id in ["a1", "a2"] {
            store.mint_api_token(&token(id, "ada", now)).await.expect("mint");
        }
        store.mint_api_token(&token("b1", "bob", now)).await.expect("mint");
        let owner_only = store.revoke_api_token(Some("bob"), "a1", "bob", now).await;
        assert_eq!(owner_only.expect("revoke"), None, "bob may not revoke ada's token");

        let revoked = store
            .revoke_api_tokens_of("ada", "sign-in", Some("no group gives a role"), now + 1)
            .await
            .expect("revoke all");
        assert_eq!(revoked.len(), 2);
        let packets = store.packets(0, 100).await.expect("packets");
        let revocations: Vec<_> = packets
            .iter()
            .filter(|packet| packet.kind == PacketKind::TokenRevoked.as_str())
            .filter_map(|packet| packet.token_changed())
            .map(|change| (change.owner, change.by, change.reason))
            .collect();
        let why = Some("no group gives a role".to_owned());
        assert_eq!(revocations, vec![("ada".to_owned(), Some("sign-in".to_owned()), why); 2]);
        assert!(store.use_api_token("hash-of-a2", now + 2).await.expect("use").is_none());
        assert!(store.use_api_token("hash-of-b1", now + 2).await.expect("use").is_some());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_use_is_written_at_most_once_a_minute() {
    for (store, _dir) in stores().await {
        let now = jig_audit::time::now_us();
        store.mint_api_token(&token("t1", "ada", now)).await.expect("mint");
        let before = store.commits();
        let used = store.use_api_token("hash-of-t1", now + 1).await.expect("use");
        assert_eq!(used.and_then(|token| token.last_used_us), Some(now + 1));
        assert_eq!(store.commits() - before, 1, "the first use is written");
        let again = store.use_api_token("hash-of-t1", now + 30_000_000).await.expect("use");
        assert_eq!(again.and_then(|token| token.last_used_us), Some(now + 1));
        assert_eq!(store.commits() - before, 1, "a use within the minute is only a read");
        let later = store.use_api_token("hash-of-t1", now + 61_000_000).await.expect("use");
        assert_eq!(later.and_then(|token| token.last_used_us), Some(now + 61_000_000));
        assert_eq!(store.commits() - before, 2);
        assert_eq!(store.use_api_token("hash-of-nothing", now).await.expect("use"), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_ins_and_desktop_grants_are_taken_once_and_bounded() {
    for (store, _dir) in stores().await {
        let now = jig_audit::time::now_us();
        let sign_in = |state: &str| SignIn {
            state: state.into(),
            browser: "browser".into(),
            verifier: "verifier".into(),
            nonce: "nonce".into(),
            return_to: "/".into(),
            created_us: now,
        };
        assert!(store.begin_sign_in(&sign_in("s1"), now - 1, 2).await.expect("begin"));
        assert!(store.begin_sign_in(&sign_in("s2"), now - 1, 2).await.expect("begin"));
        assert!(!store.begin_sign_in(&sign_in("s3"), now - 1, 2).await.expect("bounded"));
        assert_eq!(store.take_sign_in("s1", now - 1).await.expect("take"), Some(sign_in("s1")));
        assert_eq!(store.take_sign_in("s1", now - 1).await.expect("again"), None);
        // Those begun before `since` are gone.
        assert_eq!(store.take_sign_in("s2", now + 1).await.expect("old"), None);

        let grant = DesktopGrant {
            code_hash: "code".into(),
            session_hash: "session".into(),
            challenge: "challenge".into(),
            redirect_uri: "http://127.0.0.1:4000/".into(),
            created_us: now,
        };
        assert!(store.grant_desktop(&grant, now - 1, 1).await.expect("grant"));
        let other = DesktopGrant { code_hash: "other".into(), ..grant.clone() };
        assert!(!store.grant_desktop(&other, now - 1, 1).await.expect("bounded"));
        assert_eq!(store.take_desktop_grant("code", now - 1).await.expect("take"), Some(grant));
        assert_eq!(store.take_desktop_grant("code", now - 1).await.expect("again"), None);
        assert!(kinds(&store).await.is_empty(), "sign-ins and grants are not the audit");
    }
}
