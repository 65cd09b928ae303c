//! `league serve` killed with SIGKILL mid-league (nothing of it runs after that: its services are left to
//! notice on their own) and started again with the same command: the league resumes with the same
//! players and referees and completes, with standings equal to the recomputation, nobody charged for
//! the outage, and no new agent.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::{GetStandingsRequest, GetStandingsResponse};
use secrecy::SecretString;
use tokio::process::{Child, Command};

use crate::harness::*;

pub const LEAGUE: &str = "league_even_odd";

/// `league serve` on `database`, its state (the state file, the agents' identities) under `dir`, its
/// logs (and its services') appended to `log`.
pub fn serve(database: &str, dir: &Path, log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("a log file");
    Command::new(env!("CARGO_BIN_EXE_league"))
        .args([
            "serve",
            "--players",
            "6",
            // The late bot keeps matches in flight long enough to kill the server in the middle of one.
            "--strategies",
            "late:300,random,adaptive,alternating,always_even,always_odd",
            "--referees",
            "2",
            "--referee-capacity",
            "2",
            "--auto-start",
            "6",
            "--gateway-addr",
            "127.0.0.1:0",
            "--database",
            database,
            "--league",
            LEAGUE,
        ])
        .env("LEAGUE_STATE_FILE", dir.join("state.json"))
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .env_remove("LEAGUE_MANAGER_URL")
        .env_remove("LEAGUE_OPERATOR_TOKEN")
        .env_remove("LEAGUE_ID")
        .env_remove("LEAGUE_STATE_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .expect("league serve starts")
}

/// The manager's URL and the operator token of `served` (a `league serve` logging to `log`), once it
/// wrote them to the state file under `dir`. If it exits first, or writes nothing in time, the test fails
/// with its log's end: a start that failed or hung (a port taken, a child never ready) says why.
pub async fn served_by(dir: &Path, served: &mut Child, log: &Path) -> (String, SecretString) {
    let path = dir.join("state.json");
    let pid = served.id().expect("league serve runs");
    let written = tokio::time::timeout(
        LEAGUE_DEADLINE,
        // The timeout above bounds the wait; observe's own bound is only past it.
        observe(
            "league serve writes its state file",
            2 * LEAGUE_DEADLINE,
            async || {
                if let Ok(Some(status)) = served.try_wait() {
                    panic!(
                        "league serve exited ({status}) before writing its state file; its log ends:\n{}",
                        log_end(log)
                    );
                }
                let text = std::fs::read_to_string(&path).ok()?;
                let state: serde_json::Value = serde_json::from_str(&text).ok()?;
                (state["pid"] == pid).then_some(state)
            },
        ),
    )
    .await;
    let Ok(state) = written else {
        panic!(
            "league serve wrote no state file within {LEAGUE_DEADLINE:?}; its log ends:\n{}",
            log_end(log)
        );
    };
    let token_file = state["operator_token_file"].as_str().expect("a token file");
    let token = std::fs::read_to_string(token_file).expect("the operator token");
    let manager_url = state["manager_url"].as_str().expect("a manager URL").to_owned();
    (manager_url, SecretString::from(token.trim().to_owned()))
}

/// The last 40 lines of the log at `log`.
pub fn log_end(log: &Path) -> String {
    let said = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = said.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Once the league is mid-way: a match finished and others running. The finished and running counts.
pub async fn mid_league(db: &Database) -> (i64, i64) {
    observe(
        "a finished match and matches in flight",
        LEAGUE_DEADLINE,
        async || {
            let (finished, running): (i64, i64) = sqlx::query_as(
                "select count(*) filter (where status = 'finished'), count(*) filter (where status = 'running')
                 from matches where league_id = $1",
            )
            .bind(LEAGUE)
            .fetch_one(&db.pool)
            .await
            .ok()?;
            (finished >= 1 && running >= 1).then_some((finished, running))
        },
    )
    .await
}

/// The league's final standings, as the operator reads them from the manager at `manager_url`.
pub async fn final_standings(manager_url: &str, token: &SecretString) -> GetStandingsResponse {
    ManagerServiceClient::new(league_runtime::grpc::channel(manager_url).expect("a channel"))
        .get_standings(league_runtime::credentials::operator_request(
            token,
            GetStandingsRequest {
                league_id: LEAGUE.to_owned(),
            },
        ))
        .await
        .expect("the final standings")
        .into_inner()
}

pub async fn agents(db: &Database) -> Vec<(String, String)> {
    sqlx::query_as("select agent_id, kind from agents order by agent_id")
        .fetch_all(&db.pool)
        .await
        .expect("the agents")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_league_killed_with_sigkill_resumes_with_the_same_agents_and_completes() {
    let _serial = serial().await;
    let clock = Instant::now();
    let db = Database::fresh().await;
    let database =
        league_manager::postgres::database_name(secrecy::ExposeSecret::expose_secret(&db.url)).to_owned();
    let logs = Logs::new("serve_restart");
    let log = logs.path("serve");
    let spec = Spec::new(
        LEAGUE,
        6,
        "late:300,random,adaptive,alternating,always_even,always_odd",
        Timing::long_lease(),
    );

    let mut first = serve(&database, &logs.dir, &log);
    // Mid-league: a match finished and others running, some of them the late bot's.
    let (finished_then, running_then) = mid_league(&db).await;
    first.kill().await.expect("SIGKILL to league serve");
    let before = agents(&db).await;
    assert_eq!(before.len(), 8, "6 bots and 2 referees: {before:?}");

    // The same command again: it stops what the first left running and resumes every identity.
    let mut second = serve(&database, &logs.dir, &log);
    let pid = second.id().expect("the second serve runs");
    let (manager_url, token) = served_by(&logs.dir, &mut second, &log).await;
    wait_for_completion(&db.pool, LEAGUE, &logs).await;
    let table = final_standings(&manager_url, &token).await;
    let facts = check_invariants_through_restarts(&db.pool, &spec, &table).await;
    assert_eq!(
        agents(&db).await,
        before,
        "no new agent: every bot and referee resumed"
    );

    // Ctrl-C: a clean stop this time.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("a pid")),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT to league serve");
    let stopped = tokio::time::timeout(EXIT_WITHIN, second.wait())
        .await
        .expect("league serve stops on SIGINT")
        .expect("its exit status");
    assert!(stopped.success(), "league serve exited with {stopped}");
    println!(
        "serve_restart: killed with {finished_then} matches finished and {running_then} running; {} matches, \
         claims per match {:?}, the same {} agents; {:.1} s",
        facts.matches.len(),
        claims_histogram(&facts),
        before.len(),
        clock.elapsed().as_secs_f64()
    );
    db.drop().await;
    logs.remove();
}
