//! The measurements, printed as a Markdown table.

use std::future::Future;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use jig_exec::{Cancel, Events, Execution, Executors, Invocation};
use jig_load::Snapshot;
use jig_model::policy::PolicyConfig;
use jig_policy::Policy;
use jig_policy::sandbox::Workspace;
use serde_json::{Value, json};

use crate::{Options, corpus};

/// The std tools and what runs them.
struct Harness {
    snapshot: Arc<Snapshot>,
    executors: Executors,
    policy: Arc<Policy>,
}

impl Harness {
    fn new(project: &Path) -> anyhow::Result<Self> {
        let snapshot = jig_load::Loader::new(project)
            .load()
            .map_err(|e| anyhow::anyhow!("loading the std tools: {e:?}"))?;
        let config =
            PolicyConfig { shell_allow: vec!["^true$".to_owned()], ..PolicyConfig::default() };
        Ok(Self {
            snapshot,
            executors: jig_tools::standard_executors(),
            policy: Arc::new(Policy::new(config)?),
        })
    }

    async fn call(
        &self,
        tool: &str,
        workspace: &Arc<Workspace>,
        args: Value,
    ) -> anyhow::Result<Value> {
        let tool = self.snapshot.get(tool).with_context(|| format!("no tool {tool}"))?;
        let executor = self.executors.for_tool(tool).context("no executor")?;
        let invocation = Invocation {
            tool,
            args: &args,
            workspace,
            policy: &self.policy,
            timeout: Duration::from_secs(600),
            cancel: Cancel::new(),
            events: Events::discard("bench"),
            traceparent: None,
        };
        match executor.execute(invocation).await {
            Ok(Execution::Done(output)) => Ok(output.data),
            Ok(Execution::Submitted(_)) => anyhow::bail!("submitted"),
            Err(error) => anyhow::bail!("{}: {}", error.code, error.message),
        }
    }
}

/// Median of `runs` timings after one warm-up.
async fn median<F, Fut, T>(runs: usize, mut body: F) -> anyhow::Result<(Duration, T)>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let mut last = body().await?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        last = body().await?;
        samples.push(started.elapsed());
    }
    samples.sort();
    Ok((samples[samples.len() / 2], last))
}

