//! Tic-tac-toe: wins on every kind of line for both marks, a draw, and every way a move is refused.

use league_proto::ErrorCode;
use prost_types::{Struct, Value};

use super::TicTacToe;
use crate::chance::test_support::FixedChance;
use crate::game::{Game, GameEngine, GameOutcome, GameResult, Seat};
use crate::payload::{boolean, list, null, number, object, string};

fn game() -> TicTacToe {
    TicTacToe::new(["P01".into(), "P02".into()])
}

fn at(position: Value) -> Struct {
    object([("position", position)])
}

/// Plays `cells` in order, X first, each move from the seat whose turn it is.
fn play(cells: &[u32]) -> TicTacToe {
    let mut game = game();
    for (&cell, seat) in cells.iter().zip(Seat::BOTH.into_iter().cycle()) {
        assert_eq!(game.submit(seat, &at(number(cell))), Ok(()), "{seat} at {cell}");
    }
    game
}

/// The outcome of a finished game; draws nothing, so an empty FixedChance would panic if asked.
fn outcome_of(game: &mut TicTacToe) -> GameOutcome {
    assert!(Game::is_terminal(game));
    Game::outcome(game, &mut FixedChance::new([])).expect("terminal")
}

fn board(marks: [&str; 9]) -> Value {
    list(marks.map(string))
}

fn line(cells: [u32; 3]) -> Value {
    list(cells.map(number))
}

#[test]
fn x_wins_a_row() {
    let mut game = play(&[0, 3, 1, 4, 2]);
    let outcome = outcome_of(&mut game);
    assert_eq!(outcome.result, GameResult::Win { winner: Seat::A });
    assert_eq!(outcome.points, [3, 0]);
    assert_eq!(outcome.reason, "P01 (X) completed the line 0-1-2");
    let expected = object([
        ("final_board", board(["X", "X", "X", "O", "O", "", "", "", ""])),
        ("winning_line", line([0, 1, 2])),
        ("total_turns", number(5)),
    ]);
    assert_eq!(outcome.metadata, expected);
}

#[test]
fn x_wins_a_column_and_both_diagonals() {
    for (moves, won) in [
        (&[1, 0, 4, 3, 7][..], [1, 4, 7]),
        (&[0, 1, 4, 2, 8], [0, 4, 8]),
        (&[2, 0, 4, 1, 6], [2, 4, 6]),
    ] {
        let outcome = outcome_of(&mut play(moves));
        assert_eq!(outcome.result, GameResult::Win { winner: Seat::A }, "{moves:?}");
        assert_eq!(outcome.metadata.fields["winning_line"], line(won));
    }
}

#[test]
fn o_wins_a_row_a_column_and_both_diagonals() {
    for (moves, won) in [
        (&[0, 3, 1, 4, 8, 5][..], [3, 4, 5]),
        (&[0, 2, 1, 5, 3, 8], [2, 5, 8]),
        (&[1, 0, 2, 4, 3, 8], [0, 4, 8]),
        (&[0, 2, 1, 4, 5, 6], [2, 4, 6]),
    ] {
        let outcome = outcome_of(&mut play(moves));
        assert_eq!(outcome.result, GameResult::Win { winner: Seat::B }, "{moves:?}");
        assert_eq!(outcome.points, [0, 3]);
        assert!(outcome.reason.starts_with("P02 (O) completed the line"));
        assert_eq!(outcome.metadata.fields["winning_line"], line(won));
    }
}

