//! A league's status as its matches are played: its progress counts the completed rounds' matches and
//! the current round's finished ones, read in the same statement as the stall (league/status.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use league_proto::v2::*;

use crate::support::*;

async fn status(manager: &TestManager) -> GetLeagueStatusResponse {
    manager
        .client()
        .get_league_status(manager.operator(GetLeagueStatusRequest {
            league_id: "test_league".into(),
        }))
        .await
        .unwrap()
        .into_inner()
}

/// (current round, finished matches, total matches, registered players) as the status says them.
async fn progress(manager: &TestManager) -> (u32, u32, u32, u32) {
    let seen = status(manager).await;
    assert!(seen.stall.is_none(), "{:?}", seen.stall);
    (
        seen.current_round_id,
        seen.finished_matches,
        seen.total_matches,
        seen.registered_players,
    )
}

#[tokio::test]
async fn the_progress_counts_completed_rounds_and_the_current_round_s_finished_matches() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    // Four players: three rounds of two matches.
    assert_eq!(progress(&manager).await, (1, 0, 6, 4));

    let first = claim_round(&mut client, &referee).await;
    assert_eq!(first.len(), 2);
    assert_eq!(progress(&manager).await, (1, 0, 6, 4), "claimed is not finished");
    report_a_win(&mut client, &referee, &first[0]).await.unwrap();
    assert_eq!(
        progress(&manager).await,
        (1, 1, 6, 4),
        "one of the current round's"
    );
    report_a_win(&mut client, &referee, &first[1]).await.unwrap();
    assert_eq!(
        progress(&manager).await,
        (2, 2, 6, 4),
        "round 1 completed, round 2 released"
    );

    let second = claim_round(&mut client, &referee).await;
    report_a_win(&mut client, &referee, &second[0]).await.unwrap();
    assert_eq!(progress(&manager).await, (2, 3, 6, 4));
    report_a_win(&mut client, &referee, &second[1]).await.unwrap();
    let third = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &third).await;

    let done = status(&manager).await;
    assert_eq!(done.status(), LeagueStatus::Completed);
    assert_eq!(
        (done.current_round_id, done.finished_matches),
        (3, 6),
        "the last round counted once"
    );
    assert!(done.champion.is_some());
    assert!(done.started_at.is_some() && done.completed_at.is_some());
}
