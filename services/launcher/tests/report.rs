//! `league report` against a league's database: a 4-player league is played through a real manager
//! with known outcomes, the manager stops, and the report is written from the database alone. Its CSV
//! and JSON must say what was played, its charts must be valid SVG and PNG of their stated size, and the
//! progression chart's lines must be the standings after each round.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use league_domain::Timing;
use league_launcher::report::charts::{self, progression_series, strategy_groups};
use league_launcher::report::data::LeagueData;
use league_launcher::report::source::{self, Source};
use league_manager::{ManagerApp, ManagerConfig};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_runtime::{Credentials, Shutdown};
use league_testkit::TestDatabase;
use secrecy::SecretString;

const OPERATOR_TOKEN: &str = "report-test-operator";

fn cluster_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.league/postgres")
}

fn meta(name: &str) -> AgentMeta {
    AgentMeta {
        display_name: name.to_owned(),
        version: "1".into(),
        game_types: vec!["even_odd".into()],
        contact_endpoint: format!("http://127.0.0.1:9/{name}"),
        service_endpoint: "http://127.0.0.1:9".into(),
        ..AgentMeta::default()
    }
}

/// Round 1: A wins (drawn 4, A chose even). Round 2: draws. Round 3: M1 a technical loss of A (it timed
/// out), M2 won by B. Every transcript spans 250 ms.
fn played(assignment: &MatchAssignment) -> (MatchResult, MatchTranscript) {
    let m = assignment.r#match.as_ref().unwrap();
    let (a, b) = (m.player_a_id.clone(), m.player_b_id.clone());
    let score = |pa, pb| {
        vec![
            PlayerScore {
                player_id: a.clone(),
                points: pa,
            },
            PlayerScore {
                player_id: b.clone(),
                points: pb,
            },
        ]
    };
    let text = |s: &str| prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s.into())),
    };
    let metadata = prost_types::Struct {
        fields: [
            (
                "drawn_number".to_owned(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::NumberValue(4.0)),
                },
            ),
            (
                "choices".to_owned(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::StructValue(prost_types::Struct {
                        fields: [(a.clone(), text("even")), (b.clone(), text("odd"))].into(),
                    })),
                },
            ),
        ]
        .into(),
    };
    let mut result = MatchResult {
        match_id: m.match_id.clone(),
        game_metadata: Some(metadata),
        ..MatchResult::default()
    };
    let mut failure = None;
    match (m.round_id, m.match_id.ends_with("M1")) {
        (1, _) => {
            result.status = ResultStatus::Win as i32;
            result.winner_player_id = a.clone();
            result.scores = score(3, 0);
            result.reason = format!("{a} chose even, number was 4 (even)");
        }
        (2, _) => {
            result.status = ResultStatus::Draw as i32;
            result.scores = score(1, 1);
            result.reason = "a draw, with a comma".into();
        }
        (_, true) => {
            result.status = ResultStatus::TechnicalLoss as i32;
            result.winner_player_id = b.clone();
            result.at_fault_player_ids = vec![a.clone()];
            result.scores = score(0, 3);
            result.reason = format!("{a} did not answer");
            failure = Some(a.clone());
        }
        (_, false) => {
            result.status = ResultStatus::Win as i32;
            result.winner_player_id = b.clone();
            result.scores = score(0, 3);
            result.reason = format!("{b} chose odd");
        }
    }
    let at = |millis: i64| prost_types::Timestamp {
        seconds: 1_800_000_000 + millis / 1000,
        nanos: (millis % 1000) as i32 * 1_000_000,
    };
    let message = |player: String, error_code: &str| {
        Some(transcript_entry::Entry::Message(MessageRecord {
            direction: Direction::FromPlayer as i32,
            player_id: player,
            message_type: "CHOOSE_PARITY_RESPONSE".into(),
            attempt: 1,
            error_code: error_code.into(),
            ..MessageRecord::default()
        }))
    };
    let transcript = MatchTranscript {
        match_id: m.match_id.clone(),
        entries: vec![
            TranscriptEntry {
                at: Some(at(0)),
                entry: message(b.clone(), ""),
            },
            TranscriptEntry {
                at: Some(at(250)),
                entry: message(
                    failure.clone().unwrap_or(a.clone()),
                    if failure.is_some() { "E001" } else { "" },
                ),
            },
        ],
    };
    (result, transcript)
}

