//! Settings merged from flags and environment, and the shared ways of printing.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_engine::History;
use jig_engine::{Engine, EngineError, EngineOptions};
use jig_load::{LoadFailure, LoadOptions, Loader, Snapshot};

use crate::cli::{ColorChoice, GlobalArgs};

/// What every command needs to know.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to start looking for the project.
    pub project: PathBuf,
    /// Whether `--project` named it (else it is the working directory).
    pub project_given: bool,
    /// Colour diagnostics.
    pub color: bool,
    /// `--db`.
    pub db: Option<String>,
    /// Who acts: the OS user, or the name given with `--as` / `$JIG_PRINCIPAL`.
    pub principal: String,
    /// The OS user, when `principal` was named instead (`--as`): only allowed where the
    /// policy's `approvals.allow_as` says so, and recorded with what it does.
    pub asserted_by: Option<String>,
}

impl Settings {
    /// Who acts: the person at this machine (or whom they named with `--as`, where allowed).
    pub fn actor(&self) -> jig_app::Actor {
        jig_app::Actor {
            asserted_by: self.asserted_by.clone(),
            ..jig_app::Actor::owner(self.principal.clone())
        }
    }

    /// Merge flags and environment.
    pub fn from_args(args: &GlobalArgs) -> Self {
        let project = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        let os_user = jig_engine::os_user();
        let named = args
            .principal
            .clone()
            .or_else(|| std::env::var("JIG_PRINCIPAL").ok())
            .filter(|p| !p.trim().is_empty());
        let (principal, asserted_by) = match named {
            Some(name) if name != os_user => (name, Some(os_user)),
            _ => (os_user, None),
        };
        Self {
            project,
            project_given: args.project.is_some(),
            color,
            db: args.db.clone(),
            principal,
            asserted_by,
        }
    }

    /// Refuse a named principal (`--as`) unless the policy allows naming one.
    pub fn check_identity(&self, engine: &Engine) -> Result<(), String> {
        match &self.asserted_by {
            Some(os_user) if !engine.policy().config().approvals.allow_as => Err(format!(
                "`--as {}` (or $JIG_PRINCIPAL): this project's policy does not let {os_user} act as someone else; \
                 the principal is the OS user unless `approvals.allow_as: true`",
                self.principal
            )),
            _ => Ok(()),
        }
    }

    /// Open the engine on the project; an invalid project's diagnostics go to stderr.
    pub async fn engine(&self) -> Result<Arc<Engine>, EngineError> {
        self.engine_with(&[]).await
    }

    /// The engine of a command that stays open and follows the project's files (`serve`,
    /// `mcp`): it watches from its load on, and [`Engine::watch`] hears what changed since.
    pub async fn engine_watched(&self) -> Result<Arc<Engine>, EngineError> {
        self.open(&[], true).await
    }

    /// The engine, with runbook files named explicitly loaded too.
    pub async fn engine_with(
        &self,
        extra_runbooks: &[PathBuf],
    ) -> Result<Arc<Engine>, EngineError> {
        self.open(extra_runbooks, false).await
    }

    async fn open(
        &self,
        extra_runbooks: &[PathBuf],
        watch: bool,
    ) -> Result<Arc<Engine>, EngineError> {
        let options = EngineOptions {
            project: self.project.clone(),
            db: self.db.clone(),
            extra_runbooks: extra_runbooks.to_vec(),
            watch,
            ..EngineOptions::default()
        };
        Engine::open(options).await.inspect_err(|error| match error {
            EngineError::Invalid(failure) => {
                eprint!(
                    "{}",
                    jig_load::render::render(&failure.diagnostics, &failure.root, self.color)
                );
                eprintln!("{}", summary_of_failure(failure));
            }
            other => eprintln!("error: {other}"),
        })
    }

    /// Open the audit store without loading the project (so a broken tool file does not hide
    /// the audit). `None` when the default SQLite store does not exist yet.
    pub async fn history(&self) -> anyhow::Result<Option<History>> {
        let target = match &self.db {
            Some(db) => db.clone(),
            None => {
                let root = jig_load::project_root(&self.project).ok_or_else(|| {
                    anyhow::anyhow!("no such directory: {}", self.project.display())
                })?;
                jig_engine::check_state_dir(&root)?;
                let db = jig_engine::default_db(&root);
                if !Path::new(&db).exists() {
                    eprintln!("note: no audit record yet ({db} does not exist)");
                    return Ok(None);
                }
                db
            }
        };
        Ok(Some(History::open(&target).await?))
    }

