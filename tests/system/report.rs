//! `league report` against a league's database: a 4-player league is played through a real manager
//! with known outcomes, the manager stops, and the report is written from the database alone. Its CSV
//! and JSON must say what was played, its charts must be valid SVG and PNG of their stated size, and the
//! progression chart's lines must be the standings after each round.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::browser::{BROWSER_DIR, ONE_BROWSER, require_browser};
use league_domain::Timing;
use league_launcher::report::source::{self, Source};
use league_manager::{ManagerApp, ManagerConfig};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_report::charts::{self, progression_series, strategy_groups};
use league_report::data::LeagueData;
use league_runtime::{Credentials, Shutdown};
use league_testkit::TestDatabase;
use secrecy::SecretString;

const OPERATOR_TOKEN: &str = "report-test-operator";

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
    // The Even/Odd account of each result, by the rule (the manager refuses one against it).
    let metadata = |drawn: f64, choice_a: &str, choice_b: &str| prost_types::Struct {
        fields: [
            (
                "drawn_number".to_owned(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::NumberValue(drawn)),
                },
            ),
            (
                "choices".to_owned(),
                prost_types::Value {
                    kind: Some(prost_types::value::Kind::StructValue(prost_types::Struct {
                        fields: [(a.clone(), text(choice_a)), (b.clone(), text(choice_b))].into(),
                    })),
                },
            ),
        ]
        .into(),
    };
    let mut result = MatchResult {
        match_id: m.match_id.clone(),
        game_metadata: Some(metadata(4.0, "even", "odd")),
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
            result.game_metadata = Some(metadata(4.0, "even", "even"));
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
            result.game_metadata = Some(metadata(7.0, "even", "odd"));
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
    let mut connected = source::connect(Source::Database(database.url().clone()))
        .await
        .expect("the database is read");
    let data = LeagueData::load(&mut connected.client, &connected.token, "")
        .await
        .expect("the league loads");
    let out = out_dir();
    let dir = league_report::write(&data, &out).expect("the folder is written");
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

    // ratings.csv: the league's four players in the table's order, each rated by its points per match.
    let ratings = csv_rows(&read(&dir, "ratings.csv"));
    assert_eq!(ratings.len(), 4);
    for (line, row) in ratings.iter().zip(&data.standings) {
        assert_eq!(
            (&line["player_id"], &line["display_name"]),
            (&row.player_id, &row.display_name)
        );
        assert_eq!(line["matches"], row.played.to_string());
        let expected = f64::from(final_points[&row.player_id]) / f64::from(row.played);
        assert!(
            (line["points_per_match"].parse::<f64>().unwrap() - expected).abs() < 0.0005,
            "{line:?}"
        );
    }

    // head_to_head.csv: each pair met once; a player's lines add up to its points.
    let h2h = csv_rows(&read(&dir, "head_to_head.csv"));
    assert_eq!(h2h.len(), 4 * 3);
    for row in &data.standings {
        let points: u32 = h2h
            .iter()
            .filter(|line| line["player_id"] == row.player_id)
            .map(|line| line["points"].parse::<u32>().unwrap())
            .sum();
        assert_eq!(points, final_points[&row.player_id], "{}", row.player_id);
    }
    let timed_out = h2h.iter().filter(|line| line["technical_losses"] == "1").count();
    assert_eq!(timed_out, 1, "R3M1's technical loss, counted apart");

    // index.html names the champion and links every file.
    let index = read(&dir, "index.html");
    let champion = &data.standings[0].player_id;
    assert!(index.contains(&format!(
        "Champion: <b><a href=\"players/{champion}.html\">{champion}</a></b>"
    )));
    for name in [
        "standings.csv",
        "matches.csv",
        "standings_by_round.csv",
        "ratings.csv",
        "head_to_head.csv",
        "head_to_head.svg",
    ] {
        assert!(index.contains(name), "{name}");
    }
    // A page per player, its record in words: "1 loss", never "1 losses".
    for row in &data.standings {
        let page = read(&dir, &format!("players/{}.html", row.player_id));
        assert!(page.contains(&format!("<h1>{} <span class=\"name\">", row.player_id)));
        assert!(!page.contains(" 1 losses") && !page.contains(" 1 wins") && !page.contains(" 1 draws"));
    }
    std::fs::remove_dir_all(&out).ok();
}

