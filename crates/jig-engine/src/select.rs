//! Seed 003's selector: deterministic, no model reasoning. An intent's tags and words are matched
//! against each tool's tags, id and description; ties break towards fewer side effects, lower
//! risk, then the id, so the same intent over the same registry always picks the same tool.
//!
//! Invariants (seed 003): the selected tool is registered, is among the candidates, and the
//! arguments validate against its input schema. Every selection, and every refusal to select,
//! is recorded as `tool.select.request` + `tool.select.result` packets.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use jig_audit::{NewPacket, Op, PacketKind};
use jig_model::{SideEffect, ToolDef};
use jig_policy::redact::redact_value;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::engine::{CallContext, Engine};
use crate::error::EngineError;
use crate::identity::new_id;

/// How many candidates a selection lists.
const MAX_CANDIDATES: usize = 10;

/// Weights of the evidence a tool is scored on.
const TAG_WEIGHT: u32 = 3;
const ID_WEIGHT: u32 = 2;
const TEXT_WEIGHT: u32 = 1;

/// What the caller wants done.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intent {
    /// In a sentence.
    pub summary: String,
    /// Tags a fitting tool carries.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Words to look for in the tool's id and description.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Side effects the caller accepts; absent means any (dispatch still governs them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_side_effects: Option<Vec<SideEffect>>,
    /// Arguments for the tool; absent means `{}` plus the schema's top-level defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

/// One tool considered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The tool.
    pub tool: String,
    /// How well it matched (higher is better).
    pub score: u32,
    /// What matched.
    pub matched: Vec<String>,
    /// Why it was not chosen, if it was passed over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// Seed 003's `ToolSelection`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSelection {
    /// The selection's id (the `request_id` of its packets).
    pub selection_id: String,
    /// The intent, as given.
    pub intent_summary: String,
    /// Every tool that matched, best first.
    pub candidate_tools: Vec<Candidate>,
    /// The chosen tool.
    pub selected_tool: String,
    /// Arguments that validate against its input schema.
    pub args: Value,
    /// The evidence, in words.
    pub why_selected: String,
    /// What running it may change.
    pub expected_side_effects: Vec<SideEffect>,
    /// How to undo it.
    pub rollback_plan: String,
    /// 0–1: how much of the intent matched, lowered when another tool matched as well.
    pub confidence: f64,
}

impl Engine {
    /// Seed 003 `tools.select`: choose a tool for `intent`, among `candidates` if given (names
    /// that are not registered are never chosen).
    pub async fn select(
        &self,
        intent: &Intent,
        context: &CallContext,
        candidates: Option<&[String]>,
    ) -> Result<ToolSelection, EngineError> {
        let started = Instant::now();
        let selection_id = new_id();
        tracing::info!(name: "tools.select.started", selection_id = %selection_id, summary = %intent.summary, "tools.select.started");
        let result = self.choose(intent, candidates, &selection_id);
        let data = match &result {
            Ok(selection) => {
                json!({ "ok": true, "selection": redact_value(&serde_json::to_value(selection).unwrap_or(Value::Null)) })
            }
            Err(error) => json!({ "ok": false, "error": error.to_string() }),
        };
        let packet = |kind, data| {
            Op::Append(NewPacket {
                kind,
                session_id: Some(context.session_id.clone()),
                thread_id: context.thread_id.clone(),
                principal: Some(context.principal.clone()),
                request_id: Some(selection_id.clone()),
                run_id: None,
                tool: result.as_ref().ok().map(|s| s.selected_tool.clone()),
                args_hash: None,
                data,
            })
        };
        let request = json!({ "intent": redact_value(&serde_json::to_value(intent).unwrap_or(Value::Null)), "candidates": candidates });
        self.store
            .apply(vec![
                packet(PacketKind::SelectRequest, request),
                packet(PacketKind::SelectResult, data),
            ])
            .await?;
        self.metrics.record_select(started.elapsed());
        match &result {
            Ok(selection) => {
                tracing::info!(name: "tools.select.completed", selection_id = %selection_id, tool = %selection.selected_tool, confidence = selection.confidence, "tools.select.completed");
            }
            Err(error) => {
                tracing::warn!(name: "tools.select.completed", selection_id = %selection_id, error = %error, "tools.select.completed")
            }
        }
        result
    }

