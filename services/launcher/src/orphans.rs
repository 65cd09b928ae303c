//! The services a killed `league serve` left behind. Its children are asked to stop when it dies
//! (children::die_with_parent), but a graceful stop takes seconds, and until they are gone they hold what
//! the next `league serve` needs: the gateway's address, the referees' and the player host's saved
//! identities (an instance is locked by its live process, runtime::saved). So `serve` notes each child it
//! starts in a file of its state directory (pid and start time: a pid alone may have been reused by an
//! unrelated process since), and the next `serve` kills whichever of them still runs and waits for them
//! to be gone before it starts anything.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::children::Service;

/// How long the orphans of a previous run have to disappear after SIGKILL.
const GONE_WITHIN: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

/// The file the children of one `league serve` are noted in.
#[derive(Debug, Clone)]
pub struct ChildrenFile {
    path: PathBuf,
}

impl ChildrenFile {
    pub fn new(state_dir: &Path) -> ChildrenFile {
        ChildrenFile {
            path: state_dir.join("children"),
        }
    }

    /// Kills every child noted by a previous run that still runs, waits until they are gone, and starts
    /// the file afresh. Returns how many were killed.
    pub async fn kill_previous(&self) -> anyhow::Result<usize> {
        let noted = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(error).with_context(|| format!("reading {}", self.path.display())),
        };
        let alive: Vec<(i32, u64, &str)> = noted
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let pid = fields.next()?.parse().ok()?;
                let started = fields.next()?.parse().ok()?;
                let name = fields.next().unwrap_or("a service");
                (start_time(pid) == Some(started)).then_some((pid, started, name))
            })
            .collect();
        for &(pid, _, name) in &alive {
            eprintln!("stopping {name} (pid {pid}), left running by a previous `league serve`");
            // The child leads its own process group: whatever it started goes too.
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let deadline = Instant::now() + GONE_WITHIN;
        for &(pid, started, name) in &alive {
            while start_time(pid) == Some(started) {
                anyhow::ensure!(
                    Instant::now() < deadline,
                    "{name} (pid {pid}) of a previous `league serve` did not exit within {GONE_WITHIN:?} of SIGKILL"
                );
                tokio::time::sleep(POLL).await;
            }
        }
        std::fs::write(&self.path, "").with_context(|| format!("clearing {}", self.path.display()))?;
        Ok(alive.len())
    }

    /// Notes a child just started.
    pub fn note(&self, service: &Service) -> anyhow::Result<()> {
        let Some(pid) = service.pid().and_then(|pid| i32::try_from(pid).ok()) else {
            return Ok(());
        };
        let Some(started) = start_time(pid) else {
            return Ok(());
        };
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.path)
            .with_context(|| format!("opening {}", self.path.display()))?;
        writeln!(file, "{pid} {started} {}", service.name)
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

/// When process `pid` started (clock ticks after boot, `/proc/<pid>/stat` field 22), if it runs and is
/// not a zombie (a zombie holds no address or lock any more).
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    // Field 3 was the state; field 22 is 19 further on.
    fields.nth(18)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_start_time_and_a_pid_that_runs_nothing_has_none() {
        let me = i32::try_from(std::process::id()).expect("a pid");
        assert!(start_time(me).is_some());
        assert_eq!(start_time(me), start_time(me));
        assert_eq!(start_time(i32::MAX), None);
    }
}
