//! Each rule of the catalog, over a [`Context`].

use std::time::{Duration, Instant};

use jig_ast::{Kind, Language, Symbol};
use jig_model::ErrorCode;
use jig_model::policy::{RuleId, ValidatorRule};
use jig_policy::redact::has_secret;
use regex::Regex;

use super::{Context, Violation};
use crate::builtin::{ast, command};
use jig_exec::ToolError;

/// Branches where TODO/FIXME may not land, unless the rule names others.
const PROTECTED_BRANCHES: &str = "^(main|master|release/.+)$";

/// Branch names allowed, unless the rule gives a pattern.
const BRANCH_NAMES: &str = "^(main|master|develop|(feat|feature|fix|bugfix|hotfix|release|chore|docs|refactor|test|ci|perf)/[a-z0-9._/-]+)$";

/// Conventional Commits' first line.
const CONVENTIONAL: &str = r"^(feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert)(\([A-Za-z0-9._/-]+\))?!?: \S.*";

pub(super) fn check(
    context: &Context<'_>,
    rule: &ValidatorRule,
    out: &mut Vec<Violation>,
) -> Result<(), ToolError> {
    let mut found =
        |file: Option<&str>, line: Option<usize>, node_id: Option<&str>, message: String| {
            out.push(Violation {
                rule: rule.rule.clone(),
                enforcement: rule.enforcement,
                file: file.map(str::to_owned),
                line,
                node_id: node_id.map(str::to_owned),
                message,
            });
        };
    // The loader refuses unknown ids; one that got here anyway is an error, not a silent pass.
    let Some(id) = RuleId::parse(&rule.rule) else {
        return Err(ToolError::new(
            ErrorCode::ValidationFail,
            format!("the policy names unknown rule `{}`", rule.rule),
        ));
    };
    match id {
        RuleId::SecretsScan => {
            for line in context.changes.lines.iter().filter(|l| context.in_scope(&l.file)) {
                if has_secret(&line.text) {
                    found(
                        Some(&line.file),
                        Some(line.number),
                        None,
                        "an added line holds what looks like a secret (key, token or password)"
                            .to_owned(),
                    );
                }
            }
        }
        RuleId::TodoBlockers => {
            let protected = pattern(rule, PROTECTED_BRANCHES)?;
            let branch = context.branch.or(context.changes.branch.as_deref()).unwrap_or_default();
            if protected.is_match(branch) {
                let marker = Regex::new(r"\b(TODO|FIXME)\b").map_err(|e| internal(&e))?;
                for line in context.changes.lines.iter().filter(|l| context.in_scope(&l.file)) {
                    if let Some(m) = marker.find(&line.text) {
                        found(
                            Some(&line.file),
                            Some(line.number),
                            None,
                            format!("`{}` on protected branch `{branch}`", m.as_str()),
                        );
                    }
                }
            }
        }
        RuleId::TestRequiredChanged => {
            let files: Vec<&String> =
                context.changes.files.iter().filter(|f| context.in_scope(f)).collect();
            let code: Vec<&&String> =
                files.iter().filter(|f| Language::of_path(f).is_some() && !is_test(f)).collect();
            if !code.is_empty() && !files.iter().any(|f| is_test(f)) {
                found(
                    Some(code[0]),
                    None,
                    None,
                    format!("{} code file(s) changed without a test change", code.len()),
                );
            }
        }
        RuleId::CommitConventional => commit_rule(context, &mut found)?,
        RuleId::BranchNaming => {
            let branch = context.branch.or(context.changes.branch.as_deref());
            if let Some(branch) = branch
                && !pattern(rule, BRANCH_NAMES)?.is_match(branch)
            {
                found(
                    None,
                    None,
                    None,
                    format!("branch `{branch}` does not follow the naming convention"),
                );
            }
        }
        RuleId::BuildMustPass | RuleId::LintMustPass | RuleId::FmtMustPass => {
            command_rule(context, rule, &mut found)?;
        }
        RuleId::AstParsed => {
            let index = ast::fresh_index(context.call)?;
            for error in index.errors().filter(|e| context.in_scope(&e.file)) {
                found(Some(&error.file), Some(error.line), None, error.message.clone());
            }
        }
        RuleId::FnDocsExported | RuleId::NoUnwrap | RuleId::NoPanicInLib => {
            symbol_rule(context, rule, &mut found)?
        }
        RuleId::ImportRules => import_rule(context, rule, &mut found)?,
        // Enforced by the policy on every call; nothing to find after the fact.
        RuleId::NetworkAllowlist
        | RuleId::ShellAllowlist
        | RuleId::PathsSandbox
        | RuleId::GitCleanTree => {}
    }
    Ok(())
}

/// `commit.message.conventional`: the commit's subject (the one given, else HEAD's) in
/// Conventional Commits' form.
fn commit_rule(
    context: &Context<'_>,
    found: &mut impl FnMut(Option<&str>, Option<usize>, Option<&str>, String),
) -> Result<(), ToolError> {
    let message = match context.message {
        Some(message) => Some(message.to_owned()),
        None => super::changes::repository(context.call).and_then(|repo| {
            repo.head().ok()?.peel_to_commit().ok()?.message().ok().map(str::to_owned)
        }),
    };
    if let Some(message) = message {
        let first = message.lines().next().unwrap_or_default();
        if !Regex::new(CONVENTIONAL).map_err(|e| internal(&e))?.is_match(first) {
            found(
                None,
                None,
                None,
                format!("`{first}` is not a Conventional Commit subject (`type(scope): summary`)"),
            );
        }
    }
    Ok(())
}

