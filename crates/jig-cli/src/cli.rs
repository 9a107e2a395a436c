//! The command line, as clap types. Command bodies live in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use jig_engine::history::ExpectedHead;

/// Jig: browse, validate and run tools safely.
///
/// Jig reads a project (a directory with a `jig.yaml` or `gert.yaml` manifest, or any directory
/// of `tools/*.tool.yaml`), checks every tool, runbook and scenario strictly, and lists what it
/// offers. Every project also has the built-in catalog (`fs_list`, `file_read`, `git_status`, …).
#[derive(Debug, Parser)]
#[command(name = "jig", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 success, 1 not found or failed, 2 usage error, 3 invalid project."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project directory; the manifest is found by walking up from it [default: current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Audit store URL (sqlite path or postgres://…); used by commands that record calls
    #[arg(long, global = true, value_name = "URL")]
    pub db: Option<String>,
    /// Act as this principal, where the policy allows naming one (`approvals.allow_as`) [default: $JIG_PRINCIPAL, else the OS user]
    #[arg(long = "as", global = true, value_name = "PRINCIPAL")]
    pub principal: Option<String>,
    /// When to colour diagnostics
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load and check the whole project; diagnostics go to stderr
    ///
    /// Exit 0 when the project is valid (warnings allowed), 3 when it has errors.
    Validate(ValidateArgs),
    /// List the project's tools, sorted by id
    List(ListArgs),
    /// Show one tool's definition with its resolved schemas
    Show(ShowArgs),
    /// Run one tool call through validation, policy and the audit; print its ToolResponse
    ///
    /// Exit 0 when the response is ok, 1 when it is not (including "needs approval": its
    /// `approval_id` is in the error's details), 2 on a usage error.
    Call(CallArgs),
    /// Choose a tool for an intent, deterministically; print the ToolSelection
    Select(SelectArgs),
    /// Review calls waiting for approval
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Report what this machine offers Jig: Landlock, interpreters, formatters, reference tools
    ///
    /// Exit 0 when tools' caps can be enforced here (Landlock available), 1 when not.
    Doctor(DoctorArgs),
    /// Inspect and check the audit record
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Serve the workbench and its API; prints the URL with its access token
    ///
    /// Loopback only unless `--allow-remote`. Every API and WebSocket request needs the token
    /// (the URL's `?token=` becomes a cookie; scripts send `Authorization: Bearer TOKEN`).
    Serve(ServeArgs),
    /// Run runbooks (every tool step through the policy and the audit), and test them against
    /// their recorded scenarios
    #[command(subcommand)]
    Runbook(RunbookCommand),
    /// Serve the project's tools to MCP clients (agents, editors, MCP Inspector): on stdio, or
    /// Streamable HTTP with `--http`
    ///
    /// Every call goes through the policy, approvals and the audit, with the client acting for
    /// you (`you (via CLIENT)`). Over HTTP: loopback only unless `--allow-remote`, and every
    /// request needs `Authorization: Bearer TOKEN` (printed at start, or from `--users`).
    Mcp(McpArgs),
    /// Follow calls whose work runs on a scheduler (slurm and hybrid plans): list, show,
    /// cancel, collect
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Consent to what the manifest sends off this machine or writes outside the project
    ///
    /// Forwarders of the audit, webhooks, the sign-in provider (and the variables each is
    /// handed), a place outside the project to publish checkpoints: none takes effect until
    /// you consent to its present configuration. The consent is kept outside the project
    /// ($XDG_STATE_HOME/jig/consent) and any change to the item voids it. Without --yes it
    /// asks on a terminal. Upstream MCP servers are consented to by `jig mcp discover`.
    Trust(TrustArgs),
    /// The effective policy: the project's beneath the layers above it (machine, person)
    ///
    /// A layer above the project can only narrow what it allows; `show` lists every rule with
    /// the layer it came from, the tools it decides and what it overrode.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

/// `jig policy …`.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Every rule of the effective policy with its layer, and each tool's decision
    Show {
        /// Print the account as JSON
        #[arg(long)]
        json: bool,
    },
}

/// `jig trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Consent without asking
    #[arg(long, conflicts_with_all = ["show", "revoke"])]
    pub yes: bool,
    /// List what the manifest names and where consent to each stands; change nothing
    #[arg(long, conflicts_with = "revoke")]
    pub show: bool,
    /// Take back the consent to everything the manifest names
    #[arg(long)]
    pub revoke: bool,
    /// With --show: print JSON (`[{kind, name, target, state}]`)
    #[arg(long, requires = "show")]
    pub json: bool,
}