/// A double round-robin of `players` made up in memory, as the manager would return it: even_odd with
/// its choices and drawn numbers (every strategy equal: pure chance), or tic_tac_toe where the first
/// half of the players play adaptive and beat the other half (random) every time, and players of one
/// strategy win, draw or lose by chance (strategy decides). See [`strategy`].
fn made_up_league(game: &str, players: usize) -> LeagueData {
    use prost_types::value::Kind;
    let ids: Vec<String> = (1..=players).map(|i| format!("P{i:02}")).collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let value = |kind: Kind| prost_types::Value { kind: Some(kind) };
    let text = |s: &str| value(Kind::StringValue(s.to_owned()));
    let board = |cells: &str| {
        value(Kind::ListValue(prost_types::ListValue {
            values: cells
                .chars()
                .map(|c| text(&c.to_string().replace('.', "")))
                .collect(),
        }))
    };
    let line = |cells: [f64; 3]| {
        value(Kind::ListValue(prost_types::ListValue {
            values: cells.iter().map(|&c| value(Kind::NumberValue(c))).collect(),
        }))
    };
    // The circle method: player 0 stays, the others turn; the second leg swaps the seats.
    let n = players;
    let mut rounds = vec![];
    let mut points: HashMap<String, [u32; 5]> = HashMap::new(); // played, W, D, L, points
    let mut by_round = vec![];
    for leg in 0..2 {
        for r in 0..n - 1 {
            let round_id = (leg * (n - 1) + r + 1) as u32;
            let mut order: Vec<usize> = vec![0];
            order.extend((0..n - 1).map(|k| 1 + (k + r) % (n - 1)));
            let mut matches = vec![];
            for k in 0..n / 2 {
                let (x, y) = (order[k], order[n - 1 - k]);
                let (a, b) = if leg == 0 { (x, y) } else { (y, x) };
                let (pa, pb) = (ids[a].clone(), ids[b].clone());
                let mut fields = std::collections::BTreeMap::new();
                let (status, winner, reason) = if game == "even_odd" {
                    let choice = |r: u64| if r.is_multiple_of(2) { "even" } else { "odd" };
                    let (ca, cb) = (choice(next()), choice(next()));
                    let drawn = 1 + next() % 10;
                    fields.insert(
                        "choices".to_owned(),
                        value(Kind::StructValue(prost_types::Struct {
                            fields: [(pa.clone(), text(ca)), (pb.clone(), text(cb))].into(),
                        })),
                    );
                    fields.insert("drawn_number".to_owned(), value(Kind::NumberValue(drawn as f64)));
                    let parity = if drawn.is_multiple_of(2) { "even" } else { "odd" };
                    if ca == cb {
                        (ResultStatus::Draw, String::new(), format!("both chose {ca}"))
                    } else if ca == parity {
                        (
                            ResultStatus::Win,
                            pa.clone(),
                            format!("{pa} chose {ca}, number was {drawn}"),
                        )
                    } else {
                        (
                            ResultStatus::Win,
                            pb.clone(),
                            format!("{pb} chose {cb}, number was {drawn}"),
                        )
                    }
                } else {
                    let (status, winner) = match (strategy(game, a, n), strategy(game, b, n), next() % 3) {
                        ("adaptive", "random", _) => (ResultStatus::Win, pa.clone()),
                        ("random", "adaptive", _) => (ResultStatus::Win, pb.clone()),
                        (_, _, 0) => (ResultStatus::Draw, String::new()),
                        (_, _, 1) => (ResultStatus::Win, pa.clone()),
                        _ => (ResultStatus::Win, pb.clone()),
                    };
                    let (cells, winning) = match (status, winner == pa) {
                        (ResultStatus::Draw, _) => ("XOXXOOOXX", None),
                        (_, true) => ("XOOOX...X", Some([0.0, 4.0, 8.0])),
                        (_, false) => ("XXOXO.OX.", Some([2.0, 4.0, 6.0])),
                    };
                    fields.insert("final_board".to_owned(), board(cells));
                    if let Some(winning) = winning {
                        fields.insert("winning_line".to_owned(), line(winning));
                    }
                    let turns = cells.chars().filter(|&c| c != '.').count();
                    fields.insert("total_turns".to_owned(), value(Kind::NumberValue(turns as f64)));
                    let reason = if winner.is_empty() {
                        "The board is full with no line of three".to_owned()
                    } else {
                        format!("{winner} completed a line")
                    };
                    (status, winner, reason)
                };
                for (player, other) in [(&pa, &pb), (&pb, &pa)] {
                    let row = points.entry(player.clone()).or_default();
                    row[0] += 1;
                    match (status, winner == **player, winner == **other) {
                        (ResultStatus::Draw, _, _) => {
                            row[2] += 1;
                            row[4] += 1;
                        }
                        (_, true, _) => {
                            row[1] += 1;
                            row[4] += 3;
                        }
                        _ => row[3] += 1,
                    }
                }
                let score = |player: &str| {
                    if status == ResultStatus::Draw {
                        1
                    } else if winner == player {
                        3
                    } else {
                        0
                    }
                };
                matches.push(ScheduledMatch {
                    league_id: "made_up".into(),
                    round_id,
                    match_id: format!("R{round_id}M{}", k + 1),
                    game_type: game.into(),
                    player_a_id: pa.clone(),
                    player_b_id: pb.clone(),
                    status: MatchStatus::Finished as i32,
                    result: Some(MatchResult {
                        match_id: format!("R{round_id}M{}", k + 1),
                        status: status as i32,
                        winner_player_id: winner.clone(),
                        scores: vec![
                            PlayerScore {
                                player_id: pa.clone(),
                                points: score(&pa),
                            },
                            PlayerScore {
                                player_id: pb.clone(),
                                points: score(&pb),
                            },
                        ],
                        reason,
                        game_metadata: Some(prost_types::Struct { fields }),
                        ..MatchResult::default()
                    }),
                    ..ScheduledMatch::default()
                });
            }
            rounds.push(ScheduledRound {
                round_id,
                matches,
                bye_player_ids: vec![],
            });
            by_round.push(RoundStandings {
                round_id,
                standings: table(game, &ids, &points),
            });
        }
    }
    let standings = table(game, &ids, &points);
    LeagueData {
        status: GetLeagueStatusResponse {
            league_id: format!("made_up_{game}"),
            game_type: game.into(),
            status: LeagueStatus::Completed as i32,
            total_rounds: rounds.len() as u32,
            current_round_id: rounds.len() as u32,
            total_matches: (n * (n - 1)) as u32,
            finished_matches: (n * (n - 1)) as u32,
            registered_players: n as u32,
            champion: standings.first().cloned(),
            completed_at: Some(prost_types::Timestamp::default()),
            ..GetLeagueStatusResponse::default()
        },
        standings,
        by_round,
        rounds,
        llm_moves: Default::default(),
        stopped: false,
    }
}

