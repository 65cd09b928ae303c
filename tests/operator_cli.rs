//! The operator's day through the real binary: `league serve` keeps the system up and says where it is
//! (a state file, the token readable only by the user); `league create | leagues | start | standings |
//! schedule | match | player | warnings` work against it in table, JSON and CSV; who referees is the
//! operator's (`referee-token`, `referees`, `revoke-referee`: serve's referees registered with the token
//! it generated and kept beside its state); Ctrl-C stops it. And `league pause | resume | withdraw |
//! cancel` against a real manager whose league no referee plays, so that it stays where each command
//! leaves it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn league(state_file: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_league"));
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .env("LEAGUE_STATE_FILE", state_file)
        .env_remove("LEAGUE_MANAGER_URL")
        .env_remove("LEAGUE_OPERATOR_TOKEN")
        .env_remove("LEAGUE_ID");
    command
}

/// Runs an operator command that must succeed; its stdout.
fn ok(state_file: &Path, args: &[&str]) -> String {
    let output = league(state_file, args).output().expect("the league binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "league {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Stops the server and drops its database whatever the test's outcome.
struct Served {
    child: Child,
    database: String,
    dir: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        league_testkit::database::drop_named(&self.database);
    }
}

#[test]
fn an_operator_runs_leagues_on_a_served_system() {
    let tag = format!(
        "{}_{}",
        std::process::id(),
        Instant::now().elapsed().subsec_nanos()
    );
    let dir = std::env::temp_dir().join(format!("league-cli-{tag}"));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let state_file = dir.join("state.json");
    let database = format!("league_cli_{tag}");

    // Nothing runs yet: the commands say where they looked.
    let output = league(&state_file, &["leagues"]).output().expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("LEAGUE_MANAGER_URL"));

    let child = league(
        &state_file,
        &[
            "serve",
            "--players",
            "2",
            "--gateway-addr",
            "127.0.0.1:0",
            "--database",
            &database,
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("league serve starts");
    let mut served = Served { child, database, dir };
    assert!(
        wait_for(|| state_file.exists().then_some(())).is_some(),
        "league serve wrote no state file"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state_file).expect("state")).expect("JSON");
    let token_file = state["operator_token_file"].as_str().expect("a token file");
    let mode = std::fs::metadata(token_file)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the token is the user's alone");
    assert_eq!(state["database"], served.database.as_str());

    let created = ok(
        &state_file,
        &["create", "--league", "second", "--game", "tic_tac_toe"],
    );
    assert!(created.contains("second"), "{created}");
    let leagues: serde_json::Value =
        serde_json::from_str(&ok(&state_file, &["leagues", "--output", "json"])).expect("JSON");
    let ids: Vec<&str> = leagues["leagues"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|league| league["league_id"].as_str())
        .collect();
    assert!(
        ids.contains(&"second") && ids.contains(&"league_even_odd"),
        "{ids:?}"
    );

    // The two bots joined the first league; start it and wait for its end.
    let started = ok(
        &state_file,
        &["start", "--league", "league_even_odd", "--output", "csv"],
    );
    assert_eq!(started, "league,rounds,matches\nleague_even_odd,1,1\n");
    let completed = wait_for(|| {
        let csv = ok(&state_file, &["leagues", "--output", "csv"]);
        csv.lines()
            .any(|line| line.starts_with("league_even_odd,even_odd,completed,"))
            .then_some(())
    });
    assert!(completed.is_some(), "the league did not complete");

    let standings = ok(
        &state_file,
        &["standings", "--league", "league_even_odd", "--output", "csv"],
    );
    let lines: Vec<&str> = standings.lines().collect();
    assert_eq!(lines[0], "rank,player,name,played,W,D,L,TL,points,rating,±");
    assert_eq!(lines.len(), 3, "{standings}");
    // The league completed: both players are rated (Glicko-2 starts at 1500; one match moves it).
    assert!(
        lines[1..].iter().all(|line| {
            let rating: f64 = line.split(',').nth(9).and_then(|r| r.parse().ok()).unwrap_or(0.0);
            rating > 1000.0 && rating < 2000.0
        }),
        "{standings}"
    );
    let schedule = ok(&state_file, &["schedule", "--league", "league_even_odd"]);
    assert!(
        schedule.contains("R1M1") && schedule.contains("finished"),
        "{schedule}"
    );
    let one: serde_json::Value = serde_json::from_str(&ok(
        &state_file,
        &["match", "R1M1", "--league", "league_even_odd", "--output", "json"],
    ))
    .expect("JSON");
    assert_eq!(one["match"]["match_id"], "R1M1");
    assert!(
        one["transcript"]["entries"]
            .as_array()
            .is_some_and(|entries| !entries.is_empty())
    );
    let player = ok(&state_file, &["player", "P01", "--league", "league_even_odd"]);
    assert!(player.contains("P01") && player.contains("R1M1"), "{player}");
    let ratings = ok(&state_file, &["ratings", "--output", "csv"]);
    let rated: Vec<&str> = ratings.lines().collect();
    assert_eq!(rated[0], "rank,player,rating,±,matches,leagues", "{ratings}");
    assert_eq!(rated.len(), 3, "both players rated: {ratings}");
    assert!(rated[1..].iter().all(|row| row.ends_with(",1,1")), "{ratings}");

    // The same two players, under the same ids, play the second league (tic_tac_toe, which the bots
    // also play): the operator enrolls them and starts it; their ratings then cover both leagues.
    let enrolled = ok(
        &state_file,
        &["enroll", "P01", "P02", "--league", "second", "--output", "csv"],
    );
    assert_eq!(
        enrolled,
        "league,player,enrolled,started\nsecond,P01,yes,no\nsecond,P02,yes,no\n"
    );
    let again = league(&state_file, &["enroll", "P01", "--league", "second"])
        .output()
        .expect("runs");
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("already"));
    let unknown = league(&state_file, &["enroll", "P77", "--league", "second"])
        .output()
        .expect("runs");
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("enrolling P77: no registered player P77"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    ok(&state_file, &["start", "--league", "second"]);
    let completed = wait_for(|| {
        let csv = ok(&state_file, &["leagues", "--output", "csv"]);
        csv.lines()
            .any(|line| line.starts_with("second,tic_tac_toe,completed,"))
            .then_some(())
    });
    assert!(completed.is_some(), "the second league did not complete");
    let ratings = ok(&state_file, &["ratings", "--output", "csv"]);
    let rated: Vec<&str> = ratings.lines().collect();
    assert_eq!(rated.len(), 3, "the same two players: {ratings}");
    assert!(
        rated[1..].iter().all(|row| row.ends_with(",2,2")),
        "two matches in two leagues each: {ratings}"
    );
    let warnings = ok(&state_file, &["warnings"]);
    assert_eq!(warnings.trim(), "no compliance warnings");

    // Who referees: serve generated the referee registration token at its first start, kept it beside
    // its state for the operator alone, and its own referees registered with it.
    let kept = state_file.with_file_name("referee-token");
    let mode = std::fs::metadata(&kept)
        .expect("the referee token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the referee token is the user's alone");
    let token = ok(&state_file, &["referee-token"]);
    assert_eq!(token.trim(), std::fs::read_to_string(&kept).expect("kept").trim());
    assert_eq!(token.trim().len(), 64, "256 bits in hex: {token}");
    let referees = ok(&state_file, &["referees", "--output", "csv"]);
    assert_eq!(
        referees.lines().next(),
        Some("referee,name,external,capacity,running,status,revoked"),
        "{referees}"
    );
    let active: Vec<&str> = referees.lines().skip(1).collect();
    assert_eq!(active.len(), 2, "serve's two referees: {referees}");
    assert!(
        active.iter().all(|row| row.contains(",no,8,0,active,")),
        "{referees}"
    );
    let revoked = ok(&state_file, &["revoke-referee", "REF02"]);
    assert!(revoked.contains("REF02 revoked"), "{revoked}");
    let referees = ok(&state_file, &["referees", "--output", "csv"]);
    assert!(
        referees
            .lines()
            .any(|row| row.starts_with("REF02,") && row.contains(",revoked,")),
        "{referees}"
    );
    let again = ok(&state_file, &["revoke-referee", "REF02"]);
    assert!(again.contains("already"), "{again}");
    let unknown = league(&state_file, &["revoke-referee", "REF99"])
        .output()
        .expect("runs");
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("REF99 is not a registered referee"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );

    // Ctrl-C: a clean stop, and the state goes with the server.
    let status = Command::new("kill")
        .args(["-INT", &served.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exited = wait_for(|| served.child.try_wait().expect("wait")).expect("league serve stops");
    assert!(exited.success(), "{exited:?}");
    assert!(!state_file.exists() && !Path::new(token_file).exists());
}

/// Polls `check` until it answers, for at most two minutes.
fn wait_for<T>(mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + Duration::from_secs(120);
    while Instant::now() < until {
        if let Some(found) = check() {
            return Some(found);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

/// Runs `league` with `args` against the manager at `url`; its exit status, stdout and stderr.
async fn against(url: &str, args: &[&str]) -> (bool, String, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_league"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("LEAGUE_MANAGER_URL", url)
        .env("LEAGUE_OPERATOR_TOKEN", league_testkit::manager::OPERATOR_TOKEN)
        .env(
            "LEAGUE_STATE_FILE",
            std::env::temp_dir().join("league-cli-no-state.json"),
        )
        .env_remove("LEAGUE_ID")
        .output()
        .await
        .expect("the league binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn an_operator_pauses_withdraws_from_and_cancels_a_league() {
    use league_proto::v2::{AgentMeta, RegisterPlayerRequest};

    let manager = league_testkit::spawn_manager("league_cli_ops", "held", |config| {
        config.auto_start_players = 0;
    })
    .await;
    let url = manager.url.clone();
    let mut client = manager.client();
    for name in ["alpha", "bravo", "charlie", "delta"] {
        client
            .register_player(RegisterPlayerRequest {
                meta: Some(AgentMeta {
                    display_name: name.to_owned(),
                    version: "1.0.0".into(),
                    game_types: vec!["even_odd".into()],
                    contact_endpoint: format!("http://127.0.0.1:9/{name}"),
                    service_endpoint: "http://127.0.0.1:9".into(),
                    ..AgentMeta::default()
                }),
                league_id: "held".into(),
            })
            .await
            .expect("a player registers");
    }
    let ok = |args: &'static [&'static str]| {
        let url = url.clone();
        async move {
            let (success, stdout, stderr) = against(&url, args).await;
            assert!(success, "league {args:?} failed:\n{stdout}\n{stderr}");
            stdout
        }
    };
    let refused = |args: &'static [&'static str]| {
        let url = url.clone();
        async move {
            let (success, stdout, stderr) = against(&url, args).await;
            assert!(!success, "league {args:?} succeeded:\n{stdout}");
            stderr
        }
    };

    // Before the start: nothing to pause; a withdrawn player is simply not scheduled.
    let stderr = refused(&["pause", "--league", "held"]).await;
    assert!(
        stderr
            .contains("pausing the league: league held is registering: only a running league can be paused"),
        "{stderr}"
    );
    assert_eq!(
        ok(&["withdraw", "P04", "--league", "held", "--output", "csv"]).await,
        "league,player,match,result,winner\nheld,P04,,no match to forfeit,\n"
    );
    assert_eq!(
        ok(&["start", "--league", "held", "--output", "csv"]).await,
        "league,rounds,matches\nheld,3,3\n"
    );

    // P03 withdraws: its two matches are forfeits P01 and P02 win.
    let withdrawn = ok(&["withdraw", "P03", "--league", "held", "--output", "csv"]).await;
    let mut forfeits: Vec<&str> = withdrawn.lines().skip(1).collect();
    forfeits.sort_unstable();
    assert_eq!(forfeits.len(), 2, "{withdrawn}");
    assert!(
        forfeits[0].starts_with("held,P03,R") && forfeits[0].ends_with(",forfeit,P01"),
        "{withdrawn}"
    );
    assert!(
        forfeits[1].starts_with("held,P03,R") && forfeits[1].ends_with(",forfeit,P02"),
        "{withdrawn}"
    );
    let stderr = refused(&["withdraw", "P03", "--league", "held"]).await;
    assert!(
        stderr.contains("withdrawing P03: P03 has already withdrawn"),
        "{stderr}"
    );

    // Paused and resumed; the status shows in `leagues`.
    assert_eq!(
        ok(&["pause", "--league", "held", "--output", "csv"]).await,
        "league,status,still running\nheld,paused,0\n"
    );
    let leagues = ok(&["leagues", "--output", "csv"]).await;
    assert!(
        leagues
            .lines()
            .any(|line| line.starts_with("held,even_odd,paused,")),
        "{leagues}"
    );
    ok(&["resume", "--league", "held"]).await;
    let stderr = refused(&["resume", "--league", "held"]).await;
    assert!(
        stderr.contains("resuming the league: league held is running"),
        "{stderr}"
    );

    // Cancelled: P01 against P02 was never played and is cancelled; the table keeps the forfeits.
    assert_eq!(
        ok(&["cancel", "--league", "held", "--output", "csv"]).await,
        "league,status,matches cancelled,of them running\nheld,cancelled,1,0\n"
    );
    let stderr = refused(&["cancel", "--league", "held"]).await;
    assert!(
        stderr.contains("cancelling the league: league held is cancelled: there is nothing left to cancel"),
        "{stderr}"
    );
    let leagues = ok(&["leagues", "--output", "csv"]).await;
    assert!(
        leagues
            .lines()
            .any(|line| line.starts_with("held,even_odd,cancelled,")),
        "{leagues}"
    );
    let standings = ok(&["standings", "--league", "held", "--output", "csv"]).await;
    assert!(standings.contains("P03,charlie,2,0,0,2,2,0,"), "{standings}");
    assert!(!standings.contains("P04"), "{standings}");
    let schedule = ok(&["schedule", "--league", "held"]).await;
    assert!(schedule.contains("cancelled"), "{schedule}");
    let stderr = refused(&["cancel", "--league", "nope"]).await;
    assert!(
        stderr.contains("cancelling the league: no league nope"),
        "{stderr}"
    );
}

/// An agent on https whose certificate the league does not trust registers (registration never
/// reaches it) and then loses its match technically: the result's reason, `league warnings` and the
/// warning's example all say the certificate is not trusted and name LEAGUE_EXTRA_ROOTS.
#[tokio::test(flavor = "multi_thread")]
async fn an_https_agent_whose_certificate_is_not_trusted_is_told_so() {
    let tag = format!(
        "{}_{}",
        std::process::id(),
        Instant::now().elapsed().subsec_nanos()
    );
    let dir = std::env::temp_dir().join(format!("league-cli-tls-{tag}"));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let state_file = dir.join("state.json");
    let database = format!("league_cli_tls_{tag}");
    let child = league(
        &state_file,
        &[
            "serve",
            "--players",
            "1",
            "--gateway-addr",
            "127.0.0.1:0",
            "--database",
            &database,
        ],
    )
    .env_remove("LEAGUE_EXTRA_ROOTS")
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("league serve starts");
    let _served = Served { child, database, dir };
    assert!(
        wait_for(|| state_file.exists().then_some(())).is_some(),
        "league serve wrote no state file"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state_file).expect("state")).expect("JSON");
    let gateway = state["gateway_url"].as_str().expect("a gateway URL");

    let agents = league_testkit::FakeAgents::start_tls(league_testkit::Behaviour::Clean).await;
    let me = agents
        .register(gateway, "alpha", "register_player", &[])
        .await
        .expect("an https agent registers without being reached");
    let started = ok(
        &state_file,
        &["start", "--league", "league_even_odd", "--output", "csv"],
    );
    assert_eq!(started, "league,rounds,matches\nleague_even_odd,1,1\n");
    let completed = wait_for(|| {
        let csv = ok(&state_file, &["leagues", "--output", "csv"]);
        csv.lines()
            .any(|line| line.starts_with("league_even_odd,even_odd,completed,"))
            .then_some(())
    });
    assert!(completed.is_some(), "the league did not complete");
    assert!(agents.received().is_empty(), "{:?}", agents.received());

    let played: serde_json::Value = serde_json::from_str(&ok(
        &state_file,
        &["match", "R1M1", "--league", "league_even_odd", "--output", "json"],
    ))
    .expect("JSON");
    let result = &played["result"];
    assert_eq!(result["status"], "RESULT_STATUS_TECHNICAL_LOSS", "{played}");
    assert_eq!(
        result["at_fault_player_ids"],
        serde_json::json!([me.id]),
        "{played}"
    );
    let reason = result["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("certificate is not trusted") && reason.contains("LEAGUE_EXTRA_ROOTS"),
        "{played}"
    );

    let warnings = ok(&state_file, &["warnings", "--output", "csv"]);
    let row = warnings
        .lines()
        .find(|line| line.starts_with(&format!("{},untrusted_certificate,", me.id)))
        .unwrap_or_else(|| panic!("{warnings}"));
    assert!(row.contains("LEAGUE_EXTRA_ROOTS"), "{warnings}");
    let table = ok(&state_file, &["warnings"]);
    assert!(table.contains("untrusted_certificate"), "{table}");
}
