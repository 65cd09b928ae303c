//! The table of each running league, kept in memory from one round's completion to the next, so that
//! completing a round adds that round's results instead of asking Postgres for the league table.
//!
//! Why: a round's completion sends LEAGUE_STANDINGS_UPDATE, so the table is on the path between two
//! rounds. From the database it is each player's totals and a result probe for every ordered pair of
//! players level on points (crate::league::table::standings): 3.4 ms a round at 200 players and 19.9 ms
//! at 500, growing with the square of the league. Kept here it is the round's results added to the
//! totals and a look into an array per level pair.
//!
//! Why it cannot be wrong: a completed round's results never change (a match finishes once, and a
//! round completes only when all its matches have), so a table kept "through round r" is the table
//! over exactly the results of rounds 1 to r. It is taken out while a round's completion uses it and
//! put back only once that transaction has committed ([`KeptTables::keep`]); any other case — a
//! manager that has just started, a completion that rolled back, a round completed by another manager
//! on the same database — finds no table through the round before, and loads the league's results
//! once from the database (the same results the database table is made of).

use league_domain::LeagueId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use league_proto::v2::StandingRow;
use sqlx::PgConnection;

use crate::error::ManagerResult;
use crate::league::table::{self, LeagueResults, Ranked};
use crate::results::{Outcome, RecordedResult, Side};
use crate::standings::{self, HeadToHead, rank_head_to_head};

/// The kept tables of every league this manager completes rounds of, by league id.
#[derive(Debug, Clone, Default)]
pub struct KeptTables {
    tables: Arc<Mutex<HashMap<LeagueId, KeptTable>>>,
}

impl KeptTables {
    /// The table of `league_id` through `round_id`, taken out (see the module doc), if it is kept.
    /// A table kept through another round is dropped: it is of no use any more.
    fn take(&self, league_id: &LeagueId, round_id: u32) -> Option<KeptTable> {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = tables.remove(league_id)?;
        (kept.through_round == round_id).then_some(kept)
    }

    /// Keeps `table` for the next round of `league_id`: called once the completion that made it has
    /// committed.
    pub fn keep(&self, league_id: &LeagueId, table: KeptTable) {
        let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
        tables.insert(league_id.clone(), table);
    }

    /// The table of `league_id` through `round_id`, whose results are those of the table through the
    /// round before plus `round` (the results of `round_id`, read in the completing transaction `tx`),
    /// or, when that table is not kept, every result of the league read from `tx`. Returns it with its
    /// rows as the contracts carry them.
    pub async fn through(
        &self,
        tx: &mut PgConnection,
        league_id: &LeagueId,
        round_id: u32,
        round: &[RecordedResult<String>],
    ) -> ManagerResult<(KeptTable, Vec<StandingRow>)> {
        let kept = match self.take(league_id, round_id.saturating_sub(1)) {
            Some(mut kept) => {
                kept.add_round(round_id, round)
                    .map_err(|error| anyhow::anyhow!("standings of {league_id}: {error}"))?;
                kept
            }
            None => {
                let results = LeagueResults::load(tx, league_id).await?;
                KeptTable::from_results(round_id, &results)
                    .map_err(|error| anyhow::anyhow!("standings of {league_id}: {error}"))?
            }
        };
        let rows = kept
            .standings()
            .map_err(|error| anyhow::anyhow!("standings of {league_id}: {error}"))?;
        Ok((kept, rows))
    }
}

/// One league's table through a round: each player's totals and the outcome of every match played.
#[derive(Debug)]
pub struct KeptTable {
    through_round: u32,
    /// The players in the order of their numbers: a player is its position here, so comparing
    /// positions compares numbers, the final tie-break.
    players: Vec<Ranked>,
    names: HashMap<String, String>,
    positions: HashMap<String, u32>,
    totals: Vec<standings::StandingRow<u32>>,
    /// The points each pair of players took from the matches between them, summed (a double
    /// round-robin's pairs meet twice, and head-to-head adds up every meeting), the lower position's
    /// first; pair (x, y), x < y, at [`pair_index`]. An array, not a map: every pair meets by the end,
    /// so nothing is saved by a map's sparseness. 8 bytes a pair, 4 MB at 1,000 players: little beside
    /// the schedule's row a pair in Postgres.
    head_to_head: Vec<[u32; 2]>,
}

/// Where pair (x, y), x < y, of a league of `players` is in [`KeptTable::head_to_head`]: the pairs
/// of 0 first ((0, 1) … (0, n-1)), then those of 1, and so on.
fn pair_index(players: usize, x: usize, y: usize) -> usize {
    debug_assert!(x < y && y < players);
    x * (2 * players - x - 1) / 2 + (y - x - 1)
}

