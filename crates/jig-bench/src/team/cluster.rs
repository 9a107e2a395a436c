//! The team: one PostgreSQL database, N `jig serve` instances each on its own checkout of one
//! project, people in a `--users` file. An instance can be killed with SIGKILL and started
//! again on the same port and checkout, as an orchestrator would restart it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::process::{Child, Command};

/// The people: runners who call, approvers who decide.
pub const RUNNERS: usize = 8;
pub const APPROVERS: usize = 2;

pub fn runner(i: usize) -> (String, String) {
    (format!("runner{i}"), format!("runner-token-{i:02}-0123456789abcdef0123"))
}

pub fn approver(i: usize) -> (String, String) {
    (format!("approver{i}"), format!("approver-token-{i:02}-0123456789abcdef01"))
}

/// One instance of `jig serve`.
pub struct Instance {
    pub checkout: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl Instance {
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// SIGKILL, and wait for it to be gone.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }
}

/// The instances and what they share.
pub struct Cluster {
    pub jig: PathBuf,
    pub db: String,
    pub users: PathBuf,
    pub instances: Vec<Instance>,
}

impl Cluster {
    /// `count` instances of `jig` on `db`, each on a fresh checkout under `work`.
    pub async fn start(jig: &Path, db: &str, work: &Path, count: usize) -> anyhow::Result<Self> {
        let users = work.join("users.yaml");
        let mut text = String::from("users:\n");
        for i in 0..RUNNERS {
            let (name, token) = runner(i);
            text.push_str(&format!("  - {{ name: {name}, role: runner, token: {token} }}\n"));
        }
        for i in 0..APPROVERS {
            let (name, token) = approver(i);
            text.push_str(&format!("  - {{ name: {name}, role: approver, token: {token} }}\n"));
        }
        fs_err::write(&users, text)?;
        let mut cluster =
            Self { jig: jig.to_path_buf(), db: db.to_owned(), users, instances: Vec::new() };
        for i in 0..count {
            let checkout = work.join(format!("checkout-{i}"));
            checkout_project(&checkout)?;
            let port = free_port()?;
            cluster.instances.push(Instance { checkout, port, child: None });
            cluster.launch(i).await?;
        }
        Ok(cluster)
    }

    /// Start instance `i` (again), and wait until it answers.
    pub async fn launch(&mut self, i: usize) -> anyhow::Result<()> {
        let instance = &mut self.instances[i];
        let child = Command::new(&self.jig)
            .arg("--project")
            .arg(&instance.checkout)
            .args(["--db", &self.db, "serve", "--addr"])
            .arg(instance.addr())
            .arg("--users")
            .arg(&self.users)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", self.jig.display()))?;
        instance.child = Some(child);
        let addr = instance.addr();
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(&addr).await.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("instance {i} on {addr} did not answer within 10 s")
    }

    /// Stop every instance.
    pub async fn stop(&mut self) {
        for instance in &mut self.instances {
            instance.kill().await;
        }
    }
}

/// The project every instance serves: a small file to read (allowed), and writes that need a
/// reviewer who is not the asker.
fn checkout_project(root: &Path) -> anyhow::Result<()> {
    fs_err::create_dir_all(root.join("out"))?;
    fs_err::write(
        root.join("jig.yaml"),
        "name: team-bench\npolicy:\n  rules:\n    - { tools: [file_write], action: require-approval }\n    \
         - { tools: [file_read], action: allow }\n  approvals: { self_approval: false, ttl_seconds: 3600 }\n",
    )?;
    fs_err::write(root.join("note.txt"), "thirteen bytes")?;
    Ok(())
}

fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}
