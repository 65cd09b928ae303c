//! End to end with players that are real MCP servers (tests/agents/mcp_server_player.py: the official
//! MCP Python SDK's server, one tool per message it handles), registered through the gateway's own MCP
//! endpoint with the SDK's client. Nothing tells the gateway what they are: it learns it from their
//! first answer (ADR 0046) and calls them as an MCP client from then on, one session per agent and
//! replica. Each league is a real `league run` with two gateway replicas; it must finish with no
//! technical loss and a table that adds up.

use std::path::PathBuf;
use std::process::Stdio;

use league_testkit::LeagueRun;
use league_testkit::league_run::{checked_table, summaries};
use tokio::process::{Child, Command};

const REPOSITORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The interpreter of the environment `scripts/python-env` prepares (the MCP SDK installed).
async fn sdk_python() -> PathBuf {
    let output = Command::new(format!("{REPOSITORY}/scripts/python-env"))
        .output()
        .await
        .expect("scripts/python-env runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scripts/python-env could not prepare the MCP SDK:\n{stderr}"
    );
    let python = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    assert!(python.is_file(), "not an interpreter: {python:?}\n{stderr}");
    python
}

fn mcp_player(python: &PathBuf, gateway: &str, name: &str, mode: &str) -> Child {
    Command::new(python)
        .arg(format!("{REPOSITORY}/tests/agents/mcp_server_player.py"))
        .args([gateway, name, mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the MCP player starts")
}

#[tokio::test]
async fn players_that_are_mcp_servers_finish_a_league() {
    let python = sdk_python().await;
    let args = [
        "--players",
        "2",
        "--external-players",
        "4",
        "--referees",
        "2",
        "--gateways",
        "2",
        "--move-timeout",
        "3s",
    ];
    let league = LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 2).await;
    let (gateway, other_replica) = (league.gateways[0].clone(), league.gateways[1].clone());
    let agents = vec![
        mcp_player(&python, &gateway, "alpha", "forgetful"),
        mcp_player(&python, &gateway, "bravo", "sessions"),
        mcp_player(&python, &other_replica, "charlie", "sessions"),
        mcp_player(&python, &other_replica, "delta", "stateless"),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Six players: five rounds, five matches each, and every league event.
        for kind in [
            "GAME_INVITATION",
            "CHOOSE_PARITY_CALL",
            "GAME_OVER",
            "ROUND_ANNOUNCEMENT",
        ] {
            assert_eq!(summary["received"][kind], 5, "{kind}: {summary}");
        }
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        // At most the greeting, in the manager's other sender form, refused once per replica.
        let refused = summary["refused"].as_object().expect("refusals");
        assert!(
            refused
                .iter()
                .all(|(reason, count)| reason == "sender" && count.as_u64() <= Some(2)),
            "{summary}"
        );
    }
    // A session per agent and replica, kept for the whole league (the stateless server has none)...
    for summary in &summaries[1..3] {
        let sessions = summary["sessions"].as_u64().expect("a count");
        assert!((1..=2).contains(&sessions), "{sessions} sessions: {summary}");
    }
    assert_eq!(summaries[3]["sessions"], 0, "{}", summaries[3]);
    // ... and one more when the server forgets one: the call it refused went in the new session (the
    // forgetful agent missed no message above).
    let forgetful = &summaries[0];
    assert_eq!(forgetful["forgotten"], 1, "{forgetful}");
    let sessions = forgetful["sessions"].as_u64().expect("a count");
    assert!((2..=3).contains(&sessions), "{sessions} sessions: {forgetful}");
    checked_table(&output, 6, 5, &summaries);
}
