//! `/metrics` after a league with misbehaving bots equals what the database says happened: matches,
//! outcomes, technical losses by cause, and — from the recorded transcripts — every timeout and retry.
//! Health and readiness answer on every service.

use std::collections::BTreeMap;
use std::time::Duration;

use league_proto::v2::{Direction, MatchTranscript, transcript_entry};
use league_testkit::observe;

use super::harness::{self, Setup, http_get};

/// One sample of the OpenMetrics text: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("a series and a value");
            let value: f64 = value.parse().expect("a number");
            let (name, labels) = match series.split_once('{') {
                None => (series, BTreeMap::new()),
                Some((name, rest)) => {
                    let labels = rest
                        .trim_end_matches('}')
                        .split("\",")
                        .filter(|pair| !pair.is_empty())
                        .map(|pair| {
                            let (key, value) = pair.split_once("=\"").expect("key=\"value\"");
                            (key.to_owned(), value.trim_end_matches('"').to_owned())
                        })
                        .collect();
                    (name, labels)
                }
            };
            (name.to_owned(), labels, value)
        })
        .collect()
}

/// Each of `counts` (a label's value → how many the transcripts show) is what `metric` counts under
/// `label`, and the metric counts nothing else.
fn assert_counted<K: AsRef<str>>(
    scraped: &[Vec<Sample>],
    metric: &str,
    label: &str,
    counts: &BTreeMap<K, u64>,
) {
    for (value, count) in counts {
        let value = value.as_ref();
        assert_eq!(
            sum(scraped, metric, &[(label, value)]),
            *count,
            "{metric}{{{label}=\"{value}\"}}"
        );
    }
    assert_eq!(
        sum(scraped, metric, &[]),
        counts.values().sum::<u64>(),
        "{metric} in all"
    );
}

