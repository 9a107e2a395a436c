//! What a batch job has printed so far, while it runs: the tail of the file its scheduler
//! writes the job's output to. Once the job is collected its whole log is an artifact.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use jig_policy::redact::redact_text;
use serde::Serialize;

use crate::jobs::{to_job, tool_of};
use crate::{Engine, EngineError};

/// How much of the end of a job's output is shown.
const TAIL: u64 = 64 * 1024;

/// The end of a running job's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JobLog {
    /// The last bytes of the output (at most 64 KiB), as text, secrets redacted.
    pub text: String,
    /// How large the output is now, in bytes.
    pub size: u64,
    /// Whether `text` starts after the output's beginning.
    pub truncated: bool,
}

impl Engine {
    /// What the open job of `request_id` has printed so far; `None` when the call has no open
    /// job (a collected job's log is among its artifacts) or its scheduler keeps no such file.
    pub async fn job_log(&self, request_id: &str) -> Result<Option<JobLog>, EngineError> {
        let Some(job) = self.store.job(request_id).await? else { return Ok(None) };
        if !job.open {
            return Ok(None);
        }
        let tool = tool_of(&job)?;
        let Some(path) = self.executors.for_tool(&tool).and_then(|e| e.job_log(&to_job(&job)))
        else {
            return Ok(None);
        };
        let read = tokio::task::spawn_blocking(move || tail(&path)).await;
        match read {
            Ok(Ok(log)) => Ok(Some(log)),
            Ok(Err(source)) => {
                Err(EngineError::JobLog { request_id: request_id.to_owned(), source })
            }
            Err(e) => Err(EngineError::JobLog {
                request_id: request_id.to_owned(),
                source: std::io::Error::other(e),
            }),
        }
    }
}

/// The last [`TAIL`] bytes of `path`; empty while the scheduler has not created it. A link is
/// refused rather than followed (the job's directory is the job's).
fn tail(path: &Path) -> std::io::Result<JobLog> {
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(JobLog { text: String::new(), size: 0, truncated: false });
        }
        Err(e) => return Err(e),
    };
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let size = metadata.len();
    let start = size.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(TAIL).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(JobLog { text: redact_text(&text).into_owned(), size, truncated: start > 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_end_of_the_output_and_a_link_is_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("slurm.log");
        assert_eq!(
            tail(&path).expect("none yet"),
            JobLog { text: String::new(), size: 0, truncated: false }
        );
        let long = format!("{}\nlast line\n", "x".repeat(100_000));
        fs_err::write(&path, &long).expect("write");
        let log = tail(&path).expect("tail");
        assert_eq!((log.size, log.truncated), (100_011, true));
        assert!(log.text.ends_with("x\nlast line\n"));
        assert_eq!(log.text.len(), 65_536);
        fs_err::write(&path, "token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\n").expect("write");
        assert!(!tail(&path).expect("tail").text.contains("ghp_0123"), "redacted");

        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink("/etc/passwd", &link).expect("link");
        assert!(tail(&link).is_err(), "a link is not followed");
    }
}
