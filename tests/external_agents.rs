//! End to end with external agents, written in Python (tests/agents/, standard library only) the way
//! other teams write theirs, against a real `league run` with two gateway replicas behind it.
//!
//! - Three players, each in a dialect real agents use — message-type methods with full envelopes;
//!   canonical methods answering by separate calls; peer-b's sloppy envelopes — finish a league
//!   alongside three bots. The agent that answers by separate calls sends them to the replica it did
//!   not register with, so its replies must travel through the manager's relay.
//! - An external referee (peer-a's START_MATCH style) is the league's only referee: it is given every
//!   match, reaches bots and external players through the gateway's player paths, and reports each
//!   result through the other replica.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");
const REFEREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/agents/league_referee.py"
);

/// Starts `league run` with `args` and two gateways; returns it, its output, and both gateways' `/mcp`.
async fn start_league(args: &[&str]) -> (Child, BufReader<ChildStdout>, Vec<String>) {
    let mut league = Command::new(env!("CARGO_BIN_EXE_league"))
        .arg("run")
        .args(args)
        .args([
            "--gateway-addr",
            "127.0.0.1:0",
            "--gateways",
            "2",
            "--join-timeout",
            "3s",
            "--move-timeout",
            "3s",
            "--retry-delay",
            "100ms",
            "--deadline",
            "120s",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("league run starts");
    let mut stdout = BufReader::new(league.stdout.take().expect("stdout"));
    // The launcher says where the gateways listen before the league can start (it waits for players).
    let mut line = String::new();
    let mut gateways = Vec::new();
    while gateways.len() < 2 {
        line.clear();
        let read = stdout.read_line(&mut line).await.expect("launcher output");
        assert!(read > 0, "league run ended before announcing both gateways");
        if let Some(url) = line
            .trim()
            .split(" to ")
            .nth(1)
            .filter(|_| line.starts_with("gateway:"))
        {
            gateways.push(url.to_owned());
        }
    }
    (league, stdout, gateways)
}

fn python(script: &str, args: &[&str]) -> Child {
    Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the agent")
}

/// Waits for the league to finish; returns the rest of the launcher's output.
async fn finish(mut league: Child, mut stdout: BufReader<ChildStdout>) -> String {
    let mut rest = String::new();
    tokio::time::timeout(Duration::from_secs(180), stdout.read_to_string(&mut rest))
        .await
        .expect("the league finishes")
        .expect("launcher output");
    let status = league.wait().await.expect("league run exits");
    assert!(status.success(), "league run failed:\n{rest}");
    rest
}

/// Each external player's summary, printed when it got LEAGUE_COMPLETED.
async fn summaries(agents: Vec<Child>) -> Vec<serde_json::Value> {
    let mut summaries = Vec::new();
    for agent in agents {
        let output = tokio::time::timeout(Duration::from_secs(60), agent.wait_with_output())
            .await
            .expect("the agent stops after LEAGUE_COMPLETED")
            .expect("agent output");
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let summary: serde_json::Value =
            serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("summary: {text}"));
        assert_eq!(summary["completed"], true, "{summary}");
        assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
        summaries.push(summary);
    }
    summaries
}

/// The final table's rows (split on whitespace), checked: every player played `played` matches, nobody
/// lost technically, and the points add up.
fn checked_table(output: &str, players: usize, played: u32) -> Vec<Vec<&str>> {
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
        assert_eq!(technical, 0, "agents that answer never lose technically: {row:?}");
        assert_eq!(points, 3 * wins + draws, "{row:?}");
    }
    rows
}

fn assert_in_table(rows: &[Vec<&str>], summaries: &[serde_json::Value], output: &str) {
    for summary in summaries {
        let player_id = summary["player_id"].as_str().expect("player id");
        assert!(
            rows.iter().any(|row| row[1] == player_id),
            "{player_id} in the table:\n{output}"
        );
    }
}

#[tokio::test]
async fn python_agents_in_three_dialects_finish_a_league_with_bots() {
    let (league, stdout, gateways) =
        start_league(&["--players", "3", "--external-players", "3", "--referees", "2"]).await;
    let (gateway, other_replica) = (gateways[0].as_str(), gateways[1].as_str());
    let agents = vec![
        python(AGENT, &[gateway, "message_type", "alpha"]),
        python(AGENT, &[gateway, "separate", "bravo", other_replica]),
        python(AGENT, &[gateway, "sloppy", "charlie"]),
    ];
    let output = finish(league, stdout).await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Six players: five rounds, five matches each, and every lifecycle message once.
        assert_eq!(summary["received"]["GAME_INVITATION"], 5, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 5, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        assert_eq!(summary["received"]["ROUND_ANNOUNCEMENT"], 5, "{summary}");
    }
    let rows = checked_table(&output, 6, 5);
    assert_in_table(&rows, &summaries, &output);
}

#[tokio::test]
async fn an_external_referee_runs_every_match_through_the_gateway() {
    let (league, stdout, gateways) =
        start_league(&["--players", "2", "--external-players", "2", "--referees", "0"]).await;
    let (gateway, other_replica) = (gateways[0].as_str(), gateways[1].as_str());
    let mut referee = python(REFEREE, &[gateway, "zulu", other_replica]);
    let agents = vec![
        python(AGENT, &[gateway, "message_type", "alpha"]),
        python(AGENT, &[other_replica, "sloppy", "charlie"]),
    ];
    let output = finish(league, stdout).await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Four players: three rounds, three matches each, every one refereed by the external referee.
        assert_eq!(summary["received"]["GAME_INVITATION"], 3, "{summary}");
        assert_eq!(summary["received"]["CHOOSE_PARITY_CALL"], 3, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 3, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
    }
    let rows = checked_table(&output, 4, 3);
    assert_in_table(&rows, &summaries, &output);

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
}
