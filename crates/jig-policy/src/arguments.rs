//! Arguments that turn an allowed program into a way to run anything (seed 002 §7,
//! `sec.shell.allowlist`): an allow-list entry `^git` must not let `git -c core.pager=sh …`
//! through, nor `find . -exec`, nor `cargo --config` with a runner. Rules are per program (by
//! the base name of `argv[0]`), and environment variables that load code are refused the same way.

use crate::command::RULE;
use crate::decision::Denial;

/// Options refused anywhere on a program's command line. An entry ending in `=` also refuses
/// the attached form (`--output=x`); others match the whole word or its `--opt=value` form.
const ANYWHERE: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--output",
            "--output-directory",
            "--ext-diff",
            "--textconv",
            "--config-env",
            "--exec-path",
            "--git-dir",
            "--work-tree",
            "--template",
            "--run",
        ],
    ),
    ("rg", &["--pre", "--pre-glob", "--search-zip", "-z"]),
    (
        "find",
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ],
    ),
    ("fd", &["--exec", "-x", "--exec-batch", "-X"]),
    ("fdfind", &["--exec", "-x", "--exec-batch", "-X"]),
    ("cargo", &["--config", "-Z"]),
    ("rustc", &["-C", "--codegen"]),
    ("npm", &["--script-shell", "--node-options"]),
    (
        "tar",
        &[
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "-F",
            "--new-volume-script",
            "--rsh-command",
        ],
    ),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("ssh", &["-o", "-F", "ProxyCommand"]),
    ("make", &["--eval", "-E"]),
];

/// Options refused before a program's subcommand only (where later the same letters mean
/// something harmless, e.g. `git commit -c <commit>`).
const GLOBAL: &[(&str, &[&str])] = &[("git", &["-c", "-C"])];

/// Subcommands refused outright: they exist to run other programs.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "difftool",
            "mergetool",
            "filter-branch",
            "bisect",
            "submodule",
            "config",
            "daemon",
            "instaweb",
            "credential",
        ],
    ),
    ("cargo", &["install", "script"]),
    ("npm", &["exec", "x", "explore"]),
];

/// Programs whose job is to start another program; allowing them would bypass the allow-list.
const LAUNCHERS: &[&str] = &[
    "env", "xargs", "sudo", "su", "doas", "nohup", "setsid", "timeout", "nice", "ionice", "stdbuf",
    "chroot", "unshare", "nsenter", "busybox", "strace", "ltrace", "gdb", "watch", "sh", "bash",
    "dash", "zsh", "ksh", "fish", "csh", "tcsh", "eval", "exec", "npx",
];

/// Environment variables a caller may set for a command: locale, terminal and logging knobs
/// that load no code. Anything else is refused — an allow-list, because the names that make
/// some program run code (`GIT_ALLOW_PROTOCOL`, `XDG_CONFIG_HOME`, `RIPGREP_CONFIG_PATH`, …)
/// are too many to list.
const ENV_ALLOWED: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "COLUMNS",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CI",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "NODE_ENV",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
];

/// Prefixes of allowed names (`LC_ALL`, `LC_TIME`, …).
const ENV_ALLOWED_PREFIXES: &[&str] = &["LC_"];

/// Refuse arguments that make `argv`'s program run something else.
pub fn check_arguments(argv: &[String]) -> Result<(), Denial> {
    let Some(program) = argv.first() else { return Ok(()) };
    let name = program.rsplit('/').next().unwrap_or(program);
    let args = &argv[1..];
    if LAUNCHERS.contains(&name) {
        return Err(Denial::new(
            RULE,
            format!(
                "`{name}` starts other programs, which would bypass `shell_allow`; run the program directly"
            ),
        ));
    }
    let refuse = |word: &str, why: &str| {
        Err(Denial::new(RULE, format!("`{name} … {word}` is refused: {why}")))
    };
    for (_, options) in ANYWHERE.iter().filter(|(p, _)| *p == name) {
        for word in args {
            if let Some(option) = options.iter().find(|o| matches_option(word, o)) {
                return refuse(
                    word,
                    &format!("`{option}` can run other programs or write outside the request"),
                );
            }
        }
    }
    let subcommand = args.iter().position(|w| !w.starts_with('-'));
    for (_, options) in GLOBAL.iter().filter(|(p, _)| *p == name) {
        for word in &args[..subcommand.unwrap_or(args.len())] {
            if let Some(option) =
                options.iter().find(|o| word == *o || (word.starts_with(*o) && o.len() == 2))
            {
                return refuse(
                    word,
                    &format!("the global option `{option}` changes configuration or directory"),
                );
            }
        }
    }
    if let Some(sub) = subcommand.map(|i| args[i].as_str()) {
        for (_, subs) in SUBCOMMANDS.iter().filter(|(p, _)| *p == name) {
            if subs.contains(&sub) {
                return refuse(
                    sub,
                    "this subcommand exists to run other programs or change configuration",
                );
            }
        }
    }
    Ok(())
}

