//! The tables' columns — their names and each row's cells — in one home that the results folder's CSVs
//! (`league run`, `league report`) and the operator's table and CSV output (`league standings`,
//! `schedule`, `player`, `match`) both use: a column is called the same and holds the same thing
//! wherever it is printed.

use league_proto::v2::{MatchStatus, ScheduledMatch, StandingRow};

use crate::data::{duration_ms, strategy_of};
use crate::ratings::{Comparison, Rated};
use crate::tables::{choices_or_moves, drawn_number, outcome_name};
use league_v2::convert::tie_break_name;

/// A row of the league table (`standings.csv`, `league standings`, `league player <id>`).
pub const STANDINGS: [&str; 12] = [
    "rank",
    "player_id",
    "display_name",
    "strategy",
    "played",
    "wins",
    "draws",
    "losses",
    "technical_losses",
    "points",
    "win_rate",
    "above_next_by",
];

/// The table after each round (`standings_by_round.csv`).
pub const STANDINGS_BY_ROUND: [&str; 10] = [
    "round",
    "rank",
    "player_id",
    "display_name",
    "played",
    "wins",
    "draws",
    "losses",
    "technical_losses",
    "points",
];

/// One match (`matches.csv`, `league schedule`, `league player <id>`, `league match <id>`).
pub const MATCHES: [&str; 16] = [
    "round",
    "match",
    "player_a",
    "player_b",
    "choices_or_moves",
    "number",
    "outcome",
    "winner",
    "points_a",
    "points_b",
    "reason",
    "technical_loss_cause",
    "duration_ms",
    "status",
    "started_at",
    "finished_at",
];

/// A player's rating in one league (`ratings.csv`, docs/adr/0049): points per match and its deviation,
/// and against the next player the difference, its 95 % interval and the likelihood of superiority.
pub const LEAGUE_RATINGS: [&str; 10] = [
    "rank",
    "player_id",
    "display_name",
    "matches",
    "points_per_match",
    "deviation",
    "difference_to_next",
    "difference_low",
    "difference_high",
    "los_over_next",
];

/// A player's meetings with one opponent (`head_to_head.csv`).
pub const HEAD_TO_HEAD: [&str; 10] = [
    "player_id",
    "display_name",
    "opponent_id",
    "opponent_display_name",
    "played",
    "wins",
    "draws",
    "losses",
    "technical_losses",
    "points",
];

/// An `llm` bot's moves by who decided them (`llm_moves.csv`): the model, or the fallback for each
/// reason (league_player::Decider, in its order).
pub const LLM_MOVES: [&str; 8] = [
    "player_id",
    "display_name",
    "moves",
    "model",
    "slow",
    "down",
    "nonsense",
    "other_game",
];

/// A league of the deployment (`league leagues`).
pub const LEAGUES: [&str; 8] = [
    "league_id",
    "game_type",
    "status",
    "current_round",
    "total_rounds",
    "registered_players",
    "champion",
    "created_at",
];

/// A player of one match (`league match <id> --section players`).
pub const MATCH_PLAYERS: [&str; 6] = [
    "seat",
    "player_id",
    "display_name",
    "choice",
    "points",
    "at_fault",
];

/// A line of a match's transcript (`league match <id> --section transcript`).
pub const TRANSCRIPT: [&str; 7] = [
    "at",
    "direction",
    "player_id",
    "message_type",
    "attempt",
    "error_code",
    "detail",
];

/// A standing's cells, in [`STANDINGS`]' order.
pub fn standing(row: &StandingRow) -> Vec<String> {
    let win_rate = if row.played == 0 {
        0.0
    } else {
        f64::from(row.wins) / f64::from(row.played)
    };
    vec![
        row.rank.to_string(),
        row.player_id.clone(),
        row.display_name.clone(),
        strategy_of(&row.display_name),
        row.played.to_string(),
        row.wins.to_string(),
        row.draws.to_string(),
        row.losses.to_string(),
        row.technical_losses.to_string(),
        row.points.to_string(),
        format!("{win_rate:.3}"),
        tie_break_name(row.above_next_by).unwrap_or_default().to_owned(),
    ]
}

