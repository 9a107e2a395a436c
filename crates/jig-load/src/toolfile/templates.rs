//! Template checks at load time, so a typo in `{{ pth }}` fails `jig validate` instead of a call.
//!
//! Toolpacks use Jinja2 syntax (rendered by minijinja); gert tool/v0 actions use Go-template
//! field references (`{{ .name }}`).

use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The variables a Jinja2 template reads, or its syntax error.
pub(crate) fn jinja_variables(source: &str) -> Result<BTreeSet<String>, String> {
    static ENV: OnceLock<minijinja::Environment<'static>> = OnceLock::new();
    let env = ENV.get_or_init(minijinja::Environment::new);
    let template = env.template_from_str(source).map_err(|e| {
        // minijinja's Display includes the template name and the line; keep the description.
        e.detail().map_or_else(|| e.kind().to_string(), str::to_owned)
    })?;
    Ok(template.undeclared_variables(false).into_iter().collect())
}

/// The top-level fields a Go-style template references (`{{ .url }}`, `{{ eq .a "b" }}`), or why
/// it is malformed.
pub(crate) fn go_variables(source: &str) -> Result<BTreeSet<String>, String> {
    let template = jig_expr::Template::parse(source).map_err(|e| {
        if e.message.starts_with("unclosed action") {
            "`{{` without a closing `}}`".to_owned()
        } else {
            e.to_string()
        }
    })?;
    // A stray `}}` is text to Go, but in a tool's argv it is a typo.
    let stray =
        template.nodes().iter().any(|n| matches!(n, jig_expr::Node::Text(t) if t.contains("}}")));
    if stray {
        return Err("`}}` without an opening `{{`".to_owned());
    }
    Ok(template.references().into_iter().filter_map(|r| r.path.into_iter().next()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_fields_are_found_outside_string_literals() {
        let vars =
            go_variables(r#"https://{{ .host }}{{ .path }} {{ eq .status "a .fake" }}"#).unwrap();
        assert_eq!(vars.into_iter().collect::<Vec<_>>(), ["host", "path", "status"]);
    }

    #[test]
    fn go_unbalanced_braces_are_errors() {
        assert!(go_variables("{{ .host").is_err());
        assert!(go_variables("host }}").is_err());
    }

    #[test]
    fn jinja_variables_and_syntax_errors() {
        let vars =
            jinja_variables("{{ path }}/{{ name | upper }}{% if force %}-f{% endif %}").unwrap();
        assert_eq!(vars.into_iter().collect::<Vec<_>>(), ["force", "name", "path"]);
        assert!(jinja_variables("{{ path ").is_err());
    }
}
