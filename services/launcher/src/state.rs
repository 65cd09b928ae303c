//! Where a running `league run` or `league serve` is, for the operator commands on the same machine:
//! a small JSON file (`.league/state.json`, or `LEAGUE_STATE_FILE`) naming the manager, the gateway
//! and the database, and beside it the operator token in a file only this user can read (mode 0600).
//! Both go when the run stops.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// Where the state file is unless `LEAGUE_STATE_FILE` says otherwise.
pub const DEFAULT_STATE_FILE: &str = ".league/state.json";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct State {
    pub manager_url: String,
    pub gateway_url: String,
    pub operator_token_file: PathBuf,
    pub database: String,
    /// The league the run plays or the server opened first.
    pub league_id: String,
    /// The launcher that wrote it (only it removes the file).
    pub pid: u32,
}

pub fn state_file() -> PathBuf {
    std::env::var_os("LEAGUE_STATE_FILE").map_or_else(|| PathBuf::from(DEFAULT_STATE_FILE), PathBuf::from)
}

impl State {
    /// The state of the run on this machine, if one runs (a file left by a launcher that was killed
    /// is ignored).
    pub fn read() -> anyhow::Result<Option<Self>> {
        let path = state_file();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let state: State =
                    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
                let alive = Path::new(&format!("/proc/{}", state.pid)).exists();
                Ok(alive.then_some(state))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// The operator token the run wrote.
    pub fn operator_token(&self) -> anyhow::Result<SecretString> {
        let token = std::fs::read_to_string(&self.operator_token_file)
            .with_context(|| format!("reading {}", self.operator_token_file.display()))?;
        Ok(SecretString::from(token.trim().to_owned()))
    }

    /// Writes the state file and the token file; they go when the guard is dropped.
    pub fn publish(
        manager_url: &str,
        gateway_url: &str,
        database: &str,
        league_id: &str,
        token: &SecretString,
    ) -> anyhow::Result<Published> {
        let path = state_file();
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let token_file = path.with_extension("token");
        write_private(&token_file, token.expose_secret().as_bytes())?;
        let state = State {
            manager_url: manager_url.to_owned(),
            gateway_url: gateway_url.to_owned(),
            operator_token_file: token_file.canonicalize().unwrap_or(token_file),
            database: database.to_owned(),
            league_id: league_id.to_owned(),
            pid: std::process::id(),
        };
        write_private(&path, serde_json::to_string_pretty(&state)?.as_bytes())?;
        Ok(Published { path, state })
    }
}

/// The published state of this run; dropping it removes the files, unless another run has since
/// written its own.
#[derive(Debug)]
pub struct Published {
    path: PathBuf,
    pub state: State,
}

impl Drop for Published {
    fn drop(&mut self) {
        let ours = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str::<State>(&text).ok())
            .is_some_and(|state| state.pid == self.state.pid);
        if ours {
            let _ = std::fs::remove_file(&self.path);
            let _ = std::fs::remove_file(&self.state.operator_token_file);
        }
    }
}

/// Writes `contents` to `path`, readable and writable by this user only (mode 0600 from creation on).
fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(contents)
        .with_context(|| format!("writing {}", path.display()))
}
