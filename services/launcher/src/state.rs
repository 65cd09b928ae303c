//! Where a running `league run` or `league serve` is, for the operator commands on the same machine:
//! a small JSON file naming the manager, the gateway and the database, and beside it the operator token
//! in a file only this user can read (mode 0600). Both go when the run stops. The file is the user's,
//! not the folder's (ADR 0048): `$XDG_STATE_HOME/league/state.json`, else
//! `~/.local/state/league/state.json`, so that the commands find a running system from any folder;
//! `LEAGUE_STATE_FILE` puts it elsewhere (the tests give each system a file of its own).
//!
//! `league serve` owns that file; each `league run` writes one of its own beside it
//! (`state.run-<pid>.json`), so that several runs and a serve may be up at once and none loses another
//! (a finished run used to delete serve's file). The commands ask serve unless `LEAGUE_SYSTEM` says
//! otherwise (`run`: the newest run; `run-<pid>`: that run), a run when no serve is up, and say on
//! stderr which one they ask. Each file is written under a name of its own and renamed into place, so
//! it is always whole, and the token file it names (`state.<pid>.token`) is that system's token.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// Where the state file is when there is no home directory to keep it in (a service account).
pub const HOMELESS_STATE_FILE: &str = ".league/state.json";

/// Which kind of launcher wrote a state file.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum System {
    #[default]
    Serve,
    Run,
}

impl System {
    pub fn command(self) -> &'static str {
        match self {
            System::Serve => "league serve",
            System::Run => "league run",
        }
    }
}

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
    /// `league serve`'s or a `league run`'s (files written before there were both: serve's).
    #[serde(default)]
    pub system: System,
}

/// The state file: `LEAGUE_STATE_FILE`, else the user's (see the module's documentation).
pub fn state_file() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
    locate(var("LEAGUE_STATE_FILE"), var("XDG_STATE_HOME"), var("HOME"))
}

/// [`state_file`] from the variables it reads. Empty variables count as unset, and so does a relative
/// `XDG_STATE_HOME` (the XDG Base Directory specification says to ignore one).
fn locate(state_file: Option<PathBuf>, xdg_state_home: Option<PathBuf>, home: Option<PathBuf>) -> PathBuf {
    let set = |path: Option<PathBuf>| path.filter(|path| !path.as_os_str().is_empty());
    if let Some(file) = set(state_file) {
        return file;
    }
    let state_home = set(xdg_state_home)
        .filter(|dir| dir.is_absolute())
        .or_else(|| set(home).map(|home| home.join(".local").join("state")));
    match state_home {
        Some(dir) => dir.join("league").join("state.json"),
        None => PathBuf::from(HOMELESS_STATE_FILE),
    }
}

/// The state file of `league run` `pid`, beside serve's: `<stem>.run-<pid>.json`.
fn run_file(serve_file: &Path, pid: u32) -> PathBuf {
    let stem = serve_file
        .file_stem()
        .map_or_else(|| "state".into(), |stem| stem.to_string_lossy());
    serve_file.with_file_name(format!("{stem}.run-{pid}.json"))
}

/// The pid of the run whose state file is named `name`, if it is one (see [`run_file`]).
fn run_pid(stem: &str, name: &str) -> Option<u32> {
    name.strip_prefix(stem)?
        .strip_prefix(".run-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Which system a command asks (`LEAGUE_SYSTEM`): serve, else a run; `serve` only; the newest `run`;
/// `run-<pid>` that run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    ServeElseRun,
    Serve,
    NewestRun,
    Run(u32),
}

impl Choice {
    fn parse(value: Option<&str>) -> anyhow::Result<Choice> {
        let value = value.map(str::trim).unwrap_or_default();
        match value {
            "" => Ok(Choice::ServeElseRun),
            "serve" => Ok(Choice::Serve),
            "run" => Ok(Choice::NewestRun),
            other => other
                .strip_prefix("run-")
                .and_then(|pid| pid.parse().ok())
                .map(Choice::Run)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "LEAGUE_SYSTEM={other:?}: say serve, run (the newest league run) or run-<pid>"
                    )
                }),
        }
    }
}

