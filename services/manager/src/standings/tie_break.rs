//! The order of players level on points: head-to-head mini-tables, then the players' own records.
//! The rules and the reasons for them are in the parent module's doc.

use std::cmp::{Ordering, Reverse};
use std::collections::HashMap;

use super::StandingRow;

#[cfg(test)]
mod tests;

/// One recorded match, by the players' indices in the table and the points each took from it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Meeting {
    pub(super) a: usize,
    pub(super) b: usize,
    pub(super) points_a: u32,
    pub(super) points_b: u32,
}

/// Which rule put a player above the next one in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// More points: the two were not tied.
    Points,
    HeadToHead,
    WinRate,
    Wins,
    FewerDraws,
    PlayerId,
}

/// The rule as the contracts carry it (`StandingRow.above_next_by`).
impl From<TieBreak> for league_proto::v2::TieBreak {
    fn from(rule: TieBreak) -> Self {
        match rule {
            TieBreak::Points => Self::Points,
            TieBreak::HeadToHead => Self::HeadToHead,
            TieBreak::WinRate => Self::WinRate,
            TieBreak::Wins => Self::Wins,
            TieBreak::FewerDraws => Self::FewerDraws,
            TieBreak::PlayerId => Self::PlayerId,
        }
    }
}

/// Indices into `rows`, best first, each with the rule that ranks it above the next (None for the last).
pub(super) fn ranking<P: Ord>(
    rows: &[StandingRow<P>],
    meetings: &[Meeting],
) -> Vec<(usize, Option<TieBreak>)> {
    let mut by_points: Vec<usize> = (0..rows.len()).collect();
    by_points.sort_by_key(|&i| Reverse(rows[i].points));
    // Each player's head-to-head tier, numbered across the whole table: two neighbours level on
    // points in different tiers were separated by head-to-head.
    let mut order: Vec<(usize, usize)> = Vec::with_capacity(rows.len());
    let mut tier_number = 0;
    // Only the meetings between players level on points can matter, each to its own level: sorted out
    // once, so a level's head-to-head does not scan every other level's meetings (500 players have
    // hundreds of levels).
    let mut level_meetings: HashMap<u32, Vec<Meeting>> = HashMap::new();
    for meeting in meetings {
        let points = rows[meeting.a].points;
        if points == rows[meeting.b].points {
            level_meetings.entry(points).or_default().push(*meeting);
        }
    }
    // Each row's seat in the group head_to_head is splitting, `NO_SEAT` outside it: one array for every
    // group, where a map built for each group was half of ranking a 1,000-player table (callgrind).
    let mut seats = vec![NO_SEAT; rows.len()];
    for level in by_points.chunk_by(|&x, &y| rows[x].points == rows[y].points) {
        let meetings = level_meetings
            .get(&rows[level[0]].points)
            .map_or(&[][..], Vec::as_slice);
        for mut tier in head_to_head(level.to_vec(), meetings, &mut seats) {
            tier.sort_by(|&x, &y| after_head_to_head(&rows[x], &rows[y]));
            order.extend(tier.into_iter().map(|i| (i, tier_number)));
            tier_number += 1;
        }
    }
    let mut ranked: Vec<(usize, Option<TieBreak>)> = order.iter().map(|&(i, _)| (i, None)).collect();
    for (place, pair) in order.windows(2).enumerate() {
        let ((x, x_tier), (y, y_tier)) = (pair[0], pair[1]);
        ranked[place].1 = Some(if rows[x].points != rows[y].points {
            TieBreak::Points
        } else if x_tier != y_tier {
            TieBreak::HeadToHead
        } else {
            after_head_to_head_rule(&rows[x], &rows[y])
        });
    }
    ranked
}

/// A row outside the group being split, in [`head_to_head`]'s `seats`.
const NO_SEAT: usize = usize::MAX;

/// Splits a group level on points into tiers, best first, that head-to-head cannot split further.
/// `seats` has a place for every row of the table, each `NO_SEAT`, and is left so.
fn head_to_head(group: Vec<usize>, meetings: &[Meeting], seats: &mut [usize]) -> Vec<Vec<usize>> {
    if group.len() < 2 {
        return vec![group];
    }
    for (seat, &row) in group.iter().enumerate() {
        seats[row] = seat;
    }
    let mut mini_points = vec![0u32; group.len()];
    // Kept so that deeper levels only scan the meetings that can still matter.
    let mut inside = Vec::new();
    for meeting in meetings {
        let (a, b) = (seats[meeting.a], seats[meeting.b]);
        if a != NO_SEAT && b != NO_SEAT {
            mini_points[a] += meeting.points_a;
            mini_points[b] += meeting.points_b;
            inside.push(*meeting);
        }
    }
    // Cleared before the tiers are split in turn, each with its own seats.
    for &row in &group {
        seats[row] = NO_SEAT;
    }

    let mut mini_table: Vec<(u32, usize)> = mini_points.into_iter().zip(group).collect();
    mini_table.sort_by_key(|&(points, _)| Reverse(points));
    let tiers: Vec<Vec<usize>> = mini_table
        .chunk_by(|x, y| x.0 == y.0)
        .map(|tier| tier.iter().map(|&(_, i)| i).collect())
        .collect();
    if tiers.len() == 1 {
        return tiers;
    }
    tiers
        .into_iter()
        .flat_map(|tier| head_to_head(tier, &inside, seats))
        .collect()
}

/// Steps 2 to 5 of the chain: win rate, wins, fewer draws, player id.
pub(super) fn after_head_to_head<P: Ord>(x: &StandingRow<P>, y: &StandingRow<P>) -> Ordering {
    compare_win_rates(y, x)
        .then(y.wins.cmp(&x.wins))
        .then(x.draws.cmp(&y.draws))
        .then(x.player_id.cmp(&y.player_id))
}

/// The first of steps 2 to 5 that tells `x` and `y` apart.
pub(super) fn after_head_to_head_rule<P: Ord>(x: &StandingRow<P>, y: &StandingRow<P>) -> TieBreak {
    if compare_win_rates(y, x).is_ne() {
        TieBreak::WinRate
    } else if x.wins != y.wins {
        TieBreak::Wins
    } else if x.draws != y.draws {
        TieBreak::FewerDraws
    } else {
        TieBreak::PlayerId
    }
}

/// wins / played as exact fractions. Not having played is 0 / 1, which also keeps a player with
/// no matches from comparing equal to everyone.
fn compare_win_rates<P>(x: &StandingRow<P>, y: &StandingRow<P>) -> Ordering {
    let scaled = |r: &StandingRow<P>, by: &StandingRow<P>| u64::from(r.wins) * u64::from(by.played.max(1));
    scaled(x, y).cmp(&scaled(y, x))
}
