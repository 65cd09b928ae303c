//! Looking back at a league over real gRPC and a real database: the table after each round, the
//! schedule with outcomes, a player's history, a match's transcript, the list of leagues, the bounds
//! on each, and the same results through plain SQL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::HashMap;

use league_proto::v2::*;
use support::*;

/// Round 1 all drawn, round 2 won by player A, round 3 a technical loss of A and a draw.
fn outcome(assignment: &MatchAssignment) -> MatchResult {
    let scheduled = assignment.r#match.as_ref().unwrap();
    let (a, b) = (&scheduled.player_a_id, &scheduled.player_b_id);
    let scores = |pa: u32, pb: u32| {
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
    let draw = MatchResult {
        match_id: scheduled.match_id.clone(),
        status: ResultStatus::Draw as i32,
        scores: scores(1, 1),
        reason: "both chose even".into(),
        ..MatchResult::default()
    };
    match (scheduled.round_id, scheduled.match_id.ends_with("M1")) {
        (1, _) | (3, false) => draw,
        (2, _) => a_wins(assignment),
        _ => MatchResult {
            match_id: scheduled.match_id.clone(),
            status: ResultStatus::TechnicalLoss as i32,
            winner_player_id: b.clone(),
            at_fault_player_ids: vec![a.clone()],
            scores: scores(0, 3),
            reason: format!("{a} did not answer"),
            ..MatchResult::default()
        },
    }
}

/// A transcript of two entries 1.5 s apart: a move request and the end of the match.
fn transcript(assignment: &MatchAssignment) -> MatchTranscript {
    let scheduled = assignment.r#match.as_ref().unwrap();
    let at = |millis: i64| prost_types::Timestamp {
        seconds: 1_800_000_000 + millis / 1000,
        nanos: (millis % 1000) as i32 * 1_000_000,
    };
    let payload = prost_types::Struct {
        fields: [(
            "parity_choice".to_owned(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue("even".into())),
            },
        )]
        .into(),
    };
    MatchTranscript {
        match_id: scheduled.match_id.clone(),
        entries: vec![
            TranscriptEntry {
                at: Some(at(0)),
                entry: Some(transcript_entry::Entry::Message(MessageRecord {
                    direction: Direction::FromPlayer as i32,
                    player_id: scheduled.player_a_id.clone(),
                    message_type: "CHOOSE_PARITY_RESPONSE".into(),
                    attempt: 1,
                    payload: Some(payload),
                    error_code: String::new(),
                })),
            },
            TranscriptEntry {
                at: Some(at(1500)),
                entry: Some(transcript_entry::Entry::StateTransition(StateTransition {
                    from: MatchState::Evaluating as i32,
                    to: MatchState::Finished as i32,
                    reason: "result decided".into(),
                })),
            },
        ],
    }
}