/// Player `i`'s strategy of `n`: even_odd's five in turn; in tic_tac_toe adaptive for the first half,
/// random for the rest.
fn strategy(game: &str, i: usize, n: usize) -> &'static str {
    const EVEN_ODD: [&str; 5] = ["random", "always_even", "always_odd", "alternating", "adaptive"];
    match game {
        "even_odd" => EVEN_ODD[i % EVEN_ODD.len()],
        _ if i < n / 2 => "adaptive",
        _ => "random",
    }
}

/// The table: points, then player id (the tie-breaks between are the manager's, not this test's).
fn table(game: &str, ids: &[String], points: &HashMap<String, [u32; 5]>) -> Vec<StandingRow> {
    let mut rows: Vec<StandingRow> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let [played, wins, draws, losses, points] = points.get(id).copied().unwrap_or_default();
            StandingRow {
                player_id: id.clone(),
                display_name: format!("bot-{:02}-{}", i + 1, strategy(game, i, ids.len())),
                played,
                wins,
                draws,
                losses,
                points,
                ..StandingRow::default()
            }
        })
        .collect();
    rows.sort_by(|x, y| y.points.cmp(&x.points).then(x.player_id.cmp(&y.player_id)));
    for i in 0..rows.len() {
        rows[i].rank = i as u32 + 1;
        rows[i].above_next_by = match rows.get(i + 1) {
            None => TieBreak::Unspecified,
            Some(next) if next.points != rows[i].points => TieBreak::Points,
            Some(_) => TieBreak::PlayerId,
        } as i32;
    }
    rows
}

