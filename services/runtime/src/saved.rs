//! Identities kept on disk, so that an agent that restarts (after a crash, a SIGTERM, a new container on
//! the same volume, a new port) proves its previous token and resumes its identity instead of
//! registering as a new agent (ADR 0013, ADR 0040).
//!
//! Under the state directory (`LEAGUE_STATE_DIR`) each process takes one *instance* directory named after
//! it (a referee's name, the player host's name), and keeps there one file per agent it runs, named after
//! the agent (`referee.json`, `bot-01.json`), holding the id and token the manager issued. Identities
//! follow names, never addresses: a service that comes back on another port, or in a new container, finds
//! them where it left them.
//!
//! The instance directory is locked (`flock` on its `lock` file) for as long as the process lives, so two
//! processes never share one: a second process asking for a taken name gets `<name>-2` (then `-3`, …),
//! which is how replicas of one service with one configuration (compose `--scale`) each keep their own
//! identity across recreations. The lock goes with the process, however it ends.
//!
//! A file is written whole to a temporary file and renamed over the old one, so a crash mid-write leaves
//! the previous version; it is readable by its owner only, since the token in it is a secret.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use nix::fcntl::{Flock, FlockArg};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::Credentials;

/// How many instances of one name a state directory holds (`<name>`, `<name>-2` … `<name>-64`).
const MAX_INSTANCES: u32 = 64;
/// Names become file names: letters, digits, `-`, `_` and `.`, not starting with a dot.
const MAX_NAME: usize = 64;

/// One process's instance directory, locked while the process lives.
#[derive(Debug)]
pub struct SavedIdentities {
    dir: PathBuf,
    name: String,
    _lock: Flock<File>,
}

/// One agent as written to disk.
#[derive(Serialize, Deserialize)]
struct Saved {
    agent_id: String,
    token: String,
}

impl SavedIdentities {
    /// Takes the instance directory `<state_dir>/<name>`, or the first of `<name>-2`, `<name>-3`, … no
    /// other live process holds; creates it if needed.
    pub fn claim(state_dir: &Path, name: &str) -> anyhow::Result<SavedIdentities> {
        check_name("instance name", name)?;
        for n in 1..=MAX_INSTANCES {
            let candidate = if n == 1 {
                name.to_owned()
            } else {
                format!("{name}-{n}")
            };
            let dir = state_dir.join(&candidate);
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let lock_path = dir.join("lock");
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o600)
                .open(&lock_path)
                .with_context(|| format!("opening {}", lock_path.display()))?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => {
                    if n > 1 {
                        tracing::info!(instance = %candidate, "instance {name} is taken by a live process; using {candidate}");
                    }
                    return Ok(SavedIdentities {
                        dir,
                        name: candidate,
                        _lock: lock,
                    });
                }
                Err((_, nix::errno::Errno::EWOULDBLOCK)) => continue,
                Err((_, errno)) => {
                    return Err(errno).with_context(|| format!("locking {}", lock_path.display()));
                }
            }
        }
        anyhow::bail!(
            "{MAX_INSTANCES} instances named {name} are running under {} already",
            state_dir.display()
        )
    }

    /// The instance's name: the one asked for, or `<name>-<n>` when that was taken.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, agent: &str) -> anyhow::Result<PathBuf> {
        check_name("agent name", agent)?;
        Ok(self.dir.join(format!("{agent}.json")))
    }

    /// The saved identity of agent `agent`, if any.
    pub fn load(&self, agent: &str) -> anyhow::Result<Option<Credentials>> {
        let path = self.path(agent)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
        };
        let saved: Saved =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        Ok(Some(Credentials::new(saved.agent_id, saved.token)))
    }

    /// Keeps `credentials` as agent `agent`'s identity (replacing what was kept).
    pub fn save(&self, agent: &str, credentials: &Credentials) -> anyhow::Result<()> {
        let path = self.path(agent)?;
        let text = serde_json::to_string_pretty(&Saved {
            agent_id: credentials.agent_id.clone(),
            token: credentials.token.expose_secret().to_owned(),
        })?;
        let temporary = path.with_extension("json.tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .with_context(|| format!("writing {}", temporary.display()))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .with_context(|| format!("writing {}", temporary.display()))?;
        std::fs::rename(&temporary, &path).with_context(|| format!("replacing {}", path.display()))?;
        Ok(())
    }
}

/// Refuses a name that would not be one plain file name.
fn check_name(what: &str, name: &str) -> anyhow::Result<()> {
    let plain = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    anyhow::ensure!(
        plain,
        "{what} {name:?} must be 1 to {MAX_NAME} letters, digits, '-', '_' or '.', not starting with '.'"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn state_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("league-saved-{test}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        dir
    }

    #[test]
    fn identities_round_trip_by_name_and_only_the_owner_reads_them() {
        let dir = state_dir("round-trip");
        let saved = SavedIdentities::claim(&dir, "players").expect("claimed");
        assert!(saved.load("bot-01").expect("nothing saved yet").is_none());
        saved
            .save("bot-01", &Credentials::new("P01", "a".repeat(64)))
            .expect("saved");
        saved
            .save("bot-02", &Credentials::new("P02", "b".repeat(64)))
            .expect("saved");
        let loaded = saved.load("bot-02").expect("loaded").expect("kept");
        assert_eq!(loaded.agent_id, "P02");
        assert_eq!(loaded.token.expose_secret(), &"b".repeat(64));
        let mode = std::fs::metadata(dir.join("players/bot-01.json"))
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(dir.join("players/bot-01.json"), "not json").expect("overwrite");
        assert!(
            saved.load("bot-01").is_err(),
            "a damaged file is an error, not a missing one"
        );
        for bad in ["", "../x", ".hidden", "a/b", "bot 1"] {
            assert!(saved.load(bad).is_err(), "{bad:?}");
            assert!(SavedIdentities::claim(&dir, bad).is_err(), "{bad:?}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_taken_instance_gives_the_next_name_and_is_free_again_once_released() {
        let dir = state_dir("instances");
        let first = SavedIdentities::claim(&dir, "referee").expect("claimed");
        first
            .save("referee", &Credentials::new("REF01", "a".repeat(64)))
            .expect("saved");
        let second = SavedIdentities::claim(&dir, "referee").expect("claimed");
        assert_eq!((first.name(), second.name()), ("referee", "referee-2"));
        assert!(second.load("referee").expect("read").is_none());
        drop(first);
        let again = SavedIdentities::claim(&dir, "referee").expect("claimed");
        assert_eq!(again.name(), "referee");
        assert_eq!(
            again.load("referee").expect("read").expect("kept").agent_id,
            "REF01"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
