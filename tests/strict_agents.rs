//! End to end with strict players (tests/agents/strict_player.py): agents that check every message they
//! receive against the specification with tests/agents/conformance.py and refuse anything off-spec the
//! way real agents do (HTTP 401 for a missing token, 400 "Sender not registered" for a manager sender
//! of the other family's form, 400 for a missing field). Each league is a real `league run` with the
//! players in their own processes; it must finish with no technical loss and a table that adds up.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

const STRICT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/strict_player.py");

/// Starts `league run` with `args` and one gateway; returns it, its output, and the gateway's `/mcp`.
async fn start_league(args: &[&str]) -> (Child, BufReader<ChildStdout>, String) {
    let mut league = Command::new(env!("CARGO_BIN_EXE_league"))
        .arg("run")
        .args(args)
        .args([
            "--gateway-addr",
            "127.0.0.1:0",
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
    // The launcher says where the gateway listens before the league can start (it waits for players).
    let mut line = String::new();
    loop {
        line.clear();
        let read = stdout.read_line(&mut line).await.expect("launcher output");
        assert!(read > 0, "league run ended before announcing the gateway");
        if let Some(url) = line
            .trim()
            .split(" to ")
            .nth(1)
            .filter(|_| line.starts_with("gateway:"))
        {
            return (league, stdout, url.to_owned());
        }
    }
}

fn strict_player(gateway: &str, family: &str, name: &str, methods: &str) -> Child {
    Command::new("python3")
        .args([STRICT, gateway, family, name, methods])
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

/// Each strict player's summary: it completed, and met no error of its own.
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
        eprintln!("strict player: {summary}");
        assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
        assert_eq!(summary["completed"], true, "{summary}");
        summaries.push(summary);
    }
    summaries
}

/// The final table: `players` rows, each with `played` matches, no technical loss, points that add up;
/// every strict player in it.
fn check_table(output: &str, players: usize, played: u32, summaries: &[serde_json::Value]) {
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
        assert_eq!(technical, 0, "no technical losses:\n{output}");
        assert_eq!(points, 3 * wins + draws, "{row:?}");
    }
    for summary in summaries {
        let player_id = summary["player_id"].as_str().expect("player id");
        assert!(
            rows.iter().any(|row| row[1] == player_id),
            "{player_id} in the table:\n{output}"
        );
    }
}

/// Every match, every lifecycle message and every refusal a strict player saw: it played `played`
/// matches and refused nothing but, at most once, a registration answer in the other family's form.
fn check_received(summary: &serde_json::Value, played: u64) {
    for kind in [
        "GAME_INVITATION",
        "CHOOSE_PARITY_CALL",
        "GAME_OVER",
        "ROUND_ANNOUNCEMENT",
    ] {
        assert_eq!(summary["received"][kind], played, "{kind}: {summary}");
    }
    assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
    let refused = summary["refused"].as_object().expect("refusals");
    assert!(
        refused.keys().all(|reason| reason == "sender") && summary["registrations"].as_u64() <= Some(2),
        "only a registration answer in the other form may be refused: {summary}"
    );
}

#[tokio::test]
async fn strict_players_of_both_sender_families_finish_a_league() {
    let (league, stdout, gateway) =
        start_league(&["--players", "2", "--external-players", "4", "--referees", "2"]).await;
    let agents = vec![
        strict_player(&gateway, "typed", "alpha", "both"),
        strict_player(&gateway, "typed", "bravo", "both"),
        strict_player(&gateway, "bare", "charlie", "both"),
        strict_player(&gateway, "bare", "delta", "both"),
    ];
    let output = finish(league, stdout).await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Six players: five rounds, five matches each.
        check_received(summary, 5);
    }
    check_table(&output, 6, 5, &summaries);
}

#[tokio::test]
async fn strict_players_that_name_methods_in_lower_case_or_nested_finish_a_league() {
    let (league, stdout, gateway) =
        start_league(&["--players", "2", "--external-players", "2", "--referees", "2"]).await;
    let agents = vec![
        strict_player(&gateway, "typed", "golf", "lower"),
        strict_player(&gateway, "bare", "hotel", "nested"),
    ];
    let output = finish(league, stdout).await;
    let summaries = summaries(agents).await;
    for summary in &summaries {
        // Four players: three rounds, three matches each.
        check_received(summary, 3);
    }
    // The lower-case player registered with the canonical name: each message type costs it the
    // canonical and the upper-case name once (two -32601s), never again.
    let lower = &summaries[0];
    let kinds = lower["received"].as_object().expect("received").len() as u64;
    let unknown = lower["unknown_methods"].as_u64().expect("a count");
    assert!(
        unknown <= 2 * kinds,
        "{unknown} -32601s for {kinds} message types: {lower}"
    );
    // The nested player registered nested: it is called nested from the start.
    assert_eq!(summaries[1]["unknown_methods"], 0, "{}", summaries[1]);
    check_table(&output, 4, 3, &summaries);
}
