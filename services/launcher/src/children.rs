//! Child processes of `league run`: the same binary started as each service, with its configuration in
//! the environment. A child says it is ready by printing `LEAGUE_READY <service> <url>` on stdout, so
//! the launcher waits for that line rather than for a guessed amount of time.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running service process.
#[derive(Debug)]
pub struct Service {
    pub name: String,
    pub url: String,
    child: Child,
}

/// Starts `league <subcommand>` with `env` and waits until it announces its address.
pub async fn start(
    name: &str,
    subcommand: &str,
    env: &[(String, String)],
    ready_within: Duration,
) -> anyhow::Result<Service> {
    let exe = std::env::current_exe().context("locating the league binary")?;
    let mut child = Command::new(exe)
        .arg(subcommand)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {name}"))?;
    let stdout = child.stdout.take().context("child stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let url = tokio::time::timeout(ready_within, async {
        while let Some(line) = lines.next_line().await? {
            if let Some((_, url)) = line
                .strip_prefix("LEAGUE_READY ")
                .and_then(|rest| rest.split_once(' '))
            {
                return Ok(url.to_owned());
            }
        }
        anyhow::bail!("{name} exited before it was ready")
    })
    .await
    .with_context(|| format!("{name} was not ready within {ready_within:?}"))??;
    // Keep draining stdout so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Service {
        name: name.to_owned(),
        url,
        child,
    })
}

impl Service {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The most memory the process has held so far (VmHWM, in KiB; Linux only).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// SIGTERM, then up to `grace` for a clean exit, then SIGKILL.
    pub async fn stop(mut self, grace: Duration) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status()
                .await;
        }
        if tokio::time::timeout(grace, self.child.wait()).await.is_err() {
            tracing::warn!(service = %self.name, "did not stop in time; killing");
            let _ = self.child.kill().await;
        }
    }
}
