//! Head-to-head: every meeting of every pair of players, counted. A double round-robin has two meetings
//! per pair (more when a league is played again under the same ids), so a pair's record is the row
//! player's wins, draws, losses and technical losses over all of them, and its points by the league's
//! scoring (`league_domain::points`). The chart, `head_to_head.csv`, the pages' tables and each
//! player's page all read it from here.

use std::collections::HashMap;

use league_domain::points;

use crate::data::{LeagueData, Mark, mark_for};

/// What the row player got in each meeting with one opponent, in play order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meetings {
    pub marks: Vec<Mark>,
}

impl Meetings {
    pub fn played(&self) -> u32 {
        self.marks.len() as u32
    }

    fn count(&self, mark: Mark) -> u32 {
        self.marks.iter().filter(|&&m| m == mark).count() as u32
    }

    pub fn wins(&self) -> u32 {
        self.count(Mark::Win)
    }

    pub fn draws(&self) -> u32 {
        self.count(Mark::Draw)
    }

    /// Losses on the board (technical losses are counted apart, as in the table).
    pub fn losses(&self) -> u32 {
        self.count(Mark::Loss)
    }

    pub fn technical_losses(&self) -> u32 {
        self.count(Mark::TechnicalLoss)
    }

    /// The row player's points from these meetings, by the league's scoring.
    pub fn points(&self) -> u32 {
        self.marks.iter().map(|&mark| mark_points(mark)).sum()
    }

    /// `W–D–L`, losses including technical ones (the pages say how many of them were technical).
    pub fn record(&self) -> String {
        format!(
            "{}–{}–{}",
            self.wins(),
            self.draws(),
            self.losses() + self.technical_losses()
        )
    }
}

/// A mark's points by the league's scoring: 3 for a win, 1 for a draw, 0 for any loss.
pub fn mark_points(mark: Mark) -> u32 {
    match mark {
        Mark::Win => points::WIN,
        Mark::Draw => points::DRAW,
        Mark::Loss | Mark::TechnicalLoss => points::LOSS,
    }
}

/// A player as the head-to-head names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    pub player_id: String,
    pub display_name: String,
}

/// Every pair's meetings, players in the final table's order.
#[derive(Debug, Clone, Default)]
pub struct HeadToHead {
    pub players: Vec<Player>,
    /// (row index, column index) → the row player's meetings with the column player; absent when the
    /// two never finished a match.
    meetings: HashMap<(usize, usize), Meetings>,
}

impl HeadToHead {
    pub fn new(data: &LeagueData) -> Self {
        let players: Vec<Player> = data
            .standings
            .iter()
            .map(|row| Player {
                player_id: row.player_id.clone(),
                display_name: row.display_name.clone(),
            })
            .collect();
        let index: HashMap<&str, usize> = players
            .iter()
            .enumerate()
            .map(|(i, player)| (player.player_id.as_str(), i))
            .collect();
        let mut meetings: HashMap<(usize, usize), Meetings> = HashMap::new();
        for scheduled in data.matches() {
            let (Some(&a), Some(&b)) = (
                index.get(scheduled.player_a_id.as_str()),
                index.get(scheduled.player_b_id.as_str()),
            ) else {
                continue;
            };
            let marks = (
                mark_for(scheduled, &scheduled.player_a_id),
                mark_for(scheduled, &scheduled.player_b_id),
            );
            if let (Some(mark_a), Some(mark_b)) = marks {
                meetings.entry((a, b)).or_default().marks.push(mark_a);
                meetings.entry((b, a)).or_default().marks.push(mark_b);
            }
        }
        Self { players, meetings }
    }

    /// The row player's meetings with the column player (by index in the table), if they met.
    pub fn between(&self, row: usize, column: usize) -> Option<&Meetings> {
        self.meetings.get(&(row, column))
    }

    /// The player's opponents in table order, each with the player's meetings with them.
    pub fn of(&self, row: usize) -> impl Iterator<Item = (&Player, &Meetings)> {
        self.players
            .iter()
            .enumerate()
            .filter_map(move |(column, opponent)| Some((opponent, self.between(row, column)?)))
    }

