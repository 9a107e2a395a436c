//! Which process runs a call, so that start-up recovery can tell a call abandoned by a dead
//! process from one that another live process is still running (32 `jig call` processes may
//! share one store; the one starting last must not fail the others' calls).
//!
//! An owner is `host/pid/start`, where `start` is the process's start time in clock ticks since
//! boot (`/proc/<pid>/stat` field 22): a pid reused by a later process does not look alive.

use std::sync::OnceLock;

/// Whether an owner still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The process is running.
    Alive,
    /// The process is gone (or the pid belongs to another process now).
    Dead,
    /// It ran on another host: only its deadline can tell.
    Unknown,
}

/// This process.
pub fn current() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        format!("{}/{pid}/{}", hostname(), start_time(pid).unwrap_or_default())
    })
}

/// Whether `owner` (as made by [`current`]) is alive.
pub fn liveness(owner: &str) -> Liveness {
    let mut parts = owner.rsplitn(3, '/');
    let (Some(start), Some(pid), Some(host)) = (parts.next(), parts.next(), parts.next()) else {
        return Liveness::Unknown;
    };
    if host != hostname() {
        return Liveness::Unknown;
    }
    let Ok(pid) = pid.parse::<u32>() else { return Liveness::Unknown };
    match start_time(pid) {
        Some(now) if now.to_string() == start => Liveness::Alive,
        _ => Liveness::Dead,
    }
}

fn hostname() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        fs_err::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty() && !h.contains('/'))
            .unwrap_or_else(|| "localhost".to_owned())
    })
}

/// Field 22 of `/proc/<pid>/stat`; the command name (field 2) may hold spaces and parentheses,
/// so fields are counted after its closing parenthesis.
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods, reason = "the test starts a process to see it end")]
    fn this_process_is_alive_and_a_dead_one_is_not() {
        assert_eq!(liveness(current()), Liveness::Alive);
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        let start = start_time(pid);
        child.wait().expect("wait");
        let owner = format!("{}/{pid}/{}", hostname(), start.unwrap_or(1));
        assert_eq!(liveness(&owner), Liveness::Dead);
        assert_eq!(liveness("elsewhere/1/1"), Liveness::Unknown);
        let wrong_start = format!("{}/{}/1", hostname(), std::process::id());
        assert_eq!(liveness(&wrong_start), Liveness::Dead, "a reused pid is not the owner");
    }
}