/// `jig mcp`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Upstream servers: import them from a client's configuration, or ask them for their tools
    #[command(subcommand)]
    pub command: Option<McpCommand>,
    /// Serve Streamable HTTP on this address (`/mcp`) instead of stdio (port 0 picks one)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// People, roles and tokens for HTTP, as for `jig serve --users`
    #[arg(long, value_name = "FILE", requires = "http")]
    pub users: Option<PathBuf>,
    /// Listen on a non-loopback address
    #[arg(long, requires = "http")]
    pub allow_remote: bool,
}

/// `jig mcp import|discover`: the upstream MCP servers of the manifest's `mcp_servers:`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Write the servers of a client's configuration (Claude Desktop's or Cursor's
    /// `mcpServers`, VS Code's `servers`) into the manifest's `mcp_servers:`, then ask them for
    /// their tools. Values of variables that look like secrets are not written: they are
    /// passed from Jig's environment
    Import {
        /// The client's configuration (JSON)
        file: PathBuf,
        /// Take the imported server where the manifest has one of the same name
        #[arg(long)]
        replace: bool,
    },
    /// Start each upstream server in its sandbox and ask it for its tools; they become
    /// registry entries `SERVER.TOOL` (`jig serve` and `jig mcp` ask at start too)
    Discover,
}

/// `jig runbook …`.
#[derive(Debug, Subcommand)]
pub enum RunbookCommand {
    /// The project's runbooks, with their inputs and scenarios
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// Start a run and take it as far as it goes; it stops at steps that need people
    ///
    /// Exit 0 when it ends `resolved` or `no_action`, 4 `escalated`, 5 `needs_rca`, 6 when it
    /// waits for people (resume it with `jig runbook resume RUN`), 1 when a step failed or was
    /// denied.
    Run(RunbookRunArgs),
    /// Go on with a run: supply evidence, approve, retry (from any process, after a restart)
    Resume(RunbookResumeArgs),
    /// Hold a run before its next step that would do something, from any process; resume it
    /// with `jig runbook resume RUN --go STEP`
    Pause {
        /// The run's id
        run: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Continue an ended run with the runbook its outcome names (`next_runbook`), with the
    /// inputs the outcome gives and these over them; a run is continued once
    Follow {
        /// The ended run's id
        run: String,
        /// An input, `name=value` (repeatable), over those the outcome gives
        #[arg(long = "input", value_name = "NAME=VALUE")]
        inputs: Vec<String>,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Where a run stands (nothing runs)
    Show {
        /// The run's id
        run: String,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Play every recorded scenario (tool steps answered from `scenario.yaml`) and check
    /// `test.yaml`; exit 1 when one fails
    Test(RunbookTestArgs),
    /// Save a finished run as a new scenario beside its runbook (inputs, each tool step's
    /// answer, the evidence, and what the run did as `test.yaml`), secrets redacted
    Record {
        /// The run's id
        run: String,
        /// The scenario's name (a directory under `scenarios/<runbook>/`)
        #[arg(long)]
        name: String,
    },
}

/// `jig runbook run`.
#[derive(Debug, Args)]
pub struct RunbookRunArgs {
    /// The runbook: its name in the project, or a path to its file
    pub runbook: String,
    /// An input, `name=value` (repeatable); text becomes the input's declared type
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// Wait for a go-ahead before every step
    #[arg(long)]
    pub step: bool,
    /// Evidence for a manual step: `STEP=FILE`, the file a JSON object of evidence, or text
    /// when the step asks for one piece (repeatable)
    #[arg(long = "evidence", value_name = "STEP=FILE")]
    pub evidence: Vec<String>,
    /// Print the run as JSON
    #[arg(long)]
    pub json: bool,
}

/// `jig runbook resume`.
#[derive(Debug, Args)]
pub struct RunbookResumeArgs {
    /// The run's id
    pub run: String,
    /// Evidence for a manual step: `STEP=FILE` (repeatable)
    #[arg(long = "evidence", value_name = "STEP=FILE")]
    pub evidence: Vec<String>,
    /// Approve the call a step waits to make (its step id or key)
    #[arg(long, value_name = "STEP")]
    pub approve: Vec<String>,
    /// Give the go-ahead to a waiting step (its step id or key)
    #[arg(long = "go", value_name = "STEP")]
    pub go: Vec<String>,
    /// Retry a failed step (its step id or key)
    #[arg(long, value_name = "STEP")]
    pub retry: Vec<String>,
    /// Walk on interactively, one step at a time
    #[arg(long)]
    pub step: bool,
    /// Print the run as JSON
    #[arg(long)]
    pub json: bool,
}

/// `jig runbook test`.
#[derive(Debug, Args)]
pub struct RunbookTestArgs {
    /// Runbook files to test [default: every runbook of the project that has scenarios]
    pub paths: Vec<PathBuf>,
    /// Print the results as JSON
    #[arg(long)]
    pub json: bool,
    /// Stop at the first failing scenario
    #[arg(long)]
    pub fail_fast: bool,
    /// `replay`: tool steps answered from the scenario. `dry-run`: the same, and every tool
    /// call is also rendered and decided by the project's policy and listed (nothing runs)
    #[arg(long, value_enum, default_value = "replay")]
    pub mode: TestMode,
}

/// How `jig runbook test` plays scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestMode {
    /// Answer tool steps from the scenario.
    Replay,
    /// Also render and decide each tool call, and list it.
    DryRun,
}

/// `jig serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen (port 0 picks a free one)
    #[arg(long, default_value = "127.0.0.1:0", value_name = "ADDR")]
    pub addr: std::net::SocketAddr,
    /// People, roles and tokens: `users: [{name, role: viewer|runner|approver|admin, token}]`
    /// (without it, one random token acts as you, the OS user, with every role)
    #[arg(long, value_name = "FILE")]
    pub users: Option<PathBuf>,
    /// Listen on a non-loopback address (anyone who can reach it and holds a token can act)
    #[arg(long)]
    pub allow_remote: bool,
    /// The URL people open when a proxy stands in front (`https://jig.acme.example`): its
    /// host is accepted as `Host` and its origin as `Origin` (repeatable)
    #[arg(long = "public-url", value_name = "URL")]
    pub public_url: Vec<String>,
}

/// `jig call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool id (optional with --request, which names it)
    pub tool: Option<String>,
    /// The arguments, as a JSON object (duplicate keys are refused)
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
    /// A whole ToolRequest as JSON, from a file or `-` for stdin
    #[arg(long, value_name = "FILE|-", conflicts_with = "args")]
    pub request: Option<String>,
    /// The session (budgets and approvals are per session) [default: $JIG_SESSION, else `cli`]
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
    /// The thread inside the session (idempotency keys are per thread) [default: the session]
    #[arg(long, value_name = "T")]
    pub thread: Option<String>,
    /// A one-time approval token from `jig approvals approve`
    #[arg(long = "approve", value_name = "TOKEN")]
    pub approve: Option<String>,
    /// When the tool's work is a batch job (a slurm or hybrid plan), wait for it and print its
    /// final response instead of the queued one; its progress goes to stderr
    #[arg(long)]
    pub wait: bool,
}

