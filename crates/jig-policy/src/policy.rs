//! A project's policy, compiled: the decision for a call and the policy hash.

use jig_model::ToolDef;
use jig_model::canonical::Sha256Hash;
use jig_model::policy::PolicyConfig;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution;
use regex::Regex;
use serde_json::Value;

use crate::decision::{Decision, Denial};
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

/// A compiled policy.
#[derive(Debug, Clone)]
pub struct Policy {
    config: PolicyConfig,
    shell_allow: Vec<Regex>,
    hash: String,
}

impl Policy {
    /// Compile `config`.
    pub fn new(config: PolicyConfig) -> Result<Self, PolicyError> {
        let shell_allow = config
            .shell_allow
            .iter()
            .map(|pattern| {
                Regex::new(pattern)
                    .map_err(|source| PolicyError::Pattern { pattern: pattern.clone(), source })
            })
            .collect::<Result<_, _>>()?;
        let value = serde_json::to_value(&config).unwrap_or(Value::Null);
        let hash = Sha256Hash::of_json(&value).to_hex();
        Ok(Self { config, shell_allow, hash })
    }

    /// The policy as written.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
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
        arguments::check_arguments(&argv)?;
        Ok(argv)
    }

    /// The decision for calling `tool` with `args` (already valid against its input schema):
    /// the built-in checks of seed 002 §7 first, then governance; the strictest wins.
    pub fn decide(&self, tool: &ToolDef, args: &Value) -> Decision {
        if let Err(denial) = self.builtin_checks(tool, args) {
            return denial.into();
        }
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
