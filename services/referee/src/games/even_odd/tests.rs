//! Even/Odd against its rules (the outcome table, invalid choices) and the six scenarios of the course's examples.

use league_proto::ErrorCode;
use prost_types::{Struct, Value};

use super::EvenOdd;
use crate::chance::test_support::FixedChance;
use crate::game::{Game, GameEngine, GameOutcome, GameResult, Seat};
use crate::payload::{boolean, list, nested, null, number, object, string};

const A_WINS: GameResult = GameResult::Win { winner: Seat::A };
const B_WINS: GameResult = GameResult::Win { winner: Seat::B };

fn game() -> EvenOdd {
    EvenOdd::new(["P01".into(), "P02".into()])
}

fn choice(parity: &str) -> Struct {
    object([("parity_choice", string(parity))])
}

/// A plays `a`, B plays `b`, and the referee draws `drawn`.
fn play(a: &str, b: &str, drawn: u32) -> GameOutcome {
    let mut game = game();
    assert_eq!(game.submit(Seat::A, &choice(a)), Ok(()));
    assert_eq!(game.submit(Seat::B, &choice(b)), Ok(()));
    let mut chance = FixedChance::new([drawn]);
    let outcome = Game::outcome(&mut game, &mut chance);
    assert_eq!(chance.left(), 0, "the number is drawn exactly once");
    outcome.unwrap_or_else(|| panic!("no outcome after both chose"))
}

#[test]
fn both_seats_are_awaited_until_each_has_chosen() {
    let mut game = game();
    assert_eq!(Game::awaiting(&game), [Seat::A, Seat::B]);
    assert_eq!(game.submit(Seat::B, &choice("odd")), Ok(()));
    assert_eq!(Game::awaiting(&game), [Seat::A]);
    assert!(!Game::is_terminal(&game));
    assert_eq!(game.submit(Seat::A, &choice("even")), Ok(()));
    assert_eq!(Game::awaiting(&game), []);
    assert!(Game::is_terminal(&game));
    assert_eq!(game.game_type(), "even_odd");
}

#[test]
fn seed_000_invalid_choices_are_refused_with_e004() {
    let invalid: [(&str, Option<Value>, &str); 11] = [
        (
            "\"Even\" (case-sensitive)",
            Some(string("Even")),
            "(lowercase only), got the string \"Even\"",
        ),
        (
            "\"EVEN\" (must be lowercase)",
            Some(string("EVEN")),
            "(lowercase only), got the string \"EVEN\"",
        ),
        (
            "\"e\" (must be full word)",
            Some(string("e")),
            "got the string \"e\"",
        ),
        (
            "0 (must be string, not integer)",
            Some(number(0)),
            "got the number 0",
        ),
        (
            "true (must be string, not boolean)",
            Some(boolean(true)),
            "got the boolean true",
        ),
        (
            "\"maybe\" (not a valid choice)",
            Some(string("maybe")),
            "got the string \"maybe\"",
        ),
        ("null (must be present)", Some(null()), "got null"),
        ("\"\" (empty string)", Some(string("")), "got the string \"\""),
        (
            "a missing field",
            None,
            "is missing: it must be the string \"even\" or \"odd\"",
        ),
        ("a list", Some(list([string("even")])), "got a list"),
        ("a nested struct", Some(nested(choice("even"))), "got a struct"),
    ];
    for (name, value, reason_ends) in invalid {
        let payload = object(value.map(|value| ("parity_choice", value)));
        let mut game = game();
        let refused = game.submit(Seat::A, &payload).expect_err(name);
        assert_eq!(refused.code, ErrorCode::InvalidParityChoice, "{name}");
        assert!(refused.reason.starts_with("`parity_choice`"), "{name}: {refused}");
        assert!(refused.reason.ends_with(reason_ends), "{name}: {refused}");
        assert_eq!(
            Game::awaiting(&game),
            [Seat::A, Seat::B],
            "{name} changed the game"
        );
    }
}

#[test]
fn a_payload_under_another_field_name_is_refused() {
    // An older revision of the specification calls the field `choice`; league.v2 names it `parity_choice` (player.proto).
    let payload = object([("choice", string("even"))]);
    let refused = game().validate(Seat::A, &payload).expect_err("wrong field name");
    assert_eq!(refused.code, ErrorCode::InvalidParityChoice);
    assert_eq!(
        refused.reason,
        "`parity_choice` is missing: it must be the string \"even\" or \"odd\""
    );
}

#[test]
fn a_second_choice_is_refused_and_keeps_the_first() {
    let mut game = game();
    assert_eq!(game.submit(Seat::A, &choice("even")), Ok(()));
    let refused = game.submit(Seat::A, &choice("odd")).expect_err("second choice");
    assert_eq!(refused.code, ErrorCode::InvalidMove);
    assert_eq!(
        refused.reason,
        "no move from player A is awaited now; waiting for player B"
    );
    assert_eq!(game.submit(Seat::B, &choice("odd")), Ok(()));
    let outcome = Game::outcome(&mut game, &mut FixedChance::new([2])).expect("terminal");
    assert_eq!(outcome.result, A_WINS, "A's first choice, even, stands");
    let refused = game.submit(Seat::B, &choice("even")).expect_err("after the end");
    assert_eq!(
        refused.reason,
        "the game is over; no move from player B is awaited"
    );
}

