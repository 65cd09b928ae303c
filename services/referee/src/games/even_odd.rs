//! Even/Odd: both players choose a parity at once, then the referee draws 1..=10.
//!
//! Different choices: whoever matched the number's parity wins 3–0. Same choices: a draw, 1–1, whatever
//! the number (so an even/odd game always has a winner). The number is drawn only once both choices are in, so no
//! choice can depend on it.

use std::fmt;

use league_domain::GameType;
use league_proto::ErrorCode;
use prost_types::Struct;

use crate::chance::Chance;
use crate::game::{GameEngine, GameOutcome, GameResult, InvalidMove, Seat};
use crate::payload::{self, FieldError, list, nested, number, object, string};

#[cfg(test)]
mod tests;

/// The payload field that carries a player's choice.
const CHOICE_FIELD: &str = "parity_choice";
/// The drawn number lies in `LOWEST..=HIGHEST`: five even and five odd numbers.
const LOWEST: u32 = 1;
const HIGHEST: u32 = 10;

/// A player's choice, and the parity of the drawn number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parity {
    Even,
    Odd,
}

impl Parity {
    pub fn of(number: u32) -> Parity {
        if number.is_multiple_of(2) {
            Parity::Even
        } else {
            Parity::Odd
        }
    }

    /// The wire form: `"even"` or `"odd"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Parity::Even => "even",
            Parity::Odd => "odd",
        }
    }

    /// Exactly `"even"` or `"odd"`: the rule is case-sensitive and accepts no abbreviation.
    fn parse(text: &str) -> Option<Parity> {
        match text {
            "even" => Some(Parity::Even),
            "odd" => Some(Parity::Odd),
            _ => None,
        }
    }
}

impl fmt::Display for Parity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One game of Even/Odd.
#[derive(Debug)]
pub struct EvenOdd {
    players: [String; 2],
    choices: [Option<Parity>; 2],
    /// Kept once drawn, so that asking for the outcome again cannot change it.
    drawn: Option<u32>,
}

impl GameEngine for EvenOdd {
    type Move = Parity;

    const GAME_TYPE: GameType = GameType::EvenOdd;

    fn new(players: [String; 2]) -> EvenOdd {
        EvenOdd {
            players,
            choices: [None, None],
            drawn: None,
        }
    }

    fn awaiting(&self) -> &'static [Seat] {
        match self.choices {
            [None, None] => &Seat::BOTH,
            [None, Some(_)] => &[Seat::A],
            [Some(_), None] => &[Seat::B],
            [Some(_), Some(_)] => &[],
        }
    }

    /// The same for both seats at every point of the game: it cannot leak the opponent's choice.
    fn step_context(&self, _seat: Seat) -> Struct {
        object([
            ("action", string("choose_parity")),
            (
                "valid_choices",
                list([Parity::Even, Parity::Odd].map(|p| string(p.as_str()))),
            ),
        ])
    }

    fn validate(&self, _seat: Seat, payload: &Struct) -> Result<Parity, InvalidMove> {
        let refuse = |reason: String| InvalidMove::new(ErrorCode::InvalidParityChoice, reason);
        let expected = "must be the string \"even\" or \"odd\"";
        match payload::read_string(payload, CHOICE_FIELD) {
            Ok(text) => Parity::parse(text).ok_or_else(|| {
                let hint = if Parity::parse(&text.to_lowercase()).is_some() {
                    " (lowercase only)"
                } else {
                    ""
                };
                refuse(format!(
                    "`{CHOICE_FIELD}` {expected}{hint}, got the string {text:?}"
                ))
            }),
            Err(FieldError::Missing { .. }) => {
                Err(refuse(format!("`{CHOICE_FIELD}` is missing: it {expected}")))
            }
            Err(FieldError::WrongKind { found, .. }) => {
                Err(refuse(format!("`{CHOICE_FIELD}` {expected}, got {found}")))
            }
        }
    }

    fn apply(&mut self, seat: Seat, choice: Parity) {
        self.choices[seat.index()] = Some(choice);
    }

    fn is_terminal(&self) -> bool {
        self.choices.iter().all(Option::is_some)
    }

    fn outcome(&mut self, chance: &mut dyn Chance) -> Option<GameOutcome> {
        let [Some(choice_a), Some(choice_b)] = self.choices else {
            return None;
        };
        let drawn = *self
            .drawn
            .get_or_insert_with(|| chance.number_between(LOWEST, HIGHEST));
        let parity = Parity::of(drawn);
        let (result, reason) = if choice_a == choice_b {
            let reason = format!("Both chose {choice_a}, number was {drawn} ({parity})");
            (GameResult::Draw, reason)
        } else {
            let winner = if choice_a == parity { Seat::A } else { Seat::B };
            let id = &self.players[winner.index()];
            let reason = format!("{id} chose {parity}, number was {drawn} ({parity})");
            (GameResult::Win { winner }, reason)
        };
        let choices = object(
            self.players
                .iter()
                .zip([choice_a, choice_b])
                .map(|(id, choice)| (id.clone(), string(choice.as_str()))),
        );
        let metadata = object([
            ("drawn_number", number(drawn)),
            ("number_parity", string(parity.as_str())),
            ("choices", nested(choices)),
        ]);
        Some(GameOutcome::new(result, reason, metadata))
    }
}