    /// The session of a call: the flag, `$JIG_SESSION`, or `cli`.
    pub fn session(flag: Option<&String>) -> String {
        flag.cloned()
            .or_else(|| std::env::var("JIG_SESSION").ok())
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "cli".to_owned())
    }

    /// A loader for the project, with extra runbook files.
    pub fn loader(&self, extra_runbooks: &[PathBuf]) -> Loader {
        let options =
            LoadOptions { extra_runbooks: extra_runbooks.to_vec(), ..LoadOptions::default() };
        Loader::with_options(&self.project, options)
    }

    /// Load the project; on failure print the diagnostics to stderr.
    pub fn load_or_report(&self) -> Result<Arc<Snapshot>, LoadFailure> {
        self.load_with(&[])
    }

    /// Load the project with extra runbook files; on failure print the diagnostics.
    pub fn load_with(&self, extra_runbooks: &[PathBuf]) -> Result<Arc<Snapshot>, LoadFailure> {
        self.loader(extra_runbooks).load().inspect_err(|failure| {
            eprint!(
                "{}",
                jig_load::render::render(&failure.diagnostics, &failure.root, self.color)
            );
            eprintln!("{}", summary_of_failure(failure));
        })
    }
}

/// "2 errors, 1 warning".
pub fn summary_of_failure(failure: &LoadFailure) -> String {
    let errors = failure.errors().count();
    let warnings = failure.diagnostics.len() - errors;
    format!("invalid: {}, {}", plural(errors, "error"), plural(warnings, "warning"))
}

/// `n thing(s)`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// Read a JSON argument: `-` is stdin, anything else a file; at most 64 MiB.
pub fn read_input(source: &str) -> Result<String, String> {
    use std::io::Read;
    const MAX: u64 = 64 * 1024 * 1024;
    let mut text = String::new();
    let read = if source == "-" {
        std::io::stdin().take(MAX + 1).read_to_string(&mut text)
    } else {
        fs_err::File::open(source).and_then(|f| f.take(MAX + 1).read_to_string(&mut text))
    };
    read.map_err(|e| format!("cannot read {source}: {e}"))?;
    if text.len() as u64 > MAX {
        return Err(format!("{source} is larger than 64 MiB"));
    }
    Ok(text)
}

/// A response whose large result came back prepared: printed as [`print_json`] would print it,
/// the result's text written as it is.
pub fn print_prepared(
    out: &mut impl std::io::Write,
    response: &jig_engine::ToolResponse,
    data: &jig_model::prepared::PreparedJson,
) -> std::io::Result<()> {
    print_buffered(out, |buffered, pretty| {
        jig_model::prepared::write_with_prepared(buffered, response, data, pretty)
    })
}

/// Print `value` as JSON: indented on a terminal, one line otherwise.
pub fn print_json(
    out: &mut impl std::io::Write,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    print_buffered(out, |buffered, pretty| {
        if pretty {
            serde_json::to_writer_pretty(buffered, value)?;
        } else {
            serde_json::to_writer(buffered, value)?;
        }
        Ok(())
    })
}

/// Write through a 64 KiB buffer (a large response goes out in a few large writes, not one
/// per token), pretty on a terminal, and end the line.
fn print_buffered(
    out: &mut impl std::io::Write,
    write: impl FnOnce(&mut dyn std::io::Write, bool) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, &mut *out);
    write(&mut buffered, std::io::stdout().is_terminal())?;
    writeln!(buffered)?;
    buffered.flush()
}

/// Say on stderr that the command failed with `code`: `error[E_…]: message`, the one form every
/// error of the CLI takes (DESIGN.md §6), its code from the same [`jig_model::ErrorCode`] the
/// API and MCP answer with. Written through [`fail!`](crate::fail).
pub fn fail(code: jig_model::ErrorCode, message: std::fmt::Arguments<'_>) {
    eprintln!("error[{}]: {message}", code.as_str());
}

/// `fail!(Policy, "--addr {addr}: not a loopback address")`: [`fail`] with an
/// [`ErrorCode`](jig_model::ErrorCode) variant and a message formatted in place.
#[macro_export]
macro_rules! fail {
    ($code:ident, $($message:tt)*) => {
        $crate::output::fail(jig_model::ErrorCode::$code, format_args!($($message)*))
    };
}
