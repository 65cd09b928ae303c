//! A round's release hands its matches to the claims waiting in the manager, in the completing
//! transaction: the claim is answered with leases taken by that transaction, and a claim that went away
//! before its answer has its matches put back in the queue.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use crate::support;

use league_manager::league::events::Queued;
use league_manager::league::queue;
use league_manager::league::report::{self, Report};
use league_manager::league::waiting_claims::{Handed, WaitingClaims};
use league_manager::wakeups::MATCHES_READY_CHANNEL;
use sqlx::postgres::PgListener;
use support::*;

/// Nothing to queue with a release.
fn no_events() -> Queued {
    Queued::new(&test_league(), Vec::new())
}

/// Round 2's matches by status (as the contracts show it) and referee, and whether each was last
/// written by the transaction that released round 2.
async fn round_two(manager: &TestManager) -> Vec<(String, Option<String>, bool)> {
    sqlx::query_as(
        "select match_status(m, l), m.referee_id, m.xmin::text = r.xmin::text
         from matches m join rounds r using (league_id, round_id) join leagues l using (league_id)
         where m.round_id = 2 order by m.match_number",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_waiting_claim_is_handed_the_next_round_by_the_transaction_that_releases_it() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    let round = claim_round(&mut client, &referee).await;
    assert_eq!(round.len(), 2);

    let claims = WaitingClaims::default();
    let mut waiting = claims.wait(&referee_id(&referee), 16);
    let reports: Vec<Report> = round
        .iter()
        .map(|assignment| {
            Report::new(referee_id(&referee), report_of(assignment, a_wins(assignment))).unwrap()
        })
        .collect();
    let outcomes = report::record(&manager.pool, &Default::default(), &claims, &reports).await;
    assert!(
        outcomes
            .iter()
            .any(|outcome| outcome.as_ref().unwrap().round_completed)
    );

    let handed = tokio::time::timeout(Duration::from_secs(10), &mut waiting.answer)
        .await
        .expect("the release answered the claim")
        .expect("with matches");
    assert_eq!(handed.len(), 2);
    for assignment in &handed {
        let scheduled = assignment.r#match.as_ref().unwrap();
        assert_eq!(
            (scheduled.round_id, scheduled.referee_id.as_str()),
            (2, referee.agent_id.as_str())
        );
        assert!(!assignment.lease_id.is_empty());
        assert!(assignment.player_a.as_ref().unwrap().record.is_some());
    }
    assert_eq!(
        round_two(&manager).await,
        vec![("running".to_owned(), Some(referee.agent_id.clone()), true); 2],
        "leased by the releasing transaction itself, not by a claim after it"
    );
    // Leased like any claimed match: its holder reports it.
    report_a_wins(&mut client, &referee, &handed).await;
}

#[tokio::test]
async fn the_matches_of_a_claim_gone_before_its_answer_go_back_to_the_queue() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;

    let claims = WaitingClaims::default();
    let waiting = claims.wait(&referee_id(&referee), 16);
    let taken = claims.take_all();
    drop(waiting);
    let mut tx = manager.pool.begin().await.unwrap();
    let handed = queue::release_round(&mut tx, &test_league(), 2, &taken, &no_events())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        round_two(&manager)
            .await
            .iter()
            .filter(|(status, ..)| status == "running")
            .count(),
        2
    );

    let mut listener = PgListener::connect_with(&manager.pool).await.unwrap();
    listener.listen(MATCHES_READY_CHANNEL).await.unwrap();
    let claim = taken.into_iter().next().unwrap();
    let assignments = handed.into_iter().next().unwrap();
    Handed { claim, assignments }.answer(&manager.pool);
    tokio::time::timeout(Duration::from_secs(10), listener.recv())
        .await
        .expect("the release of the matches is announced")
        .unwrap();
    assert_eq!(
        round_two(&manager)
            .await
            .into_iter()
            .map(|(status, referee, _)| (status, referee))
            .collect::<Vec<_>>(),
        vec![("ready".to_owned(), None); 2]
    );
}

#[tokio::test]
async fn a_release_writes_only_the_matches_it_hands_and_the_rest_are_ready_for_any_claim() {
    let manager = spawn_manager(6).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d", "e", "f"]).await;

    let claims = WaitingClaims::default();
    let _waiting = claims.wait(&referee_id(&referee), 1);
    let taken = claims.take_all();
    let mut listener = PgListener::connect_with(&manager.pool).await.unwrap();
    listener.listen(MATCHES_READY_CHANNEL).await.unwrap();
    let mut tx = manager.pool.begin().await.unwrap();
    let handed = queue::release_round(&mut tx, &test_league(), 2, &taken, &no_events())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), listener.recv())
        .await
        .expect("the release wakes the claims of every manager")
        .unwrap();
    assert_eq!(handed.iter().map(Vec::len).sum::<usize>(), 1);
    let handed_id = &handed[0][0].r#match.as_ref().unwrap().match_id;

    let rows = round_two(&manager).await;
    assert_eq!(
        rows[0],
        ("running".to_owned(), Some(referee.agent_id.clone()), true)
    );
    assert_eq!(
        rows[1..],
        vec![("ready".to_owned(), None, false); 2],
        "ready because their round is current, not because the release wrote them"
    );
    let claimed = claim_round(&mut client, &referee).await;
    let claimed_ids: Vec<&str> = claimed
        .iter()
        .map(|assignment| assignment.r#match.as_ref().unwrap().match_id.as_str())
        .collect();
    assert_eq!(claimed_ids.len(), 2);
    assert!(!claimed_ids.contains(&handed_id.as_str()));
}
