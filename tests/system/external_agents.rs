//! End to end with external agents, written in Python (tests/agents/, standard library only) the way
//! other teams write theirs, against a real `league run` with two gateway replicas behind it.
//!
//! - Three players, each in a dialect real agents use — message-type methods with full envelopes;
//!   canonical methods answering by separate calls; peer-b's sloppy envelopes — finish a league
//!   alongside three bots. The agent that answers by separate calls sends them to the replica it did
//!   not register with, so its replies must travel through the manager's relay.
//! - An external referee (peer-a's START_MATCH style) is the league's only referee: it is given every
//!   match, reaches bots and external players through the gateway's player paths, and reports each
//!   result through the other replica. Its reports carry no transcript (the replica that relayed the
//!   calls is not the one reporting), so the results folder does not verify.

use league_testkit::LeagueRun;
use league_testkit::league_run::{checked_table, python, summaries};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const REFEREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/agents/league_referee.py"
);

/// `league run` with `args` and two gateway replicas, as every test here uses it.
async fn start_league(args: &[&str]) -> LeagueRun {
    let args = [args, &["--gateways", "2", "--move-timeout", "3s"]].concat();
    LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 2).await
}

#[tokio::test]
async fn python_agents_in_three_dialects_finish_a_league_with_bots() {
    let league = start_league(&["--players", "3", "--external-players", "3", "--referees", "2"]).await;
    let (gateway, other_replica) = (league.gateways[0].clone(), league.gateways[1].clone());
    let (gateway, other_replica) = (gateway.as_str(), other_replica.as_str());
    let agents = vec![
        python(AGENT, &[gateway, "message_type", "alpha"]),
        python(AGENT, &[gateway, "separate", "bravo", other_replica]),
        python(AGENT, &[gateway, "sloppy", "charlie"]),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Six players: five rounds, five matches each, and every league event once.
        assert_eq!(summary["received"]["GAME_INVITATION"], 5, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 5, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        assert_eq!(summary["received"]["ROUND_ANNOUNCEMENT"], 5, "{summary}");
    }
    checked_table(&output, 6, 5, &summaries);
}

#[tokio::test]
async fn an_external_referee_runs_every_match_through_the_gateway() {
    let league = start_league(&["--players", "2", "--external-players", "2", "--referees", "0"]).await;
    let (gateway, other_replica) = (league.gateways[0].clone(), league.gateways[1].clone());
    let (gateway, other_replica) = (gateway.as_str(), other_replica.as_str());
    let mut referee = python(REFEREE, &[gateway, "zulu", other_replica]);
    let agents = vec![
        python(AGENT, &[gateway, "message_type", "alpha"]),
        python(AGENT, &[other_replica, "sloppy", "charlie"]),
    ];
    let (output, workdir) = league.finish_with_results().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Four players: three rounds, three matches each, every one refereed by the external referee.
        assert_eq!(summary["received"]["GAME_INVITATION"], 3, "{summary}");
        assert_eq!(summary["received"]["CHOOSE_PARITY_CALL"], 3, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 3, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
    }
    checked_table(&output, 4, 3, &summaries);

    // The referee printed a line per reported match: all six, each accepted once.
    referee.start_kill().expect("stop the referee");
    let printed = referee.wait_with_output().await.expect("referee output");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&printed.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let errors: Vec<_> = lines.iter().filter(|line| line.get("error").is_some()).collect();
    assert!(errors.is_empty(), "referee errors: {errors:?}");
    let mut reported: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["reported"].as_str())
        .collect();
    reported.sort_unstable();
    assert_eq!(
        reported,
        ["R1M1", "R1M2", "R2M1", "R2M2", "R3M1", "R3M2"],
        "{lines:?}"
    );
    for line in lines.iter().filter(|line| line.get("reported").is_some()) {
        assert_eq!(line["answer"]["status"], "ACCEPTED", "{line}");
        assert_eq!(line["answer"]["duplicate"], false, "{line}");
    }

    // Its reports reached the replica that did not relay its calls, so they carry no transcript: the
    // results are recorded, but the folder does not verify, and says why (docs/protocol.md).
    let folders: Vec<_> = std::fs::read_dir(workdir.as_ref().join("results"))
        .expect("results/")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let refused = crate::results_archive::verify(&folders[0]);
    let stderr = crate::results_archive::text(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("with no transcript"), "{stderr}");
}
