//! Child processes of `league run`: the same binary started as each service, with its configuration in
//! the environment. A child says it is ready by printing `LEAGUE_READY <service> <url>` on stdout, so
//! the launcher waits for that line rather than for a guessed amount of time. Just before it, a service
//! with an admin server prints `LEAGUE_ADMIN <service> <url>` (metrics, health, readiness).
//!
//! Children die with whoever started them, whatever kills it: each runs in its own process group (a
//! Ctrl-C at the terminal reaches only the launcher, which then stops them in order and waits for them),
//! and each asks the kernel for SIGTERM when its parent dies ([`die_with_parent`]), which covers a
//! SIGKILLed launcher that stops nothing.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The variable that tells a child its parent's pid, so that it can die with it.
pub const PARENT_PID_VAR: &str = "LEAGUE_PARENT_PID";

/// In a process started by [`start_program`]: asks the kernel to send SIGTERM (a graceful shutdown)
/// when the parent dies. Elsewhere it does nothing.
///
/// The kernel sends it when the parent *thread* that spawned us exits; the launcher spawns from its
/// runtime's worker threads, which live as long as the run. A parent that died before the request was
/// made cannot be noticed by the kernel any more, hence the check of who the parent is now.
pub fn die_with_parent() -> anyhow::Result<()> {
    let Ok(expected) = std::env::var(PARENT_PID_VAR) else {
        return Ok(());
    };
    let expected: i32 = expected
        .parse()
        .with_context(|| format!("{PARENT_PID_VAR} is not a process id: {expected:?}"))?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).context("asking to die with the launcher")?;
    let parent = nix::unistd::getppid().as_raw();
    anyhow::ensure!(
        parent == expected,
        "the process that started this one (pid {expected}) has already exited"
    );
    Ok(())
}

/// A running service process.
#[derive(Debug)]
pub struct Service {
    pub name: String,
    pub url: String,
    /// Where its admin server answers `/metrics`, `/healthz` and `/readyz`, if it announced one.
    pub admin_url: Option<String>,
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
    start_program(&exe, name, subcommand, env, ready_within, Stdio::inherit()).await
}

/// [`start`] for a given `league` binary (tests start `CARGO_BIN_EXE_league`), its logs (stderr) going
/// to `stderr`.
pub async fn start_program(
    program: &std::path::Path,
    name: &str,
    subcommand: &str,
    env: &[(String, String)],
    ready_within: Duration,
    stderr: Stdio,
) -> anyhow::Result<Service> {
    let mut command = Command::new(program);
    // Unknown LEAGUE_* variables were warned about once, by the launcher: not again by every child.
    for (name, _) in std::env::vars() {
        if league_runtime::config::is_unknown(&name) {
            command.env_remove(name);
        }
    }
    let mut child = command
        .arg(subcommand)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .env(PARENT_PID_VAR, std::process::id().to_string())
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {name}"))?;
    let stdout = child.stdout.take().context("child stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut admin_url = None;
    let url = tokio::time::timeout(ready_within, async {
        while let Some(line) = lines.next_line().await? {
            if let Some((_, url)) = line
                .strip_prefix("LEAGUE_ADMIN ")
                .and_then(|rest| rest.split_once(' '))
            {
                admin_url = Some(url.to_owned());
            }
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
        admin_url,
        child,
    })
}

impl Service {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The most memory the process has held so far (VmHWM, in KiB; Linux only).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        peak_rss_kib(self.child.id()?)
    }

    /// Waits for the process to exit, however it does (cancel-safe: the supervisor races it with a
    /// stop).
    pub async fn exited(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// SIGKILL, as a crash would (nothing runs after it), and the exit reaped.
    pub async fn kill(&mut self) -> anyhow::Result<std::process::ExitStatus> {
        self.child
            .start_kill()
            .with_context(|| format!("killing {}", self.name))?;
        Ok(self.child.wait().await?)
    }

    /// SIGTERM, then waits up to `within` for the process to exit on its own (SIGKILL and an error if it
    /// does not): the exit status of a graceful shutdown.
    pub async fn terminate(&mut self, within: Duration) -> anyhow::Result<std::process::ExitStatus> {
        let pid = self
            .child
            .id()
            .with_context(|| format!("{} has already exited", self.name))?;
        signal_group(pid, Signal::SIGTERM).with_context(|| format!("cannot signal {}", self.name))?;
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(exited) => Ok(exited?),
            Err(_) => {
                let _ = self.child.kill().await;
                anyhow::bail!("{} did not exit within {within:?} of SIGTERM", self.name)
            }
        }
    }

    /// SIGTERM, then up to `grace` for a clean exit, then SIGKILL.
    pub async fn stop(mut self, grace: Duration) {
        if let Some(pid) = self.child.id() {
            let _ = signal_group(pid, Signal::SIGTERM);
        }
        if tokio::time::timeout(grace, self.child.wait()).await.is_err() {
            tracing::warn!(service = %self.name, "did not stop in time; killing");
            let _ = self.child.kill().await;
        }
    }
}

/// The most memory process `pid` has held so far (VmHWM, in KiB; Linux only).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The CPU time process `pid` has used so far, user and system, from `/proc/<pid>/stat` (Linux only;
/// any process of this machine whose stat can be read, such as a Postgres backend).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    cpu_time_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The CPU time a `/proc/<pid>/stat` line says its process has used.
fn cpu_time_in(stat: &str) -> Option<Duration> {
    // The command name (field 2) is in parentheses and may hold spaces: fields count from after it,
    // where field 3 (the state) comes first; utime and stime are fields 14 and 15.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let ticks: u64 = fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?;
    // Clock ticks of USER_HZ, which Linux's ABI fixes at 100 a second whatever the kernel's HZ.
    Some(Duration::from_millis(ticks * 10))
}

/// Signals a child's whole process group (the child leads it), so whatever it started goes too.
fn signal_group(pid: u32, signal: Signal) -> nix::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| nix::errno::Errno::ESRCH)?;
    killpg(Pid::from_raw(pid), signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_user_and_system_ticks_after_a_command_name_with_spaces_and_parentheses() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
        let stat = "4242 (tokio (rt) worker) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 37 0 0 20 0 2 0";
        assert_eq!(cpu_time_in(stat), Some(Duration::from_millis(2_870)));
        assert_eq!(cpu_time_in("4242 (cut short) S 1 2"), None);
    }

    #[test]
    fn a_process_that_works_is_seen_using_cpu() {
        let before = cpu_time(std::process::id()).expect("this process's stat");
        // Work until a tick (10 ms) more shows, for at most 5 s of wall time.
        let clock = std::time::Instant::now();
        let mut sum = 0u64;
        let mut now = before;
        while now <= before && clock.elapsed() < Duration::from_secs(5) {
            for n in 0..100_000u64 {
                sum = sum.wrapping_add(std::hint::black_box(n));
            }
            now = cpu_time(std::process::id()).expect("this process's stat");
        }
        assert!(
            now > before,
            "no CPU time seen after {:?} of work ({sum})",
            clock.elapsed()
        );
        assert_eq!(cpu_time(u32::MAX), None, "no such process");
    }
}
