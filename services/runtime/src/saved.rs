//! Credentials kept on disk, so that an agent that restarts (after a crash, a SIGTERM, a new container
//! on the same volume) proves its previous token and resumes its identity instead of being refused as
//! a duplicate of itself (ADR 0013).
//!
//! One JSON file per process under the configured state directory (`LEAGUE_STATE_DIR`), holding, per
//! contact endpoint, the agent id and token the manager issued. The file is written whole to a temporary
//! file and renamed over the old one, so a crash mid-write leaves the previous version; it is readable by
//! its owner only, since the tokens in it are secrets.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::Credentials;

/// The saved credentials of one process's agents, by contact endpoint.
#[derive(Debug, Clone)]
pub struct SavedCredentials {
    path: PathBuf,
}

/// One agent as written to disk.
#[derive(Serialize, Deserialize)]
struct Saved {
    agent_id: String,
    token: String,
}

impl SavedCredentials {
    /// The file `<name>.json` in `state_dir` (created when first saved).
    pub fn new(state_dir: &Path, name: &str) -> SavedCredentials {
        SavedCredentials {
            path: state_dir.join(format!("{name}.json")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every saved agent, by contact endpoint; empty when nothing was saved yet.
    pub fn load(&self) -> anyhow::Result<BTreeMap<String, Credentials>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(error) => {
                return Err(error).with_context(|| format!("reading {}", self.path.display()));
            }
        };
        let saved: BTreeMap<String, Saved> =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", self.path.display()))?;
        Ok(saved
            .into_iter()
            .map(|(endpoint, saved)| (endpoint, Credentials::new(saved.agent_id, saved.token)))
            .collect())
    }

    /// Replaces the saved agents with `agents` (contact endpoint, credentials).
    pub fn save<'a>(
        &self,
        agents: impl IntoIterator<Item = (&'a str, &'a Credentials)>,
    ) -> anyhow::Result<()> {
        let saved: BTreeMap<&str, Saved> = agents
            .into_iter()
            .map(|(endpoint, credentials)| {
                let saved = Saved {
                    agent_id: credentials.agent_id.clone(),
                    token: credentials.token.expose_secret().to_owned(),
                };
                (endpoint, saved)
            })
            .collect();
        let text = serde_json::to_string_pretty(&saved)?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let temporary = self.path.with_extension("json.tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .with_context(|| format!("writing {}", temporary.display()))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &self.path)
            .with_context(|| format!("replacing {}", self.path.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn credentials_round_trip_and_only_the_owner_reads_them() {
        let dir = std::env::temp_dir().join(format!("league-saved-{}", std::process::id()));
        let saved = SavedCredentials::new(&dir, "referee");
        assert!(saved.load().expect("nothing saved yet").is_empty());
        let first = Credentials::new("REF01", "a".repeat(64));
        saved.save([("http://ref:50052", &first)]).expect("saved");
        let second = Credentials::new("REF02", "b".repeat(64));
        saved
            .save([("http://ref:50052", &first), ("http://other:50052", &second)])
            .expect("saved again");
        let loaded = saved.load().expect("loaded");
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded["http://ref:50052"].agent_id, "REF01");
        assert_eq!(
            loaded["http://other:50052"].token.expose_secret(),
            &"b".repeat(64)
        );
        let mode = std::fs::metadata(saved.path())
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(saved.path(), "not json").expect("overwrite");
        assert!(
            saved.load().is_err(),
            "a damaged file is an error, not an empty one"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
