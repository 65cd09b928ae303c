//! End to end with external agents: three Python players (tests/agents/league_agent.py, standard
//! library only), each in a dialect real agents use — message-type methods with full envelopes;
//! canonical methods answering by separate calls; peer-b's sloppy envelopes — register through the
//! gateway of a real `league run` and finish a league alongside three bots, with a table that adds up.
//! Two gateway replicas run, and the agent that answers by separate calls sends them to the replica it
//! did not register with, so its replies must travel through the manager's relay.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/agents/league_agent.py");

#[tokio::test]
async fn python_agents_in_three_dialects_finish_a_league_with_bots() {
    let mut league = Command::new(env!("CARGO_BIN_EXE_league"))
        .args([
            "run",
            "--players",
            "3",
            "--external-players",
            "3",
            "--referees",
            "2",
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
            "--gateways",
            "2",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("league run starts");
    let mut stdout = BufReader::new(league.stdout.take().expect("stdout"));
    // The launcher says where the gateway listens before the league can start (it waits for 6 players).
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
    let (gateway, other_replica) = (gateways[0].clone(), gateways[1].clone());
    let agents: Vec<_> = [
        ("message_type", "alpha"),
        ("separate", "bravo"),
        ("sloppy", "charlie"),
    ]
    .into_iter()
    .map(|(style, name)| {
        let mut args = vec![AGENT, gateway.as_str(), style, name];
        if style == "separate" {
            args.push(other_replica.as_str());
        }
        Command::new("python3")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs the agent")
    })
    .collect();
    let mut rest = String::new();
    tokio::time::timeout(Duration::from_secs(180), stdout.read_to_string(&mut rest))
        .await
        .expect("the league finishes")
        .expect("launcher output");
    let status = league.wait().await.expect("league run exits");
    assert!(status.success(), "league run failed:\n{rest}");

    let mut summaries = Vec::new();
    for agent in agents {
        let output = tokio::time::timeout(Duration::from_secs(60), agent.wait_with_output())
            .await
            .expect("the agent stops after LEAGUE_COMPLETED")
            .expect("agent output");
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let summary: serde_json::Value =
            serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("summary: {text}"));
        summaries.push(summary);
    }
    for summary in &summaries {
        assert_eq!(summary["completed"], true, "{summary}");
        assert_eq!(summary["errors"], serde_json::json!([]), "{summary}");
        // Six players: five rounds, five matches each, and every lifecycle message once.
        assert_eq!(summary["received"]["GAME_INVITATION"], 5, "{summary}");
        assert_eq!(summary["received"]["GAME_OVER"], 5, "{summary}");
        assert_eq!(summary["received"]["LEAGUE_COMPLETED"], 1, "{summary}");
        assert_eq!(summary["received"]["ROUND_ANNOUNCEMENT"], 5, "{summary}");
    }

    // The final table: every player played 5, nobody lost technically, points add up.
    let rows: Vec<Vec<&str>> = rest
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("rank"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 6, "six players in the table:\n{rest}");
    for row in &rows {
        let number = |i: usize| row[row.len() - i].parse::<u32>().expect("a number");
        let (played, wins, draws, losses, technical, points) =
            (number(6), number(5), number(4), number(3), number(2), number(1));
        assert_eq!(played, 5, "{row:?}");
        assert_eq!(wins + draws + losses, played, "{row:?}");
        assert_eq!(technical, 0, "agents that answer never lose technically: {row:?}");
        assert_eq!(points, 3 * wins + draws, "{row:?}");
    }
    let external: Vec<&str> = summaries.iter().filter_map(|s| s["player_id"].as_str()).collect();
    assert_eq!(external.len(), 3);
    for player_id in external {
        assert!(
            rows.iter().any(|row| row[1] == player_id),
            "{player_id} in the table:\n{rest}"
        );
    }
}