    /// Every pair that met, rows in table order and each row's opponents in table order.
    pub fn pairs(&self) -> impl Iterator<Item = (&Player, &Player, &Meetings)> {
        (0..self.players.len()).flat_map(move |row| {
            self.of(row)
                .map(move |(opponent, met)| (&self.players[row], opponent, met))
        })
    }

    /// The most meetings of any pair (1 in a single round-robin, 2 in a double one).
    pub fn most_meetings(&self) -> u32 {
        self.meetings.values().map(Meetings::played).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use league_proto::v2::{MatchResult, ResultStatus, ScheduledMatch, StandingRow};

    use super::*;

    fn row(player_id: &str) -> StandingRow {
        StandingRow {
            player_id: player_id.into(),
            display_name: format!("bot-{player_id}"),
            ..StandingRow::default()
        }
    }

    /// A finished match: `winner` empty for a draw; `at_fault` the players of a technical result.
    fn played(a: &str, b: &str, winner: &str, at_fault: &[&str]) -> ScheduledMatch {
        let status = match (winner, at_fault.len()) {
            (_, 2) => ResultStatus::DoubleForfeit,
            (_, 1) => ResultStatus::TechnicalLoss,
            ("", _) => ResultStatus::Draw,
            _ => ResultStatus::Win,
        };
        ScheduledMatch {
            player_a_id: a.into(),
            player_b_id: b.into(),
            result: Some(MatchResult {
                status: status as i32,
                winner_player_id: winner.into(),
                at_fault_player_ids: at_fault.iter().map(|p| (*p).to_owned()).collect(),
                ..MatchResult::default()
            }),
            ..ScheduledMatch::default()
        }
    }

    fn league(matches: Vec<ScheduledMatch>) -> LeagueData {
        LeagueData {
            status: Default::default(),
            standings: vec![row("P01"), row("P02"), row("P03")],
            by_round: vec![],
            rounds: vec![league_proto::v2::ScheduledRound {
                round_id: 1,
                matches,
                ..Default::default()
            }],
            llm_moves: Default::default(),
            stopped: false,
        }
    }

    #[test]
    fn every_meeting_of_a_double_round_robin_counts() {
        // P01–P02 met twice (a win each way), P01–P03 twice (a draw, then P03 timed out), P02–P03 once
        // (both forfeited), and one match is not finished.
        let data = league(vec![
            played("P01", "P02", "P01", &[]),
            played("P02", "P01", "P02", &[]),
            played("P01", "P03", "", &[]),
            played("P03", "P01", "P01", &["P03"]),
            played("P02", "P03", "", &["P02", "P03"]),
            ScheduledMatch {
                player_a_id: "P02".into(),
                player_b_id: "P03".into(),
                ..ScheduledMatch::default()
            },
        ]);
        let h2h = HeadToHead::new(&data);
        let p1_p2 = h2h.between(0, 1).unwrap();
        assert_eq!((p1_p2.wins(), p1_p2.draws(), p1_p2.losses()), (1, 0, 1));
        assert_eq!((p1_p2.points(), p1_p2.record()), (3, "1–0–1".to_owned()));
        let p1_p3 = h2h.between(0, 2).unwrap();
        assert_eq!(p1_p3.marks, [Mark::Draw, Mark::Win], "in play order");
        assert_eq!(p1_p3.points(), 4);
        let p3_p1 = h2h.between(2, 0).unwrap();
        assert_eq!(
            (p3_p1.draws(), p3_p1.technical_losses(), p3_p1.points()),
            (1, 1, 1)
        );
        assert_eq!(p3_p1.record(), "0–1–1");
        let p2_p3 = h2h.between(1, 2).unwrap();
        assert_eq!(
            (p2_p3.played(), p2_p3.technical_losses(), p2_p3.points()),
            (1, 1, 0)
        );
        assert_eq!(h2h.between(0, 0), None, "nobody meets themselves");
        assert_eq!(h2h.most_meetings(), 2);
        // Every player's head-to-head points add up to its points from the finished matches.
        let totals: Vec<u32> = (0..3).map(|i| h2h.of(i).map(|(_, m)| m.points()).sum()).collect();
        assert_eq!(totals, [3 + 4, 3, 1]);
        assert_eq!(h2h.pairs().count(), 6, "3 pairs, each seen from both sides");
    }
}
