//! The adaptive strategy: look for a pattern in one opponent's past choices and play
//! into it, falling back to chance when there is too little history.
//!
//! Each detector is the seed's, step for step, including its thresholds; where the seed's Python leaves
//! something to chance (ties), the comment says what we do instead.

use rand::Rng;

use crate::memory::{GameRecord, Outcome};
use crate::parity::Parity;

/// Fewer games than this against an opponent and the strategy plays at random.
const MIN_GAMES: usize = 5;
/// The frequency test needs at least this many choices.
const MIN_GAMES_FOR_FREQUENCY: usize = 10;
/// χ² critical value for p = 0.05 with one degree of freedom.
const CHI_SQUARED_CRITICAL: f64 = 3.841;
/// Alternation is judged over this many of the opponent's latest choices.
const ALTERNATION_WINDOW: usize = 10;
/// The alternation detector needs at least this many choices.
const MIN_GAMES_FOR_ALTERNATION: usize = 4;
/// More than this share of consecutive pairs must differ.
const ALTERNATION_SHARE: f64 = 0.8;
/// The conditional detector needs at least this many games.
const MIN_GAMES_FOR_CONDITIONAL: usize = 3;

/// One past game against the opponent: what they chose, and how it ended (for this bot).
type Seen = (Parity, Outcome);

/// The parity to play against `opponent_id`. Only games in which the opponent's choice was revealed count:
/// a game the opponent forfeited says nothing about how they choose.
pub fn choose(opponent_id: &str, history: &[GameRecord], rng: &mut impl Rng) -> Parity {
    let seen: Vec<Seen> = history
        .iter()
        .filter(|game| game.opponent_id == opponent_id)
        .filter_map(|game| Some((game.opponent_choice?, game.outcome)))
        .collect();
    if seen.len() < MIN_GAMES {
        return crate::parity::random(rng);
    }
    let choices: Vec<Parity> = seen.iter().map(|&(choice, _)| choice).collect();
    // The rule: an opponent biased toward even → choose even, to win when the number is even.
    frequency_bias(&choices)
        .or_else(|| alternation_prediction(&choices))
        .unwrap_or_else(|| conditional_prediction(&seen))
}

/// The parity the opponent significantly favours (χ², df = 1), if any.
pub(super) fn frequency_bias(choices: &[Parity]) -> Option<Parity> {
    let total = choices.len();
    if total < MIN_GAMES_FOR_FREQUENCY {
        return None;
    }
    let even = choices.iter().filter(|&&choice| choice == Parity::Even).count() as f64;
    let odd = total as f64 - even;
    let expected = total as f64 / 2.0;
    let chi_squared = ((even - expected).powi(2) + (odd - expected).powi(2)) / expected;
    (chi_squared > CHI_SQUARED_CRITICAL).then_some(if even > odd { Parity::Even } else { Parity::Odd })
}

/// When the opponent's recent choices alternate (more than 80 % of consecutive pairs differ), their next
/// choice: the opposite of their last.
pub(super) fn alternation_prediction(choices: &[Parity]) -> Option<Parity> {
    if choices.len() < MIN_GAMES_FOR_ALTERNATION {
        return None;
    }
    let recent = &choices[choices.len().saturating_sub(ALTERNATION_WINDOW)..];
    let alternations = recent.windows(2).filter(|pair| pair[0] != pair[1]).count();
    let share = alternations as f64 / (recent.len() - 1) as f64;
    let last = recent.last()?;
    (share > ALTERNATION_SHARE).then_some(last.opposite())
}

/// What the opponent most often chose right after earlier games that ended like the last one; even when
/// there is no such game, and even on a tie (the seed's Python breaks ties arbitrarily).
pub(super) fn conditional_prediction(seen: &[Seen]) -> Parity {
    let Some(&(_, last_outcome)) = seen.last() else {
        return Parity::Even;
    };
    if seen.len() < MIN_GAMES_FOR_CONDITIONAL {
        return Parity::Even;
    }
    let (even, odd) =
        seen.windows(2)
            .filter(|pair| pair[0].1 == last_outcome)
            .fold((0, 0), |(even, odd), pair| match pair[1].0 {
                Parity::Even => (even + 1, odd),
                Parity::Odd => (even, odd + 1),
            });
    if odd > even { Parity::Odd } else { Parity::Even }
}

#[cfg(test)]
mod tests;
