//! Even/Odd as the referee plays it: both players choose a parity at once, then the referee draws 1..=10.
//!
//! The rule itself (who wins, the range) lives in `league_domain::even_odd`. Different choices: whoever
//! matched the number's parity wins 3–0. Same choices: a draw, 1–1, whatever the number. The number is
//! drawn only once both choices are in, so no choice can depend on it.

use league_domain::GameType;
use league_domain::even_odd::Parity;
use league_domain::even_odd::{self, HIGHEST, LOWEST};
use league_proto::ErrorCode;
use prost_types::Struct;

use crate::chance::Chance;
use crate::game::{GameEngine, GameOutcome, GameResult, InvalidMove, Seat};
use crate::payload::{self, FieldError, list, nested, number, object, string};

#[cfg(test)]
mod tests;

/// The payload field that carries a player's choice.
const CHOICE_FIELD: &str = "parity_choice";
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
        let (result, reason) = match even_odd::winner([choice_a, choice_b], drawn) {
            None => {
                let reason = format!("Both chose {choice_a}, number was {drawn} ({parity})");
                (GameResult::Draw, reason)
            }
            Some(index) => {
                let winner = Seat::BOTH[index];
                let id = &self.players[winner.index()];
                let reason = format!("{id} chose {parity}, number was {drawn} ({parity})");
                (GameResult::Win { winner }, reason)
            }
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
