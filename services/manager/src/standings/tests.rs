//! How results count in the table, and what the table refuses.

#![allow(clippy::unwrap_used)]

use super::fixtures::{beats, double_forfeit, draw, record, result, row, table, technical_loss};
use super::{StandingRow, StandingsError, compute_standings, rank_totals};
use crate::results::{Outcome, Side};
use crate::schedule::round_robin;

#[test]
fn players_without_results_have_zeros_and_rank_by_id() {
    let rows = table(&["P03", "P01", "P02"], &[]);
    let lines: Vec<_> = rows.iter().map(|r| (r.rank, r.player_id)).collect();
    assert_eq!(lines, [(1, "P01"), (2, "P02"), (3, "P03")]);
    for id in ["P01", "P02", "P03"] {
        assert_eq!(record(&rows, id), (0, 0, 0, 0, 0, 0));
        assert_eq!(row(&rows, id).win_rate(), 0.0);
    }
}

#[test]
fn a_win_is_three_points_and_a_loss_none() {
    let rows = table(&[], &[result("P01", "P02", Outcome::Win { winner: Side::B })]);
    assert_eq!(record(&rows, "P02"), (1, 1, 0, 0, 0, 3));
    assert_eq!(record(&rows, "P01"), (1, 0, 0, 1, 0, 0));
}

#[test]
fn a_draw_is_one_point_each() {
    let rows = table(&[], &[draw("P01", "P02")]);
    assert_eq!(record(&rows, "P01"), (1, 0, 1, 0, 0, 1));
    assert_eq!(record(&rows, "P02"), (1, 0, 1, 0, 0, 1));
}

#[test]
fn a_technical_loss_is_a_win_for_the_opponent() {
    let rows = table(&[], &[technical_loss("P01", "P02")]);
    assert_eq!(record(&rows, "P02"), (1, 1, 0, 0, 0, 3));
    assert_eq!(record(&rows, "P01"), (1, 0, 0, 1, 1, 0));
}

#[test]
fn a_double_forfeit_is_a_technical_loss_for_both() {
    let rows = table(&[], &[double_forfeit("P01", "P02")]);
    assert_eq!(record(&rows, "P01"), (1, 0, 0, 1, 1, 0));
    assert_eq!(record(&rows, "P02"), (1, 0, 0, 1, 1, 0));
}

#[test]
fn points_are_three_per_win_plus_one_per_draw() {
    let results = [
        beats("P01", "P02"),
        draw("P01", "P03"),
        technical_loss("P03", "P02"),
        double_forfeit("P01", "P04"),
        draw("P02", "P04"),
        beats("P04", "P03"),
    ];
    let rows = table(&[], &results);
    for r in &rows {
        assert_eq!(r.points, 3 * r.wins + r.draws, "{}", r.player_id);
        assert_eq!(r.played, r.wins + r.draws + r.losses, "{}", r.player_id);
    }
    assert_eq!(record(&rows, "P01"), (3, 1, 1, 1, 1, 4));
    assert_eq!(record(&rows, "P03"), (3, 0, 1, 2, 1, 1));
}

#[test]
fn byes_are_not_played() {
    let players = ["P01", "P02", "P03"];
    let schedule = round_robin(&players).unwrap();
    let first = &schedule.rounds[0];
    let bye = first.bye.unwrap();
    let results: Vec<_> = first
        .matches
        .iter()
        .map(|m| beats(m.player_a, m.player_b))
        .collect();
    let rows = compute_standings(&players, &results).unwrap();
    assert_eq!(record(&rows, bye), (0, 0, 0, 0, 0, 0));

    let all: Vec<_> = schedule
        .rounds
        .iter()
        .flat_map(|r| &r.matches)
        .map(|m| draw(m.player_a, m.player_b))
        .collect();
    let rows = compute_standings(&players, &all).unwrap();
    assert!(rows.iter().all(|r| r.played == 2 && r.points == 2));
}

#[test]
fn win_rate_is_wins_per_match_played() {
    let rows = table(&[], &[beats("P01", "P02"), draw("P01", "P03")]);
    assert_eq!(row(&rows, "P01").win_rate(), 0.5);
    assert_eq!(row(&rows, "P02").win_rate(), 0.0);
}

#[test]
fn a_result_naming_a_stranger_is_an_error() {
    let players = ["P01", "P02"];
    let error = compute_standings(&players, &[beats("P01", "P09")]).unwrap_err();
    assert_eq!(error, StandingsError::UnknownPlayer("P09"));
    let error = compute_standings(&players, &[draw("P08", "P02")]).unwrap_err();
    assert_eq!(error, StandingsError::UnknownPlayer("P08"));
    assert_eq!(
        error.to_string(),
        "a result names player \"P08\", who is not in the league"
    );
}

#[test]
fn a_player_listed_twice_is_an_error() {
    let error = compute_standings(&["P01", "P02", "P01"], &[]).unwrap_err();
    assert_eq!(error, StandingsError::DuplicatePlayer("P01"));
}

#[test]
fn a_player_against_themself_is_an_error() {
    let error = compute_standings(&["P01", "P02"], &[draw("P02", "P02")]).unwrap_err();
    assert_eq!(error, StandingsError::AgainstThemself("P02"));
}

#[test]
fn the_order_of_results_does_not_change_the_table() {
    let results = vec![
        beats("P03", "P01"),
        draw("P01", "P02"),
        beats("P02", "P04"),
        technical_loss("P04", "P03"),
        beats("P05", "P02"),
        double_forfeit("P05", "P01"),
        beats("P04", "P05"),
        draw("P03", "P05"),
        beats("P01", "P04"),
        draw("P02", "P03"),
    ];
    let expected = table(&[], &results);
    let players = ["P05", "P04", "P03", "P02", "P01"];
    for turn in 0..results.len() {
        let mut shuffled = results.clone();
        shuffled.rotate_left(turn);
        assert_eq!(compute_standings(&players, &shuffled).unwrap(), expected);
        shuffled.reverse();
        assert_eq!(compute_standings(&players, &shuffled).unwrap(), expected);
    }
}

/// The manager keeps each player's totals and ranks them with only the results between players level
/// on points: over many leagues (every outcome, many ties), that is the table of all the results.
#[test]
fn totals_and_the_results_between_level_players_give_the_same_table() {
    let outcomes = [
        Outcome::Win { winner: Side::A },
        Outcome::Win { winner: Side::B },
        Outcome::Draw,
        Outcome::TechnicalLoss { loser: Side::A },
        Outcome::TechnicalLoss { loser: Side::B },
        Outcome::DoubleForfeit,
    ];
    let names = ["P01", "P02", "P03", "P04", "P05", "P06", "P07", "P08", "P09"];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for league in 0..300 {
        let players = &names[..2 + league % 8];
        let mut results = Vec::new();
        for (i, a) in players.iter().enumerate() {
            for b in &players[i + 1..] {
                // Some pairs have not met yet, as in a league under way.
                if next() % 4 != 0 {
                    results.push(result(a, b, outcomes[(next() % 6) as usize]));
                }
            }
        }
        let expected = compute_standings(players, &results).unwrap();
        let totals: Vec<StandingRow<&'static str>> = expected
            .iter()
            .map(|row| StandingRow {
                rank: 0,
                above_next_by: None,
                ..row.clone()
            })
            .rev()
            .collect();
        let points = |player: &'static str| row(&expected, player).points;
        let level: Vec<_> = results
            .iter()
            .filter(|r| points(r.player_a) == points(r.player_b))
            .cloned()
            .collect();
        assert_eq!(rank_totals(totals, &level).unwrap(), expected, "league {league}");
    }
}
