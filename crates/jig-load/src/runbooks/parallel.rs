//! kernel-v0 §8's conflict check, as a warning at validation: parallel arms where one writes a
//! resource tag the other reads or writes. (`jig runbook run` refuses such a run.)

use std::collections::BTreeSet;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::runbook::{Arm, Runbook, Step, StepKind};

use crate::located::Located;

/// Resource tags a step reads and writes, as its contracts declare.
pub(crate) type Usage = (BTreeSet<String>, BTreeSet<String>);

pub(crate) fn check(
    runbook: &Runbook,
    located: &Located,
    usage: &dyn Fn(&Step) -> Usage,
    out: &mut Vec<Diagnostic>,
) {
    for step in runbook.walk() {
        let StepKind::Parallel { arms } = &step.kind else { continue };
        let uses: Vec<Usage> = arms.iter().map(|arm| of_arm(arm, usage)).collect();
        for i in 0..uses.len() {
            for j in i + 1..uses.len() {
                let tags = contended(&uses[i], &uses[j]);
                if tags.is_empty() {
                    continue;
                }
                let name = |k: usize| arms[k].label.clone().unwrap_or_else(|| format!("#{k}"));
                out.push(located.at(
                    Diagnostic::warning(
                        codes::RUNBOOK_PARALLEL,
                        format!(
                            "parallel arms `{}` and `{}` both use {} and one of them writes it; a run of this runbook is refused",
                            name(i),
                            name(j),
                            tags.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                        ),
                    )
                    .with_hint("run the arms in sequence, or correct the contracts' `reads`/`writes`"),
                    &step.pointer,
                ));
            }
        }
    }
}

fn of_arm(arm: &Arm, usage: &dyn Fn(&Step) -> Usage) -> Usage {
    let mut total: Usage = Default::default();
    fn visit(steps: &[Step], usage: &dyn Fn(&Step) -> Usage, total: &mut Usage) {
        for step in steps {
            let (reads, writes) = usage(step);
            total.0.extend(reads);
            total.1.extend(writes);
            match &step.kind {
                StepKind::Branch { arms } | StepKind::Parallel { arms } => {
                    for arm in arms {
                        visit(&arm.steps, usage, total);
                    }
                }
                StepKind::Repeat { steps, .. } => visit(steps, usage, total),
                _ => {}
            }
        }
    }
    visit(&arm.steps, usage, &mut total);
    total
}

fn contended(a: &Usage, b: &Usage) -> BTreeSet<String> {
    a.1.iter()
        .filter(|t| b.0.contains(*t) || b.1.contains(*t))
        .chain(b.1.iter().filter(|t| a.0.contains(*t)))
        .cloned()
        .collect()
}
