//! The league table: 3/1/0 points and the tie-break chain (points, head-to-head, win rate, wins, fewer draws, player id).
//!
//! Players level on points are ordered by, in turn:
//!
//! 1. **Head-to-head.** The tied players' mini-table: the points each earned in the matches between
//!    the tied players only. If that splits the group, head-to-head is applied again inside each
//!    subgroup that is still tied (each is strictly smaller than the group it came from, so this
//!    ends); a subgroup the mini-table cannot split moves on to step 2.
//! 2. **Win rate**, wins / played, higher first; compared exactly, as fractions. Not having played
//!    counts as a rate of 0.
//! 3. **Wins**, more first.
//! 4. **Draws**, fewer first. Under 3/1/0 this never decides, as equal points and equal wins mean
//!    equal draws; it stays because the seed lists it and it would matter under other scoring.
//! 5. **Player id**, ascending by `P`'s `Ord`, so the caller decides what id order means.
//!
//! Why a mini-table, and why recursive: for two players it is exactly the seed's "the winner of
//! their match ranks higher; a draw or no match passes to the next step". Comparing players two at a
//! time would not be an order for three or more (A beat B, B beat C, C beat A), whereas the
//! mini-table ranks a whole group at once, and re-applying it to the subgroups it leaves tied is how
//! "the winner of their match" still decides between two players who end up level inside a larger
//! group. Every step after head-to-head compares the players' own records and the last compares ids,
//! so the table is a total order and does not depend on the order results were recorded in.
//!
//! Byes are not results: a bye never counts as played and earns nothing.

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod tests;
mod tie_break;

use std::collections::HashMap;
use std::hash::Hash;

use crate::results::{Mark, RecordedResult, Side};
use tie_break::Meeting;
pub use tie_break::TieBreak;

/// One player's line in the league table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingRow<P> {
    /// 1-based and unique: ties are always broken.
    pub rank: u32,
    pub player_id: P,
    pub played: u32,
    pub wins: u32,
    pub draws: u32,
    /// All losses, technical ones included.
    pub losses: u32,
    /// The losses that were technical losses or double forfeits.
    pub technical_losses: u32,
    pub points: u32,
    /// The rule that ranks this player above the next row ([`TieBreak::Points`] when their points
    /// differ); `None` on the last row.
    pub above_next_by: Option<TieBreak>,
}

/// Why the table cannot be computed from these players and results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StandingsError<P> {
    #[error("player {0:?} is listed more than once")]
    DuplicatePlayer(P),
    #[error("a result names player {0:?}, who is not in the league")]
    UnknownPlayer(P),
    #[error("a result has player {0:?} playing against themself")]
    AgainstThemself(P),
    /// Ranks are `u32`; no real league comes near this.
    #[error("{count} players are more than a u32 rank can count")]
    TooManyPlayers { count: usize },
}

impl<P> StandingRow<P> {
    /// Wins per match played, from 0 to 1; 0 before the first match. For display: ranking compares
    /// win rates exactly instead.
    pub fn win_rate(&self) -> f64 {
        match self.played {
            0 => 0.0,
            played => f64::from(self.wins) / f64::from(played),
        }
    }

    /// The same row for the player `player` names this one's as.
    pub(crate) fn with_player<Q>(self, player: impl FnOnce(P) -> Q) -> StandingRow<Q> {
        StandingRow {
            rank: self.rank,
            player_id: player(self.player_id),
            played: self.played,
            wins: self.wins,
            draws: self.draws,
            losses: self.losses,
            technical_losses: self.technical_losses,
            points: self.points,
            above_next_by: self.above_next_by,
        }
    }

    /// A row with nothing played yet.
    pub(crate) fn new(player_id: P) -> Self {
        Self {
            rank: 0,
            player_id,
            played: 0,
            wins: 0,
            draws: 0,
            losses: 0,
            technical_losses: 0,
            points: 0,
            above_next_by: None,
        }
    }

    /// Adds one result: `played` 1 and the mark counted where it belongs.
    pub(crate) fn record(&mut self, mark: Mark) {
        self.played += 1;
        self.points += mark.points();
        match mark {
            Mark::Win => self.wins += 1,
            Mark::Draw => self.draws += 1,
            Mark::Loss => self.losses += 1,
            Mark::TechnicalLoss => {
                self.losses += 1;
                self.technical_losses += 1;
            }
        }
    }
}

/// The league table after `results`, best first. Every player in `players` gets a row.
pub fn compute_standings<P: Ord + Clone + Hash>(
    players: &[P],
    results: &[RecordedResult<P>],
) -> Result<Vec<StandingRow<P>>, StandingsError<P>> {
    let index = positions(players.iter())?;
    let mut rows: Vec<StandingRow<P>> = players.iter().cloned().map(StandingRow::new).collect();
    for result in results {
        let (a, b) = seats(&index, &result.player_a, &result.player_b)?;
        rows[a].record(result.outcome.mark_for(Side::A));
        rows[b].record(result.outcome.mark_for(Side::B));
    }
    rank_totals(rows, results)
}