    fn choose(
        &self,
        intent: &Intent,
        only: Option<&[String]>,
        selection_id: &str,
    ) -> Result<ToolSelection, EngineError> {
        let registry = self.registry();
        let pool: Vec<Arc<ToolDef>> = match only {
            // Names are looked up in the registry: an unregistered one has nothing to score.
            Some(names) => names.iter().filter_map(|name| registry.get(name)).collect(),
            None => registry.all(),
        };
        let wanted = Wanted::of(intent);
        if wanted.is_empty() {
            return Err(EngineError::NoSelection(
                "the intent has no tags, keywords or summary words to match".into(),
            ));
        }
        let mut scored: Vec<(Arc<ToolDef>, Candidate)> = pool
            .into_iter()
            .filter_map(|tool| {
                let (score, matched) = wanted.score(&tool);
                let candidate = Candidate { tool: tool.id.clone(), score, matched, rejected: None };
                (score > 0).then_some((tool, candidate))
            })
            .collect();
        scored.sort_by(|(a, ca), (b, cb)| {
            cb.score
                .cmp(&ca.score)
                .then_with(|| effect_count(a).cmp(&effect_count(b)))
                .then_with(|| a.risk.cmp(&b.risk))
                .then_with(|| a.id.cmp(&b.id))
        });
        scored.truncate(MAX_CANDIDATES);
        if scored.is_empty() {
            return Err(EngineError::NoSelection(format!("nothing matches {}", wanted.describe())));
        }

        let chosen = self.first_fit(intent, &mut scored);
        let candidates: Vec<Candidate> = scored.iter().map(|(_, c)| c.clone()).collect();
        let Some((tool, args)) = chosen else {
            let reasons: Vec<String> = candidates
                .iter()
                .map(|c| format!("`{}`: {}", c.tool, c.rejected.as_deref().unwrap_or("rejected")))
                .collect();
            return Err(EngineError::NoSelection(format!(
                "every candidate was rejected ({})",
                reasons.join("; ")
            )));
        };
        let best = candidates
            .iter()
            .find(|c| c.tool == tool.id)
            .cloned()
            .unwrap_or_else(|| candidates[0].clone());
        let rival = candidates
            .iter()
            .any(|c| c.tool != tool.id && c.rejected.is_none() && c.score == best.score);
        let confidence = confidence(best.score, wanted.max_score(), rival);
        let why = format!(
            "matched {} (score {}); {}",
            best.matched.join(", "),
            best.score,
            if rival {
                "another tool matched equally and lost the tie-break (fewer side effects, lower risk, then id)"
            } else {
                "the best match"
            }
        );
        Ok(ToolSelection {
            selection_id: selection_id.to_owned(),
            intent_summary: intent.summary.clone(),
            candidate_tools: candidates,
            selected_tool: tool.id.clone(),
            args,
            why_selected: why,
            expected_side_effects: tool
                .side_effects
                .iter()
                .copied()
                .filter(|e| *e != SideEffect::None)
                .collect(),
            rollback_plan: rollback_plan(&tool),
            confidence,
        })
    }

    /// The best-scored candidate the intent allows and whose input schema its arguments fit
    /// (with the arguments it is called with); every candidate passed over says why.
    fn first_fit(
        &self,
        intent: &Intent,
        scored: &mut [(Arc<ToolDef>, Candidate)],
    ) -> Option<(Arc<ToolDef>, Value)> {
        let mut chosen = None;
        for (tool, candidate) in scored.iter_mut() {
            if let Some(allowed) = &intent.allowed_side_effects {
                let excess: Vec<&str> = tool
                    .side_effects
                    .iter()
                    .filter(|e| **e != SideEffect::None && !allowed.contains(e))
                    .map(|e| e.as_str())
                    .collect();
                if !excess.is_empty() {
                    candidate.rejected = Some(format!(
                        "has side effects the intent does not allow: {}",
                        excess.join(", ")
                    ));
                    continue;
                }
            }
            let args = intent.args.clone().unwrap_or_else(|| defaults(&tool.input_schema));
            let problems = self.validators.check(tool, true, &args);
            if let Some(first) = problems.first() {
                let at = if first.pointer.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", first.pointer)
                };
                candidate.rejected = Some(format!(
                    "the arguments do not fit its input schema{at}: {}",
                    first.message
                ));
                continue;
            }
            if chosen.is_none() {
                chosen = Some((Arc::clone(tool), args));
            }
        }
        chosen
    }
}

/// The intent's evidence, normalised to lower case.
struct Wanted {
    tags: BTreeSet<String>,
    words: BTreeSet<String>,
}

