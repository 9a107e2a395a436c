//! `jig audit list|show|verify|head|export`: read and check the audit record. These open the
//! store alone, so a project with a broken tool file can still be audited.

use std::io::Write;

use jig_engine::audit::time::rfc3339;
use jig_engine::audit::{Packet, Store};
use serde_json::{Value, json};

use crate::cli::AuditCommand;
use crate::exit::Code;
use crate::output::{Settings, print_json};

pub async fn run(
    settings: &Settings,
    command: &AuditCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let Some(store) = settings.store().await? else {
        // Nothing recorded yet: an empty record verifies, lists and exports as empty.
        if matches!(command, AuditCommand::Show { .. }) {
            eprintln!("error[E_NOT_FOUND]: no runs recorded yet");
            return Ok(Code::Failed);
        }
        if matches!(command, AuditCommand::Head) {
            writeln!(out, "0 {}", jig_engine::audit::GENESIS)?;
        }
        // A head kept elsewhere proves packets existed: a missing store lost them.
        if let AuditCommand::Verify { expect: Some((seq, _)) } = command
            && *seq > 0
        {
            writeln!(out, "broken: there is no audit store, but packet {seq} was expected")?;
            return Ok(Code::Failed);
        }
        return Ok(Code::Ok);
    };
    let code = match command {
        AuditCommand::List { json, limit, tool } => {
            let packets = store.latest_packets((*limit).max(0), tool.as_deref()).await?;
            for packet in &packets {
                if *json {
                    serde_json::to_writer(&mut *out, packet)?;
                    writeln!(out)?;
                } else {
                    writeln!(out, "{}", line(packet))?;
                }
            }
            Code::Ok
        }
        AuditCommand::Show { run, json } => show(&store, run, *json, out).await?,
        AuditCommand::Verify { expect } => verify(&store, expect.as_ref(), out).await?,
        AuditCommand::Head => {
            let (seq, hash) = store.head().await?;
            writeln!(out, "{seq} {hash}")?;
            Code::Ok
        }
        AuditCommand::Export { after } => {
            let mut after = *after;
            loop {
                let page = store.packets(after, 1000).await?;
                let Some(last) = page.last() else { break };
                after = last.seq;
                for packet in &page {
                    serde_json::to_writer(&mut *out, packet)?;
                    writeln!(out)?;
                }
            }
            Code::Ok
        }
    };
    Ok(code)
}

async fn show(store: &Store, id: &str, json: bool, out: &mut impl Write) -> anyhow::Result<Code> {
    let Some(run) = store.run(id).await? else {
        eprintln!("error[E_NOT_FOUND]: no run with a request id or run id starting `{id}`");
        eprintln!("  = hint: `jig audit list` shows recent request ids");
        return Ok(Code::Failed);
    };
    let packets = store.packets_of(&run.request_id).await?;
    if json {
        print_json(out, &json!({ "run": run, "packets": packets }))?;
        return Ok(Code::Ok);
    }
    let rows = [
        ("request", run.request_id.clone()),
        ("run id", run.run_id.clone()),
        ("tool", format!("{} {}", run.tool, run.version)),
        ("state", run.state.to_string()),
        ("session", run.session_id.clone().unwrap_or_default()),
        ("thread", run.thread_id.clone().unwrap_or_default()),
        ("principal", run.principal.clone().unwrap_or_default()),
        ("params hash", run.params_hash.clone()),
        ("policy hash", run.policy_hash.clone()),
        ("rule", run.rule.clone().unwrap_or_default()),
        ("started", rfc3339(run.created_us)),
        ("duration", run.duration_ms.map(|ms| format!("{ms} ms")).unwrap_or_default()),
        ("replayed from", run.replayed_from.clone().unwrap_or_default()),
        ("error", run.error.clone().unwrap_or_default()),
    ];
    for (label, value) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        writeln!(out, "{label:<14} {value}")?;
    }
    writeln!(out, "\npackets:")?;
    for packet in &packets {
        writeln!(out, "  {}", line(packet))?;
    }
    if let Some(response) = &run.response {
        writeln!(out, "\nresponse (as recorded, redacted):")?;
        for text in serde_json::to_string_pretty(response)?.lines() {
            writeln!(out, "  {text}")?;
        }
    }
    Ok(Code::Ok)
}

