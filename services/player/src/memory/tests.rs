use league_proto::v2::{LeagueCompleted, PlayerScore, RoundAnnouncement};
use prost_types::Struct;

use super::*;
use crate::payload::{nested, number, object, string};

fn metadata(choices: &[(&str, &str)]) -> Struct {
    let choices = object(choices.iter().map(|&(id, choice)| (id, string(choice))));
    object([
        ("drawn_number", number(8)),
        ("number_parity", string("even")),
        ("choices", nested(choices)),
    ])
}

fn scores(points: &[(&str, u32)]) -> Vec<PlayerScore> {
    points
        .iter()
        .map(|&(id, points)| PlayerScore {
            player_id: id.into(),
            points,
        })
        .collect()
}

fn context(match_id: &str) -> MatchContext {
    MatchContext {
        league_id: "L1".into(),
        match_id: match_id.into(),
        game_type: "even_odd".into(),
        ..MatchContext::default()
    }
}

fn win_for_p01() -> MatchResult {
    MatchResult {
        match_id: "R1M1".into(),
        status: ResultStatus::Win.into(),
        winner_player_id: "P01".into(),
        scores: scores(&[("P01", 3), ("P02", 0)]),
        game_metadata: Some(metadata(&[("P01", "even"), ("P02", "odd")])),
        ..MatchResult::default()
    }
}

#[test]
fn a_win_is_read_from_both_sides() {
    let result = win_for_p01();
    let mine = GameRecord::from_result("P01", Some(&context("R1M1")), &result);
    assert_eq!(
        mine,
        GameRecord {
            league_id: "L1".into(),
            match_id: "R1M1".into(),
            game_type: "even_odd".into(),
            opponent_id: "P02".into(),
            my_choice: Some(Parity::Even),
            opponent_choice: Some(Parity::Odd),
            outcome: Outcome::Win,
            status: ResultStatus::Win,
            at_fault: false,
        }
    );
    let theirs = GameRecord::from_result("P02", Some(&context("R1M1")), &result);
    assert_eq!(
        (theirs.opponent_id.as_str(), theirs.outcome),
        ("P01", Outcome::Loss)
    );
    assert_eq!(
        (theirs.my_choice, theirs.opponent_choice),
        (Some(Parity::Odd), Some(Parity::Even))
    );
}

#[test]
fn a_draw_has_no_winner() {
    let result = MatchResult {
        match_id: "R2M1".into(),
        status: ResultStatus::Draw.into(),
        scores: scores(&[("P01", 1), ("P02", 1)]),
        game_metadata: Some(metadata(&[("P01", "odd"), ("P02", "odd")])),
        ..MatchResult::default()
    };
    let record = GameRecord::from_result("P02", None, &result);
    assert_eq!(record.outcome, Outcome::Draw);
    assert_eq!(record.opponent_id, "P01");
    assert_eq!(record.opponent_choice, Some(Parity::Odd));
}

#[test]
fn a_technical_loss_keeps_the_choice_that_was_made() {
    // P02 never answered: the referee reveals only P01's choice.
    let result = MatchResult {
        match_id: "R1M2".into(),
        status: ResultStatus::TechnicalLoss.into(),
        winner_player_id: "P01".into(),
        scores: scores(&[("P01", 3), ("P02", 0)]),
        at_fault_player_ids: vec!["P02".into()],
        game_metadata: Some(metadata(&[("P01", "even")])),
        ..MatchResult::default()
    };
    let loser = GameRecord::from_result("P02", None, &result);
    assert_eq!((loser.outcome, loser.at_fault), (Outcome::Loss, true));
    assert_eq!(
        (loser.my_choice, loser.opponent_choice),
        (None, Some(Parity::Even))
    );
    let winner = GameRecord::from_result("P01", None, &result);
    assert_eq!(
        (winner.outcome, winner.at_fault, winner.opponent_choice),
        (Outcome::Win, false, None)
    );
}

#[test]
fn a_double_forfeit_is_a_loss_for_both() {
    let result = MatchResult {
        status: ResultStatus::DoubleForfeit.into(),
        at_fault_player_ids: vec!["P01".into(), "P02".into()],
        ..MatchResult::default()
    };
    let record = GameRecord::from_result("P01", Some(&context("R3M1")), &result);
    assert_eq!((record.outcome, record.at_fault), (Outcome::Loss, true));
    assert_eq!(record.opponent_id, "P02");
    assert_eq!(
        record.match_id, "R3M1",
        "taken from the context when the result lacks it"
    );
}

#[test]
fn missing_fields_are_tolerated() {
    let empty = GameRecord::from_result("P01", None, &MatchResult::default());
    assert_eq!(
        (empty.outcome, empty.opponent_id.as_str(), empty.my_choice),
        (Outcome::Draw, "", None)
    );

    // No status and no winner: the points decide.
    let by_points = MatchResult {
        scores: scores(&[("P01", 0), ("P02", 3)]),
        ..MatchResult::default()
    };
    assert_eq!(
        GameRecord::from_result("P01", None, &by_points).outcome,
        Outcome::Loss
    );

    // Choices that are not parities, and metadata that is not a struct, are simply unknown.
    let odd_metadata = MatchResult {
        winner_player_id: "P01".into(),
        game_metadata: Some(object([("choices", string("P01 even"))])),
        ..MatchResult::default()
    };
    let record = GameRecord::from_result("P01", None, &odd_metadata);
    assert_eq!((record.outcome, record.my_choice), (Outcome::Win, None));
    let bad_choice = MatchResult {
        game_metadata: Some(metadata(&[("P01", "Even")])),
        ..win_for_p01()
    };
    assert_eq!(GameRecord::from_result("P01", None, &bad_choice).my_choice, None);
}

