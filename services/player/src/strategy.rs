//! Bot strategies: how a bot picks its move from the step context, its opponent and its own memory.
//!
//! The strategies differ only in Even/Odd. In tic-tac-toe every bot plays the same
//! simple legal game, so that a league of any game can be run with any mix of bots.

use std::fmt;
use std::str::FromStr;

use league_domain::GameType;
use league_proto::v2::RequestMoveRequest;
use prost_types::Struct;
use rand::Rng;

use crate::memory::GameRecord;
use crate::parity::Parity;
use crate::payload::{number, object, string};

mod adaptive;
mod tic_tac_toe;

/// The game types a bot can play, by the league's names for them (league-domain).
pub const EVEN_ODD: &str = GameType::EvenOdd.as_str();
pub const TIC_TAC_TOE: &str = GameType::TicTacToe.as_str();
pub const GAME_TYPES: [&str; 2] = [EVEN_ODD, TIC_TAC_TOE];

/// How a well-behaved bot chooses its parity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// 50/50 from the operating system's RNG.
    Random,
    AlwaysEven,
    AlwaysOdd,
    /// The opposite of this bot's own previous choice, starting with even.
    Alternating,
    /// Pattern detection on the opponent's past choices.
    Adaptive,
}

impl StrategyKind {
    /// Every strategy, in the order a league's bots take them when no list is given
    /// ([`StrategyKind::every`]): the two bots of the smallest league are the most unlike.
    pub const ALL: [StrategyKind; 5] = [
        StrategyKind::Random,
        StrategyKind::Adaptive,
        StrategyKind::Alternating,
        StrategyKind::AlwaysEven,
        StrategyKind::AlwaysOdd,
    ];

    /// Every strategy's name in [`StrategyKind::ALL`]'s order, comma-separated: the behaviours a
    /// host's bots take in turn when none are named (`LEAGUE_STRATEGIES`, `--strategies`).
    pub fn every() -> String {
        StrategyKind::ALL.map(StrategyKind::as_str).join(",")
    }

    /// The configuration name, e.g. `"always_even"`.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Random => "random",
            StrategyKind::AlwaysEven => "always_even",
            StrategyKind::AlwaysOdd => "always_odd",
            StrategyKind::Alternating => "alternating",
            StrategyKind::Adaptive => "adaptive",
        }
    }

    /// The parity to play against `opponent_id`, given this bot's `history` (oldest first).
    pub fn choose_parity(self, opponent_id: &str, history: &[GameRecord], rng: &mut impl Rng) -> Parity {
        match self {
            StrategyKind::Random => crate::parity::random(rng),
            StrategyKind::AlwaysEven => Parity::Even,
            StrategyKind::AlwaysOdd => Parity::Odd,
            // Derived from memory rather than kept as a toggle, so that a retried move request (same
            // step, attempt 2) gets the same answer as the first attempt.
            StrategyKind::Alternating => history
                .iter()
                .rev()
                .find_map(|game| game.my_choice)
                .map_or(Parity::Even, Parity::opposite),
            StrategyKind::Adaptive => adaptive::choose(opponent_id, history, rng),
        }
    }

    /// The move payload for `request`. An unknown game type or a step context that cannot be read gets an
    /// empty payload: the referee refuses it as an invalid move, which is the honest answer.
    pub fn choose_move(
        self,
        request: &RequestMoveRequest,
        history: &[GameRecord],
        rng: &mut impl Rng,
    ) -> Struct {
        let game_type = request
            .context
            .as_ref()
            .map_or("", |context| context.game_type.as_str());
        match game_type {
            EVEN_ODD => {
                let parity = self.choose_parity(&request.opponent_id, history, rng);
                parity_move(parity.as_str())
            }
            TIC_TAC_TOE => request
                .step_context
                .as_ref()
                .and_then(|context| tic_tac_toe::choose_position(context, rng))
                .map_or_else(Struct::default, |cell| {
                    object([("position", number(cell as f64))])
                }),
            _ => Struct::default(),
        }
    }
}

/// An Even/Odd move, `{"parity_choice": choice}`; the choice is a string so fault bots can send nonsense.
pub fn parity_move(choice: &str) -> Struct {
    object([("parity_choice", string(choice))])
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`StrategyKind`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy {0:?} (expected one of {known})", known = StrategyKind::ALL.map(StrategyKind::as_str).join(", "))]
pub struct UnknownStrategy(pub String);

impl FromStr for StrategyKind {
    type Err = UnknownStrategy;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        StrategyKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .ok_or_else(|| UnknownStrategy(name.to_owned()))
    }
}

#[cfg(test)]
mod tests;
