//! Runs, idempotency keys, approvals, sessions, recovery.

use jig_audit::{
    ApprovalRecord, ApprovalState, KeyState, Op, Outcome, ReplayIdentity, RunRecord, RunState,
    RunUpdate, TokenRefusal,
};
use serde_json::json;

use crate::stores;

fn run(request_id: &str, run_id: &str, state: RunState) -> RunRecord {
    RunRecord {
        request_id: request_id.into(),
        run_id: run_id.into(),
        tool: "file_write".into(),
        version: "1.0.0".into(),
        session_id: Some("s1".into()),
        thread_id: Some("t1".into()),
        principal: Some("ada".into()),
        params_hash: "params".into(),
        policy_hash: "policy".into(),
        deterministic: true,
        state,
        rule: None,
        created_us: 0,
        updated_us: 0,
        duration_ms: None,
        response: None,
        error: None,
        replayed_from: None,
        owner: None,
        deadline_us: None,
        person: Some("ada".into()),
        definition: Some("def1".into()),
        resumed_as: None,
        resumes: None,
    }
}

fn identity<'a>(run_id: &'a str, person: Option<&'a str>) -> ReplayIdentity<'a> {
    ReplayIdentity { run_id, definition: "def1", person }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_is_claimed_once() {
    for (store, _dir) in stores().await {
        let claim = |request: &str| Op::ClaimKey {
            key: "t1+file_write+params".into(),
            request_id: request.into(),
        };
        assert_eq!(store.apply(vec![claim("r1")]).await.expect("apply"), [Outcome::Claimed]);
        let Outcome::KeyTaken(held) = &store.apply(vec![claim("r2")]).await.expect("apply")[0]
        else {
            panic!("taken")
        };
        assert_eq!((held.state, held.request_id.as_str()), (KeyState::Pending, "r1"));
        store
            .apply(vec![Op::SettleKey {
                key: "t1+file_write+params".into(),
                request_id: "r1".into(),
                state: KeyState::Done,
                response: Some(json!({"ok": true})),
            }])
            .await
            .expect("settle");
        let Outcome::KeyTaken(done) = &store.apply(vec![claim("r3")]).await.expect("apply")[0]
        else {
            panic!("taken")
        };
        assert_eq!(
            (done.state, done.response.clone()),
            (KeyState::Done, Some(json!({"ok": true})))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_marks_what_a_dead_process_left_and_frees_its_keys() {
    for (store, _dir) in stores().await {
        store
            .apply(vec![
                Op::CreateRun(Box::new(run("r1", "run1", RunState::Running))),
                Op::CreateRun(Box::new(run("r2", "run2", RunState::Succeeded))),
                Op::ClaimKey { key: "k".into(), request_id: "r1".into() },
            ])
            .await
            .expect("apply");
        let recovery = store.recover().await.expect("recover");
        assert_eq!((recovery.runs, recovery.keys), (1, 1));
        let r1 = store.run("r1").await.expect("run").expect("r1");
        assert_eq!(r1.state, RunState::Failed);
        assert!(r1.error.as_deref().is_some_and(|e| e.starts_with("incomplete")));
        assert_eq!(store.run("r2").await.expect("run").expect("r2").state, RunState::Succeeded);
        let packets = store.packets_of("r1").await.expect("packets");
        assert_eq!(packets.last().map(|p| p.kind.as_str()), Some("tool.call.failed"));
        assert_eq!(packets.last().map(|p| p.data["incomplete"].clone()), Some(json!(true)));
        // The key of the dead call can be taken again.
        assert_eq!(
            store
                .apply(vec![Op::ClaimKey { key: "k".into(), request_id: "r3".into() }])
                .await
                .expect("claim"),
            [Outcome::Claimed]
        );
        assert_eq!(store.recover().await.expect("again").runs, 0, "recovery is idempotent");
    }
}

/// Recovery by owner: a live process's run is left alone, a dead one's is failed, another
/// host's only once its deadline has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_spares_live_owners_and_waits_for_foreign_deadlines() {
    for (store, _dir) in stores().await {
        let mut dead = std::process::Command::new("true").spawn().expect("spawn");
        let dead_pid = dead.id();
        dead.wait().expect("wait");
        let host = jig_audit::owner::current().split('/').next().expect("host").to_owned();
        let now = jig_audit::time::now_us();
        let owned = |request: &str, owner: String, deadline: Option<i64>| RunRecord {
            owner: Some(owner),
            deadline_us: deadline,
            person: None,
            definition: None,
            resumed_as: None,
            resumes: None,
            ..run(request, &format!("run-{request}"), RunState::Running)
        };
        store
            .apply(vec![
                Op::CreateRun(Box::new(owned(
                    "live",
                    jig_audit::owner::current().to_owned(),
                    None,
                ))),
                Op::CreateRun(Box::new(owned("dead", format!("{host}/{dead_pid}/1"), None))),
                Op::CreateRun(Box::new(owned(
                    "far-early",
                    "elsewhere/1/1".into(),
                    Some(now + 3_600_000_000),
                ))),
                Op::CreateRun(Box::new(owned("far-late", "elsewhere/2/1".into(), Some(now - 1)))),
            ])
            .await
            .expect("create");
        let recovery = store.recover().await.expect("recover");
        assert_eq!(recovery.runs, 2, "the dead owner's and the foreign one past its deadline");
        let state = |request: &'static str| {
            let store = store.clone();
            async move { store.run(request).await.expect("run").expect(request).state }
        };
        assert_eq!(state("live").await, RunState::Running);
        assert_eq!(state("dead").await, RunState::Failed);
        assert_eq!(state("far-early").await, RunState::Running);
        assert_eq!(state("far-late").await, RunState::Failed);
    }
}

/// Defect: recovery read a run as unfinished, its owner then finished it and exited, and
/// recovery still marked it failed after its result. The interleaving, step by step: the run is
/// read while running, finished with its result packet, then abandoned with the stale read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_finished_after_recovery_read_it_is_not_marked_failed() {
    for (store, _dir) in stores().await {
        store
            .apply(vec![Op::CreateRun(Box::new(run("r1", "run1", RunState::Running)))])
            .await
            .expect("create");
        let stale = store.run("r1").await.expect("run").expect("r1");
        assert_eq!(stale.state, RunState::Running);
        store
            .apply(vec![
                Op::Append(jig_audit::NewPacket {
                    kind: jig_audit::PacketKind::CallResult,
                    session_id: None,
                    thread_id: None,
                    principal: Some("ada".into()),
                    request_id: Some("r1".into()),
                    run_id: Some("run1".into()),
                    tool: Some("file_write".into()),
                    args_hash: None,
                    data: json!({"ok": true}),
                }),
                Op::SetRun(RunUpdate {
                    request_id: "r1".into(),
                    state: Some(RunState::Succeeded),
                    ..RunUpdate::default()
                }),
            ])
            .await
            .expect("finish");
        let head = store.head().await.expect("head");
        assert_eq!(store.abandon(&[stale]).await.expect("abandon"), 0);
        assert_eq!(store.run("r1").await.expect("run").expect("r1").state, RunState::Succeeded);
        assert_eq!(store.head().await.expect("head"), head, "no packet was appended");
        let kinds: Vec<String> = store
            .packets_of("r1")
            .await
            .expect("packets")
            .iter()
            .map(|p| p.kind.as_str().to_owned())
            .collect();
        assert_eq!(kinds, ["tool.call.result"]);
        assert!(store.verify().await.expect("verify").first_broken.is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_change_state_and_the_first_success_is_the_replay_source() {
    for (store, _dir) in stores().await {
        store
            .apply(vec![Op::CreateRun(Box::new(run("r1", "same", RunState::Running)))])
            .await
            .expect("create");
        assert!(
            store.replay_source(&identity("same", Some("ada"))).await.expect("query").is_none()
        );
        store
            .apply(vec![Op::SetRun(RunUpdate {
                request_id: "r1".into(),
                state: Some(RunState::Succeeded),
                duration_ms: Some(12),
                response: Some(json!({"ok": true, "data": 1})),
                ..RunUpdate::default()
            })])
            .await
            .expect("update");
        let mut replay = run("r2", "same", RunState::Succeeded);
        replay.replayed_from = Some("r1".into());
        replay.response = Some(json!({"ok": true, "data": 1}));
        store.apply(vec![Op::CreateRun(Box::new(replay))]).await.expect("replay");
        let source = store
            .replay_source(&identity("same", Some("ada")))
            .await
            .expect("query")
            .expect("found");
        assert_eq!((source.request_id.as_str(), source.duration_ms), ("r1", Some(12)));
        // Issue #26: only the same person's run, under the same definition, is a source —
        // unless the results are shared (no person).
        assert!(store.replay_source(&identity("same", Some("bob"))).await.expect("q").is_none());
        let shared = store.replay_source(&identity("same", None)).await.expect("q");
        assert_eq!(shared.map(|s| s.request_id), Some("r1".to_owned()));
        let changed = ReplayIdentity { definition: "def2", ..identity("same", Some("ada")) };
        assert!(store.replay_source(&changed).await.expect("q").is_none());
        assert_eq!(store.runs(10).await.expect("runs").len(), 2);
        assert_eq!(
            store.run("r1").await.expect("by prefix").map(|r| r.state),
            Some(RunState::Succeeded)
        );
    }
}

fn approval(id: &str, request_hash: &str) -> ApprovalRecord {
    ApprovalRecord {
        id: id.into(),
        request_hash: request_hash.into(),
        tool: "file_write".into(),
        session_id: Some("s1".into()),
        principal: Some("ada".into()),
        request: json!({"tool": "file_write", "args": {"path": "x", "content": "[REDACTED]"}}),
        rule: "default.side_effects".into(),
        reason: "needs approval".into(),
        state: ApprovalState::Pending,
        expires_us: None,
        decided_by: None,
        required: 1,
        approvers: Vec::new(),
        created_us: 0,
        decided_us: None,
        consumed_us: None,
        note: None,
        clear_request: Some(
            json!({"tool": "file_write", "args": {"path": "x", "content": "ghp_clear"}}),
        ),
        request_id: None,
    }
}

/// Issue #26: the clear request (what the reviewer must see) lives only while the approval is
/// pending, and only a decider is shown it; nobody reads it once decided.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clear_request_is_kept_only_while_pending_and_shown_only_to_deciders() {
    for (store, _dir) in stores().await {
        store
            .apply(vec![Op::CreateApproval(Box::new(approval("c1", "req-c")))])
            .await
            .expect("ask");
        let pending = store.approval("c1").await.expect("read").expect("found");
        assert_eq!(pending.clone().seen_by(true).request["args"]["content"], "ghp_clear");
        assert_eq!(pending.clone().seen_by(false).request["args"]["content"], "[REDACTED]");
        assert!(serde_json::to_string(&pending).expect("json").contains("[REDACTED]"));
        assert!(!serde_json::to_string(&pending).expect("json").contains("ghp_clear"));
        let packet = jig_audit::NewPacket {
            kind: jig_audit::PacketKind::ApprovalDecided,
            session_id: None,
            thread_id: None,
            principal: Some("bob".into()),
            request_id: None,
            run_id: None,
            tool: Some("file_write".into()),
            args_hash: None,
            data: json!({ "approval_id": "c1", "decision": "denied" }),
        };
        store
            .apply(vec![Op::DecideApproval {
                id: "c1".into(),
                approve: false,
                token_hash: None,
                expires_us: None,
                decided_by: Some("bob".into()),
                approvers: Vec::new(),
                reason: Some("not today".into()),
                packet: Box::new(packet),
            }])
            .await
            .expect("deny");
        let decided = store.approval("c1").await.expect("read").expect("found");
        assert_eq!(decided.clear_request, None);
        assert_eq!(decided.seen_by(true).request["args"]["content"], "[REDACTED]");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_tokens_are_one_time_bound_and_expiring() {
    for (store, _dir) in stores().await {
        let future = jig_audit::time::now_us() + 60_000_000;
        store
            .apply(vec![
                Op::CreateApproval(Box::new(approval("a1", "req-1"))),
                Op::CreateApproval(Box::new(approval("a2", "req-2"))),
            ])
            .await
            .expect("create");
        // A decision carries its packet (the chain is what a token is checked against), which is
        // appended only if the decision is the one recorded.
        let decide = |id: &str, token: &str, expires: i64, request: &str| Op::DecideApproval {
            id: id.into(),
            approve: true,
            token_hash: Some(token.into()),
            expires_us: Some(expires),
            decided_by: Some("bob".into()),
            approvers: vec!["bob".into()],
            reason: None,
            packet: Box::new(jig_audit::NewPacket {
                kind: jig_audit::PacketKind::ApprovalDecided,
                session_id: None,
                thread_id: None,
                principal: Some("bob".into()),
                request_id: None,
                run_id: None,
                tool: Some("file_write".into()),
                args_hash: None,
                data: json!({ "approval_id": id, "verdict": "approved", "token_hash": token, "request_hash": request }),
            }),
        };
        assert_eq!(
            store.apply(vec![decide("a1", "tok1", future, "req-1")]).await.expect("decide"),
            [Outcome::Decided(true)]
        );
        assert_eq!(
            store.apply(vec![decide("a1", "tok1", future, "req-1")]).await.expect("again"),
            [Outcome::Decided(false)]
        );
        let decisions = store
            .packets(0, 1000)
            .await
            .expect("packets")
            .into_iter()
            .filter(|p| p.kind == "approval.decided" && p.data["approval_id"] == "a1")
            .count();
        assert_eq!(decisions, 1, "a decision that lost leaves nothing in the chain");
        assert_eq!(
            store.apply(vec![decide("a2", "tok2", 1, "req-2")]).await.expect("decide"),
            [Outcome::Decided(true)]
        );

        let consume = |token: &str, request: &str| Op::ConsumeApproval {
            token_hash: token.into(),
            request_hash: request.into(),
            by_request: "r-consumer".into(),
        };
        let refused = |t: TokenRefusal| Outcome::TokenRefused(t);
        assert_eq!(
            store.apply(vec![consume("forged", "req-1")]).await.expect("apply"),
            [refused(TokenRefusal::Unknown)]
        );
        assert_eq!(
            store.apply(vec![consume("tok1", "req-other")]).await.expect("apply"),
            [refused(TokenRefusal::Mismatch)]
        );
        assert_eq!(
            store.apply(vec![consume("tok2", "req-2")]).await.expect("apply"),
            [refused(TokenRefusal::Expired)]
        );
        // An approvals row approved behind the chain's back is not honoured.
        store
            .apply(vec![Op::CreateApproval(Box::new(approval("a3", "req-3")))])
            .await
            .expect("create");
        store
            .execute_raw(&format!(
                "UPDATE approvals SET state = 'approved', token_hash = 'tok3', expires_us = {future} WHERE id = 'a3'"
            ))
            .await
            .expect("a row changed by hand");
        assert_eq!(
            store.apply(vec![consume("tok3", "req-3")]).await.expect("apply"),
            [refused(TokenRefusal::NotInChain)]
        );
        assert_eq!(
            store.apply(vec![consume("tok1", "req-1")]).await.expect("apply"),
            [Outcome::Consumed { approval: "a1".into(), waiting: None }]
        );
        assert_eq!(
            store.apply(vec![consume("tok1", "req-1")]).await.expect("apply"),
            [refused(TokenRefusal::Used)]
        );
        assert_eq!(
            store.approval("a1").await.expect("get").map(|a| a.state),
            Some(ApprovalState::Consumed)
        );
        assert_eq!(
            store.approvals(Some(ApprovalState::Approved)).await.expect("list").len(),
            2,
            "a2 (expired) and a3 (not in the chain)"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_usage_accumulates() {
    for (store, _dir) in stores().await {
        for _ in 0..3 {
            store
                .apply(vec![Op::AddUsage {
                    session_id: "s1".into(),
                    principal: Some("ada".into()),
                    calls: 1,
                    bytes: 100,
                    wall_ms: 7,
                }])
                .await
                .expect("usage");
        }
        let usage = store.usage("s1").await.expect("usage");
        assert_eq!((usage.calls, usage.bytes, usage.wall_ms), (3, 300, 21));
        assert_eq!(store.usage("nobody").await.expect("usage").calls, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollups_count_calls_failures_denials_and_durations_by_session() {
    for (store, _dir) in stores().await {
        let now = jig_audit::time::now_us();
        let mut ops = Vec::new();
        for (request, kind, session) in [
            ("a", jig_audit::PacketKind::CallRequest, "s1"),
            ("a", jig_audit::PacketKind::CallResult, "s1"),
            ("b", jig_audit::PacketKind::CallRequest, "s1"),
            ("b", jig_audit::PacketKind::CallFailed, "s1"),
            ("c", jig_audit::PacketKind::CallRequest, "s2"),
        ] {
            let mut packet = crate::packet(request, 0);
            packet.kind = kind;
            packet.session_id = Some(session.into());
            ops.push(Op::Append(packet));
        }
        for (request, state, ms, session) in [
            ("a", RunState::Succeeded, 10, "s1"),
            ("b", RunState::Denied, 30, "s1"),
            ("c", RunState::Succeeded, 20, "s2"),
        ] {
            let mut record = run(request, &format!("run-{request}"), state);
            record.created_us = now;
            record.duration_ms = Some(ms);
            record.session_id = Some(session.into());
            ops.push(Op::CreateRun(Box::new(record)));
        }
        store.apply(ops).await.expect("apply");
        let s1 = store.rollup(Some("s1"), 0).await.expect("rollup");
        assert_eq!((s1.calls, s1.failed, s1.denied), (2, 1, 1));
        assert_eq!(s1.durations_ms, [10.0, 30.0]);
        assert_eq!(s1.quantile(0.5), Some(10.0));
        assert_eq!(s1.mean(), Some(20.0));
        let all = store.rollup(None, 0).await.expect("rollup");
        assert_eq!(all.calls, 3);
        let later = store.rollup(None, now + 60_000_000).await.expect("rollup");
        assert_eq!((later.calls, later.durations_ms.len()), (0, 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_summaries_join_each_job_to_where_its_run_stands() {
    for (store, _dir) in stores().await {
        for (n, request) in ["j1", "j2"].into_iter().enumerate() {
            let mut queued = run(request, &format!("run-{request}"), RunState::Queued);
            queued.tool = "acme.latency_report".into();
            let job = jig_audit::JobRecord {
                request_id: request.into(),
                engine: "slurm".into(),
                handle: format!("{}", 40 + n),
                dir: format!("/runs/{request}"),
                tool: json!({ "id": "acme.latency_report" }),
                open: true,
                created_us: 1_000 + i64::try_from(n).expect("small"),
                updated_us: 1_000,
            };
            store
                .apply(vec![Op::CreateRun(Box::new(queued)), Op::CreateJob(Box::new(job))])
                .await
                .expect("submit");
        }
        // A call without a job is not listed.
        store
            .apply(vec![Op::CreateRun(Box::new(run("plain", "p", RunState::Succeeded)))])
            .await
            .expect("plain");
        let moved = store
            .apply(vec![Op::MoveJobRun {
                update: RunUpdate {
                    request_id: "j1".into(),
                    state: Some(RunState::Succeeded),
                    duration_ms: Some(2_000),
                    response: Some(json!({ "ok": true })),
                    ..RunUpdate::default()
                },
                packet: crate::packet("j1", 1),
            }])
            .await
            .expect("move");
        assert_eq!(moved.first(), Some(&Outcome::Moved(true)));

        let jobs = store.job_summaries(10).await.expect("summaries");
        let seen: Vec<(&str, &str, RunState, bool, Option<i64>)> = jobs
            .iter()
            .map(|j| (j.request_id.as_str(), j.handle.as_str(), j.state, j.open, j.duration_ms))
            .collect();
        assert_eq!(
            seen,
            [
                ("j2", "41", RunState::Queued, true, None),
                ("j1", "40", RunState::Succeeded, false, Some(2_000)),
            ]
        );
        assert_eq!(jobs[0].tool, "acme.latency_report");
        assert_eq!(jobs[0].principal.as_deref(), Some("ada"));
        assert_eq!(store.job_summaries(1).await.expect("limited").len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_approval_counts_only_on_the_list_it_read() {
    for (store, _dir) in stores().await {
        let mut two = approval("a2", "req-2");
        two.required = 2;
        store.apply(vec![Op::CreateApproval(Box::new(two))]).await.expect("create");
        let second = |before: &[&str], after: &[&str]| Op::SecondApproval {
            id: "a2".into(),
            before: before.iter().map(|s| (*s).to_owned()).collect(),
            after: after.iter().map(|s| (*s).to_owned()).collect(),
            packet: Box::new(jig_audit::NewPacket {
                kind: jig_audit::PacketKind::ApprovalDecided,
                session_id: None,
                thread_id: None,
                principal: after.last().map(|s| (*s).to_owned()),
                request_id: None,
                run_id: None,
                tool: Some("file_write".into()),
                args_hash: None,
                data: json!({ "approval_id": "a2", "verdict": "seconded" }),
            }),
        };
        let bob = store.apply(vec![second(&[], &["bob"])]).await.expect("bob");
        assert_eq!(bob, [Outcome::Decided(true)]);
        // Carol read the list before Bob's approval landed: not counted on a stale list.
        let stale = store.apply(vec![second(&[], &["carol"])]).await.expect("carol");
        assert_eq!(stale, [Outcome::Decided(false)]);
        let record = store.approval("a2").await.expect("read").expect("exists");
        assert_eq!(
            (record.required, record.approvers.as_slice()),
            (2, ["bob".to_owned()].as_slice())
        );
        assert_eq!(record.state, ApprovalState::Pending);
        let seconds: Vec<Option<String>> = store
            .packets(0, 1000)
            .await
            .expect("packets")
            .into_iter()
            .filter(|p| p.data["verdict"] == "seconded")
            .map(|p| p.principal)
            .collect();
        assert_eq!(seconds, [Some("bob".to_owned())], "only the counted approval is in the chain");
    }
}
