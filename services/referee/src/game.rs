//! What every game is to the referee: seats, moves that may be refused, an outcome, and the engine trait.
//!
//! A game writes its rules once as a [`GameEngine`]; the referee drives it through [`Game`], which it can
//! hold as `Box<dyn Game>` without knowing which game it is (ADR 0003).

use std::fmt;

use league_domain::{GameType, points};
use league_proto::ErrorCode;
use league_proto::v2::{ResultStatus, Role};
use prost_types::Struct;

use crate::chance::Chance;

/// The two seats of a match (player A is listed first in the schedule and moves first in turn-based games).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seat {
    A,
    B,
}

impl Seat {
    /// Both seats, in schedule order.
    pub const BOTH: [Seat; 2] = [Seat::A, Seat::B];

    /// The opponent's seat.
    pub fn other(self) -> Seat {
        match self {
            Seat::A => Seat::B,
            Seat::B => Seat::A,
        }
    }

    /// 0 for A, 1 for B: the index of this seat in `[_; 2]` arrays such as players and points.
    pub fn index(self) -> usize {
        match self {
            Seat::A => 0,
            Seat::B => 1,
        }
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Seat::A => "player A",
            Seat::B => "player B",
        })
    }
}

impl From<Seat> for Role {
    fn from(seat: Seat) -> Role {
        match seat {
            Seat::A => Role::PlayerA,
            Seat::B => Role::PlayerB,
        }
    }
}

/// A move the game refused, with the league.v2 code and a reason the player is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct InvalidMove {
    pub code: ErrorCode,
    pub reason: String,
}

impl InvalidMove {
    pub fn new(code: ErrorCode, reason: impl Into<String>) -> InvalidMove {
        InvalidMove {
            code,
            reason: reason.into(),
        }
    }
}

/// How a game ended by its rules (technical losses and forfeits are the runner's, not the game's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameResult {
    Win { winner: Seat },
    Draw,
}

impl GameResult {
    /// Points by seat index: 3 and 0 for a win, 1 each for a draw (league_domain::points).
    pub fn points(self) -> [u32; 2] {
        match self {
            GameResult::Win { winner: Seat::A } => [points::WIN, points::LOSS],
            GameResult::Win { winner: Seat::B } => [points::LOSS, points::WIN],
            GameResult::Draw => [points::DRAW; 2],
        }
    }
}

impl From<GameResult> for ResultStatus {
    fn from(result: GameResult) -> ResultStatus {
        match result {
            GameResult::Win { .. } => ResultStatus::Win,
            GameResult::Draw => ResultStatus::Draw,
        }
    }
}

/// The result of a finished game, as the referee reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct GameOutcome {
    pub result: GameResult,
    /// By seat index.
    pub points: [u32; 2],
    /// Human-readable, e.g. "P01 chose even, number was 8 (even)".
    pub reason: String,
    /// The game's own account of the result, opaque to the league (`game_metadata`).
    pub metadata: Struct,
}

impl GameOutcome {
    /// An outcome scored by the league's rules: points always follow from the result.
    pub fn new(result: GameResult, reason: impl Into<String>, metadata: Struct) -> GameOutcome {
        GameOutcome {
            result,
            points: result.points(),
            reason: reason.into(),
            metadata,
        }
    }
}

/// A game's rules (the game-engine interface: init, step context per player, validate, apply, terminal?, outcome).
///
/// `Debug` so that whatever holds a game (the match runner) can derive it.
pub trait GameEngine: fmt::Debug + Send + 'static {
    /// A move already checked against the rules: the engine parses a payload into it once, in `validate`.
    type Move: Send;

    /// The game this engine plays (its name is the league's, from league-domain).
    const GAME_TYPE: GameType;

    /// A fresh game between `players` (their ids, used in contexts and metadata; index = seat).
    fn new(players: [String; 2]) -> Self;

    /// Seats whose move is awaited now: both at once in a simultaneous game, one in a turn-based one,
    /// none when terminal.
    fn awaiting(&self) -> &'static [Seat];

    /// What the player in `seat` is told before moving; must never reveal the opponent's hidden choice.
    fn step_context(&self, seat: Seat) -> Struct;

    /// Turns a player's opaque move payload into a legal move, or says why it is not one. Changes nothing.
    fn validate(&self, seat: Seat, payload: &Struct) -> Result<Self::Move, InvalidMove>;

    /// Applies a move that `validate` just accepted for the same seat in the current state.
    fn apply(&mut self, seat: Seat, mv: Self::Move);

    fn is_terminal(&self) -> bool;

    /// The result, or `None` while the game is not terminal. Games of chance draw here, after every
    /// move is in, from `chance`; they draw once, so asking again gives the same outcome.
    fn outcome(&mut self, chance: &mut dyn Chance) -> Option<GameOutcome>;
}

