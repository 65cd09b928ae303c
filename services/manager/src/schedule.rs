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
//!
//! A league may play the round robin several times ([`round_robin_cycles`]): every second cycle swaps
//! the seats, so in a double round robin each pairing is played once with either player in seat A
//! (which moves first in tic_tac_toe).

#[cfg(test)]
mod properties;

use std::collections::HashSet;
use std::hash::Hash;

pub use league_domain::MatchId;

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
    #[error("a league plays its round robin at least once")]
    NoCycles,
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

/// Schedules `cycles` round robins one after the other, the seats swapped in every second one; round
/// numbers run on across cycles (with 4 players and 2 cycles: rounds 1–6).
pub fn round_robin_cycles<P: Clone + Eq + Hash>(
    players: &[P],
    cycles: u32,
) -> Result<Schedule<P>, ScheduleError<P>> {
    if cycles == 0 {
        return Err(ScheduleError::NoCycles);
    }
    let single = round_robin(players)?;
    let per_cycle = single.rounds.len();
    let too_many = || ScheduleError::TooManyPlayers { count: players.len() };
    let total = per_cycle
        .checked_mul(cycles as usize)
        .filter(|&total| u32::try_from(total).is_ok())
        .ok_or_else(too_many)?;
    let mut rounds = Vec::with_capacity(total);
    for cycle in 0..cycles as usize {
        let swapped = cycle % 2 == 1;
        for round in &single.rounds {
            let round_id = (cycle * per_cycle) as u32 + round.round_id;
            let matches = round
                .matches
                .iter()
                .map(|pairing| {
                    let (player_a, player_b) = if swapped {
                        (pairing.player_b.clone(), pairing.player_a.clone())
                    } else {
                        (pairing.player_a.clone(), pairing.player_b.clone())
                    };
                    Pairing {
                        match_id: MatchId::new(round_id, pairing.match_id.number()),
                        player_a,
                        player_b,
                    }
                })
                .collect();
            rounds.push(Round {
                round_id,
                matches,
                bye: round.bye.clone(),
            });
        }
    }
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
    fn a_double_round_robin_plays_every_pairing_twice_with_the_seats_swapped() {
        let schedule = round_robin_cycles(&["P01", "P02", "P03", "P04"], 2).unwrap();
        let table: Vec<_> = schedule.rounds.iter().map(pairs).collect();
        assert_eq!(table.len(), 6);
        assert_eq!(
            table[3..],
            vec![
                vec![("R4M1".into(), "P02", "P01"), ("R4M2".into(), "P04", "P03")],
                vec![("R5M1".into(), "P03", "P01"), ("R5M2".into(), "P04", "P02")],
                vec![("R6M1".into(), "P04", "P01"), ("R6M2".into(), "P03", "P02")],
            ]
        );
        assert_eq!(schedule.total_matches(), 12);
        // Every ordered pair (seat A, seat B) exactly once.
        let mut seated: Vec<(&str, &str)> = schedule
            .rounds
            .iter()
            .flat_map(|round| round.matches.iter().map(|m| (m.player_a, m.player_b)))
            .collect();
        seated.sort();
        seated.dedup();
        assert_eq!(seated.len(), 12);
    }

    #[test]
    fn any_number_of_cycles_alternates_the_seats() {
        let players = ["P01", "P02", "P03"];
        let schedule = round_robin_cycles(&players, 3).unwrap();
        assert_eq!(schedule.rounds.len(), 9);
        let round_ids: Vec<u32> = schedule.rounds.iter().map(|round| round.round_id).collect();
        assert_eq!(round_ids, (1..=9).collect::<Vec<_>>());
        let first_matches: Vec<_> = schedule
            .rounds
            .iter()
            .step_by(3)
            .map(|r| pairs(r)[0].clone())
            .collect();
        assert_eq!(
            first_matches,
            vec![
                ("R1M1".into(), "P01", "P02"),
                ("R4M1".into(), "P02", "P01"),
                ("R7M1".into(), "P01", "P02"),
            ]
        );
        assert_eq!(
            round_robin_cycles(&players, 1).unwrap(),
            round_robin(&players).unwrap()
        );
        assert_eq!(round_robin_cycles(&players, 0), Err(ScheduleError::NoCycles));
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
