//! The contract-based conflict check of parallel blocks (kernel-v0 §8): two arms may run
//! together only if neither writes a resource the other reads or writes. Jig refuses a run with
//! such a block before anything runs (gert serializes the arms instead; a reviewer should see
//! the runbook corrected, not a silent change of its meaning). `jig validate` warns about the
//! same conflicts (jig-load's `runbooks/parallel.rs`).

use jig_model::runbook::{Runbook, Step, StepKind};

use crate::contract;
use crate::error::RunbookError;
use crate::host::{Contract, Host};

/// Refuse the first parallel block whose arms contend.
pub(crate) fn check(runbook: &Runbook, host: &dyn Host) -> Result<(), RunbookError> {
    match first(&runbook.steps, host) {
        Some(conflict) => Err(conflict),
        None => Ok(()),
    }
}

fn first(steps: &[Step], host: &dyn Host) -> Option<RunbookError> {
    steps.iter().find_map(|step| match &step.kind {
        StepKind::Parallel { arms } => block(step, arms, host)
            .into_iter()
            .next()
            .or_else(|| arms.iter().find_map(|a| first(&a.steps, host))),
        StepKind::Branch { arms } => arms.iter().find_map(|a| first(&a.steps, host)),
        StepKind::Repeat { steps, .. } => first(steps, host),
        _ => None,
    })
}

fn block(step: &Step, arms: &[jig_model::runbook::Arm], host: &dyn Host) -> Vec<RunbookError> {
    let uses: Vec<Contract> = arms.iter().map(|arm| usage(&arm.steps, host)).collect();
    let name = |i: usize| arms[i].label.clone().unwrap_or_else(|| format!("#{i}"));
    let mut out = Vec::new();
    for i in 0..uses.len() {
        for j in i + 1..uses.len() {
            let tags = contract::conflict(&uses[i], &uses[j]);
            if !tags.is_empty() {
                out.push(RunbookError::ParallelConflict {
                    step: step.id.clone().unwrap_or_else(|| step.pointer.clone()),
                    first: format!("`{}`", name(i)),
                    second: format!("`{}`", name(j)),
                    tags: tags.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "),
                });
            }
        }
    }
    out
}

/// The resources a list of steps reads and writes, by their contracts.
fn usage(steps: &[Step], host: &dyn Host) -> Contract {
    let mut out = Contract::default();
    let mut add = |c: &Contract| {
        for t in &c.reads {
            if !out.reads.contains(t) {
                out.reads.push(t.clone());
            }
        }
        for t in &c.writes {
            if !out.writes.contains(t) {
                out.writes.push(t.clone());
            }
        }
    };
    for step in steps {
        match &step.kind {
            StepKind::Tool { tool, action, contract: tightening, .. } => {
                if let Ok(info) = host.tool(tool, action.as_deref()) {
                    let c = tightening
                        .as_ref()
                        .and_then(|t| contract::tighten(&info.contract, t).ok())
                        .unwrap_or(info.contract);
                    add(&c);
                }
            }
            StepKind::Manual { contract: Some(declared), .. }
            | StepKind::Extension { contract: Some(declared), .. } => {
                add(&contract::declared(Contract::default(), declared));
            }
            StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                for arm in arms {
                    add(&usage(&arm.steps, host));
                }
            }
            StepKind::Repeat { steps, .. } => add(&usage(steps, host)),
            _ => {}
        }
    }
    out
}
