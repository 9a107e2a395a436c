//! Contracts (kernel-v0 §4): a step's contract is its tool's, tightened by the step — or the
//! kernel's implicit one for manual and assert steps — and its risk follows from it (§9).

use jig_model::Risk;
use jig_model::gert_tool::Contract as Declared;

use crate::host::Contract;

/// A manual step's implicit contract: a person may do anything.
pub(crate) fn manual() -> Contract {
    Contract { side_effects: true, deterministic: false, idempotent: false, ..Contract::default() }
}

/// An assert step's fixed contract.
pub(crate) fn assertion() -> Contract {
    Contract { side_effects: false, deterministic: true, idempotent: true, ..Contract::default() }
}

/// What a declared contract says, over `base` where it is silent.
pub(crate) fn declared(base: Contract, declared: &Declared) -> Contract {
    let mut out = base;
    if let Some(side_effects) = side_effects_of(declared) {
        out.side_effects = side_effects;
    }
    if let Some(effects) = &declared.effects {
        out.effects =
            effects.iter().map(|e| e.as_str().to_owned()).filter(|e| e != "none").collect();
    }
    if let Some(deterministic) = declared.deterministic {
        out.deterministic = deterministic;
    }
    if let Some(idempotent) = declared.idempotent {
        out.idempotent = idempotent;
    }
    if let Some(reads) = &declared.reads {
        out.reads.clone_from(reads);
    }
    if let Some(writes) = &declared.writes {
        out.writes.clone_from(writes);
    }
    out
}

fn side_effects_of(declared: &Declared) -> Option<bool> {
    declared.side_effects.or_else(|| {
        declared
            .effects
            .as_ref()
            .map(|effects| effects.iter().any(|e| e.known() != Some(jig_model::SideEffect::None)))
    })
}

/// A tool's contract tightened by a step (one-way only: a step may claim more, never less).
pub(crate) fn tighten(tool: &Contract, step: &Declared) -> Result<Contract, String> {
    let mut out = tool.clone();
    match side_effects_of(step) {
        Some(false) if tool.side_effects => {
            return Err("the step declares `side_effects: false`, but its tool has side effects (a step may only tighten its tool's contract)".to_owned());
        }
        Some(true) => out.side_effects = true,
        _ => {}
    }
    match step.deterministic {
        Some(true) if !tool.deterministic => {
            return Err(
                "the step declares `deterministic: true`, but its tool is not deterministic"
                    .to_owned(),
            );
        }
        Some(false) => out.deterministic = false,
        _ => {}
    }
    match step.idempotent {
        Some(true) if !tool.idempotent => {
            return Err(
                "the step declares `idempotent: true`, but its tool is not idempotent".to_owned()
            );
        }
        Some(false) => out.idempotent = false,
        _ => {}
    }
    for (field, tags, base) in
        [("reads", &step.reads, &mut out.reads), ("writes", &step.writes, &mut out.writes)]
    {
        let Some(tags) = tags else { continue };
        if let Some(missing) = base.iter().find(|t| !tags.contains(t)) {
            return Err(format!(
                "the step's `{field}` leaves out `{missing}`, which its tool declares (a step may add resources, not remove them)"
            ));
        }
        for tag in tags {
            if !base.contains(tag) {
                base.push(tag.clone());
            }
        }
    }
    if let Some(effects) = &step.effects {
        for effect in effects {
            let name = effect.as_str().to_owned();
            if name != "none" && !out.effects.contains(&name) {
                out.effects.push(name);
            }
        }
    }
    Ok(out)
}

/// The risk of a contract (kernel-v0 §9).
pub fn risk(contract: &Contract) -> Risk {
    match (contract.side_effects, contract.idempotent, contract.deterministic) {
        (false, _, _) => Risk::Low,
        (true, true, _) => Risk::Medium,
        (true, false, true) => Risk::High,
        (true, false, false) => Risk::Critical,
    }
}

/// The resource tags two contracts contend on: one writes what the other reads or writes.
pub(crate) fn conflict(a: &Contract, b: &Contract) -> Vec<String> {
    let mut tags: Vec<String> = a
        .writes
        .iter()
        .filter(|t| b.reads.contains(t) || b.writes.contains(t))
        .chain(b.writes.iter().filter(|t| a.reads.contains(t)))
        .cloned()
        .collect();
    tags.sort();
    tags.dedup();
    tags
}
