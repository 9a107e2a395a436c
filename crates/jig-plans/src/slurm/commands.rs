//! Slurm's client commands, as Jig runs them: `sbatch` to submit, `squeue` to follow,
//! `scancel` to stop. No accounting database is assumed (`sacct` is not used).
//!
//! These are Jig's own requests to the scheduler, not the tool's processes (the job runs on a
//! node, confined by its wrapper): they start through `jig_exec::host` — by absolute path
//! (`plans.slurm.bin`, else Jig's own `PATH`), with an environment Jig builds: its locale,
//! home and user (which Slurm's clients read), and `SLURM_CONF` from the policy, else Jig's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use jig_exec::ToolError;
use jig_exec::host::{self, HostEnv, HostProgram};
use jig_model::ErrorCode;
use jig_model::policy::SlurmCluster;
use serde_json::json;

/// How long one `squeue` answer serves every job's poll.
const QUEUE_FRESH: Duration = Duration::from_millis(250);

/// A job's state as `squeue` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    /// `PENDING`, `RUNNING`, `COMPLETED`, …
    pub state: String,
    /// Why it waits (`Resources`, `Priority`, `None`).
    pub reason: String,
    /// How long it has run.
    pub used: Option<Duration>,
}

/// The cluster's client commands.
#[derive(Debug, Default)]
pub struct Cluster {
    /// The last `squeue` answer, shared by the polls of every job.
    queue: tokio::sync::Mutex<Option<(Instant, HashMap<String, QueueEntry>)>>,
}

impl Cluster {
    /// Submit `script` (a path) with `options`; the job's id.
    pub async fn submit(
        &self,
        settings: &SlurmCluster,
        options: &[String],
        script: &std::path::Path,
    ) -> Result<String, ToolError> {
        let mut args: Vec<String> = vec!["--parsable".into(), "--export=NONE".into()];
        if let Some(account) = &settings.account {
            args.push(format!("--account={account}"));
        }
        args.extend(options.iter().cloned());
        args.push(script.display().to_string());
        let stdout = run(settings, "sbatch", &args).await?;
        // `--parsable` prints `id` or `id;cluster`.
        let id = stdout.trim().split(';').next().unwrap_or_default().to_owned();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("sbatch answered `{}`, not a job id", stdout.trim()),
            ));
        }
        // The next poll must see the new job.
        *self.queue.lock().await = None;
        Ok(id)
    }

    /// The job `id` as the scheduler still knows it (pending, running, or finished within the
    /// cluster's `MinJobAge`), or `None` once it forgot it.
    pub async fn status(
        &self,
        settings: &SlurmCluster,
        id: &str,
    ) -> Result<Option<QueueEntry>, ToolError> {
        let mut cache = self.queue.lock().await;
        let fresh = cache.as_ref().is_some_and(|(at, _)| at.elapsed() < QUEUE_FRESH);
        if !fresh {
            let args =
                ["--me", "--noheader", "--states=all", "--format=%i|%T|%M|%r"].map(str::to_owned);
            let stdout = run(settings, "squeue", &args).await?;
            let entries = stdout
                .lines()
                .filter_map(|line| {
                    let mut fields = line.trim().splitn(4, '|');
                    let id = fields.next()?.to_owned();
                    let state = fields.next()?.to_owned();
                    let used = fields.next().and_then(parse_elapsed);
                    let reason = fields.next().unwrap_or_default().to_owned();
                    Some((id, QueueEntry { state, reason, used }))
                })
                .collect();
            *cache = Some((Instant::now(), entries));
        }
        Ok(cache.as_ref().and_then(|(_, entries)| entries.get(id).cloned()))
    }

    /// Cancel the job `id`.
    pub async fn cancel(&self, settings: &SlurmCluster, id: &str) -> Result<(), ToolError> {
        run(settings, "scancel", &[id.to_owned()]).await?;
        *self.queue.lock().await = None;
        Ok(())
    }
}

/// `squeue`'s elapsed time: `S`, `M:SS`, `H:MM:SS` or `D-HH:MM:SS`.
fn parse_elapsed(text: &str) -> Option<Duration> {
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) => (days.parse::<u64>().ok()?, clock),
        None => (0, text),
    };
    let mut seconds = 0u64;
    for part in clock.split(':') {
        seconds = seconds.checked_mul(60)?.checked_add(part.parse().ok()?)?;
    }
    Some(Duration::from_secs(days * 86_400 + seconds))
}

/// Run a client command; its stdout, or an error with its stderr.
async fn run(settings: &SlurmCluster, program: &str, args: &[String]) -> Result<String, ToolError> {
    let found = match &settings.bin {
        Some(bin) => HostProgram::at(&PathBuf::from(bin).join(program)),
        None => HostProgram::find(program),
    };
    let program_path = found.map_err(|e| slurm_error(program, e.message))?;
    let mut env = HostEnv::empty().inherit(&["LANG", "HOME", "USER", "SLURM_CONF"]);
    if let Some(conf) = &settings.conf {
        env = env.set("SLURM_CONF", conf);
    }
    let mut command = host::async_command(&program_path, &env);
    command.args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let shown = program_path.path().display().to_string();
    let child = host::spawn(|| command.spawn())
        .map_err(|e| slurm_error(program, format!("cannot start `{shown}`: {e}")))?;
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .map_err(|_| slurm_error(program, "did not answer within 60 s".to_owned()))?
        .map_err(|e| slurm_error(program, format!("waiting for `{shown}`: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(slurm_error(program, format!("{}: {stderr}", output.status)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn slurm_error(program: &str, message: impl std::fmt::Display) -> ToolError {
    ToolError::new(ErrorCode::Internal, format!("slurm: {program} {message}"))
        .with_details(json!({ "engine": "slurm", "command": program }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times() {
        assert_eq!(parse_elapsed("0:05"), Some(Duration::from_secs(5)));
        assert_eq!(parse_elapsed("1:02:03"), Some(Duration::from_secs(3723)));
        assert_eq!(parse_elapsed("2-00:00:01"), Some(Duration::from_secs(172_801)));
        assert_eq!(parse_elapsed("INVALID"), None);
    }
}
