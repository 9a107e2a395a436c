//! The effective policy, rule by rule: which layer each rule comes from, what it decides for
//! the registry's tools, and what it overrode. What `jig policy show` prints and the
//! workbench's Policy view draws; both read this one account.

use jig_model::ToolDef;
use jig_model::policy::LayerKind;
use jig_model::runbook::kernel::{GovernanceAction, GovernanceRule};
use serde::Serialize;
use serde_json::Value;

use crate::Policy;
use crate::decision::Decision;
use crate::layers::Narrowed;

/// Where a layer was read from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LayerSource {
    /// Which layer.
    pub layer: LayerKind,
    /// Its file (or the team's store; the project's manifest).
    pub source: String,
}

/// A rule of the effective policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleView {
    /// Its name in decisions and the record: `machine:rules[0]`, `rules[2]`,
    /// `machine:project.may_not_allow[0]`, `default.side_effects`.
    pub rule: String,
    /// The layer it comes from.
    pub layer: LayerKind,
    /// The file it is written in (or `built in`).
    pub source: String,
    /// What it decides where it matches. For a limit on the project's allows, what the tools
    /// it takes an allow from fall back to is in `decides`' decisions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<GovernanceAction>,
    /// What kind of rule: `rule`, `default`, `limit` (on the project's allows) or `built_in`.
    pub kind: RuleKind,
    /// Which tools it matches, as written (empty for a default).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub matches: Value,
    /// The tools whose decision it makes now.
    pub decides: Vec<String>,
    /// What it overrode: for each tool it decides, the project's own decision when that was
    /// another (a layer above's rule overriding the project's).
    pub overrode: Vec<Overridden>,
    /// Where it was overridden: for a project rule, the tools a layer above decides instead.
    pub overridden_by: Vec<Overridden>,
}

/// What kind of rule a [`RuleView`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// A rule that matches tools.
    Rule,
    /// A `default:` rule: the layer's word where none of its rules match.
    Default,
    /// A layer's limit on where the project's `allow` counts.
    Limit,
    /// Seed 003's deny-by-default, where no layer's rule speaks.
    BuiltIn,
}

/// One tool's decision on the other side of an override.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Overridden {
    /// The tool.
    pub tool: String,
    /// The other rule.
    pub rule: String,
    /// Its layer.
    pub layer: LayerKind,
    /// What it said.
    pub action: GovernanceAction,
}

/// One tool under the effective policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolGoverned {
    /// The tool.
    pub tool: String,
    /// What governance decides for it (before the per-call checks on its arguments).
    pub decision: Decision,
    /// The project's own decision, when a layer above changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<Decision>,
}

/// The effective policy, rule by rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PolicyReport {
    /// The hash every run records.
    pub policy_hash: String,
    /// The layers, strongest first, the project last.
    pub layers: Vec<LayerSource>,
    /// Every rule: the layers' first, then the project's, then the built-in defaults in use.
    pub rules: Vec<RuleView>,
    /// The project's settings a layer above narrowed (network, git, approvals, budgets,
    /// sandbox, durability).
    pub settings: Vec<Narrowed>,
    /// Each tool's decision, with the project's where a layer changed it.
    pub tools: Vec<ToolGoverned>,
}

