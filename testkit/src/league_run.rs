//! A real `league run` in its own process, as the end-to-end tests with external agents drive it: started
//! with test timings, read until its gateways say where they listen, finished with its final table
//! checked; and the Python agents of tests/agents beside it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

/// How long a test league may take, and how long an agent may take to stop after LEAGUE_COMPLETED.
const LEAGUE_WITHIN: Duration = Duration::from_secs(180);
const AGENT_STOPS_WITHIN: Duration = Duration::from_secs(60);

/// The settings every test league shares: any free gateway port, quick joins and retries, a deadline.
const TEST_TIMINGS: [&str; 8] = [
    "--gateway-addr",
    "127.0.0.1:0",
    "--join-timeout",
    "3s",
    "--retry-delay",
    "100ms",
    "--deadline",
    "120s",
];

/// `league run`, started, with the `/mcp` URL of each gateway it announced and the database it named.
#[derive(Debug)]
pub struct LeagueRun {
    pub process: Child,
    pub stdout: BufReader<ChildStdout>,
    pub gateways: Vec<String>,
    /// The database the run named on stderr (`database: <name>`), once it has.
    database: Arc<Mutex<Option<String>>>,
    league: String,
    /// The run's working folder, where it writes `results/<league_id>/`; keep it as long as the run.
    pub workdir: WorkDir,
}

/// A `league run`'s own working folder, removed when dropped, so tests leave no results behind.
#[derive(Debug)]
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// A fresh working folder for one `league run` of this test process.
    pub fn create() -> Self {
        static RUNS: AtomicU32 = AtomicU32::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("league-run-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a working folder for league run");
        Self(dir)
    }
}

impl AsRef<std::path::Path> for WorkDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl LeagueRun {
    /// Starts `<league> run <args>` (plus [`TEST_TIMINGS`]) and reads its output until `gateways`
    /// gateways announced themselves — which they do before the league can start, since it waits for
    /// its external players. `league` is the binary (`env!("CARGO_BIN_EXE_league")`).
    pub async fn start(league: &str, args: &[&str], gateways: usize) -> Self {
        let workdir = WorkDir::create();
        let mut process = Command::new(league)
            .arg("run")
            .args(args)
            .args(TEST_TIMINGS)
            // The private cluster, if one is needed, is the repository's, as for every other test.
            .arg("--cluster-dir")
            .arg(crate::database::cluster_dir())
            .current_dir(&workdir.0)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("league run starts");
        let mut stdout = BufReader::new(process.stdout.take().expect("stdout"));
        let database = Arc::new(Mutex::new(None));
        // Its stderr still reaches the test's (libtest shows it for a failed test), read on the way.
        let mut stderr = BufReader::new(process.stderr.take().expect("stderr")).lines();
        let named = Arc::clone(&database);
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                if let Some(name) = line.strip_prefix("database: ") {
                    *named.lock().unwrap_or_else(PoisonError::into_inner) = Some(name.to_owned());
                }
                eprintln!("{line}");
            }
        });
        let mut announced = Vec::new();
        let mut line = String::new();
        while announced.len() < gateways {
            line.clear();
            let read = stdout.read_line(&mut line).await.expect("launcher output");
            assert!(read > 0, "league run ended before announcing its gateways");
            if let Some(url) = gateway_url(&line) {
                announced.push(url.to_owned());
            }
        }
        Self {
            process,
            stdout,
            gateways: announced,
            database,
            league: league.to_owned(),
            workdir,
        }
    }

    /// Stops the run before its league is over, as Ctrl-C would (SIGTERM: the launcher stops its
    /// services and keeps the database), then drops that database with `league clean`.
    pub async fn interrupt(mut self) {
        if let Some(pid) = self.process.id() {
            let signalled = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
            assert!(signalled.is_ok_and(|status| status.success()), "kill -TERM {pid}");
        }
        tokio::time::timeout(LEAGUE_WITHIN, self.process.wait())
            .await
            .expect("league run stops")
            .expect("league run exits");
        let database = self
            .database
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .expect("league run named its database");
        let cleaned = Command::new(&self.league)
            .args(["clean", &database])
            .output()
            .await
            .expect("league clean runs");
        assert!(
            cleaned.status.success(),
            "league clean {database}: {}",
            String::from_utf8_lossy(&cleaned.stderr)
        );
    }

    /// Waits for the league to finish and `league run` to exit successfully; the rest of its output.
    pub async fn finish(self) -> String {
        self.finish_with_results().await.0
    }

    /// [`Self::finish`], keeping the run's working folder (its `results/`) for the caller to check.
    pub async fn finish_with_results(mut self) -> (String, WorkDir) {
        let mut rest = String::new();
        tokio::time::timeout(LEAGUE_WITHIN, self.stdout.read_to_string(&mut rest))
            .await
            .expect("the league finishes")
            .expect("launcher output");
        let status = self.process.wait().await.expect("league run exits");
        assert!(status.success(), "league run failed:\n{rest}");
        (rest, self.workdir)
    }
}

/// The `/mcp` URL in a launcher line `gateway: external agents POST … to <url>`.
fn gateway_url(line: &str) -> Option<&str> {
    line.starts_with("gateway:")
        .then(|| line.trim().split(" to ").nth(1))
        .flatten()
}

/// A Python agent (`python3 <script> <args>`), its stdout captured, killed if the test drops it.
pub fn python(script: &str, args: &[&str]) -> Child {
    Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the agent")
}

/// Each agent's JSON summary (printed when it got LEAGUE_COMPLETED), checked: it completed, with no
/// error of its own.
pub async fn summaries(agents: Vec<Child>) -> Vec<Value> {
    let mut summaries = Vec::new();
    for agent in agents {
        let output = tokio::time::timeout(AGENT_STOPS_WITHIN, agent.wait_with_output())
            .await
            .expect("the agent stops after LEAGUE_COMPLETED")
            .expect("agent output");
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let summary: Value = serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("summary: {text}"));
        assert_eq!(summary["completed"], true, "{summary}");
        assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
        summaries.push(summary);
    }
    summaries
}

/// The final table's rows (split on whitespace), checked: `players` rows, each with `played` matches,
/// no technical loss, and points that add up (3 a win, 1 a draw); every summarised agent is in it.
pub fn checked_table<'a>(
    output: &'a str,
    players: usize,
    played: u32,
    summaries: &[Value],
) -> Vec<Vec<&'a str>> {
    let rows: Vec<Vec<&str>> = output
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("rank"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), players, "players in the table:\n{output}");
    for row in &rows {
        let number = |i: usize| row[row.len() - i].parse::<u32>().expect("a number");
        let (games, wins, draws, losses, technical, points) =
            (number(6), number(5), number(4), number(3), number(2), number(1));
        assert_eq!(games, played, "{row:?}");
        assert_eq!(wins + draws + losses, games, "{row:?}");
        assert_eq!(
            technical, 0,
            "agents that answer never lose technically: {row:?}\n{output}"
        );
        assert_eq!(points, 3 * wins + draws, "{row:?}");
    }
    for summary in summaries {
        let player_id = summary["player_id"].as_str().expect("player id");
        assert!(
            rows.iter().any(|row| row[1] == player_id),
            "{player_id} in the table:\n{output}"
        );
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gateway_line_names_the_mcp_url() {
        let line = "gateway: external agents POST league.v2 JSON-RPC to http://127.0.0.1:41/mcp\n";
        assert_eq!(gateway_url(line), Some("http://127.0.0.1:41/mcp"));
        assert_eq!(gateway_url("live page: http://127.0.0.1:41/ (…)\n"), None);
    }
}