/// `SEQ TIME KIND TOOL REQUEST SUMMARY`.
fn line(packet: &Packet) -> String {
    let request = packet.request_id.as_deref().map_or("-", |r| r.get(..12).unwrap_or(r));
    format!(
        "{:>6} {} {:<26} {:<20} {:<12} {}",
        packet.seq,
        rfc3339(packet.ts_us),
        packet.kind,
        packet.tool.as_deref().unwrap_or("-"),
        request,
        summary(packet)
    )
    .trim_end()
    .to_owned()
}

/// The gist of a packet's body.
fn summary(packet: &Packet) -> String {
    let d = &packet.data;
    let text = |key: &str| d.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    match packet.kind.as_str() {
        "tool.call.request" => compact(&d["args"], 60),
        "tool.call.decision" => format!("{} ({})", text("action"), text("rule")),
        "tool.call.pending_approval" => format!("approval {}", text("approval_id")),
        "tool.call.result" if d.get("replayed_from").is_some() => {
            format!("replayed from {}", text("replayed_from").get(..12).unwrap_or_default())
        }
        "tool.call.result" => format!("ok in {} ms", d["duration_ms"]),
        "tool.call.failed" => {
            let code = d["errors"][0]["code"].as_str().unwrap_or_default();
            if d["incomplete"] == true {
                "incomplete (the process stopped)".to_owned()
            } else {
                format!("{} {code}", text("state"))
            }
        }
        "approval.decided" => {
            format!("{} by {}", text("verdict"), packet.principal.as_deref().unwrap_or("-"))
        }
        "tool.select.request" => compact(&d["intent"]["summary"], 60),
        "tool.select.result" => match d["selection"]["selected_tool"].as_str() {
            Some(tool) => format!("selected {tool}"),
            None => "no selection".to_owned(),
        },
        _ => String::new(),
    }
}

fn compact(value: &Value, max: usize) -> String {
    let text = value.to_string();
    if text.chars().count() > max {
        format!("{}…", text.chars().take(max - 1).collect::<String>())
    } else {
        text
    }
}

/// The chain, the database's own check where it has one, and an expected head: says what was
/// checked.
async fn verify(
    store: &Store,
    expect: Option<&(i64, String)>,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let integrity = store.integrity().await?;
    if let Some(problem) = &integrity.problem {
        writeln!(out, "broken: {} fails: {problem}", integrity.check)?;
        return Ok(Code::Failed);
    }
    let verification = store.verify().await?;
    let (seq, hash) = &verification.head;
    if let Some((broken, reason)) = &verification.first_broken {
        writeln!(out, "broken at seq {broken}: {reason}")?;
        eprintln!(
            "error[E_INTERNAL]: the audit chain does not verify from seq {broken} on ({} packets before it verified)",
            verification.checked
        );
        return Ok(Code::Failed);
    }
    if let Some(problem) = &verification.side_tables {
        writeln!(out, "broken: {problem}")?;
        return Ok(Code::Failed);
    }
    let mut checked = vec![
        format!(
            "{} packets verified (hashes, links, chain head; approvals and recorded responses match their packets)",
            verification.checked
        ),
        integrity.summary(),
    ];
    if let Some((expected_seq, expected_hash)) = expect {
        match store.packet_hash(*expected_seq).await? {
            None => {
                writeln!(
                    out,
                    "broken: the chain ends at seq {seq}, but packet {expected_seq} was expected (packets were removed)"
                )?;
                return Ok(Code::Failed);
            }
            Some(found) if &found != expected_hash => {
                writeln!(
                    out,
                    "broken at seq {expected_seq}: its hash is {found}, not the expected {expected_hash} (the chain was rewritten)"
                )?;
                return Ok(Code::Failed);
            }
            Some(_) => checked.push(format!("holds the expected packet {expected_seq}")),
        }
    }
    writeln!(out, "ok: {}; head {seq} {hash}", checked.join("; "))?;
    Ok(Code::Ok)
}
