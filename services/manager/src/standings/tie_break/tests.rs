//! Each step of the tie-break chain, in a league where the steps before it are level and the
//! steps after it would have ordered the players the other way.

use std::cmp::Ordering;

use super::{after_head_to_head, after_head_to_head_rule};
use crate::results::RecordedResult;
use crate::standings::StandingRow;
use crate::standings::TieBreak;
use crate::standings::fixtures::{Id, above_next_by, beats, draw, ranked, record, table};

#[test]
fn head_to_head_winner_ranks_higher() {
    // P01 would win every later step: better win rate, more wins, fewer draws, smaller id.
    let results = [
        beats("P02", "P01"),
        draw("P02", "X1"),
        draw("P02", "X2"),
        draw("P02", "X3"),
        beats("P01", "X4"),
        beats("P01", "X5"),
    ];
    let rows = table(&[], &results);
    assert_eq!(record(&rows, "P02"), (4, 1, 3, 0, 0, 6));
    assert_eq!(record(&rows, "P01"), (3, 2, 0, 1, 0, 6));
    assert_eq!(ranked(&rows), ["P02", "P01", "X1", "X2", "X3", "X4", "X5"]);
    assert_eq!(above_next_by(&rows, "P02"), Some(TieBreak::HeadToHead));
    assert_eq!(above_next_by(&rows, "P01"), Some(TieBreak::Points));
    assert_eq!(above_next_by(&rows, "X5"), None, "the last row");
}

#[test]
fn a_drawn_or_unplayed_head_to_head_passes_to_win_rate() {
    let others = [
        beats("P02", "X1"),
        beats("P02", "X2"),
        beats("P01", "X3"),
        draw("P01", "X4"),
        draw("P01", "X5"),
        draw("P01", "X6"),
    ];
    let drawn = [&others[..], &[draw("P01", "P02")]].concat();
    let rows = table(&[], &drawn);
    assert_eq!(record(&rows, "P02"), (3, 2, 1, 0, 0, 7));
    assert_eq!(record(&rows, "P01"), (5, 1, 4, 0, 0, 7));
    assert_eq!(ranked(&rows)[..2], ["P02", "P01"]);
    assert_eq!(above_next_by(&rows, "P02"), Some(TieBreak::WinRate));

    let unplayed = [&others[..], &[draw("P02", "X7"), draw("P01", "X8")]].concat();
    let rows = table(&[], &unplayed);
    assert_eq!(record(&rows, "P02"), (3, 2, 1, 0, 0, 7));
    assert_eq!(record(&rows, "P01"), (5, 1, 4, 0, 0, 7));
    assert_eq!(ranked(&rows)[..2], ["P02", "P01"]);
}

#[test]
fn the_seeds_example_is_decided_by_win_rate() {
    // The tie-break example of the league rules: P01 12 points 3W 3D 0L, P02 12 points 4W 0D 2L, and they have not met.
    let results = [
        beats("P01", "X1"),
        beats("P01", "X2"),
        beats("P01", "X3"),
        draw("P01", "X4"),
        draw("P01", "X5"),
        draw("P01", "X6"),
        beats("P02", "X1"),
        beats("P02", "X2"),
        beats("P02", "X3"),
        beats("P02", "X4"),
        beats("X5", "P02"),
        beats("X6", "P02"),
    ];
    let rows = table(&[], &results);
    assert_eq!(record(&rows, "P01"), (6, 3, 3, 0, 0, 12));
    assert_eq!(record(&rows, "P02"), (6, 4, 0, 2, 0, 12));
    assert_eq!(ranked(&rows), ["P02", "P01", "X5", "X6", "X4", "X1", "X2", "X3"]);
}

#[test]
fn win_rate_comes_before_total_wins() {
    // P02: 1 win in 4 (1/4). P01: 2 wins in 9 (2/9), so more wins but a lower rate.
    let mut results = vec![
        beats("P02", "X1"),
        draw("P02", "X2"),
        draw("P02", "X3"),
        draw("P02", "X4"),
        beats("P01", "X8"),
        beats("P01", "X9"),
    ];
    for x in ["X1", "X2", "X3", "X4", "X5", "X6", "X7"] {
        results.push(beats(x, "P01"));
    }
    let rows = table(&[], &results);
    assert_eq!(record(&rows, "P02"), (4, 1, 3, 0, 0, 6));
    assert_eq!(record(&rows, "P01"), (9, 2, 0, 7, 0, 6));
    assert_eq!(ranked(&rows)[..2], ["P02", "P01"]);
    assert_eq!(above_next_by(&rows, "P02"), Some(TieBreak::WinRate));
}

