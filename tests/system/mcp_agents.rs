//! End to end with players that are real MCP servers, one tool per message each handles, registered
//! through the gateway's own MCP endpoint with their SDK's client: tests/agents/mcp_server_player.py on
//! the official MCP Python SDK, and tests/agents/mcp_ts_player on the official TypeScript SDK. Nothing
//! tells the gateway what they are: it asks them when their answer to a plain call is one an MCP server
//! gives (a 406, a 400 for want of a session, a JSON-RPC error before any result; ADR 0046, ADR 0071)
//! and calls them as an MCP client from then on, one session per agent and replica. Each league is a
//! real `league run` with two gateway replicas; it must finish with no technical loss and a table that
//! adds up. Beside them, players that are MCP clients only (tests/agents/mcp_client_player.py).

use std::path::PathBuf;
use std::process::Stdio;

use league_testkit::LeagueRun;
use league_testkit::league_run::{checked_table, summaries};
use tokio::process::{Child, Command};

const REPOSITORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The interpreter of the environment `scripts/python-env` prepares (the MCP SDK installed).
pub(crate) async fn sdk_python() -> PathBuf {
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

/// The node interpreter, with the TypeScript SDK installed for tests/agents/mcp_ts_player
/// (`scripts/mcp-ts-env`).
async fn sdk_node() -> PathBuf {
    let output = Command::new(format!("{REPOSITORY}/scripts/mcp-ts-env"))
        .output()
        .await
        .expect("scripts/mcp-ts-env runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "scripts/mcp-ts-env could not prepare the TypeScript MCP SDK:\n{stderr}"
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

fn ts_player(node: &PathBuf, gateway: &str, name: &str, mode: &str) -> Child {
    Command::new(node)
        .arg(format!("{REPOSITORY}/tests/agents/mcp_ts_player/player.mjs"))
        .args([gateway, name, mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the TypeScript MCP player starts")
}

pub(crate) fn mcp_player(python: &PathBuf, gateway: &str, name: &str, mode: &str) -> Child {
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

/// The servers that answer a plain JSON-RPC call with no 406: the TypeScript SDK's stateful example (400
/// "No valid session ID"), and the Python SDK in stateless JSON mode (an ordinary -32601); with the
/// TypeScript SDK's stateless server (406) beside them. Each is asked `initialize` once and plays every
/// match.
#[tokio::test]
async fn mcp_servers_that_answer_a_plain_call_without_406_finish_a_league() {
    let (python, node) = (sdk_python().await, sdk_node().await);
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
        ts_player(&node, &gateway, "echo", "stateful"),
        ts_player(&node, &other_replica, "foxtrot", "stateless"),
        mcp_player(&python, &gateway, "golf", "json"),
        ts_player(&node, &other_replica, "hotel", "stateful"),
    ];
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
        for kind in [
            "GAME_INVITATION",
            "CHOOSE_PARITY_CALL",
            "GAME_OVER",
            "ROUND_ANNOUNCEMENT",
        ] {
            assert_eq!(summary["received"][kind], 5, "{kind}: {summary}");
        }
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        let refused = summary["refused"].as_object().expect("refusals");
        assert!(
            refused
                .iter()
                .all(|(reason, count)| reason == "sender" && count.as_u64() <= Some(2)),
            "{summary}"
        );
    }
    // The stateful TypeScript servers refused a plain call (400) at most once per replica, before the
    // gateway asked them: a session per agent and replica from then on.
    for summary in [&summaries[0], &summaries[3]] {
        let plain = summary["plain_calls"].as_u64().expect("a count");
        assert!((1..=2).contains(&plain), "{plain} plain calls: {summary}");
        let sessions = summary["sessions"].as_u64().expect("a count");
        assert!((1..=2).contains(&sessions), "{sessions} sessions: {summary}");
    }
    checked_table(&output, 6, 5, &summaries);
}

/// Players that speak to the league only as MCP clients, on the official Python SDK's client
/// (tests/agents/mcp_client_player.py): they register with `tools/call register_player` on the
/// gateway's `/mcp`, are called canonically at their own plain JSON-RPC endpoint, and read the standings
/// with `tools/call get_standings` at the end. Four of them play a league with no technical loss.
#[tokio::test]
async fn players_that_are_mcp_clients_finish_a_league() {
    let python = sdk_python().await;
    let args = [
        "--players",
        "0",
        "--external-players",
        "4",
        "--referees",
        "2",
        "--move-timeout",
        "3s",
    ];
    let league = LeagueRun::start(env!("CARGO_BIN_EXE_league"), &args, 1).await;
    let gateway = league.gateways[0].clone();
    let agents = ["echo", "foxtrot", "golf", "hotel"]
        .into_iter()
        .map(|name| {
            Command::new(&python)
                .arg(format!("{REPOSITORY}/tests/agents/mcp_client_player.py"))
                .args([gateway.as_str(), name])
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .expect("the MCP client player starts")
        })
        .collect();
    let output = league.finish().await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Four players: three rounds, three matches each, and every league event.
        for kind in [
            "GAME_INVITATION",
            "CHOOSE_PARITY_CALL",
            "GAME_OVER",
            "ROUND_ANNOUNCEMENT",
        ] {
            assert_eq!(summary["received"][kind], 3, "{kind}: {summary}");
        }
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        assert_eq!(summary["refused"], serde_json::json!({}), "{summary}");
        assert_eq!(summary["standings_rows"], 4, "read through MCP: {summary}");
    }
    checked_table(&output, 4, 3, &summaries);
}