#[test]
fn a_full_board_without_a_line_is_a_draw() {
    let mut game = play(&[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    let outcome = outcome_of(&mut game);
    assert_eq!((outcome.result, outcome.points), (GameResult::Draw, [1, 1]));
    assert_eq!(outcome.reason, "The board is full with no line of three");
    let expected = object([
        (
            "final_board",
            board(["X", "O", "X", "X", "O", "O", "O", "X", "X"]),
        ),
        ("winning_line", null()),
        ("total_turns", number(9)),
    ]);
    assert_eq!(outcome.metadata, expected);
}

#[test]
fn a_line_made_with_the_last_cell_is_a_win_not_a_draw() {
    let outcome = outcome_of(&mut play(&[0, 1, 2, 3, 4, 5, 7, 6, 8]));
    assert_eq!(outcome.result, GameResult::Win { winner: Seat::A });
    assert_eq!(outcome.metadata.fields["winning_line"], line([0, 4, 8]));
}

#[test]
fn seats_alternate_starting_with_x() {
    let mut game = game();
    assert_eq!(Game::awaiting(&game), [Seat::A]);
    let refused = game.submit(Seat::B, &at(number(4))).expect_err("O first");
    assert_eq!(refused.code, ErrorCode::InvalidMove);
    assert_eq!(
        refused.reason,
        "no move from player B is awaited now; waiting for player A"
    );
    assert_eq!(game.submit(Seat::A, &at(number(4))), Ok(()));
    assert_eq!(Game::awaiting(&game), [Seat::B]);
    assert!(game.submit(Seat::A, &at(number(0))).is_err(), "X twice in a row");
    assert_eq!(game.submit(Seat::B, &at(number(0))), Ok(()));
}

#[test]
fn an_occupied_cell_is_refused() {
    let mut game = play(&[4]);
    let refused = game.submit(Seat::B, &at(number(4))).expect_err("occupied");
    assert_eq!(refused.code, ErrorCode::InvalidMove);
    assert_eq!(refused.reason, "cell 4 is already taken by X");
    assert_eq!(Game::awaiting(&game), [Seat::B], "still O's turn");
}

#[test]
fn malformed_positions_are_refused() {
    let expected = "must be an integer from 0 to 8";
    for (payload, reason) in [
        (
            at(number(4.5)),
            format!("`position` {expected}, got the number 4.5"),
        ),
        (
            at(string("4")),
            format!("`position` {expected}, got the string \"4\""),
        ),
        (at(number(-1)), format!("`position` {expected}, got -1")),
        (at(number(9)), format!("`position` {expected}, got 9")),
        (at(null()), format!("`position` {expected}, got null")),
        (
            at(boolean(true)),
            format!("`position` {expected}, got the boolean true"),
        ),
        (
            at(list([number(4)])),
            format!("`position` {expected}, got a list"),
        ),
        (
            object([("row", number(1))]),
            format!("`position` is missing: it {expected}"),
        ),
    ] {
        let mut game = game();
        let refused = game.submit(Seat::A, &payload).expect_err(&reason);
        assert_eq!(refused.code, ErrorCode::InvalidMove, "{reason}");
        assert_eq!(refused.reason, reason);
        assert_eq!(
            Game::step_context(&game, Seat::A),
            Game::step_context(&self::game(), Seat::A)
        );
    }
}

#[test]
fn no_move_is_accepted_after_the_end() {
    let mut game = play(&[0, 3, 1, 4, 2]);
    assert_eq!(Game::awaiting(&game), []);
    for seat in Seat::BOTH {
        let refused = game.submit(seat, &at(number(8))).expect_err("after the end");
        assert_eq!(refused.code, ErrorCode::InvalidMove);
        assert_eq!(
            refused.reason,
            format!("the game is over; no move from {seat} is awaited")
        );
    }
}

#[test]
fn there_is_no_outcome_before_the_end() {
    let mut game = play(&[0, 3, 1, 4]);
    assert!(!Game::is_terminal(&game));
    assert_eq!(Game::outcome(&mut game, &mut FixedChance::new([])), None);
}

#[test]
fn the_step_context_shows_board_mark_legal_moves_and_turn() {
    let game = play(&[4, 0]);
    let expected = object([
        ("board", board(["O", "", "", "", "X", "", "", "", ""])),
        ("your_mark", string("X")),
        ("legal_moves", list([1, 2, 3, 5, 6, 7, 8].map(number))),
        ("turn", number(3)),
    ]);
    assert_eq!(Game::step_context(&game, Seat::A), expected);
    assert_eq!(
        Game::step_context(&game, Seat::B).fields["your_mark"],
        string("O")
    );
    let finished = play(&[0, 3, 1, 4, 2]);
    assert_eq!(
        Game::step_context(&finished, Seat::B).fields["legal_moves"],
        list([])
    );
    assert_eq!(finished.game_type(), "tic_tac_toe");
}