#[test]
fn total_wins_decide_between_equal_win_rates() {
    // Both win 1 in 4 of their matches; P02 has played twice as many.
    let mut results = vec![
        beats("P02", "X1"),
        beats("P02", "X2"),
        beats("P01", "X3"),
        draw("P01", "X4"),
        draw("P01", "X5"),
        draw("P01", "X6"),
    ];
    for x in ["X7", "X8", "X9", "X10", "X11", "X12"] {
        results.push(beats(x, "P02"));
    }
    let rows = table(&[], &results);
    assert_eq!(record(&rows, "P02"), (8, 2, 0, 6, 0, 6));
    assert_eq!(record(&rows, "P01"), (4, 1, 3, 0, 0, 6));
    assert_eq!(ranked(&rows)[..2], ["P02", "P01"]);
    assert_eq!(above_next_by(&rows, "P02"), Some(TieBreak::Wins));
}

#[test]
fn fewer_draws_decide_after_wins() {
    // Unreachable from real results under 3/1/0 (equal points and wins mean equal draws), so the
    // step is checked on its own.
    let line = |player_id, draws| StandingRow {
        rank: 0,
        player_id,
        played: 4,
        wins: 1,
        draws,
        losses: 3 - draws,
        technical_losses: 0,
        points: 3 + draws,
        above_next_by: None,
    };
    let (p01, p02) = (line("P01", 2), line("P02", 0));
    assert_eq!(after_head_to_head(&p02, &p01), Ordering::Less);
    assert_eq!(after_head_to_head(&p01, &p02), Ordering::Greater);
    assert_eq!(after_head_to_head_rule(&p02, &p01), TieBreak::FewerDraws);
}

#[test]
fn player_id_decides_last() {
    let rows = table(
        &["P02", "P01"],
        &[draw("P02", "P01"), beats("P02", "X2"), beats("P01", "X1")],
    );
    assert_eq!(record(&rows, "P01"), record(&rows, "P02"));
    assert_eq!(ranked(&rows), ["P01", "P02", "X1", "X2"]);
    assert_eq!(above_next_by(&rows, "P01"), Some(TieBreak::PlayerId));
}

/// P02 beat P01 and P03 beat P02; P01 and P03 have not met yet. All three have 6 points.
fn three_level_on_points() -> Vec<RecordedResult<Id>> {
    vec![
        beats("P02", "P01"),
        beats("P03", "P02"),
        beats("P02", "X1"),
        draw("P03", "X2"),
        draw("P03", "X3"),
        draw("P03", "X4"),
        beats("P01", "X5"),
        beats("P01", "X6"),
    ]
}

#[test]
fn head_to_head_recurses_into_the_players_it_leaves_level() {
    // Mini-table of {P01, P02, P03}: P02 3, P03 3, P01 0. P02 and P03 are still level, so their own
    // match decides: P03 beat P02, although P02 has the better win rate (2/3 against 1/4).
    let rows = table(&[], &three_level_on_points());
    for id in ["P01", "P02", "P03"] {
        assert_eq!(record(&rows, id).5, 6, "{id}");
    }
    assert_eq!(ranked(&rows)[..3], ["P03", "P02", "P01"]);
}

#[test]
fn the_order_of_results_does_not_change_head_to_head() {
    let results = three_level_on_points();
    let expected = table(&[], &results);
    for turn in 0..results.len() {
        let mut shuffled = results.clone();
        shuffled.rotate_left(turn);
        assert_eq!(ranked(&table(&[], &shuffled)), ranked(&expected));
        shuffled.reverse();
        assert_eq!(ranked(&table(&[], &shuffled)), ranked(&expected));
    }
}

#[test]
fn a_head_to_head_cycle_passes_to_win_rate() {
    // P01 beat P02, P02 beat P03, P03 beat P01: 3 points each in the mini-table, no split.
    let results = [
        beats("P01", "P02"),
        beats("P02", "P03"),
        beats("P03", "P01"),
        beats("P03", "X1"),
        draw("P02", "X2"),
        draw("P02", "X3"),
        draw("P02", "X4"),
        draw("P01", "X5"),
        draw("P01", "X6"),
        draw("P01", "X7"),
    ];
    let rows = table(&[], &results);
    assert_eq!(record(&rows, "P03"), (3, 2, 0, 1, 0, 6));
    assert_eq!(record(&rows, "P01"), record(&rows, "P02"));
    // P03 on win rate; then P01 and P02 are level on every step but their ids.
    assert_eq!(ranked(&rows)[..3], ["P03", "P01", "P02"]);
}
