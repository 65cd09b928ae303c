//! Tic-tac-toe: the league's second game, turn-based, to keep the referee game-agnostic.
//!
//! Seat A plays X and moves first; the seats alternate. A move is `{"position": n}`, cells numbered 0–8
//! row by row. Three in a row wins 3–0; a full board without one is a draw, 1–1. No chance is involved.

use league_domain::GameType;
use league_domain::tic_tac_toe::{CELLS, LINES};
use league_proto::ErrorCode;
use prost_types::Struct;

use crate::chance::Chance;
use crate::game::{GameEngine, GameOutcome, GameResult, InvalidMove, Seat};
use crate::payload::{self, FieldError, list, null, number, object, string};

#[cfg(test)]
mod tests;

/// The payload field that carries the cell a player marks.
const POSITION_FIELD: &str = "position";

/// A cell that was empty when the move was validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position(usize);

/// One game of tic-tac-toe.
#[derive(Debug)]
pub struct TicTacToe {
    players: [String; 2],
    board: [Option<Seat>; CELLS],
    turns: u32,
}

fn mark(seat: Seat) -> &'static str {
    match seat {
        Seat::A => "X",
        Seat::B => "O",
    }
}

impl TicTacToe {
    /// The seat to move, whether or not the game is over.
    fn to_move(&self) -> Seat {
        if self.turns.is_multiple_of(2) {
            Seat::A
        } else {
            Seat::B
        }
    }

    /// The first line of three one seat holds, and whose it is.
    fn winning_line(&self) -> Option<(Seat, [usize; 3])> {
        LINES.iter().find_map(|&line| {
            let [a, b, c] = line.map(|cell| self.board[cell]);
            match a {
                Some(seat) if b == a && c == a => Some((seat, line)),
                _ => None,
            }
        })
    }

    fn empty_cells(&self) -> impl Iterator<Item = usize> + '_ {
        (0..CELLS).filter(|&cell| self.board[cell].is_none())
    }

    fn board_value(&self) -> prost_types::Value {
        list(self.board.iter().map(|cell| string(cell.map_or("", mark))))
    }
}

impl GameEngine for TicTacToe {
    type Move = Position;

    const GAME_TYPE: GameType = GameType::TicTacToe;

    fn new(players: [String; 2]) -> TicTacToe {
        TicTacToe {
            players,
            board: [None; CELLS],
            turns: 0,
        }
    }

    fn awaiting(&self) -> &'static [Seat] {
        match (self.is_terminal(), self.to_move()) {
            (true, _) => &[],
            (false, Seat::A) => &[Seat::A],
            (false, Seat::B) => &[Seat::B],
        }
    }

    /// `turn` is the number of the move being asked for, 1 for X's first.
    fn step_context(&self, seat: Seat) -> Struct {
        let legal_moves: Vec<usize> = if self.is_terminal() {
            Vec::new()
        } else {
            self.empty_cells().collect()
        };
        object([
            ("board", self.board_value()),
            ("your_mark", string(mark(seat))),
            (
                "legal_moves",
                list(legal_moves.into_iter().map(|cell| number(cell as u32))),
            ),
            ("turn", number(self.turns + 1)),
        ])
    }

    fn validate(&self, _seat: Seat, payload: &Struct) -> Result<Position, InvalidMove> {
        let refuse = |reason: String| InvalidMove::new(ErrorCode::InvalidMove, reason);
        let expected = "must be an integer from 0 to 8";
        let position = match payload::read_integer(payload, POSITION_FIELD) {
            Ok(position) => position,
            Err(FieldError::Missing { .. }) => {
                return Err(refuse(format!("`{POSITION_FIELD}` is missing: it {expected}")));
            }
            Err(FieldError::WrongKind { found, .. }) => {
                return Err(refuse(format!("`{POSITION_FIELD}` {expected}, got {found}")));
            }
        };
        let cell = usize::try_from(position)
            .ok()
            .filter(|&cell| cell < CELLS)
            .ok_or_else(|| refuse(format!("`{POSITION_FIELD}` {expected}, got {position}")))?;
        match self.board[cell] {
            None => Ok(Position(cell)),
            Some(owner) => Err(refuse(format!("cell {cell} is already taken by {}", mark(owner)))),
        }
    }

    fn apply(&mut self, seat: Seat, Position(cell): Position) {
        self.board[cell] = Some(seat);
        self.turns += 1;
    }

    fn is_terminal(&self) -> bool {
        self.winning_line().is_some() || self.empty_cells().next().is_none()
    }

    fn outcome(&mut self, _chance: &mut dyn Chance) -> Option<GameOutcome> {
        let (result, reason, line) = match self.winning_line() {
            Some((winner, line)) => {
                let [a, b, c] = line;
                let id = &self.players[winner.index()];
                let reason = format!("{id} ({}) completed the line {a}-{b}-{c}", mark(winner));
                (GameResult::Win { winner }, reason, Some(line))
            }
            None if self.is_terminal() => {
                let reason = "The board is full with no line of three".to_owned();
                (GameResult::Draw, reason, None)
            }
            None => return None,
        };
        let winning_line = match line {
            Some(line) => list(line.map(|cell| number(cell as u32))),
            None => null(),
        };
        let metadata = object([
            ("final_board", self.board_value()),
            ("winning_line", winning_line),
            ("total_turns", number(self.turns)),
        ]);
        Some(GameOutcome::new(result, reason, metadata))
    }
}
