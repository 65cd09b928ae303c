//! Exhaustive checks of the round-robin guarantees for every league size a real league might have.

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use super::{MatchId, round_robin};

/// Player ids listed in reverse, so that "first in the list" and "smallest id" differ.
fn players(count: u32) -> Vec<u32> {
    (0..count).rev().collect()
}

/// Checks every promise the schedule makes for a league of `count` players.
fn check_league(count: u32) {
    let players = players(count);
    let position = |id: u32| count - 1 - id;
    let schedule = round_robin(&players).unwrap();
    let odd = count % 2 == 1;

    let expected_rounds = if odd { count } else { count - 1 };
    assert_eq!(schedule.rounds.len(), expected_rounds as usize, "n={count}");

    let mut met = HashSet::new();
    let mut byes = vec![0u32; count as usize];
    for (round, expected_round_id) in schedule.rounds.iter().zip(1..) {
        assert_eq!(round.round_id, expected_round_id, "n={count}");
        assert_eq!(round.matches.len(), (count / 2) as usize, "n={count}");

        let mut busy = vec![false; count as usize];
        let mut take_seat = |player: u32| {
            let seat = &mut busy[player as usize];
            assert!(!*seat, "n={count}: {player} twice in round {expected_round_id}");
            *seat = true;
        };
        for (pairing, number) in round.matches.iter().zip(1..) {
            assert_eq!(pairing.match_id, MatchId::new(expected_round_id, number));
            let (a, b) = (pairing.player_a, pairing.player_b);
            assert!(
                position(a) < position(b),
                "n={count}: sides of {}",
                pairing.match_id
            );
            assert!(
                met.insert((a.min(b), a.max(b))),
                "n={count}: {a} and {b} meet again"
            );
            take_seat(a);
            take_seat(b);
        }
        assert_eq!(round.bye.is_some(), odd, "n={count}");
        if let Some(bye) = round.bye {
            byes[bye as usize] += 1;
            take_seat(bye);
        }
        assert!(busy.iter().all(|&seated| seated), "n={count}: someone missing");
    }

    let all_pairs = (count * (count - 1) / 2) as usize;
    assert_eq!(met.len(), all_pairs, "n={count}");
    assert_eq!(schedule.total_matches(), all_pairs, "n={count}");
    let expected_byes = u32::from(odd);
    assert!(
        byes.iter().all(|&b| b == expected_byes),
        "n={count}: byes {byes:?}"
    );
}

#[test]
fn every_league_from_2_to_64_players_is_a_full_round_robin() {
    for count in 2..=64 {
        check_league(count);
    }
}

#[test]
fn a_league_of_500_players_is_a_full_round_robin() {
    check_league(500);
}

#[test]
fn a_league_of_499_players_is_a_full_round_robin() {
    check_league(499);
}

/// the circle method as the league rules write it, with `None` for its "BYE" sentinel.
fn seed_python(player_ids: &[u32]) -> Vec<Vec<(u32, u32)>> {
    let mut ids: Vec<Option<u32>> = player_ids.iter().copied().map(Some).collect();
    if ids.len() % 2 == 1 {
        ids.push(None);
    }
    let n = ids.len();
    let mut schedule = Vec::new();
    for _ in 0..n - 1 {
        let mut round_matches = Vec::new();
        for i in 0..n / 2 {
            if let (Some(a), Some(b)) = (ids[i], ids[n - 1 - i]) {
                round_matches.push((a, b));
            }
        }
        schedule.push(round_matches);
        let last = ids[n - 1];
        ids = [ids[0]]
            .into_iter()
            .chain([last])
            .chain(ids[1..n - 1].iter().copied())
            .collect();
    }
    schedule
}

#[test]
fn rounds_are_the_seed_pythons_rounds_in_reverse_order() {
    let unordered = |pairs: Vec<(u32, u32)>| -> HashSet<(u32, u32)> {
        pairs.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect()
    };
    for count in 2..=40 {
        let players = players(count);
        let ours: Vec<_> = round_robin(&players)
            .unwrap()
            .rounds
            .into_iter()
            .map(|round| {
                let pairs = round.matches.into_iter().map(|m| (m.player_a, m.player_b));
                unordered(pairs.collect())
            })
            .collect();
        let mut seed: Vec<_> = seed_python(&players).into_iter().map(unordered).collect();
        seed.reverse();
        assert_eq!(ours, seed, "n={count}");
    }
}