impl State {
    /// The system a command asks, if one runs (see the module's documentation; files left by a
    /// launcher that was killed are ignored).
    pub fn read() -> anyhow::Result<Option<Self>> {
        let choice = Choice::parse(std::env::var("LEAGUE_SYSTEM").ok().as_deref())?;
        let path = state_file();
        let serve = || read_file(&path);
        match choice {
            Choice::Serve => serve(),
            Choice::Run(pid) => read_file(&run_file(&path, pid)),
            Choice::NewestRun => newest_run(&path),
            Choice::ServeElseRun => match serve()? {
                Some(state) => Ok(Some(state)),
                None => newest_run(&path),
            },
        }
    }

    /// The system in words, for a command to say which one it asks.
    pub fn describe(&self) -> String {
        format!(
            "`{}` (pid {}, manager {}, league {})",
            self.system.command(),
            self.pid,
            self.manager_url,
            self.league_id
        )
    }

    /// The operator token the run wrote.
    pub fn operator_token(&self) -> anyhow::Result<SecretString> {
        let token = std::fs::read_to_string(&self.operator_token_file)
            .with_context(|| format!("reading {}", self.operator_token_file.display()))?;
        Ok(SecretString::from(token.trim().to_owned()))
    }

    /// Writes the state file of `system` and the token file; they go when the guard is dropped.
    pub fn publish(
        system: System,
        manager_url: &str,
        gateway_url: &str,
        database: &str,
        league_id: &str,
        token: &SecretString,
    ) -> anyhow::Result<Published> {
        let serve_file = state_file();
        let path = match system {
            System::Serve => serve_file.clone(),
            System::Run => run_file(&serve_file, std::process::id()),
        };
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        remove_stale_files(&serve_file);
        let token_file = serve_file.with_extension(format!("{}.token", std::process::id()));
        write_private(&token_file, token.expose_secret().as_bytes())?;
        let state = State {
            manager_url: manager_url.to_owned(),
            gateway_url: gateway_url.to_owned(),
            operator_token_file: token_file.canonicalize().unwrap_or(token_file),
            database: database.to_owned(),
            league_id: league_id.to_owned(),
            pid: std::process::id(),
            system,
        };
        write_private(&path, serde_json::to_string_pretty(&state)?.as_bytes())?;
        Ok(Published { path, state })
    }
}

/// The published state of this run; dropping it removes its token file, and the state file unless
/// another run has since written its own.
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
        }
        let _ = std::fs::remove_file(&self.state.operator_token_file);
    }
}

/// The state in the file at `path`, if its launcher lives.
fn read_file(path: &Path) -> anyhow::Result<Option<State>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let state: State =
                serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
            Ok(alive(state.pid).then_some(state))
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

/// The live `league run` that started last (the highest pid but for wrap-around: its file's time
/// decides), beside serve's file `path`.
fn newest_run(path: &Path) -> anyhow::Result<Option<State>> {
    let (Some(stem), Some(dir)) = (path.file_stem().and_then(|stem| stem.to_str()), path.parent()) else {
        return Ok(None);
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut runs = vec![];
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().and_then(|name| run_pid(stem, name)).is_none() {
            continue;
        }
        let written = entry.metadata().and_then(|meta| meta.modified()).ok();
        if let Some(state) = read_file(&entry.path())? {
            runs.push((written, state));
        }
    }
    Ok(runs
        .into_iter()
        .max_by_key(|(written, _)| *written)
        .map(|(_, state)| state))
}

