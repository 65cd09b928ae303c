//! The operator's changes to a running league over gRPC: pause and resume, cancel, withdraw a player,
//! each refused with a clear error and no change where the league or player does not allow it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use league_proto::v2::notify_league_event_request::Event;
use league_proto::v2::*;
use league_testkit::invariants::{self, Facts};

use crate::support::*;

const LEAGUE: &str = "test_league";

async fn status(manager: &TestManager) -> GetLeagueStatusResponse {
    manager
        .client()
        .get_league_status(manager.operator(GetLeagueStatusRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap()
        .into_inner()
}

async fn standings(manager: &TestManager) -> GetStandingsResponse {
    manager
        .client()
        .get_standings(manager.operator(GetStandingsRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap()
        .into_inner()
}

/// Claims and reports (player A wins) until nothing is left to claim.
async fn play_out(manager: &TestManager, referee: &league_runtime::Credentials) {
    let mut client = manager.client();
    loop {
        let round = claim_round(&mut client, referee).await;
        if round.is_empty() {
            return;
        }
        report_a_wins(&mut client, referee, &round).await;
    }
}

/// The league's matches by status, as the database has them.
async fn match_statuses(manager: &TestManager) -> Vec<(String, String)> {
    sqlx::query_as(
        "select match_id, status from matches where league_id = $1 order by round_id, match_number",
    )
    .bind(LEAGUE)
    .fetch_all(&manager.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_paused_league_hands_out_nothing_until_it_resumes() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    // One match of round 1 running, the other still ready.
    let running = claim(&mut client, &referee, 1).await;
    assert_eq!(running.len(), 1);

    let paused = client
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(paused.running_matches, 1);
    let seen = status(&manager).await;
    assert_eq!(seen.status(), LeagueStatus::Paused);
    let stall = seen.stall.expect("a paused league is stalled");
    assert_eq!(stall.reason(), StallReason::Paused);
    assert_eq!(stall.waiting_matches, 1, "the round's match not handed out waits");
    assert!(stall.since.is_some());

    // Nothing handed out while paused; the running match finishes and is recorded.
    assert!(claim_round(&mut client, &referee).await.is_empty());
    report_a_wins(&mut client, &referee, &running).await;
    assert!(claim_round(&mut client, &referee).await.is_empty());
    // Pausing twice is refused and changes nothing.
    let again = client
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&again), Some("E008"), "{again:?}");
    assert_eq!(status(&manager).await.status(), LeagueStatus::Paused);

    client
        .resume_league(manager.operator(ResumeLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap();
    let seen = status(&manager).await;
    assert_eq!(seen.status(), LeagueStatus::Running);
    assert!(seen.stall.is_none());
    play_out(&manager, &referee).await;
    assert_eq!(status(&manager).await.status(), LeagueStatus::Completed);
    let facts = Facts::load(&manager.pool, LEAGUE).await;
    invariants::one_result_per_match(&facts);
    invariants::standings_equal_recomputation(&facts, &standings(&manager).await);

    // Resuming a league that is not paused is refused.
    let late = client
        .resume_league(manager.operator(ResumeLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&late), Some("E008"), "{late:?}");
}

#[tokio::test]
async fn a_cancelled_league_charges_nobody_and_refuses_its_referees() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    // Round 1 played, round 2 running.
    let first = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &first).await;
    let second = claim_round(&mut client, &referee).await;
    assert_eq!(second.len(), 2);
    let before = standings(&manager).await;

    let cancelled = client
        .cancel_league(manager.operator(CancelLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((cancelled.cancelled_matches, cancelled.running_matches), (4, 2));

    let seen = status(&manager).await;
    assert_eq!(seen.status(), LeagueStatus::Cancelled);
    assert!(seen.cancelled_at.is_some());
    assert!(seen.stall.is_none());
    assert_eq!(seen.finished_matches, 2);
    // Nobody charged: the table is round 1's, and a recomputation from the results.
    let after = standings(&manager).await;
    assert_eq!(after.standings, before.standings);
    let facts = Facts::load(&manager.pool, LEAGUE).await;
    // Round 1 is the only one with results.
    let recomputed = invariants::recompute(&facts, 1);
    assert_eq!(recomputed.len(), 4);
    for row in &after.standings {
        assert_eq!(invariants::Tally::of(row), recomputed[&row.player_id]);
    }
    let statuses = match_statuses(&manager).await;
    let count = |status: &str| statuses.iter().filter(|(_, s)| s == status).count();
    assert_eq!((count("finished"), count("cancelled")), (2, 4));
    let no_results: (i64,) = sqlx::query_as(
        "select count(*) from matches where league_id = $1 and status = 'cancelled'
         and (result is not null or lease_id is not null)",
    )
    .bind(LEAGUE)
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(no_results.0, 0, "a cancelled match has no result and no lease");

    // The running matches' referee: its renewal is not renewed, its report refused with E015.
    let lease = |a: &MatchAssignment| LeaseRef {
        match_id: a.r#match.as_ref().unwrap().match_id.clone(),
        lease_id: a.lease_id.clone(),
        league_id: LEAGUE.into(),
    };
    let renewals = client
        .renew_leases(referee.request(RenewLeasesRequest {
            leases: second.iter().map(lease).collect(),
            ..RenewLeasesRequest::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .renewals;
    assert!(renewals.iter().all(|renewal| !renewal.renewed));
    let refused = report_a_win(&mut client, &referee, &second[0]).await.unwrap_err();
    assert_eq!(code(&refused), Some("E015"), "{refused:?}");
    assert!(refused.message().contains("cancelled"), "{}", refused.message());
    assert!(claim_round(&mut client, &referee).await.is_empty());

    // The players are told: LEAGUE_COMPLETED with the table as it stands, no champion.
    let completed: Vec<LeagueCompleted> = facts
        .events
        .iter()
        .filter_map(|event| match &event.payload.event {
            Some(Event::LeagueCompleted(completed)) => Some(completed.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0].total_matches, 2);
    assert!(completed[0].champion.is_none());
    assert_eq!(completed[0].final_standings, after.standings);

    // Cancelled once: a second cancel, a pause or a withdrawal is refused and changes nothing.
    let again = client
        .cancel_league(manager.operator(CancelLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&again), Some("E008"), "{again:?}");
    let pause = client
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&pause), Some("E008"), "{pause:?}");
    let withdraw = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P01".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&withdraw), Some("E008"), "{withdraw:?}");
    assert_eq!(match_statuses(&manager).await, statuses);
    assert_eq!(
        Facts::load(&manager.pool, LEAGUE).await.events.len(),
        facts.events.len()
    );
}

#[tokio::test]
async fn a_completed_or_unknown_league_cannot_be_cancelled() {
    let manager = spawn_manager(2).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b"]).await;
    play_out(&manager, &referee).await;
    assert_eq!(status(&manager).await.status(), LeagueStatus::Completed);
    let refused = client
        .cancel_league(manager.operator(CancelLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E008"), "{refused:?}");
    assert!(refused.message().contains("completed"), "{}", refused.message());
    assert_eq!(status(&manager).await.status(), LeagueStatus::Completed);

    let unknown = client
        .cancel_league(manager.operator(CancelLeagueRequest {
            league_id: "no_such_league".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&unknown), Some("E006"), "{unknown:?}");
    let unnamed = client
        .cancel_league(manager.operator(CancelLeagueRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(code(&unnamed), Some("E003"), "{unnamed:?}");
    // Operators only.
    let by_referee = client
        .cancel_league(referee.request(CancelLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap_err();
    assert!(code(&by_referee).is_some(), "{by_referee:?}");
    assert_eq!(status(&manager).await.status(), LeagueStatus::Completed);
}

#[tokio::test]
async fn a_withdrawn_player_forfeits_its_remaining_matches_and_the_league_adds_up() {
    // Five players: a bye each round, so a round whose only other match is a forfeit completes at
    // its release.
    let manager = spawn_manager(5).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d", "e"]).await;
    let first = claim_round(&mut client, &referee).await;
    report_a_wins(&mut client, &referee, &first).await;
    // Round 2 running, P03 in it or not.
    let second = claim_round(&mut client, &referee).await;
    let of_p03 = second
        .iter()
        .find(|a| {
            let m = a.r#match.as_ref().unwrap();
            m.player_a_id == "P03" || m.player_b_id == "P03"
        })
        .cloned();

    let withdrawn = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P03".into(),
        }))
        .await
        .unwrap()
        .into_inner();
    let facts = Facts::load(&manager.pool, LEAGUE).await;
    let unplayed = facts.matches_of("P03").iter().filter(|m| m.round_id >= 2).count();
    assert_eq!(withdrawn.forfeits.len(), unplayed);
    for forfeit in &withdrawn.forfeits {
        assert_eq!(forfeit.status(), ResultStatus::TechnicalLoss);
        assert_eq!(forfeit.at_fault_player_ids, vec!["P03".to_owned()]);
        assert_ne!(forfeit.winner_player_id, "P03");
        assert!(forfeit.reason.contains("withdrew"), "{}", forfeit.reason);
    }
    // Its running match lost its lease: the referee's report is refused.
    if let Some(running) = &of_p03 {
        let refused = report_a_win(&mut client, &referee, running).await.unwrap_err();
        assert_eq!(code(&refused), Some("E015"), "{refused:?}");
    }
    let others: Vec<MatchAssignment> = second
        .iter()
        .filter(|a| Some(a.lease_id.as_str()) != of_p03.as_ref().map(|p| p.lease_id.as_str()))
        .cloned()
        .collect();
    report_a_wins(&mut client, &referee, &others).await;
    // Withdrawn once only; an unknown player is refused.
    let again = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P03".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&again), Some("E008"), "{again:?}");
    let unknown = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P99".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&unknown), Some("E005"), "{unknown:?}");

    // A second withdrawal: P03 against P05 is already settled; P05's other matches are forfeits.
    client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P05".into(),
        }))
        .await
        .unwrap();
    play_out(&manager, &referee).await;
    assert_eq!(status(&manager).await.status(), LeagueStatus::Completed);

    let facts = Facts::load(&manager.pool, LEAGUE).await;
    assert_eq!(facts.withdrawn.len(), 2);
    // Some round was forfeits only (P03's and P05's): it completed at its release, with no report.
    assert!(
        facts.rounds.iter().any(|round| facts
            .matches
            .iter()
            .filter(|m| m.round_id == round.round_id)
            .all(|m| facts.forfeited(m))),
        "a round of forfeits only"
    );
    invariants::one_result_per_match(&facts);
    invariants::pairs_meet_once(&facts);
    invariants::standings_equal_recomputation(&facts, &standings(&manager).await);
    let table = standings(&manager).await;
    for row in &table.standings {
        assert_eq!(
            row.played, 4,
            "{}: every player plays all four others",
            row.player_id
        );
    }
}

#[tokio::test]
async fn a_player_withdrawn_before_the_start_is_not_scheduled() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c"]).await;
    let withdrawn = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: LEAGUE.into(),
            player_id: "P02".into(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(withdrawn.forfeits.is_empty());
    assert_eq!(status(&manager).await.registered_players, 2);
    client
        .start_league(manager.operator(StartLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap();
    play_out(&manager, &referee).await;
    let facts = Facts::load(&manager.pool, LEAGUE).await;
    assert_eq!(facts.player_ids(), vec!["P01", "P03"]);
    invariants::one_result_per_match(&facts);
    invariants::standings_equal_recomputation(&facts, &standings(&manager).await);
}

#[tokio::test]
async fn a_league_whose_referee_stopped_renewing_says_so() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b", "c", "d"]).await;
    let running = claim_round(&mut client, &referee).await;
    assert_eq!(running.len(), 2);
    assert!(
        status(&manager).await.stall.is_none(),
        "both matches run under live leases"
    );

    // The referee goes quiet: one lease runs out (moved into the past rather than waited for).
    sqlx::query(
        "update matches set lease_expires_at = now() - interval '1 second'
         where league_id = $1 and match_id = $2",
    )
    .bind(LEAGUE)
    .bind(&running[0].r#match.as_ref().unwrap().match_id)
    .execute(&manager.pool)
    .await
    .unwrap();
    let stall = status(&manager).await.stall.expect("stalled");
    assert_eq!(stall.reason(), StallReason::LeasesExpired);
    assert_eq!(stall.waiting_matches, 1);
    assert_eq!(stall.referees, 1);
    assert!(stall.since.is_some());

    // Another claim takes the match again: moving, not stalled.
    let again = claim_round(&mut client, &referee).await;
    assert_eq!(again.len(), 1);
    assert!(status(&manager).await.stall.is_none());
}

/// Records, as the gateway does when it refuses a referee's call to a player, why it was refused.
async fn record_refused_call(manager: &TestManager, referee: &league_runtime::Credentials, detail: &str) {
    let channel = league_runtime::grpc::channel(&manager.url).unwrap();
    agents_service_client::AgentsServiceClient::new(channel)
        .record_compliance_warnings(manager.operator(RecordComplianceWarningsRequest {
            warnings: vec![ComplianceWarning {
                agent_id: referee.agent_id.clone(),
                kind: league_v2::compliance::kinds::REFUSED_REFEREE_CALL.into(),
                detail: detail.into(),
                count: 1,
                ..ComplianceWarning::default()
            }],
        }))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_league_waiting_on_a_referee_whose_calls_are_refused_names_the_cause() {
    let manager = spawn_manager(2).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b"]).await;
    // The round's match has waited unclaimed long enough (moved into the past rather than waited for).
    sqlx::query("update rounds set released_at = now() - interval '1 minute' where league_id = $1")
        .bind(LEAGUE)
        .execute(&manager.pool)
        .await
        .unwrap();
    let stall = status(&manager).await.stall.expect("stalled");
    assert_eq!(stall.reason(), StallReason::NoReferee);
    assert_eq!(stall.cause, "", "nothing says why yet");

    // A refusal from before the round was released is not why this round waits.
    record_refused_call(&manager, &referee, "an old refusal").await;
    sqlx::query("update compliance_warnings set last_seen = now() - interval '2 minutes'")
        .execute(&manager.pool)
        .await
        .unwrap();
    assert_eq!(status(&manager).await.stall.expect("stalled").cause, "");

    // The gateway refused its calls since: the stall names the referee and the cause.
    let detail = "GAME_INVITATION for M1 refused (E011): auth_token is required on GAME_INVITATION";
    record_refused_call(&manager, &referee, detail).await;
    let stall = status(&manager).await.stall.expect("stalled");
    assert_eq!(stall.reason(), StallReason::NoReferee);
    assert_eq!(
        stall.cause,
        format!("{}'s calls to players are refused: {detail}", referee.agent_id)
    );

    // Paused, it waits on the operator, whatever the referee was told.
    client
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: LEAGUE.into(),
        }))
        .await
        .unwrap();
    let stall = status(&manager).await.stall.expect("stalled");
    assert_eq!(stall.reason(), StallReason::Paused);
    assert_eq!(stall.cause, "");
}
