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

use league_testkit::wait_for;

pub(super) fn league(state_file: &Path, args: &[&str]) -> Command {
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

/// A `league …` command's stdout, stderr and exit code.
pub(super) fn output(command: &mut Command) -> (String, String, Option<i32>) {
    let output = command.output().expect("the league binary runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

/// A `league run` killed whatever the test's outcome (its database dropped by the test or by name).
pub(super) struct Run(pub(super) Child);

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs an operator command that must succeed; its stdout.
pub(super) fn ok(state_file: &Path, args: &[&str]) -> String {
    let output = league(state_file, args).output().expect("the league binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "league {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Runs an operator command that must fail; its stderr.
pub(super) fn refused(state_file: &Path, args: &[&str]) -> String {
    let output = league(state_file, args).output().expect("the league binary runs");
    assert!(
        !output.status.success(),
        "league {args:?} succeeded:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Stops the server and drops its database whatever the test's outcome.
pub(super) struct Served {
    pub(super) child: Child,
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

/// A name no other run of these tests uses at the same time: the process and a clock reading.
fn unique_tag() -> String {
    format!(
        "{}_{}",
        std::process::id(),
        Instant::now().elapsed().subsec_nanos()
    )
}

/// Where one test's `league serve` keeps its state: a new folder (`league-<name>-<tag>`, with the state
/// file in it) and a new database.
pub(super) struct Place {
    pub(super) dir: PathBuf,
    pub(super) state_file: PathBuf,
    database: String,
}

impl Place {
    pub(super) fn new(name: &str) -> Place {
        let tag = unique_tag();
        let dir = std::env::temp_dir().join(format!("league-{name}-{tag}"));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        Place {
            state_file: dir.join("state.json"),
            database: format!("league_{}_{tag}", name.replace('-', "_")),
            dir,
        }
    }

    /// `league serve` with `args` (a gateway on a free port, this place's database), `configure`d, once
    /// it has written its state file: the server, stopped and cleaned up when dropped, and its state.
    pub(super) fn serve(
        &self,
        args: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> (Served, serde_json::Value) {
        let mut command = league(&self.state_file, &["serve"]);
        command
            .args(["--gateway-addr", "127.0.0.1:0", "--database", &self.database])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // After the defaults: a test may keep what serve prints.
        configure(&mut command);
        let child = command.spawn().expect("league serve starts");
        let served = Served {
            child,
            database: self.database.clone(),
            dir: self.dir.clone(),
        };
        wait_for_state_file(&self.state_file);
        let state = std::fs::read_to_string(&self.state_file).expect("state");
        (served, serde_json::from_str(&state).expect("JSON"))
    }
}

#[test]
fn an_operator_runs_leagues_on_a_served_system() {
    let place = Place::new("cli");
    let state_file = place.state_file.clone();

    // Nothing runs yet: the commands say where they looked.
    let output = league(&state_file, &["leagues"]).output().expect("runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("LEAGUE_MANAGER_URL"));

    // Two referees whatever the machine's cores (the default: one per core); the capacity is the default.
    let (mut served, state) = place.serve(
        &["--players", "2", "--referees", "2", "--league", "league_even_odd"],
        |_| {},
    );
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
    // JSON says the league's words, not the contracts' enum names.
    let statuses: Vec<&str> = leagues["leagues"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|league| league["status"].as_str())
        .collect();
    assert!(
        statuses.iter().all(|status| *status == "registering"),
        "{statuses:?}"
    );

    // The two bots joined the first league; start it and wait for its end.
    let started = ok(
        &state_file,
        &["start", "--league", "league_even_odd", "--output", "csv"],
    );
    assert_eq!(started, "league,rounds,matches\nleague_even_odd,1,1\n");
    wait_until_completed(&state_file, "league_even_odd,even_odd");

    let standings = ok(
        &state_file,
        &["standings", "--league", "league_even_odd", "--output", "csv"],
    );
    let lines: Vec<&str> = standings.lines().collect();
    assert_eq!(
        lines[0],
        "rank,player_id,display_name,strategy,played,wins,draws,losses,technical_losses,points,win_rate,\
         above_next_by,points_per_match,deviation"
    );
    assert_eq!(lines.len(), 3, "{standings}");
    // The league completed: both players are rated in points per match (0 to 3), as the folder rates.
    assert!(
        lines[1..].iter().all(|line| {
            let rating: f64 = line
                .split(',')
                .nth(12)
                .and_then(|r| r.parse().ok())
                .unwrap_or(-1.0);
            (0.0..=3.0).contains(&rating)
        }),
        "{standings}"
    );
    let schedule = ok(&state_file, &["schedule", "--league", "league_even_odd"]);
    assert!(
        schedule.contains("R1M1") && schedule.contains("finished"),
        "{schedule}"
    );
    // The same columns as the results folder's CSVs, from one home.
    let results = served.dir.join("results");
    ok(
        &state_file,
        &[
            "report",
            "--league",
            "league_even_odd",
            "--out",
            results.to_str().expect("a path"),
        ],
    );
    let first_line = |file: &str| {
        let text = std::fs::read_to_string(results.join("league_even_odd").join(file)).expect(file);
        text.lines().next().unwrap_or_default().to_owned()
    };
    assert!(lines[0].starts_with(&first_line("standings.csv")), "{standings}");
    let schedule_csv = ok(
        &state_file,
        &["schedule", "--league", "league_even_odd", "--output", "csv"],
    );
    assert_eq!(
        schedule_csv.lines().next(),
        Some(first_line("matches.csv").as_str())
    );
    assert!(schedule_csv.contains(",finished,"), "{schedule_csv}");
    // A past league's database answers the same questions the same way: one way to ask each.
    let from_database = ok(
        &state_file,
        &[
            "schedule",
            "--league",
            "league_even_odd",
            "--output",
            "csv",
            "--database",
            &served.database,
        ],
    );
    assert_eq!(from_database, schedule_csv);
    let by_round = ok(
        &state_file,
        &[
            "standings",
            "--by-round",
            "--league",
            "league_even_odd",
            "--output",
            "csv",
        ],
    );
    assert_eq!(
        by_round.lines().next(),
        Some(first_line("standings_by_round.csv").as_str())
    );
    assert_eq!(by_round.lines().count(), 3, "one round, two players: {by_round}");
    let rated = ok(
        &state_file,
        &["ratings", "--league", "league_even_odd", "--output", "csv"],
    );
    assert_eq!(
        ok(
            &state_file,
            &[
                "ratings",
                "--league",
                "league_even_odd",
                "--output",
                "csv",
                "--database",
                &served.database
            ]
        ),
        rated,
        "the ratings read from the database"
    );

    let one: serde_json::Value = serde_json::from_str(&ok(
        &state_file,
        &["match", "R1M1", "--league", "league_even_odd", "--output", "json"],
    ))
    .expect("JSON");
    assert_eq!(one["match"]["match_id"], "R1M1");
    assert_eq!(one["match"]["status"], "finished");
    assert!(
        one["match"]["started_at"].is_string() && one["match"]["finished_at"].is_string(),
        "{one}"
    );
    assert!(
        one["transcript"]["entries"]
            .as_array()
            .is_some_and(|entries| !entries.is_empty())
    );
    let names: Vec<&str> = one["players"]
        .as_array()
        .expect("the players")
        .iter()
        .filter_map(|player| player["display_name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{one}");
    assert!(names.iter().all(|name| name.starts_with("bot-")), "{names:?}");
    // The whole match as tables: its row, its players with names and choices, its transcript.
    let shown = ok(&state_file, &["match", "R1M1", "--league", "league_even_odd"]);
    for expected in [
        "match",
        "players",
        "transcript",
        "bot-",
        "CHOOSE_PARITY",
        "finished",
    ] {
        assert!(shown.contains(expected), "no {expected}: {shown}");
    }
    // One table of what a command shows about the first league, as CSV.
    let csv_section = |command: &[&str], section: &str| {
        let mut args = command.to_vec();
        args.extend([
            "--league",
            "league_even_odd",
            "--output",
            "csv",
            "--section",
            section,
        ]);
        ok(&state_file, &args)
    };
    let row = csv_section(&["match", "R1M1"], "match");
    assert_eq!(
        row,
        schedule_csv
            .lines()
            .take(2)
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
        "the match's row is its schedule row, times and all"
    );
    let stderr = refused(
        &state_file,
        &["match", "R1M1", "--league", "league_even_odd", "--output", "csv"],
    );
    assert!(
        stderr.contains("CSV holds one table: choose it with --section (match, players, transcript)"),
        "{stderr}"
    );
    let players = csv_section(&["match", "R1M1"], "players");
    let rows: Vec<&str> = players.lines().collect();
    assert_eq!(rows[0], "seat,player_id,display_name,choice,points,at_fault");
    assert_eq!(rows.len(), 3, "{players}");
    assert!(
        rows[1..]
            .iter()
            .all(|row| row.contains(",bot-") && (row.contains(",even,") || row.contains(",odd,"))),
        "{players}"
    );
    let matches = csv_section(&["player", "P01"], "matches");
    assert_eq!(matches.lines().next(), Some(first_line("matches.csv").as_str()));
    assert_eq!(matches.lines().count(), 2, "one match: {matches}");
    // Two tables in one CSV stream: refused.
    refused(
        &state_file,
        &["player", "P01", "--league", "league_even_odd", "--output", "csv"],
    );
    let player = ok(&state_file, &["player", "P01", "--league", "league_even_odd"]);
    assert!(player.contains("P01") && player.contains("R1M1"), "{player}");
    // The ratings are the folder's `ratings.csv`, line for line.
    let ratings = ok(
        &state_file,
        &["ratings", "--league", "league_even_odd", "--output", "csv"],
    );
    let folder =
        std::fs::read_to_string(results.join("league_even_odd").join("ratings.csv")).expect("ratings.csv");
    assert_eq!(ratings, folder);
    assert_eq!(ratings.lines().count(), 3, "both players rated: {ratings}");
    assert!(
        ratings.lines().skip(1).all(|row| row.contains(",bot-")),
        "with names: {ratings}"
    );

    // The same two players, under the same ids, play the second league (tic_tac_toe, which the bots
    // also play): the operator enrolls them and starts it; each game's ratings cover its own league.
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
    wait_until_completed(&state_file, "second,tic_tac_toe");
    // Each league is rated from its own matches: one match each in the tic_tac_toe league.
    let ratings = ok(&state_file, &["ratings", "--league", "second", "--output", "csv"]);
    let rated: Vec<&str> = ratings.lines().collect();
    assert_eq!(rated.len(), 3, "the same two players in tic_tac_toe: {ratings}");
    assert!(
        rated[1..].iter().all(|row| row.split(',').nth(3) == Some("1")),
        "one match each: {ratings}"
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
    let capacity = league_launcher::capacity::Referees::of_this_machine().capacity;
    assert!(
        active
            .iter()
            .all(|row| row.contains(&format!(",no,{capacity},0,active,"))),
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
    interrupt(&mut served);
    assert!(!state_file.exists() && !Path::new(token_file).exists());
}

/// Bound on `league serve` getting somewhere: its state file, a league's end, its exit.
pub(super) const SERVE_WITHIN: Duration = Duration::from_secs(120);

/// Waits until `league serve` wrote its state file.
fn wait_for_state_file(state_file: &Path) {
    wait_for("league serve writes its state file", SERVE_WITHIN, || {
        state_file.exists().then_some(())
    });
}

/// Waits until `league leagues` lists `league` (`<league id>,<game>`) as completed.
pub(super) fn wait_until_completed(state_file: &Path, league: &str) {
    wait_for(&format!("{league} completes"), SERVE_WITHIN, || {
        ok(state_file, &["leagues", "--output", "csv"])
            .lines()
            .any(|line| line.starts_with(&format!("{league},completed,")))
            .then_some(())
    });
}

/// Ctrl-C to `league serve`: it stops cleanly.
pub(super) fn interrupt(served: &mut Served) {
    let status = Command::new("kill")
        .args(["-INT", &served.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exited = wait_for("league serve stops", SERVE_WITHIN, || {
        served.child.try_wait().expect("wait")
    });
    assert!(exited.success(), "{exited:?}");
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
    // A command the league refuses, saying why.
    let refused = |args: &'static [&'static str], saying: &'static str| {
        let url = url.clone();
        async move {
            let (success, stdout, stderr) = against(&url, args).await;
            assert!(!success, "league {args:?} succeeded:\n{stdout}");
            assert!(stderr.contains(saying), "league {args:?}: {stderr}");
        }
    };
    // `leagues` lists the held league with `status`.
    let listed = |status: &'static str| {
        // `ok` borrows only the URL: copied into the future.
        async move {
            let leagues = ok(&["leagues", "--output", "csv"]).await;
            let row = format!("held,even_odd,{status},");
            assert!(leagues.lines().any(|line| line.starts_with(&row)), "{leagues}");
        }
    };

    // Before the start: nothing to pause; a withdrawn player is simply not scheduled.
    refused(
        &["pause", "--league", "held"],
        "pausing the league: league held is registering: only a running league can be paused",
    )
    .await;
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
    refused(
        &["withdraw", "P03", "--league", "held"],
        "withdrawing P03: P03 has already withdrawn",
    )
    .await;

    // Paused and resumed; the status shows in `leagues`.
    assert_eq!(
        ok(&["pause", "--league", "held", "--output", "csv"]).await,
        "league,status,still running\nheld,paused,0\n"
    );
    listed("paused").await;
    ok(&["resume", "--league", "held"]).await;
    refused(
        &["resume", "--league", "held"],
        "resuming the league: league held is running",
    )
    .await;

    // Cancelled: P01 against P02 was never played and is cancelled; the table keeps the forfeits.
    assert_eq!(
        ok(&["cancel", "--league", "held", "--output", "csv"]).await,
        "league,status,matches cancelled,of them running\nheld,cancelled,1,0\n"
    );
    refused(
        &["cancel", "--league", "held"],
        "cancelling the league: league held is cancelled: there is nothing left to cancel",
    )
    .await;
    listed("cancelled").await;
    let standings = ok(&["standings", "--league", "held", "--output", "csv"]).await;
    assert!(
        standings.contains("P03,charlie,external,2,0,0,2,2,0,"),
        "{standings}"
    );
    assert!(!standings.contains("P04"), "{standings}");
    let schedule = ok(&["schedule", "--league", "held"]).await;
    assert!(schedule.contains("cancelled"), "{schedule}");
    refused(
        &["cancel", "--league", "nope"],
        "cancelling the league: no league nope",
    )
    .await;
}

/// `league serve` with the state in the user's state directory (`XDG_STATE_HOME`), as people run it:
/// the commands find it from another folder; its first league is named by the game and the time and
/// carried on by the next start, with the timings given to `serve`; and `league clean <database>` drops
/// its data and the identities it kept, once it has stopped.
#[test]
fn a_served_system_is_found_from_any_folder_and_its_data_cleaned_by_name() {
    let tag = unique_tag();
    let home = std::env::temp_dir().join(format!("league-xdg-{tag}"));
    let (started_in, asked_from) = (home.join("project"), home.join("elsewhere"));
    for dir in [&started_in, &asked_from] {
        std::fs::create_dir_all(dir).expect("a folder");
    }
    let database = format!("league_cli_xdg_{tag}");
    let command = |cwd: &Path, args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_league"));
        command
            .args(args)
            .current_dir(cwd)
            .env("RUST_LOG", "warn")
            .env("XDG_STATE_HOME", &home)
            .env_remove("LEAGUE_STATE_FILE")
            .env_remove("LEAGUE_MANAGER_URL")
            .env_remove("LEAGUE_OPERATOR_TOKEN")
            .env_remove("LEAGUE_ID");
        command
    };
    let state_file = home.join("league").join("state.json");
    let serve = || {
        let child = command(
            &started_in,
            &[
                "serve",
                "--referees",
                "1",
                "--gateway-addr",
                "127.0.0.1:0",
                "--database",
                &database,
                "--move-timeout",
                "7s",
                "--think-time",
                "10ms",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("league serve starts");
        let pid = child.id();
        let served = Served {
            child,
            database: database.clone(),
            dir: home.clone(),
        };
        let state = wait_for(
            "league serve writes its state in the user's state directory",
            SERVE_WITHIN,
            || {
                let text = std::fs::read_to_string(&state_file).ok()?;
                let state: serde_json::Value = serde_json::from_str(&text).ok()?;
                (state["pid"] == pid).then_some(state)
            },
        );
        (served, state["league_id"].as_str().unwrap_or_default().to_owned())
    };

    let (mut served, first) = serve();
    let (game, time) = first.split_at("even_odd-".len());
    assert_eq!(game, "even_odd-", "{first}");
    assert!(
        time.len() == 13 && time.chars().filter(|c| *c == '-').count() == 1,
        "YYYYMMDD-HHMM: {first}"
    );
    let output = command(&asked_from, &["leagues", "--output", "csv"])
        .output()
        .expect("runs");
    let leagues = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        leagues
            .lines()
            .any(|line| line.starts_with(&format!("{first},even_odd,registering,"))),
        "{leagues}"
    );
    interrupt(&mut served);
    let (mut served, again) = serve();
    assert_eq!(again, first, "a serve started again carries its first league on");
    interrupt(&mut served);
    assert_eq!(
        timings(&database, &first),
        (7_000, 5_000),
        "serve's --move-timeout, and the league's own join timeout"
    );

    let output = command(&asked_from, &["clean", &database])
        .output()
        .expect("runs");
    let cleaned = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        cleaned.starts_with(&format!("dropped database {database} and the identities")),
        "{cleaned}"
    );
    assert!(!home.join("league").join("serve").join(&database).exists());
    let output = command(&asked_from, &["clean", "league_somebody_elses"])
        .output()
        .expect("runs");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("is not a database of `league run`"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The move and join timeouts, in milliseconds, of `league` in the database `name`.
fn timings(name: &str, league: &str) -> (i64, i64) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let url = std::env::var("DATABASE_URL")
            .unwrap_or_else(|_| league_manager::postgres::LOCAL_DEFAULT_URL.to_owned());
        let url = league_manager::postgres::with_database(&url, name);
        let pool = sqlx::PgPool::connect(&url).await.expect("the served database");
        let timings: (i64, i64) =
            sqlx::query_as("select move_timeout_ms, join_timeout_ms from leagues where league_id = $1")
                .bind(league)
                .fetch_one(&pool)
                .await
                .expect("the league's timings");
        pool.close().await;
        timings
    })
}

/// An agent on https whose certificate the league does not trust registers (registration never
/// reaches it) and then loses its match technically: the result's reason, `league warnings` and the
/// warning's example all say the certificate is not trusted and name LEAGUE_EXTRA_ROOTS.
#[tokio::test(flavor = "multi_thread")]
async fn an_https_agent_whose_certificate_is_not_trusted_is_told_so() {
    let place = Place::new("cli-tls");
    let state_file = place.state_file.clone();
    let (_served, state) = place.serve(&["--players", "1", "--league", "league_even_odd"], |command| {
        command.env_remove("LEAGUE_EXTRA_ROOTS");
    });
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
    wait_until_completed(&state_file, "league_even_odd,even_odd");
    assert!(agents.received().is_empty(), "{:?}", agents.received());

    let played: serde_json::Value = serde_json::from_str(&ok(
        &state_file,
        &["match", "R1M1", "--league", "league_even_odd", "--output", "json"],
    ))
    .expect("JSON");
    let result = &played["result"];
    assert_eq!(result["status"], "technical_loss", "{played}");
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

/// `league serve` and `league create` never choose an id whose results folder exists (a `league run`
/// made here this minute), and `create` refuses such an id when asked for it.
#[test]
fn serve_and_create_never_choose_an_id_whose_results_folder_exists() {
    let place = Place::new("ids");
    let results = place.dir.join("results");
    // The default ids of this minute and the next, as `league run` here names its folders.
    let now = std::time::SystemTime::now();
    let taken: Vec<String> = [now, now + Duration::from_secs(60)]
        .into_iter()
        .map(|at| {
            league_report::results_folder::default_league_id(league_domain::GameType::EvenOdd, at)
                .expect("an id")
                .to_string()
        })
        .collect();
    for id in &taken {
        std::fs::create_dir_all(results.join(id)).expect("created");
        std::fs::write(results.join(id).join("index.html"), "a run's results").expect("written");
    }
    let dir = place.dir.clone();
    let (_served, state) = place.serve(&["--players", "2", "--referees", "1"], |command| {
        command.current_dir(&dir);
    });
    let served = state["league_id"].as_str().expect("the served league").to_owned();
    assert!(
        served.starts_with("even_odd-") && !taken.contains(&served),
        "{served} {taken:?}"
    );
    let in_place = |args: &[&str]| {
        league(&place.state_file, args)
            .current_dir(&place.dir)
            .output()
            .expect("the league binary runs")
    };
    let created = in_place(&["create", "--output", "csv"]);
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let stdout = String::from_utf8_lossy(&created.stdout).into_owned();
    let id = stdout.lines().nth(1).expect("the new league's id").to_owned();
    assert!(
        id.starts_with("even_odd-") && !taken.contains(&id) && id != served,
        "{id} {served} {taken:?}"
    );
    let refused = in_place(&["create", "--league", &taken[0]]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(&format!(
            "results/{} already holds the results of a league {}",
            taken[0], taken[0]
        )),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    for id in &taken {
        let kept = std::fs::read_to_string(results.join(id).join("index.html")).expect("kept");
        assert_eq!(kept, "a run's results");
    }
}