/// `--opt`, `--opt=value`, and for single-dash short options `-xVALUE`.
fn matches_option(word: &str, option: &str) -> bool {
    if word == option {
        return true;
    }
    if let Some(rest) = word.strip_prefix(option) {
        return rest.starts_with('=')
            || (option.len() == 2 && option.starts_with('-') && !option.starts_with("--"));
    }
    false
}

/// Refuse environment variables outside the allow-list (exact names, case-sensitive: the
/// environment is).
pub fn check_env<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), Denial> {
    for name in names {
        let allowed = ENV_ALLOWED.contains(&name)
            || ENV_ALLOWED_PREFIXES.iter().any(|p| {
                name.strip_prefix(p).is_some_and(|rest| {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
                })
            });
        if !allowed {
            return Err(Denial::new(
                RULE,
                format!(
                    "the environment variable `{name}` is not one a command may be given (allowed: {}, LC_*)",
                    ENV_ALLOWED.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Rule `sec.argv.positional`: a templated argv element that renders to an option (`-x`,
/// `--pre=sh`) where the author wrote a positional slot is refused — an argument must never
/// become an option of the program. `sources` are the elements as written, `rendered` what
/// they became. A slot is positional when its template does not itself start with `-`; it may
/// take option-like values only after a literal `--` (which the author writes where the
/// program supports it, e.g. `[rg, --, "{{ pattern }}"]`). Templates are `{{ … }}` in both
/// Jinja (toolpacks) and Go (gert) syntax.
pub fn check_positional(sources: &[String], rendered: &[String]) -> Result<(), Denial> {
    match option_in_positional_slot(sources, rendered) {
        None => Ok(()),
        Some(index) => Err(Denial::new(
            POSITIONAL,
            format!(
                "argument {index} of the command (`{}`) would become the option `{}`; \
                 a value starting with `-` is refused in a positional slot unless the command puts `--` before it",
                sources[index], rendered[index]
            ),
        )),
    }
}

/// The index of the first element [`check_positional`] refuses.
pub fn option_in_positional_slot(sources: &[String], rendered: &[String]) -> Option<usize> {
    let mut options_ended = false;
    for (index, (source, value)) in sources.iter().zip(rendered).enumerate() {
        if source == "--" {
            options_ended = true;
        }
        let templated = source.contains("{{");
        if index > 0
            && templated
            && !options_ended
            && !source.starts_with('-')
            && value.starts_with('-')
        {
            return Some(index);
        }
    }
    None
}

/// The rule id of [`check_positional`].
pub const POSITIONAL: &str = "sec.argv.positional";

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn dangerous_arguments_are_refused() {
        for line in [
            "git -c core.pager=sh log",
            "git -ccore.fsmonitor=x status",
            "git --config-env=core.pager=X log",
            "git fetch --upload-pack=touch origin",
            "git diff --ext-diff",
            "git log --output=/etc/x",
            "git -C /etc status",
            "/usr/bin/git submodule foreach id",
            "git config core.hooksPath x",
            "rg --pre cat x",
            "find . -exec rm {} ;",
            "find . -delete",
            "cargo --config target.x.runner=sh build",
            "cargo build -Zunstable-options",
            "tar -I sh -xf a.tar",
            "env FOO=1 rm",
            "xargs rm",
            "bash -c id",
        ] {
            assert!(check_arguments(&argv(line)).is_err(), "{line}");
        }
    }

    #[test]
    fn ordinary_arguments_pass() {
        for line in [
            "git status --porcelain",
            "git commit -c HEAD",
            "git log --oneline -n 5",
            "cargo test -q",
            "rg -n panic src",
            "find . -name x",
            "tar -xf a.tar",
        ] {
            assert!(check_arguments(&argv(line)).is_ok(), "{line}");
        }
    }

    #[test]
    fn code_loading_variables_are_refused() {
        assert!(check_env(["LD_PRELOAD"]).is_err());
        assert!(check_env(["git_ssh_command"]).is_err());
        assert!(check_env(["GIT_CONFIG_KEY_0"]).is_err());
        assert!(check_env(["CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER"]).is_err());
        for name in [
            "GIT_ALLOW_PROTOCOL",
            "HOME",
            "XDG_CONFIG_HOME",
            "RIPGREP_CONFIG_PATH",
            "RUSTFLAGS",
            "lang",
            "LC_",
        ] {
            assert!(check_env([name]).is_err(), "{name}");
        }
        assert!(check_env(["LANG", "CI", "LC_ALL", "RUST_LOG"]).is_ok());
    }
}
