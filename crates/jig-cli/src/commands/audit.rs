//! `jig audit list|show|verify|head|export`: read and check the audit record. These open the
//! store alone, so a project with a broken tool file can still be audited.

use std::io::Write;

use jig_engine::Packet;
use jig_engine::history::{self, ChainStatus, History};
use jig_engine::time::rfc3339;
use serde_json::Value;

use crate::cli::AuditCommand;
use crate::commands::publish;
use crate::exit::Code;
use crate::output::{Settings, print_json};

pub async fn run(
    settings: &Settings,
    command: &AuditCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    match command {
        AuditCommand::Keygen { file } => return keygen(file, out),
        AuditCommand::Forward { until_caught_up } => {
            return super::forward::run(settings, *until_caught_up, out).await;
        }
        _ => {}
    }
    let Some(history) = settings.history().await? else {
        // Nothing recorded yet: an empty record lists and exports as empty.
        match command {
            AuditCommand::Show { .. } => {
                crate::fail!(NotFound, "no runs recorded yet");
                return Ok(Code::Failed);
            }
            AuditCommand::Head { sign: None } => writeln!(out, "0 {}", history::GENESIS)?,
            AuditCommand::Publish { .. } => {
                crate::fail!(NotFound, "nothing recorded yet: there is no head to publish");
                return Ok(Code::Failed);
            }
            AuditCommand::Head { sign: Some(_) } => {
                crate::fail!(NotFound, "nothing recorded yet: there is no head to sign");
                return Ok(Code::Failed);
            }
            // A head kept elsewhere proves packets existed: a missing store lost them.
            AuditCommand::Verify { expect: Some(expected) } => {
                return report(&history::verify_missing(Some(expected)), out);
            }
            _ => {}
        }
        return Ok(Code::Ok);
    };
    let code = match command {
        AuditCommand::List { json, limit, tool } => {
            let packets = history.latest(*limit, tool.as_deref()).await?;
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
        AuditCommand::Show { run, json } => show(&history, run, *json, out).await?,
        AuditCommand::Verify { expect } => {
            let key = AuditSettings::read(settings).head_key;
            report(&history.verify(expect.as_ref(), key.as_deref()).await?, out)?
        }
        AuditCommand::Head { sign: None } => {
            let (seq, hash) = history.head().await?;
            writeln!(out, "{seq} {hash}")?;
            Code::Ok
        }
        AuditCommand::Head { sign: Some(key_file) } => {
            let origin = AuditSettings::read(settings).origin;
            let Some(head) = signed_head(&history, key_file, &origin).await? else {
                return Ok(Code::Failed);
            };
            serde_json::to_writer(&mut *out, &head)?;
            writeln!(out)?;
            Code::Ok
        }
        AuditCommand::Publish { sign, to } => {
            publish_head(settings, &history, sign, to.as_deref(), out).await?
        }
        AuditCommand::Keygen { .. } | AuditCommand::Forward { .. } => Code::Usage,
        AuditCommand::Export { after, format } => {
            let source = AuditSettings::read(settings).origin;
            let mut after = *after;
            loop {
                let page = history.packets(after, 1000).await?;
                let Some(last) = page.last() else { break };
                after = last.seq;
                for packet in &page {
                    serde_json::to_writer(&mut *out, &history::render(packet, *format, &source))?;
                    writeln!(out)?;
                }
            }
            Code::Ok
        }
    };
    Ok(code)
}

async fn show(
    history: &History,
    id: &str,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let Some(detail) = history.run(id).await? else {
        crate::fail!(NotFound, "no run with a request id or run id starting `{id}`");
        eprintln!("  = hint: `jig audit list` shows recent request ids");
        return Ok(Code::Failed);
    };
    if json {
        print_json(out, &detail)?;
        return Ok(Code::Ok);
    }
    let (run, packets) = (&detail.run, &detail.packets);
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
    for packet in packets {
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
        "tool.call.decision" => packet
            .call_decided()
            .map(|d| format!("{} ({})", d.action.as_str(), d.rule))
            .unwrap_or_default(),
        "tool.call.pending_approval" => packet
            .pending_approval()
            .map(|w| format!("approval {}", w.approval_id))
            .unwrap_or_default(),
        "tool.call.result" if d.get("replayed_from").is_some() => {
            format!("replayed from {}", text("replayed_from").get(..12).unwrap_or_default())
        }
        "tool.call.result" => format!("ok in {} ms", d["duration_ms"]),
        "tool.call.failed" if d["incomplete"] == true => {
            "incomplete (the process stopped)".to_owned()
        }
        "tool.call.failed" => packet.call_moved().map_or_else(String::new, |moved| {
            let code = moved.first_error().map_or("", |e| e.code.as_str());
            let state = moved.state.map_or("", jig_engine::RunState::as_str);
            format!("{state} {code}")
        }),
        "approval.decided" => {
            let verdict = packet.approval_decided().map_or("", |d| d.verdict.as_str());
            format!("{verdict} by {}", packet.principal.as_deref().unwrap_or("-"))
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

/// Print what verifying found: `ok: …` naming everything checked, or `broken …`.
fn report(status: &ChainStatus, out: &mut impl Write) -> anyhow::Result<Code> {
    match status {
        ChainStatus::Ok { checked, head } => {
            writeln!(out, "ok: {}; head {} {}", checked.join("; "), head.seq, head.hash)?;
            Ok(Code::Ok)
        }
        ChainStatus::Broken { at: Some(seq), reason, verified } => {
            writeln!(out, "broken at seq {seq}: {reason}")?;
            crate::fail!(
                Internal,
                "the audit chain does not verify from seq {seq} on ({verified} packets before it verified)"
            );
            Ok(Code::Failed)
        }
        ChainStatus::Broken { at: None, reason, .. } => {
            writeln!(out, "broken: {reason}")?;
            Ok(Code::Failed)
        }
    }
}

/// The manifest's `config.audit` as these commands need it, read from the manifest alone (so
/// a broken tool file does not hide it), once per command.
struct AuditSettings {
    /// The public key signed heads must verify with (`head_key`).
    head_key: Option<String>,
    /// The chain's name (`origin`, else `jig/<project name>`): the origin line of its
    /// checkpoints and the source of its exported events.
    origin: String,
    /// Where `jig audit publish` writes (`publish`).
    publish: Option<String>,
}

impl AuditSettings {
    fn read(settings: &Settings) -> Self {
        let manifest = jig_load::find_manifest(&settings.project)
            .and_then(|path| fs_err::read_to_string(path).ok())
            .and_then(|text| jig_load::yaml::parse(&text, &jig_load::yaml::Caps::DEFAULT).ok())
            .map(|document| document.value);
        let named = |pointer: &str| {
            manifest
                .as_ref()
                .and_then(|m| m.pointer(pointer))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Self {
            head_key: named("/config/audit/head_key"),
            origin: named("/config/audit/origin").unwrap_or_else(|| {
                format!("jig/{}", named("/name").unwrap_or_else(|| "project".to_owned()))
            }),
            publish: named("/config/audit/publish"),
        }
    }
}

/// The head signed with the key in `key_file`, its checkpoint under `origin`; `None` (said on
/// stderr) when the key or the origin is not usable.
async fn signed_head(
    history: &History,
    key_file: &std::path::Path,
    origin: &str,
) -> anyhow::Result<Option<history::SignedHead>> {
    let seed = fs_err::read_to_string(key_file)?;
    Ok(match history.signed_head(&seed, origin).await? {
        Ok(head) => Some(head),
        Err(error) => {
            crate::fail!(ValidationFail, "{}: {error}", key_file.display());
            None
        }
    })
}

/// A new key pair: the signing key to `file` (never over an existing file), the public key out.
fn keygen(file: &std::path::Path, out: &mut impl Write) -> anyhow::Result<Code> {
    use fs_err::os::unix::fs::OpenOptionsExt as _;
    let (seed, public) = history::generate_key()?;
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let mut key = match options.open(file) {
        Ok(key) => key,
        Err(error) => {
            crate::fail!(FileIo, "{error}");
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

/// `jig audit publish`: the signed checkpoint of the head written where `--to` or the
/// manifest's `config.audit.publish` says.
async fn publish_head(
    settings: &Settings,
    history: &History,
    sign: &std::path::Path,
    to: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let audit = AuditSettings::read(settings);
    let Some(head) = signed_head(history, sign, &audit.origin).await? else {
        return Ok(Code::Failed);
    };
    let note = head.checkpoint.unwrap_or_default();
    let target = match (to, audit.publish.as_deref()) {
        (Some(named), _) => publish::Target::Named(named),
        (None, Some(manifest)) => publish::Target::Manifest(manifest),
        (None, None) => {
            crate::fail!(
                ValidationFail,
                "config.audit.publish: nowhere to publish: the manifest names no file or http(s) URL, and no --to was given"
            );
            return Ok(Code::Usage);
        }
    };
    let shown = match &target {
        publish::Target::Named(t) | publish::Target::Manifest(t) => (*t).to_owned(),
    };
    let root =
        jig_load::project_root(&settings.project).unwrap_or_else(|| settings.project.clone());
    Ok(publish::write(&root, target, &note)
        .await?
        .then(|| writeln!(out, "published checkpoint {} to {shown}", head.seq))
        .transpose()?
        .map_or(Code::Failed, |()| Code::Ok))
}
