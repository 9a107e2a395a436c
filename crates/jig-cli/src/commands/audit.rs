//! `jig audit list|show|verify|head|export`: read and check the audit record. These open the
//! store alone, so a project with a broken tool file can still be audited.

use std::io::Write;

use jig_engine::audit::time::rfc3339;
use jig_engine::audit::{Packet, Store};
use serde_json::{Value, json};

use jig_engine::audit::signed_head::{self, SignedHead};

use crate::cli::{AuditCommand, ExpectedHead};
use crate::exit::Code;
use crate::output::{Settings, print_json};

pub async fn run(
    settings: &Settings,
    command: &AuditCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    if let AuditCommand::Keygen { file } = command {
        return keygen(file, out);
    }
    let Some(store) = settings.store().await? else {
        // Nothing recorded yet: an empty record verifies, lists and exports as empty.
        if matches!(command, AuditCommand::Show { .. }) {
            eprintln!("error[E_NOT_FOUND]: no runs recorded yet");
            return Ok(Code::Failed);
        }
        if matches!(command, AuditCommand::Head { sign: None }) {
            writeln!(out, "0 {}", jig_engine::audit::GENESIS)?;
        }
        // A head kept elsewhere proves packets existed: a missing store lost them.
        if let AuditCommand::Verify { expect: Some(expected) } = command {
            let (seq, _) = expected_pair(expected);
            if seq > 0 {
                writeln!(out, "broken: there is no audit store, but packet {seq} was expected")?;
                return Ok(Code::Failed);
            }
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
        AuditCommand::Verify { expect } => {
            verify(&store, expect.as_ref(), head_key(settings).as_deref(), out).await?
        }
        AuditCommand::Head { sign: None } => {
            let (seq, hash) = store.head().await?;
            writeln!(out, "{seq} {hash}")?;
            Code::Ok
        }
        AuditCommand::Head { sign: Some(key_file) } => {
            let seed = fs_err::read_to_string(key_file)?;
            let (seq, hash) = store.head().await?;
            match SignedHead::sign(seq, &hash, &seed) {
                Ok(head) => {
                    serde_json::to_writer(&mut *out, &head)?;
                    writeln!(out)?;
                    Code::Ok
                }
                Err(error) => {
                    eprintln!("error[E_VALIDATION_FAIL]: {}: {error}", key_file.display());
                    Code::Failed
                }
            }
        }
        AuditCommand::Keygen { .. } => Code::Usage,
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
    expect: Option<&ExpectedHead>,
    head_key: Option<&str>,
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
    if let Some(expected) = expect {
        if let ExpectedHead::Signed(head) = expected {
            if let Err(error) = head.check(head_key) {
                writeln!(out, "broken: the signed head is not trusted: {error}")?;
                return Ok(Code::Failed);
            }
            checked.push(match head_key {
                Some(_) => "the signed head verifies with the project's key".to_owned(),
                None => "the signed head's signature verifies (the project names no `config.audit.head_key` to trust)".to_owned(),
            });
        }
        let (expected_seq, expected_hash) = expected_pair(expected);
        match store.packet_hash(expected_seq).await? {
            None => {
                writeln!(
                    out,
                    "broken: the chain ends at seq {seq}, but packet {expected_seq} was expected (packets were removed)"
                )?;
                return Ok(Code::Failed);
            }
            Some(found) if found != expected_hash => {
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

fn expected_pair(expected: &ExpectedHead) -> (i64, String) {
    match expected {
        ExpectedHead::Plain(seq, hash) => (*seq, hash.clone()),
        ExpectedHead::Signed(head) => (head.seq, head.hash.to_ascii_lowercase()),
    }
}

/// The public key the project trusts for signed heads (`config.audit.head_key`), read from its
/// manifest alone, so a broken tool file does not hide it.
fn head_key(settings: &Settings) -> Option<String> {
    let manifest = jig_load::find_manifest(&settings.project)?;
    let text = fs_err::read_to_string(manifest).ok()?;
    let document = jig_load::yaml::parse(&text, &jig_load::yaml::Caps::DEFAULT).ok()?;
    document.value.pointer("/config/audit/head_key")?.as_str().map(str::to_owned)
}

/// A new key pair: the signing key to `file` (never over an existing file), the public key out.
fn keygen(file: &std::path::Path, out: &mut impl Write) -> anyhow::Result<Code> {
    use fs_err::os::unix::fs::OpenOptionsExt as _;
    let (seed, public) = signed_head::generate_key()?;
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let mut key = match options.open(file) {
        Ok(key) => key,
        Err(error) => {
            eprintln!("error[E_FILE_IO]: {error}");
            return Ok(Code::Failed);
        }
    };
    writeln!(key, "{seed}")?;
    writeln!(out, "{public}")?;
    eprintln!(
        "wrote the signing key to {}; put the public key in the manifest as `config: {{ audit: {{ head_key: … }} }}`",
        file.display()
    );
    Ok(Code::Ok)
}