/// The sum of `name` over every scraped text, for the samples carrying all of `labels`.
fn sum(scraped: &[Vec<Sample>], name: &str, labels: &[(&str, &str)]) -> u64 {
    let total: f64 = scraped
        .iter()
        .flatten()
        .filter(|(series, found, _)| {
            series == name
                && labels
                    .iter()
                    .all(|(key, value)| found.get(*key).map(String::as_str) == Some(*value))
        })
        .map(|(.., value)| value)
        .sum();
    total as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_add_up_to_the_league_that_was_played() {
    let league = harness::start(Setup {
        players: 5,
        referees: 2,
        strategies: "random,silent,invalid,declines,flaky:1",
        external_players: 0,
        timeout: Duration::from_millis(500),
        env: Vec::new(),
    })
    .await;
    league.finished().await;

    for process in &league.processes {
        assert_eq!(
            http_get(&process.admin_url, "/healthz").await.0,
            200,
            "{}",
            process.name
        );
        assert_eq!(
            http_get(&process.admin_url, "/readyz").await.0,
            200,
            "{}",
            process.name
        );
    }
    let mut referees = Vec::new();
    for process in league
        .processes
        .iter()
        .filter(|process| process.name.starts_with("referee"))
    {
        let (status, text) = http_get(&process.admin_url, "/metrics").await;
        assert_eq!(status, 200);
        referees.push(samples(&text));
    }
    // The manager's gRPC layer times a call once its answer is sent, a moment after the last report's
    // commit completed the league: scrape until that last report is counted.
    let reports = [("method", "/league.v2.ManagerService/ReportMatchResult")];
    let expected = 15 + sum(&referees, "league_referee_report_retries_total", &[]);
    let manager = observe(
        "the manager's metrics counting every report (15, and each retry)",
        Duration::from_secs(10),
        async || {
            let (status, text) = http_get(&league.process("manager").admin_url, "/metrics").await;
            assert_eq!(status, 200);
            let manager = vec![samples(&text)];
            (sum(&manager, "league_rpc_server_duration_seconds_count", &reports) >= expected)
                .then_some(manager)
        },
    )
    .await;
    let (_, text) = http_get(&league.process("players").admin_url, "/metrics").await;
    let players = vec![samples(&text)];

    // What the database recorded.
    let rows: Vec<(String, Vec<String>, String)> = sqlx::query_as(
        "select result_status, at_fault_player_ids, transcript_json::text from matches
         where status = 'finished'",
    )
    .fetch_all(&league.pool)
    .await
    .expect("the results");
    let behaviours: BTreeMap<String, String> = sqlx::query_as::<_, (String, String)>(
        "select agent_id, display_name from agents where kind = 'player'",
    )
    .fetch_all(&league.pool)
    .await
    .expect("the players")
    .into_iter()
    .collect();
    // Six players: fifteen matches.
    assert_eq!(rows.len(), 15);
    let completed = sum(&referees, "league_referee_matches_completed_total", &[]);
    assert_eq!(completed, 15);
    assert_eq!(
        sum(&manager, "league_manager_matches", &[("status", "finished")]),
        15
    );
    for status in ["scheduled", "ready", "running"] {
        assert_eq!(sum(&manager, "league_manager_matches", &[("status", status)]), 0);
    }
    assert_eq!(sum(&manager, "league_manager_match_queue_depth", &[]), 0);
    assert_eq!(sum(&manager, "league_manager_leases_active", &[]), 0);
    assert_eq!(sum(&manager, "league_manager_leases_expired", &[]), 0);

    let mut outcomes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut causes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut timeouts: BTreeMap<String, u64> = BTreeMap::new();
    let mut retries: BTreeMap<&str, u64> = BTreeMap::new();
    for (outcome, at_fault, transcript) in &rows {
        *outcomes.entry(outcome.as_str()).or_default() += 1;
        for player in at_fault {
            let name = &behaviours[player];
            let cause = if name.ends_with("silent") {
                "timeout"
            } else if name.ends_with("invalid") {
                "invalid_move"
            } else if name.ends_with("declines") {
                "declined"
            } else {
                panic!("a well-behaved bot lost technically: {name}")
            };
            *causes.entry(cause).or_default() += 1;
        }
        // Stored once, as its JSON (ADR 0085).
        let json: serde_json::Value = serde_json::from_str(transcript).expect("a transcript is JSON");
        let transcript: MatchTranscript =
            league_proto::json::from_json("league.v2.MatchTranscript", &json).expect("a transcript");
        for entry in transcript.entries {
            let Some(transcript_entry::Entry::Message(message)) = entry.entry else {
                continue;
            };
            let from_player = message.direction() == Direction::FromPlayer;
            if from_player && message.error_code == "E001" {
                *timeouts.entry(message.message_type.clone()).or_default() += 1;
            }
            if !from_player && message.attempt > 1 {
                match message.message_type.as_str() {
                    "GAME_INVITATION" => *retries.entry("invitation").or_default() += 1,
                    "CHOOSE_PARITY_CALL" => *retries.entry("move request").or_default() += 1,
                    _ => {}
                }
            }
        }
    }
    for outcome in ["win", "draw", "technical_loss", "double_forfeit"] {
        let recorded = outcomes.get(outcome).copied().unwrap_or(0);
        let labels = [("outcome", outcome)];
        assert_eq!(
            sum(&referees, "league_referee_match_outcomes_total", &labels),
            recorded,
            "{outcome}"
        );
        assert_eq!(
            sum(&manager, "league_manager_match_results", &labels),
            recorded,
            "{outcome}"
        );
    }
    assert!(causes.len() == 3, "every fault happened: {causes:?}");
    assert_counted(
        &referees,
        "league_referee_technical_losses_total",
        "cause",
        &causes,
    );
    assert!(
        timeouts.contains_key("GAME_JOIN_ACK"),
        "the silent bot timed out: {timeouts:?}"
    );
    assert_counted(
        &referees,
        "league_referee_player_timeouts_total",
        "reply",
        &timeouts,
    );
    assert!(
        retries.contains_key("move request"),
        "flaky and invalid moves were retried: {retries:?}"
    );
    assert_counted(
        &referees,
        "league_referee_player_retries_total",
        "exchange",
        &retries,
    );

    // Every report answered once, timed by the manager's gRPC layer.
    let report_retries = sum(&referees, "league_referee_report_retries_total", &[]);
    let method = [("method", "/league.v2.ManagerService/ReportMatchResult")];
    assert_eq!(
        sum(&manager, "league_rpc_server_duration_seconds_count", &method),
        15 + report_retries
    );
    let moves = [("method", "/league.v2.PlayerService/RequestMove")];
    assert!(sum(&players, "league_rpc_server_duration_seconds_count", &moves) > 0);

    league.stop().await;
}
