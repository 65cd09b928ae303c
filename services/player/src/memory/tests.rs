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

/// `result` for `player_id`, its names from an interner of its own.
fn game_of(player_id: &str, context: Option<&MatchContext>, result: &MatchResult) -> GameRecord {
    GameRecord::from_result(player_id, context, result, &mut Names::default())
}

/// Bots of one host: their memories and what they share.
#[derive(Default)]
struct Host {
    shared: Shared,
    bots: Vec<Memory>,
}

impl Host {
    fn with_bots(count: usize) -> Host {
        Host {
            bots: (0..count).map(|_| Memory::default()).collect(),
            ..Host::default()
        }
    }

    /// Bot `bot` takes an event as the player host does: `false` for a repeat.
    fn take(&mut self, bot: usize, league_id: &str, event_id: &str, kind: EventKind) -> bool {
        let event = self.shared.event(league_id, event_id, kind);
        let first = self.bots[bot].take_event(&event);
        if kind == EventKind::LeagueCompleted {
            self.shared.forget_unused(&self.bots);
        }
        first
    }

    /// The ids of the events bot `bot` took, in order.
    fn events(&self, bot: usize) -> Vec<String> {
        self.bots[bot]
            .events(&self.shared.events)
            .map(|(event_id, _)| event_id.to_owned())
            .collect()
    }
}

fn announcement() -> EventKind {
    EventKind::of(Some(&Event::RoundAnnouncement(RoundAnnouncement::default())))
}

fn completed() -> EventKind {
    EventKind::of(Some(&Event::LeagueCompleted(LeagueCompleted::default())))
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
    let mine = game_of("P01", Some(&context("R1M1")), &result);
    assert_eq!(
        mine,
        GameRecord {
            league_id: "L1".into(),
            match_id: Some(MatchId::new(1, 1)),
            opponent_id: "P02".into(),
            my_choice: Some(Parity::Even),
            opponent_choice: Some(Parity::Odd),
            outcome: Outcome::Win,
            status: ResultStatus::Win,
            at_fault: false,
        }
    );
    let theirs = game_of("P02", Some(&context("R1M1")), &result);
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
    let record = game_of("P02", None, &result);
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
    let loser = game_of("P02", None, &result);
    assert_eq!((loser.outcome, loser.at_fault), (Outcome::Loss, true));
    assert_eq!(
        (loser.my_choice, loser.opponent_choice),
        (None, Some(Parity::Even))
    );
    let winner = game_of("P01", None, &result);
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
    let record = game_of("P01", Some(&context("R3M1")), &result);
    assert_eq!((record.outcome, record.at_fault), (Outcome::Loss, true));
    assert_eq!(record.opponent_id, "P02");
    assert_eq!(
        record.match_id,
        Some(MatchId::new(3, 1)),
        "taken from the context when the result lacks it"
    );
}

#[test]
fn missing_fields_are_tolerated() {
    let empty = game_of("P01", None, &MatchResult::default());
    assert_eq!(
        (
            empty.outcome,
            empty.opponent_id.as_str(),
            empty.my_choice,
            empty.match_id
        ),
        (Outcome::Draw, "", None, None)
    );
    // A match named by no match id is remembered without one.
    let unnamed = MatchResult {
        match_id: "match one".into(),
        ..win_for_p01()
    };
    let unnamed = game_of("P01", None, &unnamed);
    assert_eq!((unnamed.match_id, unnamed.outcome), (None, Outcome::Win));

    // No status and no winner: the points decide.
    let by_points = MatchResult {
        scores: scores(&[("P01", 0), ("P02", 3)]),
        ..MatchResult::default()
    };
    assert_eq!(game_of("P01", None, &by_points).outcome, Outcome::Loss);

    // Choices that are not parities, and metadata that is not a struct, are simply unknown.
    let odd_metadata = MatchResult {
        winner_player_id: "P01".into(),
        game_metadata: Some(object([("choices", string("P01 even"))])),
        ..MatchResult::default()
    };
    let record = game_of("P01", None, &odd_metadata);
    assert_eq!((record.outcome, record.my_choice), (Outcome::Win, None));
    let bad_choice = MatchResult {
        game_metadata: Some(metadata(&[("P01", "Even")])),
        ..win_for_p01()
    };
    assert_eq!(game_of("P01", None, &bad_choice).my_choice, None);
}

