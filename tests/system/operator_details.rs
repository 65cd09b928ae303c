//! Issue 55's smaller points through the real binary: `--help` shows no empty default; a transcript's
//! first state reads alone (not `unspecified → …`); `league report` reads the running system's league,
//! as the other commands do; the results folder's luck line says what its numbers show, not that the
//! game is luck; a running match has its start; and a league whose run was interrupted is reported
//! stopped, not in progress.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use league_testkit::wait_for;

use super::operator_cli::{Place, Run, SERVE_WITHIN, league, ok, output, wait_until_completed};

#[test]
fn help_shows_no_empty_default() {
    for command in ["report", "create"] {
        let (help, said, code) = output(&mut league(Path::new("no-state.json"), &[command, "--help"]));
        assert_eq!(code, Some(0), "{said}");
        assert!(
            !help.contains("[default: \"\"]"),
            "league {command} --help:\n{help}"
        );
    }
}

#[test]
fn a_served_league_reads_plainly_and_is_reported_by_default() {
    let place = Place::new("details");
    let state_file = place.state_file.clone();
    // Every player says even: every match a draw, so all players are level and chance explains all.
    let (_served, _) = place.serve(
        &[
            "--players",
            "4",
            "--referees",
            "1",
            "--strategies",
            "always_even",
            "--league",
            "served",
            "--auto-start",
            "4",
        ],
        |_| {},
    );
    wait_until_completed(&state_file, "served,even_odd");
    // A newer league: the newest is no longer the running system's.
    ok(&state_file, &["create", "--league", "newer"]);

    let transcript = ok(
        &state_file,
        &[
            "match",
            "R1M1",
            "--league",
            "served",
            "--section",
            "transcript",
            "--output",
            "csv",
        ],
    );
    assert!(
        transcript.contains(",state,,,waiting_for_players"),
        "{transcript}"
    );
    assert!(!transcript.contains("unspecified"), "{transcript}");

    let out = place.dir.join("results");
    let (written, said, code) = output(&mut league(
        &state_file,
        &["report", "--out", &out.to_string_lossy()],
    ));
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("reading `league serve`"), "{said}");
    assert!(written.contains("results of served: "), "{written}");
    let index = std::fs::read_to_string(out.join("served").join("index.html")).expect("index.html");
    assert!(!index.contains("is mostly luck"), "the game blamed");
    assert!(
        index.contains("Within chance in this league")
            && index.contains("may be equally good, or even_odd mostly luck"),
        "the luck line"
    );
}

#[test]
fn a_running_match_has_its_start_and_an_interrupted_league_is_reported_stopped() {
    let place = Place::new("stopped");
    let state_file = place.state_file.clone();
    // Players that never answer: the one match runs until the join timeout, far off.
    let mut run = Run(league(
        &state_file,
        &[
            "run",
            "--players",
            "2",
            "--referees",
            "1",
            "--strategies",
            "silent",
            "--join-timeout",
            "10m",
            "--league",
            "stopped",
            "--gateway-addr",
            "127.0.0.1:0",
        ],
    )
    .current_dir(&place.dir)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("league run starts"));
    let stderr = run.0.stderr.take().expect("stderr");
    let (lines, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let schedule = wait_for("the match runs", SERVE_WITHIN, || {
        let (schedule, _, code) = output(&mut league(&state_file, &["schedule", "--output", "csv"]));
        (code == Some(0) && schedule.contains(",running,")).then_some(schedule)
    });
    let row = schedule
        .lines()
        .find(|line| line.contains(",running,"))
        .expect("the running match");
    assert!(row.contains(",running,20"), "no start: {row}");
    let shown = ok(&state_file, &["match", "R1M1", "--output", "json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("JSON");
    assert!(
        shown["match"]["started_at"]
            .as_str()
            .is_some_and(|at| at.starts_with("20")),
        "{shown}"
    );

    // Ctrl-C: the run stops, keeping its database, which a report reads afterwards.
    let status = Command::new("kill")
        .args(["-INT", &run.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let database = wait_for("the run names its kept database", SERVE_WITHIN, || {
        said.recv_timeout(Duration::from_millis(100))
            .ok()
            .and_then(|line| {
                let (_, rest) = line.split_once("the league so far is in database ")?;
                rest.split_whitespace().next().map(str::to_owned)
            })
    });
    run.0.wait().expect("the run is reaped");
    let out = place.dir.join("results-again");
    let (_, said, code) = output(&mut league(
        &state_file,
        &["report", "--database", &database, "--out", &out.to_string_lossy()],
    ));
    let index = std::fs::read_to_string(out.join("stopped").join("index.html"));
    let (_, cleaned, _) = output(league(&state_file, &["clean", &database]).current_dir(&place.dir));
    assert_eq!(code, Some(0), "{said}");
    let index = index.expect("index.html");
    assert!(
        index.contains("stopped in round 1 of 1 (its run was interrupted)") && !index.contains("in progress"),
        "{index}\n{cleaned}"
    );
}