/// The CSV's lines as maps from column name to field (no field of these files holds a comma).
fn csv_rows(text: &str) -> Vec<HashMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|line| {
            header
                .iter()
                .zip(line.split(','))
                .map(|(k, v)| ((*k).to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

#[test]
fn a_double_round_robin_of_fifty_counts_both_meetings_and_says_what_is_within_chance() {
    let data = made_up_league("even_odd", 50);
    let out = out_dir();
    let dir = league_report::write(&data, &out).expect("the folder is written");

    // head_to_head.csv: 50 × 49 lines, two meetings each, and each player's lines add up to its row.
    let h2h = csv_rows(&read(&dir, "head_to_head.csv"));
    assert_eq!(h2h.len(), 50 * 49);
    assert!(
        h2h.iter().all(|line| line["played"] == "2"),
        "every pair met twice"
    );
    for row in &data.standings {
        let mine: Vec<_> = h2h.iter().filter(|l| l["player_id"] == row.player_id).collect();
        let sum = |column: &str| {
            mine.iter()
                .map(|l| l[column].parse::<u32>().unwrap())
                .sum::<u32>()
        };
        assert_eq!(
            (sum("wins"), sum("draws"), sum("losses"), sum("points")),
            (row.wins, row.draws, row.losses, row.points),
            "{}",
            row.player_id
        );
        assert_eq!(mine[0]["display_name"], row.display_name, "names, not only ids");
    }

    // ratings.csv: points per match as in the table, names, and neighbours compared.
    let ratings = csv_rows(&read(&dir, "ratings.csv"));
    assert_eq!(ratings.len(), 50);
    for (line, row) in ratings.iter().zip(&data.standings) {
        assert_eq!(line["player_id"], row.player_id);
        assert_eq!(line["display_name"], row.display_name);
        let per_match: f64 = line["points_per_match"].parse().unwrap();
        assert!(
            (per_match - f64::from(row.points) / 98.0).abs() < 0.0005,
            "{line:?}"
        );
    }
    let deviations: std::collections::BTreeSet<&str> =
        ratings.iter().map(|l| l["deviation"].as_str()).collect();
    assert!(
        deviations.len() > 5,
        "each player its own deviation: {deviations:?}"
    );
    let los: f64 = ratings[0]["los_over_next"].parse().unwrap();
    assert!((0.5..=1.0).contains(&los), "{:?}", ratings[0]);
    assert_eq!(ratings[49]["los_over_next"], "", "the last is above nobody");

    // The luck line, computed from this league.
    let index = read(&dir, "index.html");
    assert!(index.contains("Within chance in this league"), "the luck line");
    // A page per player, linked from the index, with its head-to-head and its rating.
    let champion = &data.standings[0];
    assert!(index.contains(&format!("href=\"players/{}.html\"", champion.player_id)));
    let page = read(&dir, &format!("players/{}.html", champion.player_id));
    assert_eq!(
        page.matches("<tr><td><a href=\"../players/").count(),
        49 + 1,
        "49 opponents, and the neighbour below"
    );
    assert_eq!(
        page.matches("<td>A</td>").count() + page.matches("<td>B</td>").count(),
        98,
        "every match, with the seat"
    );
    assert!(page.contains(" points per match"));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn tic_tac_toe_draws_its_boards_and_rewards_strategy() {
    let data = made_up_league("tic_tac_toe", 8);
    let out = out_dir();
    let dir = league_report::write(&data, &out).expect("the folder is written");
    let index = read(&dir, "index.html");
    assert!(
        index.contains("tic_tac_toe rewards strategy in this league"),
        "the luck line"
    );
    assert!(index.contains("<th>final board</th>") && !index.contains("drawn number"));
    assert_eq!(
        index.matches("<table class=\"board\"").count(),
        56,
        "a board per match"
    );
    std::fs::remove_dir_all(&out).ok();
}

/// The folder's pages in Chromium (tests/browser/report_pages.mjs): the 50-player even_odd index with
/// its tables and charts, a player's page, and a tic_tac_toe page with its boards; screenshots land in
/// `target/tmp/report-pages/` to be looked at.
#[test]
fn report_pages_in_chromium_show_the_tables_boards_and_a_players_page() {
    require_browser("the report pages' browser test");
    let _one_browser = ONE_BROWSER.blocking_lock();
    let shots = PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/report-pages"));
    std::fs::create_dir_all(&shots).unwrap();
    let out = out_dir();
    let even_odd = league_report::write(&made_up_league("even_odd", 50), &out).unwrap();
    let tic_tac_toe = league_report::write(&made_up_league("tic_tac_toe", 8), &out).unwrap();
    let output = std::process::Command::new("node")
        .arg("report_pages.mjs")
        .arg(&even_odd)
        .arg(&tic_tac_toe)
        .arg(&shots)
        .current_dir(BROWSER_DIR)
        .output()
        .expect("node runs the browser script");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the browser script failed: {}{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let shown: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(shown["errors"], serde_json::json!([]), "browser errors");
    assert_eq!(shown["standingsRows"], 50);
    assert_eq!(shown["ratingsRows"], 50);
    assert_eq!(shown["headToHeadRows"], 50);
    assert_eq!(
        shown["headToHeadCells"],
        50 * 49,
        "a record in every cell off the diagonal"
    );
    assert!(shown["luck"].as_str().unwrap().contains("mostly luck"), "{shown}");
    assert_eq!(shown["brokenImages"], serde_json::json!([]), "every chart loads");
    assert_eq!(shown["player"]["headToHeadRows"], 49);
    assert_eq!(shown["player"]["matchRows"], 98);
    assert_eq!(shown["boards"], 56, "a board per tic_tac_toe match");
    assert_eq!(
        shown["winningCells"],
        3 * shown["wins"].as_u64().unwrap(),
        "each win's line marked"
    );
    std::fs::remove_dir_all(&out).ok();
}