/// Why a result cannot be added to a kept table.
#[derive(Debug, thiserror::Error)]
enum KeptError {
    #[error("a result names player {0}, who is not in the league")]
    UnknownPlayer(String),
    #[error("round {round} comes after round {through}, the last one counted")]
    OutOfOrder { round: u32, through: u32 },
    #[error(transparent)]
    Standings(#[from] standings::StandingsError<u32>),
}

impl KeptTable {
    fn from_results(round_id: u32, results: &LeagueResults) -> Result<Self, KeptError> {
        let (players, names) = results.players();
        let mut kept = Self::empty(players.to_vec(), names.clone());
        for result in results.through(round_id) {
            kept.add(&result.player_a.id, &result.player_b.id, result.outcome)?;
        }
        kept.through_round = round_id;
        Ok(kept)
    }

    /// The table before round 1 of a league of `players` (in the order of their numbers).
    fn empty(players: Vec<Ranked>, names: HashMap<String, String>) -> Self {
        Self {
            through_round: 0,
            positions: (0..)
                .zip(&players)
                .map(|(position, player)| (player.id.clone(), position))
                .collect(),
            totals: (0..)
                .take(players.len())
                .map(standings::StandingRow::new)
                .collect(),
            head_to_head: vec![[0, 0]; players.len() * players.len().saturating_sub(1) / 2],
            players,
            names,
        }
    }

    fn add_round(&mut self, round_id: u32, round: &[RecordedResult<String>]) -> Result<(), KeptError> {
        if round_id != self.through_round + 1 {
            return Err(KeptError::OutOfOrder {
                round: round_id,
                through: self.through_round,
            });
        }
        for result in round {
            self.add(&result.player_a, &result.player_b, result.outcome)?;
        }
        self.through_round = round_id;
        Ok(())
    }

    fn add(&mut self, player_a: &str, player_b: &str, outcome: Outcome) -> Result<(), KeptError> {
        let position = |player: &str| {
            self.positions
                .get(player)
                .copied()
                .ok_or_else(|| KeptError::UnknownPlayer(player.to_owned()))
        };
        let (a, b) = (position(player_a)?, position(player_b)?);
        let (mark_a, mark_b) = (outcome.mark_for(Side::A), outcome.mark_for(Side::B));
        self.totals[a as usize].record(mark_a);
        self.totals[b as usize].record(mark_b);
        let ((low, high), points) = if a < b {
            ((a, b), [mark_a.points(), mark_b.points()])
        } else {
            ((b, a), [mark_b.points(), mark_a.points()])
        };
        let pair = &mut self.head_to_head[pair_index(self.players.len(), low as usize, high as usize)];
        for (sum, points) in pair.iter_mut().zip(points) {
            *sum += points;
        }
        Ok(())
    }

