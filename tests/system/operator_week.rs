//! An operator's week through the real binary (issue 55): a `league serve` and `league run`s up at once
//! each keep their own state, and the commands ask serve unless told otherwise (`LEAGUE_SYSTEM`),
//! saying which they ask; a run notes its database before any service starts, so that a bare `league
//! clean` finds it after a SIGKILL; no command panics when its reader goes away; enrolling reports each
//! player; `league player` needs an id (the bot host is `league player-host`); `league players` lists
//! who is registered; a run waiting for external agents says for how many and where; `league standings`
//! and `league ratings` rate as the results folder does, with names.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use league_testkit::wait_for;

use super::local_run::database_exists;
use super::operator_cli::{Place, Run, SERVE_WITHIN, league, ok, output, wait_until_completed};

#[test]
fn serve_and_runs_keep_their_own_state_and_a_killed_runs_database_is_found() {
    let place = Place::new("week");
    let state_file = place.state_file.clone();
    let (served, _) = place.serve(
        &["--players", "2", "--referees", "1", "--league", "served"],
        |_| {},
    );
    let serve_pid = served.child.id();

    // A run that waits for an external agent that never comes: up until killed.
    let waiting = league(
        &state_file,
        &[
            "run",
            "--players",
            "2",
            "--referees",
            "1",
            "--external-players",
            "1",
            "--league",
            "waiting",
            "--gateway-addr",
            "127.0.0.1:0",
        ],
    )
    .current_dir(&place.dir)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("league run starts");
    let mut waiting = Run(waiting);
    let run_pid = waiting.0.id();
    let (lines, said) = std::sync::mpsc::channel();
    let stderr = waiting.0.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    // The launcher says what the league waits for, and where.
    wait_for("the run says what it waits for", SERVE_WITHIN, || {
        said.recv_timeout(Duration::from_millis(100)).ok().filter(|line| {
            line.starts_with("2 of 3 registered — waiting for 1 external agent at http://127.0.0.1:")
                && line.ends_with("/mcp")
        })
    });
    let run_file = place.dir.join(format!("state.run-{run_pid}.json"));
    wait_for("the run writes its own state file", SERVE_WITHIN, || {
        run_file.exists().then_some(())
    });
    // Its database was noted with it, before anything started.
    let noted = std::fs::read_to_string(place.dir.join("kept-databases")).expect("the notes");
    let database = noted
        .lines()
        .find_map(|line| line.strip_suffix(&format!(" {run_pid}")))
        .expect("the run's database is noted with its pid")
        .to_owned();

    // Serve unless told otherwise, and said so.
    let (leagues, said, code) = output(&mut league(&state_file, &["leagues", "--output", "csv"]));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!("asking `league serve` (pid {serve_pid},")),
        "{said}"
    );
    assert!(
        leagues.contains("\nserved,") && !leagues.contains("waiting,"),
        "{leagues}"
    );
    let (leagues, said, code) =
        output(league(&state_file, &["leagues", "--output", "csv"]).env("LEAGUE_SYSTEM", "run"));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!("asking `league run` (pid {run_pid},")),
        "{said}"
    );
    assert!(
        leagues.contains("\nwaiting,") && !leagues.contains("served,"),
        "{leagues}"
    );

    // A run that finishes takes only its own state with it: serve is still found.
    let (_, said, code) = output(
        league(
            &state_file,
            &[
                "run",
                "--players",
                "2",
                "--quiet",
                "--gateway-addr",
                "127.0.0.1:0",
            ],
        )
        .current_dir(&place.dir),
    );
    assert_eq!(code, Some(0), "{said}");
    let (leagues, said, code) = output(&mut league(&state_file, &["leagues", "--output", "csv"]));
    assert_eq!(code, Some(0), "{said}");
    assert!(leagues.contains("\nserved,"), "{leagues}");

    // A bare `league clean` leaves a live run's database alone …
    let (cleaned, said, code) = output(league(&state_file, &["clean"]).current_dir(&place.dir));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        cleaned.contains(&format!(
            "kept database {database}: `league run` (pid {run_pid}) plays in it"
        )),
        "{cleaned}"
    );
    assert!(database_exists(&database));
    // … and drops it once the run was killed with SIGKILL, which leaves no word of its own.
    let status = Command::new("kill")
        .args(["-KILL", &run_pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    waiting.0.wait().expect("the run is reaped");
    let (cleaned, said, code) = output(league(&state_file, &["clean"]).current_dir(&place.dir));
    assert_eq!(code, Some(0), "{said}");
    assert!(
        cleaned.contains(&format!("dropped database {database}\n")),
        "{cleaned}"
    );
    assert!(!database_exists(&database), "{database} is still there");
    // Named again, it is said to be gone, not dropped a second time.
    let (cleaned, said, code) = output(league(&state_file, &["clean", &database]).current_dir(&place.dir));
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(cleaned, format!("no database {database} (dropped already)\n"));
    drop(served);
}

#[test]
fn commands_end_quietly_on_a_closed_pipe_report_each_player_and_list_players() {
    let place = Place::new("roster");
    let state_file = place.state_file.clone();
    let (_served, _) = place.serve(
        &["--players", "2", "--referees", "1", "--league", "first"],
        |_| {},
    );
    ok(&state_file, &["create", "--league", "second"]);

    // A reader gone before the command writes: no panic, the quiet status of a closed pipe.
    for args in [
        &["leagues"][..],
        &["schedule", "--league", "first"],
        &["referees"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let (_, said, code) = output(league(&state_file, args).stdout(writer));
        assert!(!said.contains("panicked"), "league {args:?}: {said}");
        assert_eq!(code, Some(141), "league {args:?}: {said}");
    }

    // One player refused does not hide the other enrolled.
    let (enrolled, said, code) = output(&mut league(
        &state_file,
        &["enroll", "P01", "P99", "--league", "second", "--output", "csv"],
    ));
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(enrolled, "league,player,enrolled,started\nsecond,P01,yes,no\n");
    assert!(said.contains("enrolling P99: no registered player P99"), "{said}");
    assert!(
        said.contains("1 of 2 players not enrolled in second (P99); the others are"),
        "{said}"
    );

    // Who is here: the bots with their strategies, when last heard from, their leagues.
    let players = ok(&state_file, &["players", "--output", "csv"]);
    let lines: Vec<&str> = players.lines().collect();
    assert_eq!(
        lines[0], "player,name,strategy,last seen,leagues,warnings",
        "{players}"
    );
    assert_eq!(lines.len(), 3, "{players}");
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(first[0], "P01", "{players}");
    assert!(
        !first[2].is_empty() && first[2] != "external",
        "a bot's strategy: {players}"
    );
    assert!(
        first[3].ends_with('Z') && first[3].len() >= 20,
        "a time: {players}"
    );
    assert_eq!(first[4], "first second", "{players}");
    assert_eq!(first[5], "0", "{players}");
    let second: Vec<&str> = lines[2].split(',').collect();
    assert_eq!((second[0], second[4]), ("P02", "first"), "{players}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&state_file, &["players", "--output", "json"])).expect("JSON");
    assert_eq!(
        json["players"][0]["leagues"],
        serde_json::json!(["first", "second"])
    );

    // `league player` shows a player and wants its id; the bot host is another command.
    let bare = league(&state_file, &["player"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("runs");
    let mut bare = Run(bare);
    let exited = wait_for(
        "`league player` without an id ends",
        Duration::from_secs(30),
        || bare.0.try_wait().expect("wait"),
    );
    assert_eq!(exited.code(), Some(2), "a usage error, not a bot host");
    let (help, _, code) = output(&mut league(&state_file, &["player-host", "--help"]));
    assert_eq!(code, Some(0));
    assert!(help.contains("player host"), "{help}");
}

#[test]
fn the_command_line_rates_players_as_the_results_folder_does_with_names() {
    let place = Place::new("rated");
    let state_file = place.state_file.clone();
    // Players who differ whatever the draw: the decliner loses both its matches on a technical loss,
    // while the two others each beat it.
    let (_served, _) = place.serve(
        &[
            "--players",
            "3",
            "--referees",
            "1",
            "--strategies",
            "random,declines,always_even",
            "--league",
            "rated",
        ],
        |_| {},
    );
    ok(&state_file, &["start", "--league", "rated"]);
    wait_until_completed(&state_file, "rated,even_odd");
    let results = place.dir.join("results");
    ok(
        &state_file,
        &[
            "report",
            "--league",
            "rated",
            "--out",
            results.to_str().expect("a path"),
        ],
    );
    let folder = std::fs::read_to_string(results.join("rated").join("ratings.csv")).expect("ratings.csv");

    // `league ratings` is the folder's ratings.csv, names and all.
    let ratings = ok(&state_file, &["ratings", "--league", "rated", "--output", "csv"]);
    assert_eq!(ratings, folder);
    let rows: Vec<Vec<&str>> = ratings
        .lines()
        .skip(1)
        .map(|row| row.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{ratings}");
    assert!(
        rows.iter().all(|row| row[2].starts_with("bot-")),
        "names: {ratings}"
    );
    let last = rows
        .iter()
        .find(|row| row[2] == "bot-declines")
        .expect("the decliner rated");
    assert_eq!(
        (last[0], last[4]),
        ("3", "0.000"),
        "two technical losses: {ratings}"
    );
    let deviations: std::collections::BTreeSet<&str> = rows.iter().map(|row| row[5]).collect();
    assert!(deviations.len() > 1, "each player's own deviation: {ratings}");

    // `league standings` shows the same rating and deviation beside each name.
    let standings = ok(
        &state_file,
        &["standings", "--league", "rated", "--output", "csv"],
    );
    let header: Vec<&str> = standings.lines().next().expect("a header").split(',').collect();
    assert_eq!(header[2], "display_name", "{standings}");
    assert_eq!(&header[12..], ["points_per_match", "deviation"], "{standings}");
    for row in standings.lines().skip(1) {
        let cells: Vec<&str> = row.split(',').collect();
        let rated = rows.iter().find(|rated| rated[1] == cells[1]).expect("rated");
        assert_eq!(
            (cells[2], cells[12], cells[13]),
            (rated[2], rated[4], rated[5]),
            "{standings}"
        );
    }
    // The table too names every player.
    let table = ok(&state_file, &["ratings", "--league", "rated"]);
    assert!(rows.iter().all(|row| table.contains(row[2])), "{table}");
}
