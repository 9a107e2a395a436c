//! The journal: everything a run needs to be rebuilt, keyed by step instance.
//!
//! A run's state is never stored as a snapshot of variables. The interpreter is deterministic:
//! given the runbook, the inputs and the journal, it walks the same path and reaches the same
//! place, answering every step that already happened from the journal and stopping at the first
//! that needs something new (a tool call, a person's evidence). That is what makes a paused run
//! resumable from any process, and a replay after a crash exact.

use jig_model::ApprovalId;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How a step ended (kernel-v0 §9.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Completed normally; outputs are available.
    Success,
    /// Executed, and the result was a failure (non-zero exit, assertion false, rejected).
    Failed,
    /// Not executed (`when` false, skipped by a reviewer, governance denied).
    Skipped,
    /// Could not execute (no tool, a template error, a contract violation).
    Error,
}

impl StepStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Error => "error",
        }
    }
}

/// Why a step did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Failure {
    /// `exit_code`, `assertion`, `denied`, `contract_violation`, `template`, `tool`, `skipped` …
    pub kind: String,
    /// In words.
    pub message: String,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        Self { kind: kind.to_owned(), message: message.into() }
    }
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum Entry {
    /// The run began: what it runs and with what.
    Start {
        /// The runbook's reference name.
        runbook: String,
        /// The runbook's hash when the run began.
        hash: String,
        /// The inputs as given.
        inputs: Map<String, Value>,
        /// Whether each step waits for a reviewer's go-ahead.
        stepwise: bool,
        /// Who started it.
        by: String,
        /// The runbook itself as it was when the run began: a run resumes on the version it
        /// started with, even where the project no longer has it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        definition: Option<serde_json::Value>,
    },
    /// A step finished.
    Done {
        /// How.
        status: StepStatus,
        /// Its outputs.
        #[serde(default)]
        outputs: Map<String, Value>,
        /// Why not a success.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<Failure>,
    },
    /// A reviewer's go-ahead for a step: run it, or skip it with a reason.
    Go {
        /// Skip, and why; `None` runs the step.
        skip: Option<String>,
        /// Who.
        by: String,
    },
    /// A person's evidence for a manual step.
    Evidence {
        /// Evidence name → value (text, ticked items, an attachment's content hash).
        values: Map<String, Value>,
        /// Who.
        by: String,
    },
    /// A person's answer to a step's choice.
    Choice {
        /// The option's value.
        value: String,
        /// Who.
        by: String,
    },
    /// A person retries a step that failed.
    Retry {
        /// Who.
        by: String,
    },
    /// A person accepts a failed step's failure: the run ends failed.
    Abort {
        /// Who.
        by: String,
    },
    /// A person continued an ended run with the runbook its outcome names (`next_runbook`):
    /// the run that continues it.
    Next {
        /// The new run.
        run_id: String,
        /// Who.
        by: String,
    },
    /// A person asks the run to hold before its next step that would do something; it holds
    /// until someone resumes it (a [`Entry::Go`] under a `resume:` key).
    Pause {
        /// Who.
        by: String,
    },
    /// A person decided the approval a tool step waited on (the engine keeps the decision;
    /// this names it in the run's record).
    Decision {
        /// The approval.
        approval_id: ApprovalId,
        /// Approved, or denied.
        approved: bool,
        /// Who.
        by: String,
    },
}

impl Entry {
    /// Who made the entry, when a person did.
    pub fn by(&self) -> Option<&str> {
        match self {
            Self::Start { by, .. }
            | Self::Go { by, .. }
            | Self::Evidence { by, .. }
            | Self::Choice { by, .. }
            | Self::Retry { by }
            | Self::Abort { by }
            | Self::Pause { by }
            | Self::Next { by, .. }
            | Self::Decision { by, .. } => Some(by),
            Self::Done { .. } => None,
        }
    }
}

/// The entries of one run, by key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    entries: BTreeMap<String, Entry>,
}

impl Journal {
    /// An empty journal.
    pub fn new() -> Self {
        Self::default()
    }

    /// The entry under `key`.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    /// Add an entry (replacing none: the first stays).
    pub fn insert(&mut self, key: String, entry: Entry) -> &Entry {
        self.entries.entry(key).or_insert(entry)
    }

    /// How many entries have keys beginning with `prefix`.
    pub fn count_prefixed(&self, prefix: &str) -> usize {
        self.entries.range(prefix.to_owned()..).take_while(|(k, _)| k.starts_with(prefix)).count()
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.entries.iter()
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl FromIterator<(String, Entry)> for Journal {
    fn from_iter<I: IntoIterator<Item = (String, Entry)>>(iter: I) -> Self {
        let mut journal = Self::new();
        for (key, entry) in iter {
            journal.insert(key, entry);
        }
        journal
    }
}

/// The journal keys of a step instance `key`.
pub mod keys {
    /// The run's start.
    pub const START: &str = "start";

    /// The step id of an instance key: `triage/degraded/restart@2` → `restart`, `each[3]` →
    /// `each`, `check~2` → `check`.
    pub fn step_id(key: &str) -> &str {
        let last = key.rsplit('/').next().unwrap_or(key);
        let last = last.split(['@', '[', '~']).next().unwrap_or(last);
        last.split('#').next().unwrap_or(last)
    }

    /// The step's result.
    pub fn done(key: &str) -> String {
        format!("done:{key}")
    }

    /// A reviewer's go-ahead.
    pub fn go(key: &str) -> String {
        format!("go:{key}")
    }

    /// The `n`th person's go-ahead (from 1) where several must say go: the first is
    /// [`go`], the others `go:KEY#n`.
    pub fn go_nth(key: &str, n: usize) -> String {
        if n <= 1 { go(key) } else { format!("go:{key}#{n}") }
    }

    /// A manual step's evidence.
    pub fn evidence(key: &str) -> String {
        format!("evidence:{key}")
    }

    /// A choice.
    pub fn choice(key: &str) -> String {
        format!("choice:{key}")
    }

    /// A retry of the attempt `key`.
    pub fn retry(key: &str) -> String {
        format!("retry:{key}")
    }

    /// A decision on the approval `approval_id` the step `key` waited on.
    pub fn decision(key: &str, approval_id: &str) -> String {
        format!("decision:{key}:{approval_id}")
    }

    /// Accepting the failure of the attempt `key`.
    pub fn abort(key: &str) -> String {
        format!("abort:{key}")
    }

    /// The run that continues this one with its outcome's `next_runbook`.
    pub const NEXT: &str = "next";

    /// The prefix of the keys of pauses people asked for.
    pub const PAUSE: &str = "pause:";

    /// The prefix of the keys of resumes of paused runs.
    pub const RESUME: &str = "resume:";

    /// The `n`th pause asked for (from 1).
    pub fn pause(n: usize) -> String {
        format!("{PAUSE}{n}")
    }

    /// The resume of the `n`th pause.
    pub fn resume(n: usize) -> String {
        format!("{RESUME}{n}")
    }
}
