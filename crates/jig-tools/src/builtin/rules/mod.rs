//! The rules catalog of seed 002 §7, run on demand by `validate` and by themselves at their
//! triggers: on commit (before `git_commit` writes anything) and on checkout
//! (`branch.naming.convention`). `code.ast.parsed` runs on every write (see `ast`); the
//! `sec.*` rules are enforced on each call by the policy and have nothing to report here.

mod changes;
mod checks;

use globset::GlobMatcher;
use jig_model::ErrorCode;
use jig_model::policy::{Enforcement, RuleId, ValidatorRule};
use serde_json::{Value, json};

use super::call::Call;
use jig_exec::{Output, ToolError};

/// When a rule runs by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// On each call, by the policy.
    Call,
    /// After a write or patch of a source file.
    Write,
    /// Before a commit.
    Commit,
    /// On checkout.
    Checkout,
}

/// A rule's default level and when it fires: an exhaustive match, so a new rule has both.
fn catalog(rule: RuleId) -> (Enforcement, Trigger) {
    use Enforcement::{Blocking, Warning};
    match rule {
        RuleId::NetworkAllowlist
        | RuleId::ShellAllowlist
        | RuleId::PathsSandbox
        | RuleId::GitCleanTree => (Blocking, Trigger::Call),
        RuleId::AstParsed => (Blocking, Trigger::Write),
        RuleId::BuildMustPass
        | RuleId::LintMustPass
        | RuleId::FmtMustPass
        | RuleId::TodoBlockers
        | RuleId::TestRequiredChanged
        | RuleId::SecretsScan
        | RuleId::FnDocsExported
        | RuleId::ImportRules => (Blocking, Trigger::Commit),
        RuleId::NoPanicInLib | RuleId::NoUnwrap | RuleId::CommitConventional => {
            (Warning, Trigger::Commit)
        }
        RuleId::BranchNaming => (Warning, Trigger::Checkout),
    }
}

/// A rule's finding.
#[derive(Debug, Clone)]
pub(super) struct Violation {
    pub rule: String,
    pub enforcement: Enforcement,
    pub file: Option<String>,
    pub line: Option<usize>,
    pub node_id: Option<String>,
    pub message: String,
}

impl Violation {
    fn to_json(&self) -> Value {
        let mut value =
            json!({ "rule": self.rule, "enforcement": self.enforcement, "message": self.message });
        if let Some(file) = &self.file {
            value["file"] = json!(file);
        }
        if let Some(line) = self.line {
            value["line"] = json!(line);
        }
        if let Some(node) = &self.node_id {
            value["node_id"] = json!(node);
        }
        value
    }
}

/// What the rules look at.
struct Context<'a> {
    call: &'a Call,
    changes: changes::Changes,
    /// Only files matching this count (the `glob` argument of `validate`).
    scope: Option<GlobMatcher>,
    /// The message being committed.
    message: Option<&'a str>,
    /// The branch being checked out (else the current one).
    branch: Option<&'a str>,
}

impl Context<'_> {
    fn in_scope(&self, file: &str) -> bool {
        self.scope.as_ref().is_none_or(|g| g.is_match(file))
    }
}