/// `jig runs …`: calls whose work runs on a scheduler (seed 001's batch jobs).
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// The latest jobs with their runs' states (open jobs are polled first)
    List {
        /// Print JSON lines instead of a table
        #[arg(long)]
        json: bool,
        /// How many
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: i64,
    },
    /// One call's state and response (its job polled first)
    Show {
        /// The request id
        request: String,
    },
    /// Cancel a call's job on its scheduler and record the run cancelled
    Cancel {
        /// The request id
        request: String,
    },
    /// Collect finished jobs: one call's, or every open one; print the responses
    Collect {
        /// The request id (every open job when omitted)
        request: Option<String>,
        /// Wait until the job (or every open job) is over
        #[arg(long)]
        wait: bool,
    },
}

/// `jig select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// What you want done, in words
    #[arg(required_unless_present = "intent")]
    pub summary: Vec<String>,
    /// A tag a fitting tool carries (repeatable)
    #[arg(long, value_name = "T")]
    pub tag: Vec<String>,
    /// A word to look for in tool ids and descriptions (repeatable)
    #[arg(long, value_name = "K")]
    pub keyword: Vec<String>,
    /// Side effects you accept, comma-separated (read, write, network, exec) [default: any]
    #[arg(long, value_name = "E,…", value_delimiter = ',')]
    pub allow: Option<Vec<String>>,
    /// Arguments the tool must accept, as a JSON object
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
    /// Only choose among these tools, comma-separated
    #[arg(long, value_name = "TOOL,…", value_delimiter = ',')]
    pub among: Option<Vec<String>>,
    /// The whole intent as JSON, from a file or `-` for stdin
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["tag", "keyword", "allow", "args"])]
    pub intent: Option<String>,
    /// The session the selection is recorded in [default: $JIG_SESSION, else `cli`]
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
}

/// `jig approvals …`.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Calls waiting for approval (with --all, decided ones too), newest first
    List {
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        /// Include approved, denied and used approvals
        #[arg(long)]
        all: bool,
    },
    /// Approve a pending call: it runs where it waits (or at its caller's next identical
    /// call); prints its one-time token on stdout only when the call is your own. Several
    /// ids are each approved with the same comment, and print `ID OUTCOME` lines instead
    Approve {
        /// The approval id (a unique prefix is enough); several for the same decision
        #[arg(required = true, num_args = 1.., value_name = "ID")]
        ids: Vec<String>,
        /// A comment for who asked (kept in the audit)
        #[arg(long)]
        comment: Option<String>,
    },
    /// Deny a pending call, saying why (shown to who asked, kept in the audit). Several ids
    /// are each denied with the same reason, which is then required
    Deny {
        /// The approval id (a unique prefix is enough); several for the same decision
        #[arg(required = true, num_args = 1.., value_name = "ID")]
        ids: Vec<String>,
        /// Why: shown to who asked
        #[arg(long)]
        reason: Option<String>,
    },
}

