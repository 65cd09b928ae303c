//! The state directory of one `league run`: where its referees and bots keep their identities
//! (`LEAGUE_STATE_DIR`) for as long as the run lasts, so that one the launcher starts again after it died
//! (crate::supervise) rejoins as the same agents instead of registering anew (a new bot would not be in
//! the league; its old self would stay enrolled and unreachable). Nothing in it outlives the run: the
//! next run has a new database, where those identities mean nothing. A run killed with SIGKILL cannot
//! remove its directory: the next run does, once no process has that run's pid.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;

/// A private directory under the system's temporary one, removed when dropped (after the services
/// stopped).
#[derive(Debug)]
pub struct RunStateDir {
    path: PathBuf,
}

impl RunStateDir {
    /// `league-run-<pid>-<nanoseconds>` under the temporary directory (made before the run's database, so
    /// that a failure leaves nothing behind). Readable by this user only: it holds the agents' tokens.
    pub fn create() -> anyhow::Result<RunStateDir> {
        remove_orphans(&std::env::temp_dir());
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let name = format!("{PREFIX}{}-{since_epoch}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("creating the run's state directory {}", path.display()))?;
        Ok(RunStateDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunStateDir {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(dir = %self.path.display(), %error, "cannot remove the run's state directory");
        }
    }
}

/// Removes the directories under `dir` of runs whose process is gone (killed: nobody removed them). A
/// pid taken since by another process keeps its directory until that one is gone too.
fn remove_orphans(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// How the directories of runs are named: `league-run-<pid>-<nanoseconds>`.
const PREFIX: &str = "league-run-";

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_directory_is_private_and_goes_with_the_run() {
        let dir = RunStateDir::create().expect("a state directory");
        let path = dir.path().to_owned();
        std::fs::write(path.join("token"), "secret").expect("writable");
        let mode = std::fs::metadata(&path).expect("it exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let other = RunStateDir::create().expect("another run's");
        assert_ne!(other.path(), path, "each run has its own");
        drop(other);
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn the_directory_of_a_killed_run_goes_and_a_live_ones_stays() {
        let temp = std::env::temp_dir().join(format!("league-run-orphans-{}", std::process::id()));
        let killed = temp.join(format!("{PREFIX}{}-1", i32::MAX));
        let live = temp.join(format!("{PREFIX}{}-1", std::process::id()));
        let other = temp.join("league-run-notes");
        for dir in [&killed, &live, &other] {
            std::fs::create_dir_all(dir.join("players")).expect("a directory");
        }
        remove_orphans(&temp);
        assert!(!killed.exists(), "no process has pid {}", i32::MAX);
        assert!(live.exists() && other.exists());
        std::fs::remove_dir_all(&temp).expect("cleaned up");
    }
}