    /// The table, best first: the totals ranked with the matches between players level on points.
    fn standings(&self) -> Result<Vec<StandingRow>, KeptError> {
        let mut by_points: Vec<u32> = (0..).take(self.players.len()).collect();
        by_points.sort_unstable_by_key(|&player| (self.totals[player as usize].points, player));
        let mut level = Vec::new();
        for group in
            by_points.chunk_by(|&x, &y| self.totals[x as usize].points == self.totals[y as usize].points)
        {
            for (i, &x) in group.iter().enumerate() {
                for &y in &group[i + 1..] {
                    let (low, high) = (x.min(y), x.max(y));
                    let [points_low, points_high] =
                        self.head_to_head[pair_index(self.players.len(), low as usize, high as usize)];
                    // A pair that never met, or took nothing from its meetings, changes no mini-table.
                    if points_low > 0 || points_high > 0 {
                        level.push(HeadToHead {
                            player_a: low,
                            player_b: high,
                            points_a: points_low,
                            points_b: points_high,
                        });
                    }
                }
            }
        }
        let table = rank_head_to_head(self.totals.clone(), &level)?;
        let table = table
            .into_iter()
            .map(|row| row.with_player(|position| self.players[position as usize].clone()))
            .collect();
        Ok(table::to_proto(table, &self.names))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::standings::compute_standings;

    fn league(size: i32) -> (Vec<Ranked>, HashMap<String, String>) {
        let players: Vec<Ranked> = (1..=size)
            .map(|number| Ranked {
                number,
                id: format!("P{number:02}"),
            })
            .collect();
        let names = players
            .iter()
            .map(|player| (player.id.clone(), format!("bot {}", player.number)))
            .collect();
        (players, names)
    }

    fn random_outcome(rng: &mut StdRng) -> Outcome {
        match rng.random_range(0..6) {
            0 => Outcome::Win { winner: Side::A },
            1 => Outcome::Win { winner: Side::B },
            // Draws twice as likely: more players level on points, more head-to-head.
            2 | 3 => Outcome::Draw,
            4 => Outcome::TechnicalLoss {
                loser: if rng.random() { Side::A } else { Side::B },
            },
            _ => Outcome::DoubleForfeit,
        }
    }

    /// Leagues of random results, round by round, each pair meeting once or (a double round-robin)
    /// twice: the kept table after each round is the table computed from every result so far,
    /// head-to-head and all.
    #[test]
    fn each_round_added_gives_the_table_of_all_the_results_so_far() {
        for seed in 0..120 {
            let mut rng = StdRng::seed_from_u64(seed);
            let size = rng.random_range(2..=9);
            let cycles = if seed % 2 == 0 { 1 } else { 2 };
            let (players, names) = league(size);
            let mut pairs = Vec::new();
            for _ in 0..cycles {
                for (i, x) in players.iter().enumerate() {
                    for y in &players[i + 1..] {
                        // Either may be side A, as in a real schedule.
                        pairs.push(if rng.random() { (x, y) } else { (y, x) });
                    }
                }
            }
            let mut kept = KeptTable::empty(players.clone(), names.clone());
            let mut so_far: Vec<RecordedResult<Ranked>> = Vec::new();
            for (round_id, round) in (1..).zip(pairs.chunks(3)) {
                let round: Vec<RecordedResult<String>> = round
                    .iter()
                    .map(|(a, b)| RecordedResult {
                        player_a: a.id.clone(),
                        player_b: b.id.clone(),
                        outcome: random_outcome(&mut rng),
                    })
                    .collect();
                so_far.extend(round.iter().map(|result| RecordedResult {
                    player_a: players.iter().find(|p| p.id == result.player_a).unwrap().clone(),
                    player_b: players.iter().find(|p| p.id == result.player_b).unwrap().clone(),
                    outcome: result.outcome,
                }));
                kept.add_round(round_id, &round).unwrap();
                let expected = table::to_proto(compute_standings(&players, &so_far).unwrap(), &names);
                assert_eq!(
                    kept.standings().unwrap(),
                    expected,
                    "seed {seed}, {cycles} cycle(s), round {round_id}"
                );
            }
        }
    }

    #[test]
    fn every_pair_has_a_place_of_its_own() {
        for players in 2..40 {
            let mut seen = vec![false; players * (players - 1) / 2];
            for x in 0..players {
                for y in x + 1..players {
                    let index = pair_index(players, x, y);
                    assert!(!seen[index], "{players} players: ({x}, {y}) shares {index}");
                    seen[index] = true;
                }
            }
            assert!(seen.iter().all(|&taken| taken), "{players} players");
        }
    }

    #[test]
    fn a_round_out_of_order_or_an_unknown_player_is_refused() {
        let (players, names) = league(4);
        let mut kept = KeptTable::empty(players, names);
        let result = |a: &str, b: &str| RecordedResult {
            player_a: a.to_owned(),
            player_b: b.to_owned(),
            outcome: Outcome::Draw,
        };
        assert!(matches!(
            kept.add_round(2, &[result("P01", "P02")]),
            Err(KeptError::OutOfOrder { round: 2, through: 0 })
        ));
        assert!(matches!(
            kept.add_round(1, &[result("P01", "P99")]),
            Err(KeptError::UnknownPlayer(player)) if player == "P99"
        ));
    }

    #[test]
    fn only_the_table_through_the_round_before_is_taken() {
        let tables = KeptTables::default();
        let l = LeagueId::parse("l").expect("a league id");
        let (players, names) = league(2);
        let mut kept = KeptTable::empty(players, names);
        kept.through_round = 3;
        tables.keep(&l, kept);
        assert!(
            tables.take(&l, 2).is_none(),
            "a table through another round is of no use"
        );
        assert!(tables.take(&l, 3).is_none(), "and was dropped");
        let (players, names) = league(2);
        let mut kept = KeptTable::empty(players, names);
        kept.through_round = 3;
        tables.keep(&l, kept);
        assert_eq!(tables.take(&l, 3).map(|kept| kept.through_round), Some(3));
        assert!(tables.take(&l, 3).is_none(), "taken out while in use");
    }
}
