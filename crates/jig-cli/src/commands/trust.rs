//! `jig trust`: a person's consent to what the project's manifest sends off this machine or
//! writes outside the project (`jig_load::trust`). It shows each item as it would take effect —
//! where it goes and which variables it is handed — and keeps the consent outside the project.

use std::io::{BufRead, IsTerminal, Write};

use jig_load::trust::{Outbound, TrustState};
use serde::Serialize;

use crate::cli::TrustArgs;
use crate::exit::Code;
use crate::output::{Settings, summary_of_failure};

/// One line of `--show --json`.
#[derive(Debug, Serialize)]
struct Shown<'a> {
    kind: &'a str,
    name: &'a str,
    target: &'a str,
    state: TrustState,
    env: &'a [String],
    plain_http: bool,
}

pub fn run(settings: &Settings, args: &TrustArgs, out: &mut impl Write) -> anyhow::Result<Code> {
    let snapshot = match settings.loader(&[]).load() {
        Ok(snapshot) => snapshot,
        Err(failure) => {
            crate::fail!(ValidationFail, "{}", summary_of_failure(&failure));
            eprintln!(
                "  = hint: `jig validate` lists the problems; consent is given to a project that loads"
            );
            return Ok(Code::Invalid);
        }
    };
    let root = snapshot.root().to_path_buf();
    let items: Vec<(Outbound, TrustState)> = jig_load::trust::of_snapshot(&snapshot)
        .into_iter()
        .map(|item| {
            let state = item.state(&root);
            (item, state)
        })
        .collect();
    let servers: Vec<(&String, bool)> =
        snapshot.mcp_servers().iter().map(|(name, server)| (name, server.discovered)).collect();
    if args.show {
        return show(&items, &servers, args.json, out);
    }
    if args.revoke {
        for (item, _) in &items {
            if item.revoke(&root).map_err(anyhow::Error::msg)? {
                writeln!(out, "revoked: {}", item.describe())?;
            }
        }
        return Ok(Code::Ok);
    }
    let waiting: Vec<&Outbound> =
        items.iter().filter(|(_, s)| *s != TrustState::Trusted).map(|(i, _)| i).collect();
    if waiting.is_empty() {
        writeln!(out, "nothing waits for consent in {}", root.display())?;
        return Ok(Code::Ok);
    }
    for item in &waiting {
        eprintln!("  {}", item.describe());
    }
    if !args.yes && !asked_yes(waiting.len())? {
        eprintln!(
            "nothing was consented to; `jig trust --yes` consents without asking (read the lines above first)"
        );
        return Ok(Code::Failed);
    }
    for item in waiting {
        item.trust(&root).map_err(anyhow::Error::msg)?;
        writeln!(out, "trusted: {}", item.describe())?;
    }
    Ok(Code::Ok)
}

/// Ask on the terminal; `false` when there is none to ask on.
fn asked_yes(count: usize) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("there is no terminal to ask on");
        return Ok(false);
    }
    eprint!("consent to {count} item{} above? [y/N] ", if count == 1 { "" } else { "s" });
    std::io::stderr().flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn show(
    items: &[(Outbound, TrustState)],
    servers: &[(&String, bool)],
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    if json {
        let mut shown: Vec<Shown<'_>> = items
            .iter()
            .map(|(item, state)| Shown {
                kind: item.kind.as_str(),
                name: &item.name,
                target: &item.target,
                state: *state,
                env: &item.env,
                plain_http: item.plain_http,
            })
            .collect();
        shown.extend(servers.iter().map(|(name, asked)| Shown {
            kind: "mcp_server",
            name,
            target: "",
            state: if *asked { TrustState::Trusted } else { TrustState::Waiting },
            env: &[],
            plain_http: false,
        }));
        serde_json::to_writer_pretty(&mut *out, &shown)?;
        writeln!(out)?;
        return Ok(Code::Ok);
    }
    if items.is_empty() && servers.is_empty() {
        writeln!(out, "the manifest sends nothing off this machine")?;
    }
    for (item, state) in items {
        let state = match state {
            TrustState::Trusted => "trusted",
            TrustState::Waiting => "waiting",
            TrustState::Changed => "changed",
        };
        writeln!(out, "{state:8} {}", item.describe())?;
    }
    for (name, asked) in servers {
        let state = if *asked { "trusted" } else { "waiting" };
        writeln!(out, "{state:8} mcp_server `{name}` (`jig mcp discover` asks for it)")?;
    }
    Ok(Code::Ok)
}