/// The table from each player's totals (as the manager keeps them, updated with every result) and the
/// results between players level on points. Equal to [`compute_standings`] over all the results: the
/// totals are what it adds up, and head-to-head compares only players level on points, so the results
/// between players on different points change nothing (they may be passed all the same).
pub fn rank_totals<P: Ord + Clone + Hash>(
    totals: Vec<StandingRow<P>>,
    level_results: &[RecordedResult<P>],
) -> Result<Vec<StandingRow<P>>, StandingsError<P>> {
    rank_meetings(
        totals,
        level_results.iter().map(|result| {
            let points = |side| result.outcome.mark_for(side).points();
            (
                &result.player_a,
                &result.player_b,
                [points(Side::A), points(Side::B)],
            )
        }),
    )
}

/// What two players took from matches between them: the points of one meeting, or the sums over
/// several. Head-to-head only ever adds a meeting's points to the mini-table (the module's doc), so
/// summed meetings rank exactly as the meetings one by one: a table kept in memory keeps one per pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadToHead<P> {
    pub player_a: P,
    pub player_b: P,
    pub points_a: u32,
    pub points_b: u32,
}

/// [`rank_totals`], with the meetings between players level on points given as [`HeadToHead`]s.
pub fn rank_head_to_head<P: Ord + Clone + Hash>(
    totals: Vec<StandingRow<P>>,
    level: &[HeadToHead<P>],
) -> Result<Vec<StandingRow<P>>, StandingsError<P>> {
    rank_meetings(
        totals,
        level.iter().map(|meeting| {
            (
                &meeting.player_a,
                &meeting.player_b,
                [meeting.points_a, meeting.points_b],
            )
        }),
    )
}

/// `totals` ranked with `meetings`: two players and the points each took.
fn rank_meetings<'a, P: Ord + Clone + Hash + 'a>(
    totals: Vec<StandingRow<P>>,
    meetings: impl Iterator<Item = (&'a P, &'a P, [u32; 2])>,
) -> Result<Vec<StandingRow<P>>, StandingsError<P>> {
    let index = positions(totals.iter().map(|row| &row.player_id))?;
    let meetings = meetings
        .map(|(player_a, player_b, [points_a, points_b])| {
            let (a, b) = seats(&index, player_a, player_b)?;
            Ok(Meeting {
                a,
                b,
                points_a,
                points_b,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    drop(index);
    Ok(rank(totals, &meetings))
}

/// Each player's row in the table; a player listed twice, or more players than ranks, is an error.
fn positions<'a, P: Eq + Clone + Hash + 'a>(
    players: impl ExactSizeIterator<Item = &'a P>,
) -> Result<HashMap<&'a P, usize>, StandingsError<P>> {
    if u32::try_from(players.len()).is_err() {
        return Err(StandingsError::TooManyPlayers { count: players.len() });
    }
    let mut index = HashMap::with_capacity(players.len());
    for (i, player) in players.enumerate() {
        if index.insert(player, i).is_some() {
            return Err(StandingsError::DuplicatePlayer(player.clone()));
        }
    }
    Ok(index)
}

/// The rows of a result's two players.
fn seats<P: Eq + Clone + Hash>(
    index: &HashMap<&P, usize>,
    player_a: &P,
    player_b: &P,
) -> Result<(usize, usize), StandingsError<P>> {
    let find = |player: &P| {
        index
            .get(player)
            .copied()
            .ok_or_else(|| StandingsError::UnknownPlayer(player.clone()))
    };
    let (a, b) = (find(player_a)?, find(player_b)?);
    if a == b {
        return Err(StandingsError::AgainstThemself(player_a.clone()));
    }
    Ok((a, b))
}

/// `rows` ordered by points and the tie-break chain, ranked 1, 2, …
fn rank<P: Ord + Clone>(rows: Vec<StandingRow<P>>, meetings: &[Meeting]) -> Vec<StandingRow<P>> {
    let order = tie_break::ranking(&rows, meetings);
    let mut places = vec![(0, None); rows.len()];
    for (place, &(i, above_next_by)) in order.iter().enumerate() {
        places[i] = (place, above_next_by);
    }
    let mut table: Vec<_> = rows.into_iter().zip(places).collect();
    table.sort_unstable_by_key(|&(_, (place, _))| place);
    table
        .into_iter()
        .zip(1..=u32::MAX)
        .map(|((row, (_, above_next_by)), rank)| StandingRow {
            rank,
            above_next_by,
            ..row
        })
        .collect()
}