#[test]
fn a_redelivered_game_over_is_remembered_once() {
    let mut memory = Memory::default();
    let record = GameRecord::from_result("P01", Some(&context("R1M1")), &win_for_p01());
    assert!(memory.record_game(record.clone()));
    assert!(!memory.record_game(record.clone()));
    let other_league = GameRecord {
        league_id: "L2".into(),
        ..record
    };
    assert!(memory.record_game(other_league));
    assert_eq!(memory.history().len(), 2);
}

#[test]
fn league_events_are_deduplicated_by_event_id() {
    let mut memory = Memory::default();
    let announcement = Event::RoundAnnouncement(RoundAnnouncement::default());
    let kind = EventKind::of(Some(&announcement));
    assert!(memory.record_event("L1", "ev-1", kind));
    assert!(
        !memory.record_event("L1", "ev-1", kind),
        "a redelivery is not processed twice"
    );
    assert!(memory.record_event("L1", "ev-2", EventKind::of(None)));
    assert!(memory.record_event("L1", "", kind));
    assert!(
        memory.record_event("L1", "", kind),
        "without an id, events cannot be told apart"
    );
    let ids: Vec<_> = memory
        .events()
        .iter()
        .map(|(id, kind)| format!("{id}:{kind}"))
        .collect();
    assert_eq!(
        ids,
        [
            "ev-1:ROUND_ANNOUNCEMENT",
            "ev-2:UNKNOWN",
            ":ROUND_ANNOUNCEMENT",
            ":ROUND_ANNOUNCEMENT"
        ]
    );
}

#[test]
fn game_errors_keep_code_and_retry_count() {
    let mut memory = Memory::default();
    let request = NotifyGameErrorRequest {
        context: Some(context("R1M1")),
        error_code: "E001".into(),
        retry_count: 2,
        max_retries: 3,
        consequence: "TECHNICAL_LOSS".into(),
        ..NotifyGameErrorRequest::default()
    };
    memory.record_game_error(GameErrorRecord::from(&request));
    let [error] = memory.game_errors() else {
        panic!("one error: {:?}", memory.game_errors())
    };
    assert_eq!(
        (error.match_id.as_str(), error.code.as_str(), error.retry_count),
        ("R1M1", "E001", 2)
    );
}

#[test]
fn what_a_bot_kept_of_a_league_goes_when_its_next_league_completes() {
    let mut memory = Memory::default();
    let completed = EventKind::of(Some(&Event::LeagueCompleted(LeagueCompleted::default())));
    let announcement = EventKind::of(Some(&Event::RoundAnnouncement(RoundAnnouncement::default())));
    let game_in = |league: &str| GameRecord {
        league_id: league.into(),
        ..GameRecord::from_result("P01", Some(&context("R1M1")), &win_for_p01())
    };
    let error_in = |league: &str| {
        GameErrorRecord::from(&NotifyGameErrorRequest {
            context: Some(MatchContext {
                league_id: league.into(),
                ..context("R1M1")
            }),
            error_code: "E001".into(),
            ..NotifyGameErrorRequest::default()
        })
    };
    // League L1 plays and completes: all of it stays readable (its table is checked after it ends).
    assert!(memory.record_event("L1", "L1-ev-1", announcement));
    assert!(memory.record_game(game_in("L1")));
    memory.record_game_error(error_in("L1"));
    assert!(memory.record_event("L1", "L1-ev-2", completed));
    assert_eq!(memory.history().len(), 1);
    assert_eq!(memory.events().len(), 2);

    // L2 plays, and L3 starts beside it.
    assert!(memory.record_event("L2", "L2-ev-1", announcement));
    assert!(memory.record_game(game_in("L2")));
    memory.record_game_error(error_in("L2"));
    assert!(memory.record_event("L3", "L3-ev-1", announcement));
    assert!(memory.record_game(game_in("L3")));
    let leagues = |memory: &Memory| -> Vec<String> {
        memory
            .history()
            .iter()
            .map(|game| game.league_id.clone())
            .collect()
    };
    assert_eq!(leagues(&memory), ["L1", "L2", "L3"]);

    // L2 completes: L1 is gone, games, events, errors and the ids that deduplicated them; L2 (just
    // completed) and L3 (running) stay.
    assert!(memory.record_event("L2", "L2-ev-2", completed));
    assert_eq!(leagues(&memory), ["L2", "L3"]);
    let events: Vec<String> = memory.events().into_iter().map(|(id, _)| id).collect();
    assert_eq!(events, ["L2-ev-1", "L3-ev-1", "L2-ev-2"]);
    let errors: Vec<&str> = memory
        .game_errors()
        .iter()
        .map(|e| e.league_id.as_str())
        .collect();
    assert_eq!(errors, ["L2"]);
    assert!(memory.took_league_completed());
    // A redelivery of a kept league is still recognised.
    assert!(!memory.record_event("L2", "L2-ev-1", announcement));
    assert!(!memory.record_game(game_in("L2")));

    // Leagues after leagues: the memory stays the size of one league.
    for n in 4..200 {
        let league = format!("L{n}");
        assert!(memory.record_game(game_in(&league)));
        assert!(memory.record_event(&league, &format!("{league}-done"), completed));
    }
    assert_eq!(leagues(&memory), ["L3", "L199"], "L3 never completed");
    assert_eq!(
        memory.events().len(),
        2,
        "L3's announcement and L199's completion"
    );
}
