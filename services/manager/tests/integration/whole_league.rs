//! A whole league through the public API: schedule it, play it by a fixed rule, rank it.

#![allow(clippy::unwrap_used)]

use league_manager::results::{Outcome, RecordedResult, Side};
use league_manager::schedule::{Pairing, Schedule, round_robin};
use league_manager::standings::compute_standings;

fn players(count: u32) -> Vec<String> {
    (1..=count).map(|n| format!("P{n:02}")).collect()
}

/// Every kind of outcome turns up, decided by the match id alone so the league is reproducible.
fn outcome_of(pairing: &Pairing<String>) -> Outcome {
    let id = pairing.match_id;
    match (id.round() * 5 + id.number() * 3) % 7 {
        0 | 1 => Outcome::Win { winner: Side::A },
        2 | 3 => Outcome::Win { winner: Side::B },
        4 => Outcome::Draw,
        5 if id.round() % 2 == 1 => Outcome::TechnicalLoss { loser: Side::A },
        5 => Outcome::TechnicalLoss { loser: Side::B },
        _ => Outcome::DoubleForfeit,
    }
}

fn play(schedule: &Schedule<String>, rounds: usize) -> Vec<RecordedResult<String>> {
    schedule.rounds[..rounds]
        .iter()
        .flat_map(|round| &round.matches)
        .map(|pairing| RecordedResult {
            player_a: pairing.player_a.clone(),
            player_b: pairing.player_b.clone(),
            outcome: outcome_of(pairing),
        })
        .collect()
}

#[test]
fn a_seven_player_league_adds_up() {
    let players = players(7);
    let schedule = round_robin(&players).unwrap();
    assert_eq!(schedule.rounds.len(), 7);
    assert_eq!(schedule.total_matches(), 21);
    let results = play(&schedule, schedule.rounds.len());
    let rows = compute_standings(&players, &results).unwrap();

    let ranks: Vec<u32> = rows.iter().map(|row| row.rank).collect();
    assert_eq!(ranks, (1..=7).collect::<Vec<_>>());
    assert!(rows.windows(2).all(|w| w[0].points >= w[1].points));
    for row in &rows {
        assert_eq!(row.played, 6, "{}: six opponents, one bye", row.player_id);
        assert_eq!(row.points, 3 * row.wins + row.draws, "{}", row.player_id);
        assert_eq!(row.played, row.wins + row.draws + row.losses);
        assert!(row.technical_losses <= row.losses);
    }

    let count = |pick: fn(&Outcome) -> bool| results.iter().filter(|r| pick(&r.outcome)).count();
    let wins = count(|o| matches!(o, Outcome::Win { .. } | Outcome::TechnicalLoss { .. }));
    let draws = count(|o| matches!(o, Outcome::Draw));
    let technical = count(|o| matches!(o, Outcome::TechnicalLoss { .. }));
    let forfeits = count(|o| matches!(o, Outcome::DoubleForfeit));
    assert!(
        wins > 0 && draws > 0 && technical > 0 && forfeits > 0,
        "every outcome occurs"
    );

    let sum = |field: fn(&_) -> u32| rows.iter().map(field).sum::<u32>() as usize;
    assert_eq!(sum(|r| r.played), 2 * schedule.total_matches());
    assert_eq!(sum(|r| r.wins), wins);
    assert_eq!(sum(|r| r.draws), 2 * draws);
    assert_eq!(sum(|r| r.losses), wins + 2 * forfeits);
    assert_eq!(sum(|r| r.technical_losses), technical + 2 * forfeits);
    assert_eq!(sum(|r| r.points), 3 * wins + 2 * draws);
}

#[test]
fn a_seven_player_table_ignores_the_order_of_results() {
    let players = players(7);
    let schedule = round_robin(&players).unwrap();
    let results = play(&schedule, schedule.rounds.len());
    let expected = compute_standings(&players, &results).unwrap();

    let mut reversed = results.clone();
    reversed.reverse();
    assert_eq!(compute_standings(&players, &reversed).unwrap(), expected);
    // 21 results; stepping by 8 (coprime to 21) visits each once in a scrambled order.
    let scrambled: Vec<_> = (0..results.len())
        .map(|i| results[i * 8 % results.len()].clone())
        .collect();
    assert_eq!(compute_standings(&players, &scrambled).unwrap(), expected);
}

#[test]
fn midway_the_bye_player_has_played_less() {
    let players = players(7);
    let schedule = round_robin(&players).unwrap();
    let results = play(&schedule, 1);
    let rows = compute_standings(&players, &results).unwrap();
    let bye = schedule.rounds[0].bye.as_ref().unwrap();
    for row in &rows {
        let expected = if &row.player_id == bye { 0 } else { 1 };
        assert_eq!(row.played, expected, "{}", row.player_id);
    }
}