#[test]
fn a_redelivered_game_over_is_remembered_once() {
    let mut memory = Memory::default();
    let record = game_of("P01", Some(&context("R1M1")), &win_for_p01());
    assert!(memory.record_game(record.clone()));
    assert!(!memory.record_game(record.clone()));
    let other_league = GameRecord {
        league_id: "L2".into(),
        ..record.clone()
    };
    assert!(memory.record_game(other_league));
    assert_eq!(memory.history().len(), 2);

    // Games arriving out of their order are found all the same, and stay in the order they arrived.
    let game = |match_id: MatchId| GameRecord {
        match_id: Some(match_id),
        ..record.clone()
    };
    for (round, number) in [(10, 3), (2, 1), (9, 1), (10, 1)] {
        assert!(memory.record_game(game(MatchId::new(round, number))));
    }
    for (round, number) in [(1, 1), (2, 1), (9, 1), (10, 1), (10, 3)] {
        assert!(!memory.record_game(game(MatchId::new(round, number))));
    }
    let arrived: Vec<String> = memory
        .history()
        .iter()
        .map(|game| {
            format!(
                "{}/{}",
                game.league_id,
                game.match_id.map(|id| id.to_string()).unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        arrived,
        ["L1/R1M1", "L2/R1M1", "L1/R10M3", "L1/R2M1", "L1/R9M1", "L1/R10M1"]
    );

    // Without a match id, a game cannot be told apart from another: each one is kept.
    let unnamed = GameRecord {
        match_id: None,
        ..record
    };
    assert!(memory.record_game(unnamed.clone()));
    assert!(memory.record_game(unnamed));
    assert_eq!(memory.history().len(), 8);
}

#[test]
#[cfg(target_pointer_width = "64")]
fn a_game_takes_32_bytes() {
    // Two shared names (8 bytes each), a match id (8: two non-zero numbers), the status (4) and four
    // small fields: what a bot keeps per match it played, a million times at 1,000 players. The game
    // type is not kept: a league plays one, and the strategies read it from the request.
    assert_eq!(std::mem::size_of::<GameRecord>(), 32);
    assert_eq!(std::mem::size_of::<Name>(), 8);
}

#[test]
fn league_events_are_deduplicated_by_event_id() {
    let mut host = Host::with_bots(1);
    assert!(host.take(0, "L1", "ev-1", announcement()));
    assert!(
        !host.take(0, "L1", "ev-1", announcement()),
        "a redelivery is not processed twice"
    );
    assert!(host.take(0, "L1", "ev-2", EventKind::of(None)));
    assert!(host.take(0, "L1", "", announcement()));
    assert!(
        host.take(0, "L1", "", announcement()),
        "without an id, events cannot be told apart"
    );
    let ids: Vec<_> = host.bots[0]
        .events(&host.shared.events)
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
fn the_host_keeps_each_event_once_for_all_its_bots() {
    let mut host = Host::with_bots(3);
    for round in 1..=100 {
        for bot in 0..3 {
            assert!(host.take(bot, "L1", &format!("L1/{round}"), announcement()));
        }
    }
    assert_eq!(host.shared.events.len(), 100, "one copy of each event");
    for bot in 0..3 {
        assert_eq!(host.events(bot).len(), 100);
        assert_eq!(host.events(bot)[99], "L1/100");
    }
    // A host's names are shared too: the league, once, whatever the number of events and bots.
    assert_eq!(host.shared.names.len(), 1);
    let mut names = Names::default();
    let games: Vec<GameRecord> = ["P01", "P02"]
        .map(|player| GameRecord::from_result(player, Some(&context("R1M1")), &win_for_p01(), &mut names))
        .into();
    assert_eq!(names.len(), 3, "L1, P01 and P02: {names:?}");
    assert_eq!(games[0].league_id, games[1].league_id);
}

#[test]
fn a_bot_that_failed_an_event_takes_it_later_in_its_own_order() {
    // Bot 1 took event 1 and never took event 2 (given up), then took 3; bot 0 failed 2 and takes it
    // when it is redelivered, after the host first took 3.
    let mut host = Host::with_bots(2);
    assert!(host.take(0, "L1", "L1/1", announcement()));
    assert!(host.take(1, "L1", "L1/1", announcement()));
    assert!(host.take(1, "L1", "L1/3", announcement()));
    assert!(host.take(0, "L1", "L1/2", announcement()));
    assert!(host.take(0, "L1", "L1/3", announcement()));
    assert!(!host.take(0, "L1", "L1/2", announcement()), "still a repeat");
    assert!(host.take(0, "L1", "L1/4", announcement()));
    assert!(!host.take(0, "L1", "L1/3", announcement()));
    assert_eq!(host.events(0), ["L1/1", "L1/2", "L1/3", "L1/4"]);
    assert_eq!(host.events(1), ["L1/1", "L1/3"]);
    assert!(host.take(1, "L1", "L1/4", announcement()));
    assert_eq!(host.events(1), ["L1/1", "L1/3", "L1/4"]);
    assert_eq!(host.shared.events.len(), 4);
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
    let mut host = Host::with_bots(1);
    let (completed, announcement) = (completed(), announcement());
    let game_in = |league: &str| GameRecord {
        league_id: league.into(),
        ..game_of("P01", Some(&context("R1M1")), &win_for_p01())
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
    assert!(host.take(0, "L1", "L1-ev-1", announcement));
    assert!(host.bots[0].record_game(game_in("L1")));
    host.bots[0].record_game_error(error_in("L1"));
    assert!(host.take(0, "L1", "L1-ev-2", completed));
    assert_eq!(host.bots[0].history().len(), 1);
    assert_eq!(host.events(0).len(), 2);

    // L2 plays, and L3 starts beside it.
    assert!(host.take(0, "L2", "L2-ev-1", announcement));
    assert!(host.bots[0].record_game(game_in("L2")));
    host.bots[0].record_game_error(error_in("L2"));
    assert!(host.take(0, "L3", "L3-ev-1", announcement));
    assert!(host.bots[0].record_game(game_in("L3")));
    let leagues = |memory: &Memory| -> Vec<String> {
        memory
            .history()
            .iter()
            .map(|game| game.league_id.to_string())
            .collect()
    };
    assert_eq!(leagues(&host.bots[0]), ["L1", "L2", "L3"]);

    // L2 completes: L1 is gone, games, events, errors and the ids that deduplicated them; L2 (just
    // completed) and L3 (running) stay.
    assert!(host.take(0, "L2", "L2-ev-2", completed));
    assert_eq!(leagues(&host.bots[0]), ["L2", "L3"]);
    assert_eq!(host.events(0), ["L2-ev-1", "L3-ev-1", "L2-ev-2"]);
    let errors: Vec<&str> = host.bots[0]
        .game_errors()
        .iter()
        .map(|e| e.league_id.as_str())
        .collect();
    assert_eq!(errors, ["L2"]);
    assert!(host.bots[0].took_league_completed());
    assert_eq!(host.shared.events.len(), 3, "the host forgot L1's events too");
    // A redelivery of a kept league is still recognised.
    assert!(!host.take(0, "L2", "L2-ev-1", announcement));
    assert!(!host.bots[0].record_game(game_in("L2")));

    // Leagues after leagues: the memory stays the size of one league.
    for n in 4..200 {
        let league = format!("L{n}");
        assert!(host.bots[0].record_game(game_in(&league)));
        assert!(host.take(0, &league, &format!("{league}-done"), completed));
    }
    assert_eq!(leagues(&host.bots[0]), ["L3", "L199"], "L3 never completed");
    assert_eq!(
        host.events(0),
        ["L3-ev-1", "L199-done"],
        "L3's announcement and L199's completion"
    );
    assert_eq!(host.shared.events.len(), 2, "the host keeps what its bots keep");
    // The leagues its events name, L3 and L199 (this test's games name theirs apart).
    assert_eq!(host.shared.names.len(), 2, "{:?}", host.shared.names);
}
