//! Rule `sec.shell.allowlist`: commands are argv, never shell strings.
//!
//! A command line is split into words like a POSIX shell would split it (quotes and backslashes),
//! and refused if it relies on anything only a shell does — pipes, redirections, `;`, `&`,
//! substitutions, globs — since Jig runs the words directly and such text would silently mean
//! something else. The allow-list regexes are matched against the words re-quoted, so an argument
//! that contains spaces or metacharacters cannot pose as several words.

use regex::Regex;

use crate::decision::Denial;

/// The rule id.
pub const RULE: &str = "sec.shell.allowlist";

/// Split `cmd` into words, refusing shell syntax.
pub fn tokenize(cmd: &str) -> Result<Vec<String>, Denial> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\n' | '\r' => return Err(refused("a line break")),
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => word.push(inner),
                        None => return Err(Denial::new(RULE, "unterminated single quote")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\')) => word.push(escaped),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(Denial::new(RULE, "unterminated double quote")),
                        },
                        Some('$' | '`') => {
                            return Err(refused("`$` or a backquote (substitution)"));
                        }
                        Some(inner) => word.push(inner),
                        None => return Err(Denial::new(RULE, "unterminated double quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(escaped) => word.push(escaped),
                    None => return Err(Denial::new(RULE, "a trailing backslash")),
                }
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => return Err(refused(&format!("`{c}`"))),
            '$' | '`' => return Err(refused("`$` or a backquote (substitution)")),
            '*' | '?' | '[' | '{' | '~' if !in_word || c != '~' => {
                return Err(refused(&format!("`{c}` (a shell pattern or expansion)")));
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(Denial::new(RULE, "the command is empty"));
    }
    Ok(words)
}

fn refused(what: &str) -> Denial {
    Denial::new(
        RULE,
        format!(
            "the command uses {what}; Jig runs commands without a shell, so quote it or run a program instead"
        ),
    )
}

/// Check `argv` against the allow-list: at least one pattern must match the quoted rendering.
pub fn check_argv(argv: &[String], allow: &[Regex]) -> Result<(), Denial> {
    let rendered = render(argv);
    if allow.iter().any(|pattern| pattern.is_match(&rendered)) {
        Ok(())
    } else if allow.is_empty() {
        Err(Denial::new(RULE, "no command is allowed: `shell_allow` is empty"))
    } else {
        Err(Denial::new(RULE, format!("`{rendered}` matches no `shell_allow` pattern")))
    }
}

/// `argv` as one line for a POSIX shell (and for [`tokenize`]), each word quoted when it is
/// not plain: the one way Jig writes a command line that something will split again.
pub fn render(argv: &[String]) -> String {
    argv.iter().map(|word| quote(word)).collect::<Vec<_>>().join(" ")
}

/// `word` as one POSIX shell word: as it is when plain, else single-quoted.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<String> {
        tokenize(cmd).unwrap_or_else(|d| panic!("{cmd}: {}", d.reason))
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(words("cargo test -q"), ["cargo", "test", "-q"]);
        assert_eq!(
            words(r#"git commit -m "fix: a \"b\"""#),
            ["git", "commit", "-m", r#"fix: a "b""#]
        );
        assert_eq!(words("echo 'a b'  c\\ d"), ["echo", "a b", "c d"]);
        assert_eq!(words("git log HEAD~1"), ["git", "log", "HEAD~1"]);
        assert!(tokenize("ls ~/x").is_err(), "tilde expansion is a shell feature");
    }

    #[test]
    fn shell_syntax_is_refused() {
        for cmd in [
            "cargo test; rm -rf /",
            "cargo test && curl x",
            "cat x | sh",
            "echo $(id)",
            "echo `id`",
            "echo \"$HOME\"",
            "ls > out",
            "ls *.rs",
            "a\nb",
            "echo 'unterminated",
            "",
        ] {
            assert!(tokenize(cmd).is_err(), "{cmd:?}");
        }
    }

    #[test]
    fn the_allow_list_sees_quoted_words() {
        let allow = [Regex::new(r"^cargo(\s|$)").expect("regex")];
        assert!(check_argv(&words("cargo build --release"), &allow).is_ok());
        // One word that merely starts with `cargo ` is not the program cargo.
        assert!(check_argv(&["cargo build; rm".to_owned()], &allow).is_err());
        assert!(check_argv(&words("rm -rf /"), &allow).is_err());
        assert!(check_argv(&words("cargo"), &[]).is_err());
    }
}
