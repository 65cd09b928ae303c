//! Whole leagues of well-behaved bots, from 2 to 20 players, and the second game through the same
//! services; each followed by every invariant check.

use super::support::{Setup, check_all, finish, start_league};

/// Plays `setup` to its end and checks every invariant.
async fn full_league(setup: Setup) {
    let mut league = start_league(setup).await;
    let finished = finish(&mut league).await;
    check_all(&league, &finished).await;
    league.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_one_referee() {
    full_league(Setup::even_odd(2, 1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_players_one_referee() {
    full_league(Setup::even_odd(3, 1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_players_two_referees() {
    full_league(Setup::even_odd(4, 2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seven_players_three_referees() {
    full_league(Setup::even_odd(7, 3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_players_four_referees() {
    full_league(Setup::even_odd(20, 4)).await;
}

/// The second game runs through the same manager, referees and player host (ADR 0003).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tic_tac_toe_four_players_two_referees() {
    full_league(Setup {
        game: "tic_tac_toe",
        ..Setup::even_odd(4, 2)
    })
    .await;
}
