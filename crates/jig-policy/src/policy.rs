//! A project's policy, compiled: the decision for a call and the policy hash.

use jig_model::ToolDef;
use jig_model::canonical::Sha256Hash;
use jig_model::policy::PolicyConfig;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution;
use regex::Regex;
use serde_json::Value;

use crate::decision::{Decision, Denial};
use crate::layers::{self, Layer, Narrowed};
use crate::{arguments, command, governance, network, sandbox};

/// A policy that cannot be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A `shell_allow` pattern is not a regex (the loader refuses these first).
    #[error("`shell_allow` pattern `{pattern}` does not compile: {source}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why.
        source: regex::Error,
    },
}

/// A compiled policy: the project's, beneath the layers above it.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The project's, with every setting a layer above narrows narrowed.
    config: PolicyConfig,
    shell_allow: Vec<Regex>,
    /// The layers above the project, strongest first, each with its own `shell_allow`.
    above: Vec<(Layer, Vec<Regex>)>,
    narrowed: Vec<Narrowed>,
    hash: String,
}

impl Policy {
    /// Compile the project's `config`, with no layer above it.
    pub fn new(config: PolicyConfig) -> Result<Self, PolicyError> {
        Self::layered(config, Vec::new())
    }

    /// Compile the project's `config` beneath `above` (strongest first: machine, team,
    /// person). With no layer above, the hash is the project policy's alone, as it always was.
    pub fn layered(config: PolicyConfig, above: Vec<Layer>) -> Result<Self, PolicyError> {
        let shell_allow = patterns(&config.shell_allow)?;
        let written = serde_json::to_value(&config).unwrap_or(Value::Null);
        let hash = if above.is_empty() {
            Sha256Hash::of_json(&written).to_hex()
        } else {
            let layers: Vec<Value> = above
                .iter()
                .map(|l| serde_json::json!({ "layer": l.kind, "file": l.file }))
                .collect();
            Sha256Hash::of_json(&serde_json::json!({ "project": written, "above": layers }))
                .to_hex()
        };
        let mut effective = config;
        let mut narrowed = Vec::new();
        let mut compiled = Vec::new();
        for layer in above {
            layers::narrow(&mut effective, &layer, &mut narrowed);
            let own = patterns(&layer.file.policy.shell_allow)?;
            compiled.push((layer, own));
        }
        Ok(Self { config: effective, shell_allow, above: compiled, narrowed, hash })
    }

    /// The effective policy: the project's as written, narrowed where a layer above says so
    /// (its `rules` are the project's; each layer's are weighed in [`Self::decide`]).
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }

    /// The layers above the project, strongest first.
    pub fn layers(&self) -> impl Iterator<Item = &Layer> {
        self.above.iter().map(|(layer, _)| layer)
    }

    /// The project's settings a layer above narrowed.
    pub fn narrowed(&self) -> &[Narrowed] {
        &self.narrowed
    }

    /// SHA-256 over the canonical JSON of the policy (part of every `run_id`).
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Check a command line as `shell_exec` runs it: no shell syntax, allowed by `shell_allow`,
    /// no argument that runs other programs. Returns the argv.
    pub fn check_command(&self, cmd: &str) -> Result<Vec<String>, Denial> {
        let argv = command::tokenize(cmd)?;
        command::check_argv(&argv, &self.shell_allow)?;
        // A layer above with its own allow-list: the command must be on it too.
        for (layer, patterns) in self.above.iter().filter(|(_, p)| !p.is_empty()) {
            command::check_argv(&argv, patterns).map_err(|denial| {
                Denial::new(
                    denial.rule,
                    format!("{} (the {} layer's `shell_allow`)", denial.reason, layer.kind),
                )
            })?;
        }
        arguments::check_arguments(&argv)?;
        Ok(argv)
    }

    /// The decision for calling `tool` with `args` (already valid against its input schema):
    /// the built-in checks of seed 002 §7 first, then governance; the strictest wins.
    pub fn decide(&self, tool: &ToolDef, args: &Value) -> Decision {
        if let Err(denial) = self.builtin_checks(tool, args) {
            return denial.into();
        }
        self.govern(tool)
    }

    /// Governance across the layers: each layer above speaks where its rules match (or its
    /// `default` does), the project as it always did; the strictest wins, and on a tie the
    /// stronger layer is credited.
    pub fn govern(&self, tool: &ToolDef) -> Decision {
        let mut project = governance::govern(&self.config.rules, tool);
        if project.is_allow()
            && project.rule.starts_with("rules[")
            && let Some(limited) =
                self.layers().find_map(|layer| governance::limit_project_allow(layer, tool))
        {
            project = limited;
        }
        // Strongest first, so a tie keeps the stronger layer's name.
        match self
            .layers()
            .filter_map(|layer| governance::govern_above(layer, tool))
            .reduce(Decision::strictest)
        {
            Some(above) => above.strictest(project),
            None => project,
        }
    }

    /// The project's own governance alone, as if no layer were above it: what a layer's
    /// decision overrode.
    pub fn project_decision(&self, tool: &ToolDef) -> Decision {
        governance::govern(&self.config.rules, tool)
    }

    /// Checks that refuse a call outright, whatever governance says.
    fn builtin_checks(&self, tool: &ToolDef, args: &Value) -> Result<(), Denial> {
        let ToolExecution::Toolpack(Execution::Builtin(builtin)) = &tool.execution else {
            return Ok(());
        };
        let name = builtin.name.as_deref().unwrap_or(&tool.id);
        for key in ["path", "src", "dst", "cwd", "glob"] {
            if let Some(path) = args.get(key).and_then(Value::as_str) {
                sandbox::check_lexically(path)?;
            }
        }
        if let Some(paths) = args.get("paths").and_then(Value::as_array) {
            for path in paths.iter().filter_map(Value::as_str) {
                sandbox::check_lexically(path)?;
            }
        }
        match name {
            "curl" => {
                if let Some(url) = args.get("url").and_then(Value::as_str) {
                    network::check_url(url, &self.config.network)?;
                }
            }
            "shell_exec" => {
                if let Some(cmd) = args.get("cmd").and_then(Value::as_str) {
                    self.check_command(cmd)?;
                }
                if let Some(env) = args.get("env").and_then(Value::as_object) {
                    arguments::check_env(env.keys().map(String::as_str))?;
                }
            }
            "git_push" if !self.config.git.allow_push => {
                return Err(Denial::new(
                    "git.allow_push",
                    "the policy does not allow `git_push` (`git.allow_push: false`)",
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

fn patterns(written: &[String]) -> Result<Vec<Regex>, PolicyError> {
    written
        .iter()
        .map(|pattern| {
            Regex::new(pattern)
                .map_err(|source| PolicyError::Pattern { pattern: pattern.clone(), source })
        })
        .collect()
}