/// `jig audit …`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// The latest packets, oldest first
    List {
        /// Print JSON lines instead of a table
        #[arg(long)]
        json: bool,
        /// How many packets
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: i64,
        /// Only packets of this tool
        #[arg(long, value_name = "TOOL")]
        tool: Option<String>,
    },
    /// One run (by request id or run id, a unique prefix is enough) with its packets
    Show {
        /// The request id or run id
        run: String,
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// Check the whole hash chain; names the first broken seq
    Verify {
        /// A head kept elsewhere: `SEQ:HASH` as `jig audit head` printed it, a file written
        /// by `jig audit head --sign`, or a checkpoint signed note (`jig audit publish`); a
        /// signature is checked against the project's `config.audit.head_key`. The chain
        /// must still hold that packet with that hash, so truncation and rewriting are
        /// detected
        #[arg(long, value_name = "SEQ:HASH|FILE", value_parser = parse_expected_head)]
        expect: Option<ExpectedHead>,
    },
    /// The chain's head: `SEQ HASH`, to keep outside the database
    Head {
        /// Sign it with the Ed25519 key in FILE and print it as JSON, for `verify --expect`;
        /// its `checkpoint` is the same head as a C2SP tlog-checkpoint signed note
        #[arg(long, value_name = "FILE")]
        sign: Option<PathBuf>,
    },
    /// Write the chain's head as a signed checkpoint where `config.audit.publish` says (a
    /// file, or a URL it PUTs to), so a copy outside this machine detects a rewritten chain
    Publish {
        /// The Ed25519 signing key (`jig audit keygen`)
        #[arg(long, value_name = "FILE")]
        sign: PathBuf,
        /// Write here instead (a file, or an http(s) URL)
        #[arg(long, value_name = "FILE|URL")]
        to: Option<String>,
    },
    /// Make an Ed25519 key pair for signed heads: the key goes to FILE (mode 0600), the public
    /// key (for the manifest's `config.audit.head_key`) to stdout
    Keygen {
        /// Where to write the signing key; refused if it exists
        file: PathBuf,
    },
    /// Send the audit to the receivers of `config.audit.forward` (syslog over TLS, Splunk HEC,
    /// Elasticsearch), from where each left off; until interrupted, or until caught up.
    /// `jig serve` and `jig mcp` forward too, while they run
    Forward {
        /// Stop once every receiver has taken the packets recorded when it started
        #[arg(long)]
        until_caught_up: bool,
    },
    /// Every packet as JSON lines: as stored (`jsonl`), as CloudEvents 1.0 (`cloudevents`), or
    /// as OCSF API Activity events inside CloudEvents (`ocsf`), one per packet in chain order
    Export {
        /// Only packets after this seq
        #[arg(long, default_value_t = 0, value_name = "SEQ")]
        after: i64,
        /// jsonl, cloudevents or ocsf
        #[arg(long, default_value = "jsonl", value_name = "FORMAT")]
        format: jig_engine::history::ExportFormat,
    },
}

/// `jig validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Extra runbook files to check with the project (any .yaml file)
    #[arg(value_name = "RUNBOOK")]
    pub files: Vec<PathBuf>,
    /// Print a JSON report on stdout instead of text
    #[arg(long)]
    pub json: bool,
    /// Keep watching the project and report after every change
    #[arg(long)]
    pub watch: bool,
}

/// `jig doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// `jig list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
    /// Only tools with this tag
    #[arg(long, value_name = "T")]
    pub tag: Option<String>,
}

/// `jig show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The tool id, e.g. `file_read` or `acme.deploy`
    pub tool: String,
    /// Print the full definition as JSON
    #[arg(long)]
    pub json: bool,
}

/// `SEQ:HASH` (or `SEQ HASH`, as `jig audit head` prints it), or the path of a signed head.
fn parse_expected_head(text: &str) -> Result<ExpectedHead, String> {
    let path = std::path::Path::new(text);
    if path.is_file() {
        let content = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
        if !content.trim_start().starts_with('{') {
            let head = jig_engine::history::Checkpoint::parse(&content)
                .map_err(|e| format!("{text}: {e}"))?;
            return Ok(ExpectedHead::Checkpoint { head, note: content });
        }
        return serde_json::from_str(&content)
            .map(ExpectedHead::Signed)
            .map_err(|e| format!("{text}: not a signed head from `jig audit head --sign`: {e}"));
    }
    text.parse()
}