/// A player's rating in one league, in [`LEAGUE_RATINGS`]' order: `ratings.csv`'s line and `league
/// ratings`' row (the comparison's cells empty on the table's last line).
pub fn league_rating(rank: u32, rated: &Rated) -> Vec<String> {
    let next = |value: fn(&Comparison) -> f64| {
        rated
            .above_next
            .as_ref()
            .map_or(String::new(), |comparison| format!("{:.3}", value(comparison)))
    };
    vec![
        rank.to_string(),
        rated.player_id.clone(),
        rated.display_name.clone(),
        rated.rating.matches.to_string(),
        format!("{:.3}", rated.rating.points_per_match),
        format!("{:.3}", rated.rating.deviation),
        next(|c| c.difference),
        next(|c| c.low),
        next(|c| c.high),
        next(|c| c.los),
    ]
}

/// A standing after a round, in [`STANDINGS_BY_ROUND`]' order.
pub fn standing_after_round(round_id: u32, row: &StandingRow) -> Vec<String> {
    vec![
        round_id.to_string(),
        row.rank.to_string(),
        row.player_id.clone(),
        row.display_name.clone(),
        row.played.to_string(),
        row.wins.to_string(),
        row.draws.to_string(),
        row.losses.to_string(),
        row.technical_losses.to_string(),
        row.points.to_string(),
    ]
}

/// A match's cells, in [`MATCHES`]' order.
pub fn a_match(scheduled: &ScheduledMatch) -> Vec<String> {
    let result = scheduled.result.as_ref();
    let points = |player: &str| {
        result
            .and_then(|r| r.scores.iter().find(|s| s.player_id == player))
            .map(|s| s.points.to_string())
            .unwrap_or_default()
    };
    vec![
        scheduled.round_id.to_string(),
        scheduled.match_id.clone(),
        scheduled.player_a_id.clone(),
        scheduled.player_b_id.clone(),
        choices_or_moves(scheduled),
        drawn_number(scheduled),
        outcome_name(scheduled).to_owned(),
        result.map(|r| r.winner_player_id.clone()).unwrap_or_default(),
        points(&scheduled.player_a_id),
        points(&scheduled.player_b_id),
        result.map(|r| r.reason.clone()).unwrap_or_default(),
        scheduled.technical_loss_cause.clone(),
        duration_ms(scheduled)
            .map(|ms| ms.to_string())
            .unwrap_or_default(),
        match_status(scheduled.status),
        time(scheduled.started_at.as_ref()),
        time(scheduled.finished_at.as_ref()),
    ]
}

/// A protobuf timestamp as RFC 3339 (empty when unset): a time cell, here and in the operator's tables.
pub fn time(at: Option<&prost_types::Timestamp>) -> String {
    at.map(ToString::to_string).unwrap_or_default()
}

/// Where a match is in the league's queue, as the league says it: scheduled, ready, running, finished,
/// cancelled.
pub fn match_status(status: i32) -> String {
    MatchStatus::try_from(status)
        .map(|status| {
            status
                .as_str_name()
                .trim_start_matches("MATCH_STATUS_")
                .to_lowercase()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_a_cell_per_column() {
        assert_eq!(standing(&StandingRow::default()).len(), STANDINGS.len());
        assert_eq!(
            standing_after_round(1, &StandingRow::default()).len(),
            STANDINGS_BY_ROUND.len()
        );
        let scheduled = ScheduledMatch {
            status: MatchStatus::Ready as i32,
            ..ScheduledMatch::default()
        };
        let cells = a_match(&scheduled);
        assert_eq!(cells.len(), MATCHES.len());
        assert_eq!(cells[13], "ready");
        assert_eq!(
            LLM_MOVES[3..],
            league_player::Decider::ALL.map(|decider| match decider {
                league_player::Decider::Model => "model",
                other => other.reason(),
            })
        );
    }
}
