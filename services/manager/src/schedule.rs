//! The round-robin schedule: who meets whom in which round, by the circle method (ADR 0004).
//!
//! The seed's Python turns the circle *after* pairing a round, yet its own table for four players
//! starts with P01–P02, P03–P04, which is what turning *before* pairing gives. We follow the table:
//! the rounds are the Python's rounds in reverse order (a test checks this against a transliteration
//! of the Python). The seed's table also lists every pairing with the earlier player first, so
//! `player_a` is always whichever of the two comes first in the caller's list.
//!
//! With an odd number of players one seat of the circle is empty; whoever faces it has the bye, which
//! gives every player exactly one bye over the cycle.

mod match_id;
#[cfg(test)]
mod properties;

use std::collections::HashSet;
use std::hash::Hash;

pub use match_id::{MatchId, ParseMatchIdError};

/// Every round of a league, in play order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule<P> {
    pub rounds: Vec<Round<P>>,
}

/// One round: the matches played in it and, with an odd number of players, who sits it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round<P> {
    /// 1-based.
    pub round_id: u32,
    pub matches: Vec<Pairing<P>>,
    pub bye: Option<P>,
}

/// One scheduled match between two players.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing<P> {
    pub match_id: MatchId,
    pub player_a: P,
    pub player_b: P,
}

/// Why a list of players cannot be scheduled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError<P> {
    #[error("a league needs at least 2 players, got {count}")]
    TooFewPlayers { count: usize },
    /// Round and match numbers are `u32`; no real league comes near this.
    #[error("{count} players need more rounds than a u32 round number can count")]
    TooManyPlayers { count: usize },
    #[error("player {0:?} is listed more than once")]
    DuplicatePlayer(P),
}

impl<P> Schedule<P> {
    pub fn total_matches(&self) -> usize {
        self.rounds.iter().map(|round| round.matches.len()).sum()
    }
}

/// Schedules a single round robin: every player meets every other exactly once.
pub fn round_robin<P: Clone + Eq + Hash>(players: &[P]) -> Result<Schedule<P>, ScheduleError<P>> {
    let count = players.len();
    if count < 2 {
        return Err(ScheduleError::TooFewPlayers { count });
    }
    let mut seen = HashSet::with_capacity(count);
    if let Some(duplicate) = players.iter().find(|player| !seen.insert(*player)) {
        return Err(ScheduleError::DuplicatePlayer(duplicate.clone()));
    }

    // Seats hold indices into `players`; index `count` is the empty seat of an odd league.
    let seats = count + count % 2;
    let Ok(round_count) = u32::try_from(seats - 1) else {
        return Err(ScheduleError::TooManyPlayers { count });
    };
    let mut circle: Vec<usize> = (0..seats).collect();
    let rounds = (1..=round_count)
        .map(|round_id| {
            // Turned before pairing, unlike the seed's Python: see the module doc.
            circle[1..].rotate_left(1);
            pair_round(players, &circle, round_id)
        })
        .collect();
    Ok(Schedule { rounds })
}

/// Pairs the circle's first seat with its last, the second with the second-to-last, and so on.
fn pair_round<P: Clone>(players: &[P], circle: &[usize], round_id: u32) -> Round<P> {
    let seats = circle.len();
    let mut matches = Vec::with_capacity(seats / 2);
    let mut bye = None;
    let mut number = 0;
    for i in 0..seats / 2 {
        let (x, y) = (circle[i], circle[seats - 1 - i]);
        let (a, b) = (x.min(y), x.max(y));
        // The empty seat has the highest index, so only `b` can be it.
        match (players.get(a), players.get(b)) {
            (Some(player_a), Some(player_b)) => {
                number += 1;
                matches.push(Pairing {
                    match_id: MatchId::new(round_id, number),
                    player_a: player_a.clone(),
                    player_b: player_b.clone(),
                });
            }
            (player, _) => bye = player.cloned(),
        }
    }
    Round {
        round_id,
        matches,
        bye,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pairs(round: &Round<&'static str>) -> Vec<(String, &'static str, &'static str)> {
        round
            .matches
            .iter()
            .map(|m| (m.match_id.to_string(), m.player_a, m.player_b))
            .collect()
    }

    #[test]
    fn four_players_give_the_seed_table() {
        let schedule = round_robin(&["P01", "P02", "P03", "P04"]).unwrap();
        let table: Vec<_> = schedule.rounds.iter().map(pairs).collect();
        assert_eq!(
            table,
            vec![
                vec![("R1M1".into(), "P01", "P02"), ("R1M2".into(), "P03", "P04")],
                vec![("R2M1".into(), "P01", "P03"), ("R2M2".into(), "P02", "P04")],
                vec![("R3M1".into(), "P01", "P04"), ("R3M2".into(), "P02", "P03")],
            ]
        );
        assert!(schedule.rounds.iter().all(|round| round.bye.is_none()));
        assert_eq!(schedule.total_matches(), 6);
    }

    #[test]
    fn three_players_take_turns_at_the_bye() {
        let schedule = round_robin(&["P01", "P02", "P03"]).unwrap();
        let byes: Vec<_> = schedule.rounds.iter().map(|round| round.bye).collect();
        assert_eq!(byes, vec![Some("P03"), Some("P02"), Some("P01")]);
        let table: Vec<_> = schedule.rounds.iter().map(pairs).collect();
        assert_eq!(
            table,
            vec![
                vec![("R1M1".into(), "P01", "P02")],
                vec![("R2M1".into(), "P01", "P03")],
                vec![("R3M1".into(), "P02", "P03")],
            ]
        );
    }

    #[test]
    fn two_players_meet_once() {
        let schedule = round_robin(&["P01", "P02"]).unwrap();
        assert_eq!(schedule.rounds.len(), 1);
        assert_eq!(pairs(&schedule.rounds[0]), vec![("R1M1".into(), "P01", "P02")]);
    }

    #[test]
    fn fewer_than_two_players_is_an_error() {
        assert_eq!(
            round_robin::<&str>(&[]),
            Err(ScheduleError::TooFewPlayers { count: 0 })
        );
        assert_eq!(
            round_robin(&["P01"]),
            Err(ScheduleError::TooFewPlayers { count: 1 })
        );
    }

    #[test]
    fn a_duplicate_player_is_an_error() {
        assert_eq!(
            round_robin(&["P01", "P02", "P03", "P02"]),
            Err(ScheduleError::DuplicatePlayer("P02"))
        );
    }

    #[test]
    fn errors_read_well() {
        assert_eq!(
            ScheduleError::<&str>::TooFewPlayers { count: 1 }.to_string(),
            "a league needs at least 2 players, got 1"
        );
        assert_eq!(
            ScheduleError::DuplicatePlayer("P02").to_string(),
            "player \"P02\" is listed more than once"
        );
    }
}