#[test]
fn the_step_context_offers_both_parities() {
    let expected = object([
        ("action", string("choose_parity")),
        ("valid_choices", list([string("even"), string("odd")])),
    ]);
    assert_eq!(Game::step_context(&game(), Seat::A), expected);
    assert_eq!(Game::step_context(&game(), Seat::B), expected);
}

#[test]
fn the_step_context_never_reveals_the_opponents_choice() {
    let mut game = game();
    let before = Game::step_context(&game, Seat::B);
    assert_eq!(game.submit(Seat::A, &choice("odd")), Ok(()));
    assert_eq!(Game::step_context(&game, Seat::B), before);
}

#[test]
fn nothing_is_drawn_before_both_have_chosen() {
    let mut game = game();
    let mut chance = FixedChance::new([5]);
    assert_eq!(Game::outcome(&mut game, &mut chance), None);
    assert_eq!(game.submit(Seat::A, &choice("even")), Ok(()));
    assert_eq!(Game::outcome(&mut game, &mut chance), None);
    assert_eq!(chance.left(), 1);
}

#[test]
fn the_number_is_drawn_once_and_the_outcome_does_not_change() {
    let mut game = game();
    assert_eq!(game.submit(Seat::A, &choice("even")), Ok(()));
    assert_eq!(game.submit(Seat::B, &choice("odd")), Ok(()));
    let mut chance = FixedChance::new([8, 7]);
    let first = Game::outcome(&mut game, &mut chance);
    assert_eq!(Game::outcome(&mut game, &mut chance), first);
    assert_eq!(chance.left(), 1);
}

#[test]
fn seed_001_scenario_1_even_odd_even_number_a_wins() {
    let outcome = play("even", "odd", 4);
    assert_eq!((outcome.result, outcome.points), (A_WINS, [3, 0]));
}

#[test]
fn seed_001_scenario_2_even_odd_odd_number_b_wins() {
    let outcome = play("even", "odd", 3);
    assert_eq!((outcome.result, outcome.points), (B_WINS, [0, 3]));
}

#[test]
fn seed_001_scenario_3_odd_even_even_number_b_wins() {
    let outcome = play("odd", "even", 2);
    assert_eq!((outcome.result, outcome.points), (B_WINS, [0, 3]));
}

#[test]
fn seed_001_scenario_4_odd_even_odd_number_a_wins() {
    let outcome = play("odd", "even", 9);
    assert_eq!((outcome.result, outcome.points), (A_WINS, [3, 0]));
}

#[test]
fn seed_001_scenario_5_both_even_is_a_draw_whatever_the_number() {
    for drawn in [6, 5] {
        let outcome = play("even", "even", drawn);
        assert_eq!(
            (outcome.result, outcome.points),
            (GameResult::Draw, [1, 1]),
            "{drawn}"
        );
    }
}

#[test]
fn seed_001_scenario_6_both_odd_is_a_draw_whatever_the_number() {
    for drawn in [1, 10] {
        let outcome = play("odd", "odd", drawn);
        assert_eq!(
            (outcome.result, outcome.points),
            (GameResult::Draw, [1, 1]),
            "{drawn}"
        );
    }
}

#[test]
fn seed_000_table_1() {
    let rows = [
        ("even", "odd", 8, A_WINS, "P01 chose even, number was 8 (even)"),
        ("even", "odd", 7, B_WINS, "P02 chose odd, number was 7 (odd)"),
        (
            "odd",
            "odd",
            4,
            GameResult::Draw,
            "Both chose odd, number was 4 (even)",
        ),
        (
            "even",
            "even",
            6,
            GameResult::Draw,
            "Both chose even, number was 6 (even)",
        ),
        ("even", "odd", 10, A_WINS, "P01 chose even, number was 10 (even)"),
        ("odd", "even", 1, A_WINS, "P01 chose odd, number was 1 (odd)"),
    ];
    for (match_number, (a, b, drawn, result, reason)) in (1..).zip(rows) {
        let outcome = play(a, b, drawn);
        assert_eq!(outcome.result, result, "match {match_number}");
        assert_eq!(outcome.reason, reason, "match {match_number}");
    }
}

#[test]
fn the_metadata_reveals_the_number_its_parity_and_both_choices() {
    let outcome = play("odd", "even", 7);
    let expected = object([
        ("drawn_number", number(7)),
        ("number_parity", string("odd")),
        (
            "choices",
            nested(object([("P01", string("odd")), ("P02", string("even"))])),
        ),
    ]);
    assert_eq!(outcome.metadata, expected);
}