/// The `validate` tool.
pub(super) fn validate(call: &Call) -> Result<Output, ToolError> {
    let level = call.opt_str("enforcement").map(level).transpose()?;
    let rules: Vec<ValidatorRule> = match call.opt_str("rule_id") {
        Some(id) => {
            let configured = call.policy.config().validators.iter().find(|v| v.rule == id).cloned();
            let default = RuleId::parse(id).map(|rule| ValidatorRule {
                rule: rule.as_str().to_owned(),
                enforcement: catalog(rule).0,
                command: Vec::new(),
                pattern: None,
                boundaries: Vec::new(),
            });
            vec![configured.or(default).ok_or_else(|| {
                let known: Vec<&str> = RuleId::ALL.iter().map(|rule| rule.as_str()).collect();
                ToolError::new(
                    ErrorCode::ValidationFail,
                    format!("unknown rule `{id}`; the catalog has: {}", known.join(", ")),
                )
            })?]
        }
        None => call.policy.config().validators.clone(),
    };
    let rules: Vec<ValidatorRule> =
        rules.into_iter().filter(|r| level.is_none_or(|l| l == r.enforcement)).collect();
    let glob = call.opt_str("glob");
    let changes = match changes::repository(call) {
        Some(repo) => changes::from_git(&repo, false)?,
        None => changes::from_files(call, glob)?,
    };
    let scope = glob
        .map(|g| {
            globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| {
                    ToolError::new(ErrorCode::ValidationFail, format!("argument `glob` `{g}`: {e}"))
                })
        })
        .transpose()?;
    let context = Context { call, changes, scope, message: None, branch: None };
    let violations = run(&context, &rules)?;
    let passed = !violations.iter().any(|v| v.enforcement == Enforcement::Blocking);
    let rules_run: Vec<&str> = rules.iter().map(|r| r.rule.as_str()).collect();
    Ok(Output::data(json!({
        "violations": violations.iter().map(Violation::to_json).collect::<Vec<_>>(),
        "passed": passed,
        "rules": rules_run,
    })))
}

/// The policy's commit rules over the staged changes and `message`. Blocking violations
/// refuse the commit; the others are returned to go with its result.
pub(super) fn on_commit(
    call: &Call,
    repo: &git2::Repository,
    message: &str,
) -> Result<Vec<Value>, ToolError> {
    let rules = configured(call, Trigger::Commit);
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let context = Context {
        call,
        changes: changes::from_git(repo, true)?,
        scope: None,
        message: Some(message),
        branch: None,
    };
    settle(&run(&context, &rules)?, "the commit")
}

/// `branch.naming.convention` for a branch about to be checked out.
pub(super) fn on_checkout(call: &Call, branch: &str) -> Result<Vec<Value>, ToolError> {
    let rules = configured(call, Trigger::Checkout);
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let context = Context {
        call,
        changes: changes::Changes::default(),
        scope: None,
        message: None,
        branch: Some(branch),
    };
    settle(&run(&context, &rules)?, "the checkout")
}

/// The policy's validators that fire at `trigger`.
fn configured(call: &Call, trigger: Trigger) -> Vec<ValidatorRule> {
    call.policy
        .config()
        .validators
        .iter()
        .filter(|v| RuleId::parse(&v.rule).is_some_and(|rule| catalog(rule).1 == trigger))
        .cloned()
        .collect()
}

/// Blocking violations become the error; the rest are returned.
fn settle(violations: &[Violation], what: &str) -> Result<Vec<Value>, ToolError> {
    let blocking: Vec<&Violation> =
        violations.iter().filter(|v| v.enforcement == Enforcement::Blocking).collect();
    if let Some(first) = blocking.first() {
        return Err(ToolError::new(
            ErrorCode::ValidationFail,
            format!(
                "{what} was refused by {} blocking violation(s); first: {}: {}",
                blocking.len(),
                first.rule,
                first.message
            ),
        )
        .with_details(
            json!({ "violations": violations.iter().map(Violation::to_json).collect::<Vec<_>>() }),
        ));
    }
    Ok(violations.iter().map(Violation::to_json).collect())
}

fn run(context: &Context<'_>, rules: &[ValidatorRule]) -> Result<Vec<Violation>, ToolError> {
    let mut violations = Vec::new();
    for rule in rules {
        context.call.check_time()?;
        checks::check(context, rule, &mut violations)?;
    }
    Ok(violations)
}

fn level(text: &str) -> Result<Enforcement, ToolError> {
    match text {
        "blocking" => Ok(Enforcement::Blocking),
        "warning" => Ok(Enforcement::Warning),
        "suggestion" => Ok(Enforcement::Suggestion),
        other => Err(ToolError::new(
            ErrorCode::ValidationFail,
            format!("argument `enforcement` `{other}` is not a level"),
        )),
    }
}