/// Removes the token files and run state files beside `path` of launchers that no longer live (a
/// killed launcher cannot remove its own), so that they do not pile up.
fn remove_stale_files(path: &Path) {
    let (Some(stem), Some(dir)) = (path.file_stem().and_then(|stem| stem.to_str()), path.parent()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|name| {
            let token = name
                .strip_prefix(stem)?
                .strip_prefix('.')?
                .strip_suffix(".token")
                .and_then(|pid| pid.parse::<u32>().ok());
            token.or_else(|| run_pid(stem, name))
        });
        if pid.is_some_and(|pid| !alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes `contents` to `path`, readable and writable by this user only (mode 0600 from creation on).
/// The contents go to a file of this writer's own first and are renamed over `path`: a reader sees the
/// old file or the new one, never a part, and writers racing for `path` never fail (the last wins).
fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let mut own = path.as_os_str().to_owned();
    own.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let own = PathBuf::from(own);
    let written = write_new_private(&own, contents).and_then(|()| {
        std::fs::rename(&own, path)
            .with_context(|| format!("renaming {} to {}", own.display(), path.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&own);
    }
    written
}

fn write_new_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    // A file of the same name can only be left by a killed writer whose pid this process now has.
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn writers_racing_for_one_file_all_succeed_and_leave_one_whole_private_file() {
        let dir = std::env::temp_dir().join(format!("league-state-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("state.json");
        let contents: Vec<String> = (0..8)
            .map(|writer| format!("writer {writer} ").repeat(1000))
            .collect();
        std::thread::scope(|scope| {
            for text in &contents {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..50 {
                        write_private(path, text.as_bytes()).expect("every write succeeds");
                    }
                });
            }
        });
        let left = std::fs::read_to_string(&path).expect("the file is there");
        assert!(contents.contains(&left), "one writer's whole text");
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let files = std::fs::read_dir(&dir).expect("the directory").count();
        assert_eq!(files, 1, "no writer's own file is left behind");
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn a_command_asks_serve_unless_told_otherwise() {
        assert_eq!(Choice::parse(None).expect("unset"), Choice::ServeElseRun);
        assert_eq!(Choice::parse(Some(" ")).expect("empty"), Choice::ServeElseRun);
        assert_eq!(Choice::parse(Some("serve")).expect("serve"), Choice::Serve);
        assert_eq!(Choice::parse(Some("run")).expect("run"), Choice::NewestRun);
        assert_eq!(Choice::parse(Some("run-42")).expect("a run"), Choice::Run(42));
        let wrong = Choice::parse(Some("manager")).expect_err("not a system");
        assert!(wrong.to_string().contains("LEAGUE_SYSTEM=\"manager\""), "{wrong}");
        let path = Path::new("/s/state.json");
        assert_eq!(run_file(path, 42), PathBuf::from("/s/state.run-42.json"));
        assert_eq!(run_pid("state", "state.run-42.json"), Some(42));
        assert_eq!(run_pid("state", "state.42.token"), None);
    }

    #[test]
    fn the_state_file_is_the_users_wherever_a_command_runs() {
        let path = |text: &str| Some(PathBuf::from(text));
        assert_eq!(
            locate(None, None, path("/home/ada")),
            PathBuf::from("/home/ada/.local/state/league/state.json")
        );
        assert_eq!(
            locate(None, path("/var/state"), path("/home/ada")),
            PathBuf::from("/var/state/league/state.json")
        );
        assert_eq!(
            locate(path("/tmp/mine.json"), path("/var/state"), path("/home/ada")),
            PathBuf::from("/tmp/mine.json")
        );
        // Empty is unset; a relative XDG_STATE_HOME is ignored, as the specification says.
        assert_eq!(
            locate(path(""), path("relative"), path("/home/ada")),
            PathBuf::from("/home/ada/.local/state/league/state.json")
        );
        assert_eq!(locate(None, None, path("")), PathBuf::from(HOMELESS_STATE_FILE));
    }

    #[test]
    fn the_token_files_of_runs_that_are_gone_are_removed() {
        let dir = std::env::temp_dir().join(format!("league-token-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("state.json");
        let live = dir.join(format!("state.{}.token", std::process::id()));
        let gone = dir.join(format!("state.{}.token", u32::MAX));
        let run_gone = run_file(&path, u32::MAX);
        let run_live = run_file(&path, std::process::id());
        let other = dir.join("notes.token");
        for file in [&live, &gone, &other, &run_gone, &run_live] {
            std::fs::write(file, "x").expect("written");
        }
        remove_stale_files(&path);
        assert!(live.exists() && other.exists() && run_live.exists());
        assert!(!gone.exists() && !run_gone.exists());
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