/// Plays the 4-player league (3 rounds of 2 matches); returns each player's points after each round.
async fn play(manager: &TestManager) -> Vec<HashMap<String, u32>> {
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await;
    }
    let referee = register_referee(&mut client, "ref").await;
    let mut points: HashMap<String, u32> = HashMap::new();
    let mut after_each_round = vec![];
    for _ in 0..3 {
        let claimed = client
            .claim_matches(referee.request(ClaimMatchesRequest {
                max_matches: 10,
                wait: Some(prost_types::Duration { seconds: 5, nanos: 0 }),
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(claimed.assignments.len(), 2, "one round at a time");
        for assignment in &claimed.assignments {
            let result = outcome(assignment);
            for score in &result.scores {
                *points.entry(score.player_id.clone()).or_default() += score.points;
            }
            let mut report = report_of(assignment, result);
            report.transcript = Some(transcript(assignment));
            client.report_match_result(referee.request(report)).await.unwrap();
        }
        after_each_round.push(points.clone());
    }
    after_each_round
}

/// A reported transcript is stored once, as proto3 JSON (the form the transcript_entries view reads),
/// and GetMatch reads it back as it was reported
/// (migrations/20261206400001_transcript_stored_once.sql).
#[tokio::test]
async fn a_transcript_is_stored_once_and_read_back_as_reported() {
    let manager = spawn_manager(2).await;
    let mut client = manager.client();
    for name in ["a", "b"] {
        register_player(&mut client, name).await;
    }
    let referee = register_referee(&mut client, "ref").await;
    let assignment = claim(&mut client, &referee, 1).await.remove(0);
    let reported = transcript(&assignment);
    let mut report = report_of(&assignment, outcome(&assignment));
    report.transcript = Some(reported.clone());
    client.report_match_result(referee.request(report)).await.unwrap();
    let (bytes, json): (Option<Vec<u8>>, Option<String>) =
        sqlx::query_as("select transcript, transcript_json from matches where match_id = $1")
            .bind(&reported.match_id)
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!(bytes, None, "no second, binary copy");
    assert!(json.is_some());
    let detail = client
        .get_match(manager.operator(GetMatchRequest {
            match_id: reported.match_id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(detail.transcript, Some(reported));
}

#[tokio::test]
async fn the_table_after_each_round_equals_the_points_so_far_and_names_its_tie_breaks() {
    let manager = spawn_manager(4).await;
    let expected = play(&manager).await;
    let mut client = manager.client();
    let by_round = client
        .get_standings_by_round(manager.operator(GetStandingsByRoundRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(by_round.league_id, "test_league");
    assert_eq!(by_round.next_round_id, 0);
    let rounds: Vec<u32> = by_round.rounds.iter().map(|r| r.round_id).collect();
    assert_eq!(rounds, [1, 2, 3]);
    for (round, expected) in by_round.rounds.iter().zip(&expected) {
        let points: HashMap<String, u32> = round
            .standings
            .iter()
            .map(|row| (row.player_id.clone(), row.points))
            .collect();
        assert_eq!(&points, expected, "after round {}", round.round_id);
    }
    // After round 1 everyone drew once: level on everything, so the player number orders them.
    let first = &by_round.rounds[0].standings;
    let order: Vec<&str> = first.iter().map(|row| row.player_id.as_str()).collect();
    assert_eq!(order, ["P01", "P02", "P03", "P04"]);
    let rules: Vec<i32> = first.iter().map(|row| row.above_next_by).collect();
    let id = TieBreak::PlayerId as i32;
    assert_eq!(rules, [id, id, id, TieBreak::Unspecified as i32]);
    // The current table is the last round's.
    let now = client
        .get_standings(manager.operator(GetStandingsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(now.standings, by_round.rounds[2].standings);
    for pair in now.standings.windows(2) {
        let rule = TieBreak::try_from(pair[0].above_next_by).unwrap();
        if pair[0].points != pair[1].points {
            assert_eq!(rule, TieBreak::Points, "{pair:?}");
        } else {
            assert!(
                !matches!(rule, TieBreak::Points | TieBreak::Unspecified),
                "{pair:?}"
            );
        }
    }

    // A page of one round says where the next starts; a page past the end is empty.
    let page = client
        .get_standings_by_round(manager.operator(GetStandingsByRoundRequest {
            first_round_id: 2,
            max_rounds: 1,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.rounds.len(), 1);
    assert_eq!(page.rounds[0].round_id, 2);
    assert_eq!(page.next_round_id, 3);
    let past = client
        .get_standings_by_round(manager.operator(GetStandingsByRoundRequest {
            first_round_id: 9,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(past.rounds.is_empty() && past.next_round_id == 0);
}

#[tokio::test]
async fn the_schedule_history_and_match_carry_outcomes_and_transcripts() {
    let manager = spawn_manager(4).await;
    play(&manager).await;
    let mut client = manager.client();
    let schedule = client
        .get_schedule(manager.operator(GetScheduleRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(schedule.rounds.len(), 3);
    assert_eq!(schedule.next_round_id, 0);
    for scheduled in schedule.rounds.iter().flat_map(|round| &round.matches) {
        let result = scheduled
            .result
            .as_ref()
            .expect("a finished match has its result");
        assert_eq!(result.match_id, scheduled.match_id);
        let (started, finished) = (scheduled.started_at.unwrap(), scheduled.finished_at.unwrap());
        assert_eq!(started.seconds, 1_800_000_000, "the transcript's first entry");
        assert_eq!(
            (finished.seconds, finished.nanos),
            (1_800_000_001, 500_000_000),
            "its last entry"
        );
    }
    let r3m1 = &schedule.rounds[2].matches[0];
    let result = r3m1.result.as_ref().unwrap();
    assert_eq!(result.status, ResultStatus::TechnicalLoss as i32);
    assert_eq!(result.winner_player_id, r3m1.player_b_id);
    assert_eq!(
        result.at_fault_player_ids,
        std::slice::from_ref(&r3m1.player_a_id)
    );
    // Its transcript shows no failed exchange of the player at fault: it is taken as declined.
    assert_eq!(r3m1.technical_loss_cause, "declined");
    assert!(
        schedule.rounds[0]
            .matches
            .iter()
            .all(|m| m.technical_loss_cause.is_empty())
    );

    // Pages hold whole rounds: a page of at most 3 matches is one round of 2.
    let page = client
        .get_schedule(manager.operator(GetScheduleRequest {
            max_matches: 3,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.rounds.len(), 1);
    assert_eq!(page.next_round_id, 2);

    let history = client
        .get_player_stats(manager.operator(GetPlayerStatsRequest {
            player_id: "P01".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(history.matches.len(), 3, "one match per opponent");
    assert!(history.matches.iter().all(|m| m.result.is_some()));
    let rounds: Vec<u32> = history.matches.iter().map(|m| m.round_id).collect();
    assert_eq!(rounds, [1, 2, 3]);

    let detail = client
        .get_match(manager.operator(GetMatchRequest {
            match_id: r3m1.match_id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    let entries = detail.transcript.unwrap().entries;
    assert_eq!(entries.len(), 2);
    assert!(matches!(
        &entries[0].entry,
        Some(transcript_entry::Entry::Message(message)) if message.message_type == "CHOOSE_PARITY_RESPONSE"
    ));
}

#[tokio::test]
async fn leagues_are_listed_newest_first_a_page_at_a_time() {
    let manager = spawn_manager(4).await;
    play(&manager).await;
    let mut client = manager.client();
    client
        .create_league(manager.operator(CreateLeagueRequest {
            league_id: "second".into(),
            game_type: "tic_tac_toe".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let all = client
        .list_leagues(manager.operator(ListLeaguesRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<&str> = all.leagues.iter().map(|l| l.league_id.as_str()).collect();
    assert_eq!(ids, ["second", "test_league"]);
    assert!(all.next_page_token.is_empty());
    let done = &all.leagues[1];
    assert_eq!(done.status, LeagueStatus::Completed as i32);
    assert_eq!((done.total_rounds, done.registered_players), (3, 4));
    assert!(done.champion.is_some() && done.completed_at.is_some());
    assert!(all.leagues[0].champion.is_none());

    let first = client
        .list_leagues(manager.operator(ListLeaguesRequest {
            page_size: 1,
            page_token: String::new(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.leagues.len(), 1);
    let second = client
        .list_leagues(manager.operator(ListLeaguesRequest {
            page_size: 1,
            page_token: first.next_page_token.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(second.leagues[0].league_id, "test_league");
    assert!(second.next_page_token.is_empty());

    let refused = client
        .list_leagues(manager.operator(ListLeaguesRequest {
            page_size: 1,
            page_token: "-3".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E002"), "{refused:?}");
    let anonymous = client
        .list_leagues(ListLeaguesRequest::default())
        .await
        .unwrap_err();
    assert!(code(&anonymous).is_some(), "queries need a token: {anonymous:?}");
}

/// match_id, result_status, winner_player_id, points_b, reason, duration_ms
type MatchResultRow = (
    String,
    Option<String>,
    Option<String>,
    Option<i32>,
    Option<String>,
    Option<i64>,
);
/// seq, kind, message_type, the payload's parity_choice, to_state
type TranscriptRow = (i64, String, Option<String>, Option<String>, Option<String>);

#[tokio::test]
async fn results_and_transcripts_are_rows_for_plain_sql() {
    let manager = spawn_manager(4).await;
    play(&manager).await;
    let rows: Vec<MatchResultRow> = sqlx::query_as(
        "select match_id, result_status, winner_player_id, points_b, reason, duration_ms
             from match_results where league_id = 'test_league' order by round_id, match_number",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 6);
    let r3m1 = &rows[4];
    assert_eq!(r3m1.0, "R3M1");
    assert_eq!(r3m1.1.as_deref(), Some("technical_loss"));
    assert_eq!(r3m1.3, Some(3));
    assert!(
        r3m1.4
            .as_deref()
            .is_some_and(|reason| reason.ends_with("did not answer"))
    );
    assert_eq!(r3m1.5, Some(1500), "from the first to the last transcript entry");

    let entries: Vec<TranscriptRow> = sqlx::query_as(
        "select seq, kind, message_type, payload->>'parity_choice', to_state
         from transcript_entries where league_id = 'test_league' and match_id = 'R1M1' order by seq",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    assert_eq!(
        entries,
        [
            (
                1,
                "message".to_owned(),
                Some("CHOOSE_PARITY_RESPONSE".to_owned()),
                Some("even".to_owned()),
                None
            ),
            (
                2,
                "state_transition".to_owned(),
                None,
                None,
                Some("MATCH_STATE_FINISHED".to_owned())
            ),
        ]
    );
}