/// Object-safe view the referee drives, so it can hold any game as `Box<dyn Game>`.
pub trait Game: fmt::Debug + Send {
    fn game_type(&self) -> &'static str;

    /// See [`GameEngine::awaiting`].
    fn awaiting(&self) -> &'static [Seat];

    /// See [`GameEngine::step_context`].
    fn step_context(&self, seat: Seat) -> Struct;

    /// Validates and applies a move; on error the game is unchanged. A move from a seat that is not
    /// awaited (out of turn, a second choice, after the end) is refused with `E010 INVALID_MOVE`.
    fn submit(&mut self, seat: Seat, payload: &Struct) -> Result<(), InvalidMove>;

    fn is_terminal(&self) -> bool;

    /// See [`GameEngine::outcome`].
    fn outcome(&mut self, chance: &mut dyn Chance) -> Option<GameOutcome>;
}

impl<G: GameEngine> Game for G {
    fn game_type(&self) -> &'static str {
        G::GAME_TYPE.as_str()
    }

    fn awaiting(&self) -> &'static [Seat] {
        GameEngine::awaiting(self)
    }

    fn step_context(&self, seat: Seat) -> Struct {
        GameEngine::step_context(self, seat)
    }

    fn submit(&mut self, seat: Seat, payload: &Struct) -> Result<(), InvalidMove> {
        let awaiting = GameEngine::awaiting(self);
        if !awaiting.contains(&seat) {
            return Err(not_awaited(seat, awaiting));
        }
        let mv = self.validate(seat, payload)?;
        self.apply(seat, mv);
        Ok(())
    }

    fn is_terminal(&self) -> bool {
        GameEngine::is_terminal(self)
    }

    fn outcome(&mut self, chance: &mut dyn Chance) -> Option<GameOutcome> {
        GameEngine::outcome(self, chance)
    }
}

fn not_awaited(seat: Seat, awaiting: &[Seat]) -> InvalidMove {
    let reason = match awaiting {
        [] => format!("the game is over; no move from {seat} is awaited"),
        [only] => format!("no move from {seat} is awaited now; waiting for {only}"),
        _ => format!("no move from {seat} is awaited now"),
    };
    InvalidMove::new(ErrorCode::InvalidMove, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_know_their_opponent_index_and_role() {
        assert_eq!(Seat::A.other(), Seat::B);
        assert_eq!(Seat::B.other(), Seat::A);
        assert_eq!(Seat::BOTH.map(Seat::index), [0, 1]);
        assert_eq!(Role::from(Seat::A), Role::PlayerA);
        assert_eq!(Role::from(Seat::B), Role::PlayerB);
        assert_eq!(Seat::B.to_string(), "player B");
    }

    #[test]
    fn points_follow_the_result() {
        assert_eq!(GameResult::Win { winner: Seat::A }.points(), [3, 0]);
        assert_eq!(GameResult::Win { winner: Seat::B }.points(), [0, 3]);
        assert_eq!(GameResult::Draw.points(), [1, 1]);
        assert_eq!(ResultStatus::from(GameResult::Draw), ResultStatus::Draw);
        let outcome = GameOutcome::new(GameResult::Win { winner: Seat::B }, "B won", Struct::default());
        assert_eq!(outcome.points, [0, 3]);
    }

    #[test]
    fn an_invalid_move_displays_its_reason() {
        let invalid = InvalidMove::new(ErrorCode::InvalidMove, "cell 4 is taken");
        assert_eq!(invalid.to_string(), "cell 4 is taken");
    }
}
