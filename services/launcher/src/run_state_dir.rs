//! The state directory of one `league run`: where its referees and bots keep their identities
//! (`LEAGUE_STATE_DIR`) for as long as the run lasts, so that one the launcher starts again after it died
//! (crate::supervise) rejoins as the same agents instead of registering anew (a new bot would not be in
//! the league; its old self would stay enrolled and unreachable). Nothing in it outlives the run: the
//! next run has a new database, where those identities mean nothing.

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
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let name = format!("league-run-{}-{since_epoch}", std::process::id());
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
        drop(dir);
        assert!(!path.exists());
    }
}