impl Wanted {
    fn of(intent: &Intent) -> Self {
        let tags =
            intent.tags.iter().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()).collect();
        let mut words: BTreeSet<String> =
            intent.keywords.iter().flat_map(|k| words_of(k)).collect();
        words.extend(words_of(&intent.summary).filter(|w| !STOP_WORDS.contains(&w.as_str())));
        Self { tags, words }
    }

    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.words.is_empty()
    }

    fn max_score(&self) -> u32 {
        let tags = u32::try_from(self.tags.len()).unwrap_or(u32::MAX);
        let words = u32::try_from(self.words.len()).unwrap_or(u32::MAX);
        tags.saturating_mul(TAG_WEIGHT).saturating_add(words.saturating_mul(ID_WEIGHT))
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.tags.is_empty() {
            parts.push(format!(
                "tags [{}]",
                self.tags.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        if !self.words.is_empty() {
            parts.push(format!(
                "words [{}]",
                self.words.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        parts.join(" or ")
    }

    /// A word counts once, by the strongest place it appears (id over description).
    fn score(&self, tool: &ToolDef) -> (u32, Vec<String>) {
        let tool_tags: BTreeSet<String> = tool.tags.iter().map(|t| t.to_lowercase()).collect();
        let id_words: BTreeSet<String> = words_of(&tool.id).collect();
        let text_words: BTreeSet<String> = words_of(&tool.description).collect();
        let mut score = 0;
        let mut matched = Vec::new();
        for tag in self.tags.iter().filter(|t| tool_tags.contains(*t)) {
            score += TAG_WEIGHT;
            matched.push(format!("tag `{tag}`"));
        }
        for word in &self.words {
            if id_words.contains(word) {
                score += ID_WEIGHT;
                matched.push(format!("`{word}` in its id"));
            } else if text_words.contains(word) {
                score += TEXT_WEIGHT;
                matched.push(format!("`{word}` in its description"));
            }
        }
        (score, matched)
    }
}

/// Words too common to be evidence.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "i", "in", "into", "is",
    "it", "its", "me", "my", "of", "on", "or", "please", "some", "that", "the", "this", "to",
    "want", "we", "with",
];

/// Lower-case words of `text` (letters and digits), split at punctuation and case changes
/// (`file_read`, `fs.read`, `readFile` all give `read`).
fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    spaced.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().into_iter()
}

fn effect_count(tool: &ToolDef) -> usize {
    tool.side_effects.iter().filter(|e| **e != SideEffect::None).count()
}

/// The share of the intent that matched, with a penalty when the choice was a tie-break.
fn confidence(score: u32, max: u32, rival: bool) -> f64 {
    if max == 0 {
        return 0.0;
    }
    let share = (f64::from(score) / f64::from(max)).min(1.0);
    let value = if rival { share * 0.5 } else { share };
    (value * 1000.0).round() / 1000.0
}

/// `{}` with the top-level properties' `default` values.
fn defaults(schema: &Value) -> Value {
    let mut args = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                args.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(args)
}

/// What undoing the tool's effects takes, from what the tool declares.
fn rollback_plan(tool: &ToolDef) -> String {
    let effects: Vec<SideEffect> =
        tool.side_effects.iter().copied().filter(|e| *e != SideEffect::None).collect();
    if effects.iter().all(|e| *e == SideEffect::Read) {
        return "none needed: it only reads".to_owned();
    }
    let mut steps = Vec::new();
    for effect in effects {
        match effect {
            SideEffect::Write => steps.push(
                "restore the files it wrote from version control or a backup (the audit record names them; writes are atomic, so no file is left half-written)",
            ),
            SideEffect::Network => steps.push("undo the remote change through the remote system; Jig cannot recall a request once sent"),
            SideEffect::Exec => steps.push("review the recorded output of the commands it ran and revert what they changed by hand"),
            SideEffect::Read | SideEffect::None => {}
        }
    }
    if !tool.idempotent {
        steps.push("it is not idempotent: do not simply run it again");
    }
    steps.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_case_and_punctuation() {
        let words: Vec<String> = words_of("fs.readFile file_write HTTP2Get").collect();
        assert_eq!(words, ["fs", "read", "file", "file", "write", "http2", "get"]);
    }

    #[test]
    fn confidence_is_a_share_and_halves_on_a_tie() {
        assert!((confidence(3, 6, false) - 0.5).abs() < 1e-9);
        assert!((confidence(3, 6, true) - 0.25).abs() < 1e-9);
        assert!((confidence(9, 6, false) - 1.0).abs() < 1e-9);
        assert!(confidence(1, 0, false).abs() < 1e-9);
    }

    #[test]
    fn defaults_come_from_top_level_properties() {
        let schema = json!({ "properties": { "a": { "default": 1 }, "b": { "type": "string" } } });
        assert_eq!(defaults(&schema), json!({ "a": 1 }));
    }
}