impl Policy {
    /// The effective policy over `tools`, the project's policy written in `project_source`.
    pub fn report<'a>(
        &self,
        project_source: &str,
        tools: impl IntoIterator<Item = &'a ToolDef>,
    ) -> PolicyReport {
        let tools: Vec<ToolGoverned> = tools
            .into_iter()
            .map(|tool| {
                let decision = self.govern(tool);
                let own = self.project_decision(tool);
                let changed = decision.rule != own.rule || decision.action != own.action;
                ToolGoverned { tool: tool.id.clone(), decision, project: changed.then_some(own) }
            })
            .collect();
        let mut layers: Vec<LayerSource> = self
            .layers()
            .map(|l| LayerSource { layer: l.kind, source: l.source.clone() })
            .collect();
        layers.push(LayerSource { layer: LayerKind::Project, source: project_source.to_owned() });
        let mut rules = Vec::new();
        for layer in self.layers() {
            for (i, rule) in layer.file.policy.rules.iter().enumerate() {
                rules.push(rule_view(layer.rule_name(i), layer.kind, &layer.source, rule));
            }
            let limits = &layer.file.project;
            for (i, limit) in limits.may_not_allow.iter().enumerate() {
                let name = format!("{}:project.may_not_allow[{i}]", layer.kind);
                rules.push(limit_view(name, layer.kind, &layer.source, limit));
            }
            if let Some(may) = &limits.may_allow {
                let name = format!("{}:project.may_allow", layer.kind);
                rules.push(limit_view(name, layer.kind, &layer.source, may));
            }
        }
        for (i, rule) in self.config().rules.iter().enumerate() {
            rules.push(rule_view(format!("rules[{i}]"), LayerKind::Project, project_source, rule));
        }
        for name in ["default.side_effects", "default.no_side_effects"] {
            if tools.iter().any(|t| t.decision.rule == name || own_rule(t) == name) {
                let mut view = blank(name.to_owned(), LayerKind::Project, "built in (seed 003)");
                view.kind = RuleKind::BuiltIn;
                view.action = Some(if name == "default.side_effects" {
                    GovernanceAction::RequireApproval
                } else {
                    GovernanceAction::Allow
                });
                rules.push(view);
            }
        }
        for view in &mut rules {
            credit(view, &tools);
        }
        PolicyReport {
            policy_hash: self.hash().to_owned(),
            layers,
            rules,
            settings: self.narrowed().to_vec(),
            tools,
        }
    }
}

fn own_rule(tool: &ToolGoverned) -> &str {
    tool.project.as_ref().unwrap_or(&tool.decision).rule.as_str()
}

/// Fill in what `view` decides, what it overrode and what overrode it.
fn credit(view: &mut RuleView, tools: &[ToolGoverned]) {
    for tool in tools {
        let now = &tool.decision;
        if now.rule == view.rule {
            view.decides.push(tool.tool.clone());
            if let Some(own) = &tool.project {
                view.overrode.push(overridden(&tool.tool, own));
            }
        } else if tool.project.is_some() && own_rule(tool) == view.rule {
            view.overridden_by.push(overridden(&tool.tool, now));
        }
    }
}

fn overridden(tool: &str, decision: &Decision) -> Overridden {
    Overridden {
        tool: tool.to_owned(),
        rule: decision.rule.clone(),
        layer: decision.layer,
        action: decision.action,
    }
}

fn blank(rule: String, layer: LayerKind, source: &str) -> RuleView {
    RuleView {
        rule,
        layer,
        source: source.to_owned(),
        action: None,
        kind: RuleKind::Rule,
        matches: Value::Object(serde_json::Map::new()),
        decides: Vec::new(),
        overrode: Vec::new(),
        overridden_by: Vec::new(),
    }
}

fn rule_view(name: String, layer: LayerKind, source: &str, rule: &GovernanceRule) -> RuleView {
    let mut view = blank(name, layer, source);
    view.action = rule.default.or(rule.action);
    if rule.default.is_some() {
        view.kind = RuleKind::Default;
    } else {
        let mut written = serde_json::to_value(rule).unwrap_or(Value::Null);
        if let Value::Object(fields) = &mut written {
            fields.remove("action");
        }
        view.matches = written;
    }
    view
}

fn limit_view(name: String, layer: LayerKind, source: &str, limit: &impl Serialize) -> RuleView {
    let mut view = blank(name, layer, source);
    view.kind = RuleKind::Limit;
    view.matches = serde_json::to_value(limit).unwrap_or(Value::Null);
    view
}
