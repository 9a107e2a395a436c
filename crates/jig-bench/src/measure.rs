//! Timing: cold loads in child processes, reloads in process.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use jig_load::Loader;

/// Timings of repeated runs.
pub struct Timings {
    pub samples: Vec<Duration>,
    pub peak_rss_kib: u64,
    pub dropped_cache: bool,
}

impl Timings {
    fn sorted(&self) -> Vec<Duration> {
        let mut samples = self.samples.clone();
        samples.sort();
        samples
    }

    pub fn summary(&self) -> String {
        let s = self.sorted();
        format!("{} ({}–{})", ms(s[s.len() / 2]), ms(s[0]), ms(s[s.len() - 1]))
    }

    pub fn summary_with_p95(&self) -> String {
        let s = self.sorted();
        let p95 = s[((s.len() as f64 * 0.95).ceil() as usize).saturating_sub(1)];
        format!("{} ({})", ms(s[s.len() / 2]), ms(p95))
    }
}

fn ms(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.0} ms", d.as_secs_f64() * 1e3)
    }
}

/// Load `dir` once in a fresh process, `runs` times; with `drop_cache`, drop the page cache
/// before each run (when the OS allows it; `dropped_cache` says whether it did).
pub fn cold_loads(dir: &Path, runs: usize, drop_cache: bool) -> anyhow::Result<Timings> {
    let mut samples = Vec::new();
    let mut peak_rss_kib = 0;
    let mut dropped_cache = drop_cache;
    for _ in 0..runs {
        if drop_cache {
            dropped_cache &= drop_page_cache();
        }
        let output =
            Command::new(std::env::current_exe()?).arg("--child-load").arg(dir).output()?;
        anyhow::ensure!(
            output.status.success(),
            "child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout)?;
        let mut fields = text.split_whitespace();
        let micros: u64 = fields.next().unwrap_or_default().parse()?;
        let rss: u64 = fields.next().unwrap_or_default().parse()?;
        samples.push(Duration::from_micros(micros));
        peak_rss_kib = peak_rss_kib.max(rss);
    }
    Ok(Timings { samples, peak_rss_kib, dropped_cache })
}

/// In the child: one load, then print `<microseconds> <peak RSS KiB>`.
pub fn child_load(dir: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let snapshot = Loader::new(dir).load().map_err(|f| anyhow::anyhow!("{f}"))?;
    let elapsed = started.elapsed();
    anyhow::ensure!(!snapshot.is_empty());
    println!("{} {}", elapsed.as_micros(), peak_rss_kib());
    // The process ends here; freeing the snapshot would only be measured noise.
    std::mem::forget(snapshot);
    Ok(())
}

/// Load once, then edit one tool file `runs` times, timing each `reload`.
pub fn reloads(dir: &Path, runs: usize) -> anyhow::Result<Timings> {
    let mut loader = Loader::new(dir);
    loader.load().map_err(|f| anyhow::anyhow!("{f}"))?;
    let path = dir.join("packages/p0/tools/t0.tool.yaml");
    let original = fs_err::read_to_string(&path)?;
    let mut samples = Vec::new();
    for run in 0..runs {
        let edited = original.replace("timeoutMs: 1000", &format!("timeoutMs: {}", 2000 + run));
        fs_err::write(&path, edited)?;
        let started = Instant::now();
        let snapshot =
            loader.reload(std::slice::from_ref(&path)).map_err(|f| anyhow::anyhow!("{f}"))?;
        samples.push(started.elapsed());
        anyhow::ensure!(snapshot.get("p0.tool_0").map(|t| t.timeout_ms) == Some(2000 + run as u64));
    }
    Ok(Timings { samples, peak_rss_kib: 0, dropped_cache: false })
}

fn drop_page_cache() -> bool {
    // Needs root; without it the measurement is of a warm page cache, and the table says so.
    let synced = Command::new("sync").status().is_ok_and(|s| s.success());
    synced && fs_err::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

fn peak_rss_kib() -> u64 {
    fs_err::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")
                    .map(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            })
        })
        .flatten()
        .unwrap_or(0)
}