/// `build.must.pass`, `lint.must.pass`, `fmt.must.pass`: the rule's command, run within the
/// call's time, exits 0 (its last lines of stderr say why not).
fn command_rule(
    context: &Context<'_>,
    rule: &ValidatorRule,
    found: &mut impl FnMut(Option<&str>, Option<usize>, Option<&str>, String),
) -> Result<(), ToolError> {
    if rule.command.is_empty() {
        found(None, None, None, format!("`{}` has no `command` in the policy", rule.rule));
    } else {
        let remaining = context
            .call
            .deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let ran = command::run(context.call, &rule.command, None, remaining).map_err(|e| {
            ToolError::new(
                ErrorCode::Shell,
                format!("`{}`: cannot run `{}`: {e}", rule.rule, rule.command[0]),
            )
        })?;
        if ran.code != Some(0) {
            let stderr = String::from_utf8_lossy(&ran.stderr);
            let last: Vec<&str> = stderr.lines().rev().take(5).collect();
            let detail: Vec<&str> = last.into_iter().rev().collect();
            found(
                None,
                None,
                None,
                format!(
                    "`{}` failed (exit {:?}): {}",
                    rule.command.join(" "),
                    ran.code,
                    detail.join(" | ")
                ),
            );
        }
    }
    Ok(())
}

/// Rules over the symbols of the files in scope (at commit: the changed files).
fn symbol_rule(
    context: &Context<'_>,
    rule: &ValidatorRule,
    found: &mut impl FnMut(Option<&str>, Option<usize>, Option<&str>, String),
) -> Result<(), ToolError> {
    let index = ast::fresh_index(context.call)?;
    let changed_only = context.message.is_some();
    let selected = |s: &Symbol| {
        context.in_scope(&s.file) && (!changed_only || context.changes.files.contains(&s.file))
    };
    let tests: Vec<&Symbol> =
        index.symbols().filter(|s| s.kind == Kind::Module && s.name == "tests").collect();
    let in_tests = |s: &Symbol| {
        is_test(&s.file)
            || tests.iter().any(|t| {
                t.file == s.file && t.span.start <= s.span.start && s.span.end <= t.span.end
            })
    };
    let mut bodies = ast::Bodies::default();
    for symbol in index.symbols().filter(|s| selected(s)) {
        match rule.rule.as_str() {
            "code.fn.docs.exported" => {
                if symbol.kind == Kind::Fn
                    && symbol.exported
                    && !symbol.has_doc
                    && !in_tests(symbol)
                {
                    found(
                        Some(&symbol.file),
                        Some(symbol.line),
                        Some(&symbol.id),
                        format!("exported `{}` has no doc comment", symbol.name),
                    );
                }
            }
            name => {
                let library = name == "code.no.panic.in.lib";
                let relevant = symbol.language == Language::Rust
                    && matches!(symbol.kind, Kind::Fn | Kind::Method)
                    && !in_tests(symbol)
                    && (!library || is_library(&symbol.file));
                if !relevant {
                    continue;
                }
                let needle = if library { "panic!(" } else { ".unwrap()" };
                if let Some(line) = bodies.find(context.call, symbol, needle)? {
                    found(
                        Some(&symbol.file),
                        Some(line),
                        Some(&symbol.id),
                        format!("`{}` uses `{needle}`", symbol.name),
                    );
                }
            }
        }
    }
    Ok(())
}

/// `code.mod.import.rules`: files matching a boundary's `from` may not import what its `deny`
/// matches.
fn import_rule(
    context: &Context<'_>,
    rule: &ValidatorRule,
    found: &mut impl FnMut(Option<&str>, Option<usize>, Option<&str>, String),
) -> Result<(), ToolError> {
    let index = ast::fresh_index(context.call)?;
    let files: Vec<(String, Language)> =
        index.files().map(|(p, e)| (p.to_owned(), e.language)).collect();
    drop(index);
    for boundary in &rule.boundaries {
        let from = globset::GlobBuilder::new(&boundary.from)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::ValidationFail,
                    format!("boundary `from` `{}`: {e}", boundary.from),
                )
            })?
            .compile_matcher();
        let deny = Regex::new(&boundary.deny).map_err(|e| {
            ToolError::new(
                ErrorCode::ValidationFail,
                format!("boundary `deny` `{}`: {e}", boundary.deny),
            )
        })?;
        for (file, language) in
            files.iter().filter(|(f, _)| from.is_match(f) && context.in_scope(f))
        {
            let bytes = context.call.workspace.read(file, 16 * 1024 * 1024)?;
            for (line, text) in jig_ast::imports(*language, &bytes) {
                if deny.is_match(&text) {
                    found(
                        Some(file),
                        Some(line),
                        None,
                        format!(
                            "`{}` may not import this (`{}`): {}",
                            boundary.from,
                            boundary.deny,
                            text.trim()
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

fn pattern(rule: &ValidatorRule, default: &str) -> Result<Regex, ToolError> {
    let source = rule.pattern.as_deref().unwrap_or(default);
    Regex::new(source).map_err(|e| {
        ToolError::new(
            ErrorCode::ValidationFail,
            format!("`{}` pattern `{source}`: {e}", rule.rule),
        )
    })
}

/// Test files by the usual conventions of the five languages.
fn is_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.starts_with("tests/")
        || path.contains("/tests/")
        || path.contains("/test/")
        || path.starts_with("test/")
        || name.starts_with("test_")
        || name.ends_with("_test.go")
        || name.ends_with("_test.py")
        || name.ends_with("_tests.rs")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Rust library code: under a `src/` but not a binary's `main.rs` or `src/bin/`.
fn is_library(path: &str) -> bool {
    (path.starts_with("src/") || path.contains("/src/"))
        && !path.ends_with("main.rs")
        && !path.contains("/bin/")
}

fn internal(error: &regex::Error) -> ToolError {
    ToolError::new(ErrorCode::Internal, error.to_string())
}