/// Median wall time of a reference command, and its stdout.
async fn reference(
    runs: usize,
    program: &str,
    args: &[&str],
    dir: &Path,
) -> anyhow::Result<(Duration, String)> {
    median(runs, || async {
        let output = Command::new(program)
            .args(args)
            .current_dir(dir)
            .output()
            .with_context(|| format!("running {program}"))?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    })
    .await
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn row(what: &str, jig: Duration, other: Option<(&str, Duration)>, counts: &str) {
    match other {
        Some((name, reference)) => println!(
            "| {what} | {} | {name} {} | {:.2}× | {counts} |",
            ms(jig),
            ms(reference),
            jig.as_secs_f64() / reference.as_secs_f64()
        ),
        None => println!("| {what} | {} | | | {counts} |", ms(jig)),
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "a benchmark's script, step after step; split when it next changes"
)]
pub async fn all(options: &Options) -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let project = work.path().join("project");
    fs_err::create_dir_all(&project)?;
    fs_err::write(project.join("jig.yaml"), "name: bench\n")?;
    let tree = match &options.corpus {
        Some(dir) => dir.clone(),
        None => corpus::registry_sample(work.path(), options.files)?,
    };
    let files = count_files(&tree)?;
    let dir = tree.to_str().context("utf-8 path")?;
    println!("corpus: {} ({files} files); {} runs each, medians\n", tree.display(), options.runs);
    println!("| measure | Jig | reference | ratio | results |");
    println!("|---|---|---|---|---|");
    let harness = Harness::new(&project)?;
    let workspace = Arc::new(Workspace::open(&tree)?);

    for pattern in ["unsafe", r"fn [a-z_]+_new\(", r"impl<[^>]+> \w+ for"] {
        let args = json!({ "pattern": pattern, "max_results": 100_000, "include_vendor": true });
        let (jig, data) =
            median(options.runs, || harness.call("grep", &workspace, args.clone())).await?;
        let (rg, out) =
            reference(options.runs, "rg", &["-c", "--no-config", pattern, dir], &tree).await?;
        let rg_count: usize =
            out.lines().filter_map(|l| l.rsplit(':').next()?.parse::<usize>().ok()).sum();
        let ours = data["matches"].as_array().map_or(0, Vec::len);
        row(
            &format!("`grep` `{pattern}`"),
            jig,
            Some(("rg", rg)),
            &format!("{ours} lines (rg {rg_count})"),
        );
    }
    let fd = if jig_exec::process::find_program("fdfind").is_some() { "fdfind" } else { "fd" };
    for (glob, extension) in [("**/*.rs", Some("rs")), ("**", None)] {
        let args = json!({ "glob": glob, "max_results": 100_000 });
        let (jig, data) =
            median(options.runs, || harness.call("fs_list", &workspace, args.clone())).await?;
        let mut fd_args = vec!["-t", "f"];
        if let Some(extension) = extension {
            fd_args.extend(["-e", extension]);
        }
        fd_args.extend([".", dir]);
        let (reference_time, out) = reference(options.runs, fd, &fd_args, &tree).await?;
        let ours = data["files"].as_array().map_or(0, Vec::len);
        row(
            &format!("`fs_list` `{glob}`"),
            jig,
            Some((fd, reference_time)),
            &format!("{ours} files (fd {})", out.lines().count()),
        );
    }

    let (rust, rust_files, lines) = corpus::rust_lines(&tree, work.path(), 100_000)?;
    let rust_workspace = Arc::new(Workspace::open(&rust)?);
    let generate = json!({ "paths": ["**/*.rs"], "max_files": 100_000 });
    let mut cold = Vec::new();
    for _ in 0..options.runs {
        let fresh = Harness::new(&project)?;
        let started = Instant::now();
        let data = fresh.call("ast_generate", &rust_workspace, generate.clone()).await?;
        cold.push((started.elapsed(), data));
    }
    cold.sort_by_key(|(d, _)| *d);
    let (cold_time, cold_data) = &cold[cold.len() / 2];
    row(
        &format!("`ast_generate` cold, {lines} lines in {rust_files} files"),
        *cold_time,
        None,
        &format!("{} parsed, {} symbols", cold_data["parsed_files"], cold_data["symbols"]),
    );
    let warm = Harness::new(&project)?;
    warm.call("ast_generate", &rust_workspace, generate.clone()).await?;
    let victim = first_rs(&rust)?;
    let mut changed = Vec::new();
    for i in 0..options.runs {
        let mut text = fs_err::read_to_string(&victim)?;
        text.push_str(&format!("\npub fn bench_added_{i}() {{}}\n"));
        fs_err::write(&victim, text)?;
        let started = Instant::now();
        let data = warm.call("ast_generate", &rust_workspace, generate.clone()).await?;
        changed.push((started.elapsed(), data["parsed_files"].clone()));
    }
    changed.sort_by_key(|(d, _)| *d);
    let (changed_time, parsed) = &changed[changed.len() / 2];
    row("`ast_generate` after one file changed", *changed_time, None, &format!("{parsed} parsed"));

    let spawns = options.runs * 40;
    let (raw, ()) = median(1, || async {
        for _ in 0..spawns {
            Command::new("true").status()?;
        }
        Ok(())
    })
    .await?;
    let (shell, ()) = median(1, || async {
        for _ in 0..spawns {
            harness.call("shell_exec", &workspace, json!({ "cmd": "true" })).await?;
        }
        Ok(())
    })
    .await?;
    let per = |d: Duration| d / u32::try_from(spawns).unwrap_or(1);
    row(
        &format!("`shell_exec` `true` (mean of {spawns})"),
        per(shell),
        Some(("spawn", per(raw))),
        "",
    );

    let repo = corpus::git_repo(work.path(), 10_000)?;
    let repo_workspace = Arc::new(Workspace::open(&repo)?);
    let (jig, data) =
        median(options.runs, || harness.call("git_status", &repo_workspace, json!({}))).await?;
    let (git, out) = reference(options.runs, "git", &["status", "--porcelain"], &repo).await?;
    let ours = data["changes"].as_array().map_or(0, Vec::len);
    row(
        "`git_status`, 10,000 files",
        jig,
        Some(("git", git)),
        &format!("{ours} changes (git {})", out.lines().count()),
    );
    Ok(())
}

fn count_files(dir: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            count += count_files(&entry.path())?;
        } else {
            count += 1;
        }
    }
    Ok(count)
}

fn first_rs(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    let mut entries: Vec<_> =
        fs_err::read_dir(dir)?.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if let Ok(found) = first_rs(&path) {
                return Ok(found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            return Ok(path);
        }
    }
    anyhow::bail!("no .rs file")
}