/// Plays the league on a manager that then stops; the database's URL and each round's points.
async fn play() -> (TestDatabase, Vec<HashMap<String, u32>>) {
    let test_database = TestDatabase::create("league_report_test").await;
    let database = test_database.url().clone();
    let config = ManagerConfig {
        listen_addr: "127.0.0.1:0".parse().unwrap(),
        database_url: Some(database.clone()),
        db_max_connections: 4,
        operator_token: Some(SecretString::from(OPERATOR_TOKEN.to_owned())),
        league_id: "report_league".into(),
        game_type: "even_odd".into(),
        auto_start_players: 4,
        timing: Timing::default(),
        ..ManagerConfig::default()
    };
    // A local trial: its referee registers without a token.
    let mut config = config;
    config.registration.referee_registration_open = true;
    let app = ManagerApp::build(&config).await.expect("manager builds");
    let url = format!("http://{}", app.local_addr());
    let shutdown = Shutdown::new();
    let running = tokio::spawn(app.run(shutdown.signal()));
    let mut client = ManagerServiceClient::new(league_runtime::grpc::channel(&url).unwrap());
    for name in ["bot-01-random", "bot-02-adaptive", "bot-03-random", "outsider"] {
        client
            .register_player(RegisterPlayerRequest {
                meta: Some(meta(name)),
                league_id: String::new(),
            })
            .await
            .unwrap();
    }
    let referee = client
        .register_referee(RegisterRefereeRequest {
            meta: Some(meta("ref")),
            max_concurrent_matches: 4,
        })
        .await
        .unwrap()
        .into_inner();
    let referee = Credentials::new(referee.referee_id, referee.auth_token);
    let mut points: HashMap<String, u32> = HashMap::new();
    let mut rounds = vec![];
    for _ in 0..3 {
        let claimed = client
            .claim_matches(referee.request(ClaimMatchesRequest {
                max_matches: 4,
                wait: Some(prost_types::Duration { seconds: 5, nanos: 0 }),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(claimed.assignments.len(), 2);
        for assignment in &claimed.assignments {
            let (result, transcript) = played(assignment);
            for s in &result.scores {
                *points.entry(s.player_id.clone()).or_default() += s.points;
            }
            let m = assignment.r#match.as_ref().unwrap();
            client
                .report_match_result(referee.request(ReportMatchResultRequest {
                    league_id: m.league_id.clone(),
                    match_id: m.match_id.clone(),
                    lease_id: assignment.lease_id.clone(),
                    result: Some(result),
                    transcript: Some(transcript),
                }))
                .await
                .unwrap();
        }
        rounds.push(points.clone());
    }
    shutdown.trigger();
    tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the manager stops")
        .unwrap()
        .unwrap();
    (test_database, rounds)
}

fn out_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("league-report-test-{:016x}", rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::process::id())
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let number = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (number(16), number(20))
}

#[tokio::test]
async fn the_results_folder_says_what_the_database_holds() {
    let (database, expected_rounds) = play().await;
    let mut connected = source::connect(Source::Database(database.url().clone()), &cluster_dir())
        .await
        .expect("the database is read");
    let data = LeagueData::load(&mut connected.client, &connected.token, "")
        .await
        .expect("the league loads");
    let out = out_dir();
    let dir = league_launcher::report::write(&data, &out).expect("the folder is written");
    assert_eq!(dir, out.join("report_league"));

    // standings.csv: the final table, in order, with each row's tie-break.
    let standings = read(&dir, "standings.csv");
    let lines: Vec<&str> = standings.lines().collect();
    assert_eq!(lines.len(), 5, "{standings}");
    assert!(lines[0].starts_with("rank,player_id,display_name,strategy,"));
    let final_points = expected_rounds.last().unwrap();
    for (line, row) in lines[1..].iter().zip(&data.standings) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields[1], row.player_id);
        assert_eq!(fields[9], final_points[&row.player_id].to_string(), "{line}");
    }
    assert!(
        lines[4].ends_with(','),
        "the last row is above nobody: {}",
        lines[4]
    );
    let outsider = lines.iter().find(|l| l.contains("outsider")).unwrap();
    assert!(outsider.contains(",external,"), "{outsider}");

    // standings.json: the same table, and the champion.
    let json: serde_json::Value = serde_json::from_str(&read(&dir, "standings.json")).unwrap();
    assert_eq!(json["league_id"], "report_league");
    assert_eq!(json["completed"], true);
    assert_eq!(json["champion"], serde_json::json!(data.standings[0].player_id));
    assert_eq!(json["standings"].as_array().unwrap().len(), 4);
    let outsider = json["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["display_name"] == "outsider");
    assert_eq!(outsider.unwrap()["strategy"], "external");

    // matches.csv: every match, its choices, number, outcome, cause and duration.
    let matches = read(&dir, "matches.csv");
    let lines: Vec<&str> = matches.lines().collect();
    assert_eq!(lines.len(), 7, "{matches}");
    let r1m1 = lines.iter().find(|l| l.starts_with("1,R1M1,")).unwrap();
    assert!(r1m1.contains(",4,win,"), "{r1m1}");
    assert!(r1m1.contains("=even "), "{r1m1}");
    assert!(
        r1m1.contains(",,250,finished,2027-01-15T08:00:00Z,2027-01-15T08:00:00.250Z"),
        "no cause, 250 ms, its status and times: {r1m1}"
    );
    let r2m1 = lines.iter().find(|l| l.starts_with("2,R2M1,")).unwrap();
    assert!(r2m1.contains(",draw,,1,1,\"a draw, with a comma\","), "{r2m1}");
    let r3m1 = lines.iter().find(|l| l.starts_with("3,R3M1,")).unwrap();
    assert!(r3m1.contains(",technical_loss,"), "{r3m1}");
    assert!(r3m1.contains(",timeout,250,finished,"), "{r3m1}");

    // standings_by_round.csv: each player's points after each round, as played.
    let by_round = read(&dir, "standings_by_round.csv");
    let mut seen: Vec<HashMap<String, u32>> = vec![HashMap::new(); 3];
    for line in by_round.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let round: usize = fields[0].parse().unwrap();
        seen[round - 1].insert(fields[2].to_owned(), fields[9].parse().unwrap());
    }
    assert_eq!(seen, expected_rounds);

    // The progression chart's lines are the standings after each round, from 0 points.
    for series in progression_series(&data) {
        let expected: Vec<u32> = std::iter::once(0)
            .chain(expected_rounds.iter().map(|round| round[&series.player_id]))
            .collect();
        assert_eq!(series.points, expected, "{}", series.player_id);
    }
    let groups = strategy_groups(&data);
    let random = groups.iter().find(|g| g.strategy == "random").unwrap();
    assert_eq!(random.players, 2);
    assert!(random.margin.is_some());
    assert!(
        groups
            .iter()
            .any(|g| g.strategy == "external" && g.players == 1 && g.margin.is_none())
    );

    // Every chart: an SVG and a PNG of the size it states.
    for chart in charts::all(&data) {
        let (width, height) = chart.size();
        let svg = read(&dir, &format!("{}.svg", chart.name()));
        assert!(svg.starts_with("<svg"), "{}", chart.name());
        assert!(
            svg.contains(&format!("width=\"{width}\"")) && svg.contains(&format!("height=\"{height}\"")),
            "{}: {}",
            chart.name(),
            &svg[..200.min(svg.len())]
        );
        assert!(svg.trim_end().ends_with("</svg>"));
        let png = std::fs::read(dir.join(format!("{}.png", chart.name()))).unwrap();
        assert_eq!(png_size(&png), (width, height), "{}", chart.name());
    }
    let svg = read(&dir, "standings_progression.svg");
    assert!(svg.matches("<polyline").count() >= 4, "a line per player");

    // ratings.csv: the completed league rates its four players, in the table's order.
    let ratings = read(&dir, "ratings.csv");
    let rated: Vec<&str> = ratings.lines().collect();
    assert_eq!(
        rated[0], "player_id,rating,deviation,matches,leagues",
        "{ratings}"
    );
    assert_eq!(rated.len(), 5, "{ratings}");
    for (line, row) in rated[1..].iter().zip(&data.standings) {
        assert!(line.starts_with(&format!("{},", row.player_id)), "{ratings}");
        assert!(line.ends_with(&format!(",{},1", row.played)), "{ratings}");
    }

    // index.html names the champion and links every file.
    let index = read(&dir, "index.html");
    assert!(index.contains(&format!("Champion: <b>{}</b>", data.standings[0].player_id)));
    for name in [
        "standings.csv",
        "matches.csv",
        "standings_by_round.csv",
        "ratings.csv",
        "head_to_head.svg",
    ] {
        assert!(index.contains(name), "{name}");
    }
    std::fs::remove_dir_all(&out).ok();
}
