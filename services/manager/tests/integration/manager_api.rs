//! The manager over real gRPC and a real database: registration, the queue and its leases, results,
//! round progression and the outbox, against the invariants of the design.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use league_proto::v2::*;
use secrecy::SecretString;
use support::*;

#[tokio::test]
async fn agents_get_ids_in_order_and_tokens_stored_only_as_hashes() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    let p1 = register_player(&mut client, "alice").await;
    let p2 = register_player(&mut client, "bob").await;
    let r1 = register_referee(&mut client, "ref").await;
    assert_eq!(
        (p1.agent_id.as_str(), p2.agent_id.as_str(), r1.agent_id.as_str()),
        ("P01", "P02", "REF01")
    );

    let stored: Vec<(Vec<u8>,)> = sqlx::query_as("select token_hash from agents")
        .fetch_all(&manager.pool)
        .await
        .unwrap();
    let dump: Vec<(String,)> = sqlx::query_as("select row_to_json(a)::text from agents a")
        .fetch_all(&manager.pool)
        .await
        .unwrap();
    for credentials in [&p1, &p2, &r1] {
        let token = secrecy::ExposeSecret::expose_secret(&credentials.token).to_owned();
        assert_eq!(token.len(), 64, "256-bit hex token");
        assert!(
            dump.iter().all(|(row,)| !row.contains(&token)),
            "token stored in the clear"
        );
    }
    assert!(stored.iter().all(|(hash,)| hash.len() == 32));

    // The same contact endpoint twice is refused, and takes no id.
    let duplicate = registration_refused(&mut client, meta("alice"), "").await;
    assert_eq!(code(&duplicate), Some("E014"));
    assert_eq!(register_player(&mut client, "carol").await.agent_id, "P03");

    let old = AgentMeta {
        protocol_version: "1.0.0".into(),
        ..meta("dave")
    };
    let old = registration_refused(&mut client, old, "").await;
    assert_eq!(code(&old), Some("E018"));
}

#[tokio::test]
async fn wrong_missing_or_borrowed_tokens_are_refused_and_change_nothing() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    let player = register_player(&mut client, "alice").await;
    register_player(&mut client, "bob").await;
    let referee = register_referee(&mut client, "ref").await;

    let missing = client.claim_matches(claim_now(1)).await.unwrap_err();
    assert_eq!(code(&missing), Some("E011"));
    let wrong = league_runtime::Credentials::new(referee.agent_id.clone(), "0".repeat(64));
    let refused = client
        .claim_matches(wrong.request(claim_now(1)))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E012"));
    // A player's valid token does not make it a referee.
    let borrowed = client
        .claim_matches(player.request(claim_now(1)))
        .await
        .unwrap_err();
    assert_eq!(code(&borrowed), Some("E020"));
    // Another agent's token under this agent's id.
    let swapped = league_runtime::Credentials::new(
        referee.agent_id.clone(),
        secrecy::ExposeSecret::expose_secret(&player.token).to_owned(),
    );
    let refused = client
        .claim_matches(swapped.request(claim_now(1)))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E012"));
    // Only the operator starts leagues.
    let not_operator = client
        .start_league(player.request(StartLeagueRequest {
            league_id: "test_league".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&not_operator), Some("E020"));
    let status = client
        .get_league_status(manager.operator(GetLeagueStatusRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.status, LeagueStatus::Registering as i32);
}

#[tokio::test]
async fn a_league_needs_two_players_and_starts_once() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    register_player(&mut client, "alice").await;
    let too_few = client
        .start_league(manager.operator(StartLeagueRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(code(&too_few), Some("E008"));
    register_player(&mut client, "bob").await;
    register_player(&mut client, "carol").await;
    let started = client
        .start_league(manager.operator(StartLeagueRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((started.total_rounds, started.total_matches), (3, 3));
    let again = client
        .start_league(manager.operator(StartLeagueRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(code(&again), Some("E008"));
    let late = registration_refused(&mut client, meta("dave"), "test_league").await;
    assert_eq!(code(&late), Some("E008"));
}

#[tokio::test]
async fn leases_decide_who_may_report_and_a_repeat_is_a_no_op() {
    let (manager, mut client, ..) = two_player_league().await;
    let first = register_referee(&mut client, "ref-1").await;
    let second = register_referee(&mut client, "ref-2").await;

    let claimed = claim(&mut client, &first, 4).await;
    assert_eq!(claimed.len(), 1);
    let assignment = &claimed[0];
    assert_eq!(assignment.r#match.as_ref().unwrap().match_id, "R1M1");
    // Nobody else gets a leased match.
    assert!(claim(&mut client, &second, 4).await.is_empty());
    // A report from a referee without the lease is refused and changes nothing.
    let intruder = report_a_win(&mut client, &second, assignment).await.unwrap_err();
    assert_eq!(code(&intruder), Some("E015"));
    // An inconsistent result is refused.
    let mut bad = a_wins(assignment);
    bad.scores[1].points = 1;
    let refused = client
        .report_match_result(first.request(report_of(assignment, bad)))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E002"));
    // So is a result proto3 JSON cannot store: a non-finite number in its metadata.
    let mut not_a_number = a_wins(assignment);
    not_a_number.game_metadata = Some(prost_types::Struct {
        fields: [(
            "drawn_number".to_owned(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::NumberValue(f64::NAN)),
            },
        )]
        .into(),
    });
    let refused = client
        .report_match_result(first.request(report_of(assignment, not_a_number)))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E002"), "{refused:?}");

    let recorded = report_a_win(&mut client, &first, assignment).await.unwrap();
    assert!(!recorded.duplicate);
    let repeated = report_a_win(&mut client, &first, assignment).await.unwrap();
    assert!(repeated.duplicate);
    assert_eq!(repeated.recorded, recorded.recorded);

    let status = client
        .get_league_status(manager.operator(GetLeagueStatusRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.status, LeagueStatus::Completed as i32);
    assert_eq!(status.champion.unwrap().player_id, "P01");
}

#[tokio::test]
async fn an_expired_lease_sends_the_match_back_and_the_old_holder_cannot_report() {
    let (manager, mut client, ..) = two_player_league().await;
    let crashed = register_referee(&mut client, "crashed").await;
    let rescuer = register_referee(&mut client, "rescuer").await;

    let lost = &claim(&mut client, &crashed, 1).await[0];
    // The lease runs out (as if the referee died): expire it in the database rather than wait.
    sqlx::query("update matches set lease_expires_at = now() - interval '1 second'")
        .execute(&manager.pool)
        .await
        .unwrap();
    let retaken = client
        .claim_matches(rescuer.request(ClaimMatchesRequest {
            max_matches: 1,
            wait: Some(prost_types::Duration { seconds: 1, nanos: 0 }),
        }))
        .await
        .unwrap()
        .into_inner();
    let retaken = &retaken.assignments[0];
    assert_ne!(retaken.lease_id, lost.lease_id);
    let renewed = renew(&mut client, &crashed, vec![lease_of(lost)], false).await;
    assert_eq!(renewed, [false]);
    let late = report_a_win(&mut client, &crashed, lost).await.unwrap_err();
    assert_eq!(code(&late), Some("E015"));
    report_a_win(&mut client, &rescuer, retaken).await.unwrap();
    let (results, claims): (i64, i32) =
        sqlx::query_as("select count(*) filter (where status = 'finished'), max(claims) from matches")
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!((results, claims), (1, 2));
}

#[tokio::test]
async fn a_release_unless_players_called_keeps_a_lease_under_which_a_player_was_called() {
    let (manager, mut client, ..) = two_player_league().await;
    let referee = register_referee(&mut client, "external").await;
    // A lease with its id left out, as another replica of the gateway notes a call under it.
    let unnamed = |held: &MatchAssignment| LeaseRef {
        lease_id: String::new(),
        ..lease_of(held)
    };

    // Nobody called under the lease: the release takes it back.
    let first = claim(&mut client, &referee, 1).await;
    let released = release(&mut client, &referee, vec![lease_of(&first[0])], true).await;
    assert_eq!(
        released,
        vec![lease_of(&first[0])],
        "an untouched match goes back"
    );

    // A player called under the new lease (noted with the lease left out, as another replica of the
    // gateway notes it): the same release leaves the match with its referee.
    let second = claim(&mut client, &referee, 1).await;
    let noted = renew(&mut client, &referee, vec![unnamed(&second[0])], true).await;
    assert_eq!(noted, [true]);
    let kept = release(&mut client, &referee, vec![lease_of(&second[0])], true).await;
    assert!(kept.is_empty(), "a started match stays: {kept:?}");
    // Without a note, an empty lease id renews nothing.
    let renewed = renew(&mut client, &referee, vec![unnamed(&second[0])], false).await;
    assert_eq!(renewed, [false]);

    // The note belongs to that lease: released plainly and claimed again, the match is untouched.
    let plain = release(&mut client, &referee, vec![lease_of(&second[0])], false).await;
    assert_eq!(plain.len(), 1);
    let third = claim(&mut client, &referee, 1).await;
    let released = release(&mut client, &referee, vec![lease_of(&third[0])], true).await;
    assert_eq!(released.len(), 1, "a new lease starts untouched");
    let (status, claims, results): (String, i32, i64) = sqlx::query_as(
        "select status, claims, (select count(*) from matches where status = 'finished')
         from matches where match_id = 'R1M1'",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(
        (status.as_str(), claims, results),
        ("scheduled", 3, 0),
        "nobody charged"
    );
}

#[tokio::test]
async fn only_the_holder_releases_a_lease_and_the_match_is_ready_again_at_once() {
    let (manager, mut client, ..) = two_player_league().await;
    let leaving = register_referee(&mut client, "leaving").await;
    let other = register_referee(&mut client, "other").await;

    let held = &claim(&mut client, &leaving, 1).await[0];
    let lease = lease_of(held);
    // Another referee, or the holder quoting another lease id, releases nothing.
    let stranger = release(&mut client, &other, vec![lease.clone()], false).await;
    assert!(stranger.is_empty());
    let wrong_id = LeaseRef {
        lease_id: "00000000-0000-0000-0000-000000000000".into(),
        ..lease.clone()
    };
    let wrong_id = release(&mut client, &leaving, vec![wrong_id], false).await;
    assert!(wrong_id.is_empty());
    let (status,): (String,) = sqlx::query_as("select status from matches where match_id = 'R1M1'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(status, "running", "still leased to its holder");

    let released = release(&mut client, &leaving, vec![lease.clone()], false).await;
    assert_eq!(released, std::slice::from_ref(&lease));
    // Ready again at once: the 30 s lease did not have to run out.
    let retaken = &claim(&mut client, &other, 1).await[0];
    assert_eq!(retaken.r#match.as_ref().unwrap().match_id, "R1M1");
    assert_ne!(retaken.lease_id, held.lease_id);
    // The old holder's lease is gone: no renewal, no report, no second release.
    let renewed = renew(&mut client, &leaving, vec![lease.clone()], false).await;
    assert_eq!(renewed, [false]);
    let late = report_a_win(&mut client, &leaving, held).await.unwrap_err();
    assert_eq!(code(&late), Some("E015"));
    let again = release(&mut client, &leaving, vec![lease], false).await;
    assert!(again.is_empty());
    report_a_win(&mut client, &other, retaken).await.unwrap();
    let (finished, claims, referee): (String, i32, String) =
        sqlx::query_as("select status, claims, referee_id from matches where match_id = 'R1M1'")
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!((finished.as_str(), claims), ("finished", 2));
    assert_eq!(referee, other.agent_id);
}

#[tokio::test]
async fn rounds_are_released_in_order_and_league_events_are_queued_once_per_player() {
    let manager = spawn_manager(4).await;
    let mut client = manager.client();
    for name in ["a", "b", "c", "d"] {
        register_player(&mut client, name).await;
    }
    let referee = register_referee(&mut client, "ref").await;
    let mut rounds_seen = vec![];
    loop {
        let claimed = client
            .claim_matches(referee.request(ClaimMatchesRequest {
                max_matches: 10,
                wait: Some(prost_types::Duration {
                    seconds: 0,
                    nanos: 100_000_000,
                }),
            }))
            .await
            .unwrap()
            .into_inner();
        if claimed.assignments.is_empty() {
            break;
        }
        let rounds: std::collections::BTreeSet<u32> = claimed
            .assignments
            .iter()
            .map(|a| a.r#match.as_ref().unwrap().round_id)
            .collect();
        assert_eq!(
            rounds.len(),
            1,
            "a claim never mixes rounds: the next is released only after this one"
        );
        assert_eq!(claimed.assignments.len(), 2);
        rounds_seen.extend(rounds);
        report_a_wins(&mut client, &referee, &claimed.assignments).await;
    }
    assert_eq!(rounds_seen, vec![1, 2, 3]);
    // Per player: 3 announcements, 3 round completions, 3 standings updates, 1 league completion.
    let kinds: Vec<(String, i64)> = sqlx::query_as(
        "select e.kind, count(*) from league_events e join league_players p using (league_id) group by e.kind order by e.kind",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    let expected = [
        ("league_completed", 4),
        ("round_announcement", 12),
        ("round_completed", 12),
        ("standings_update", 12),
    ];
    assert_eq!(kinds, expected.map(|(kind, n)| (kind.to_owned(), n)));
    let standings = client
        .get_standings(manager.operator(GetStandingsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    // Player A always won: P01 is A in all its matches (3 wins); the rest follows from the schedule.
    assert_eq!(standings.standings[0].player_id, "P01");
    assert_eq!(standings.standings[0].points, 9);
    assert_eq!(standings.round_id, 3);
    let total: u32 = standings.standings.iter().map(|row| row.points).sum();
    assert_eq!(total, 6 * 3);
}

/// What the gateway does for external referees: claims and renewals by the operator acting for the
/// referee (never for a player), at most the referee's `max_concurrent_matches` running at once, and a
/// report without a lease id taken from the referee holding the lease, and only from it.
#[tokio::test]
async fn the_operator_claims_for_a_referee_within_its_capacity_and_it_reports_without_a_lease_id() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    for name in [
        "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    ] {
        register_player(&mut client, name).await;
    }
    client
        .start_league(manager.operator(StartLeagueRequest {
            league_id: "test_league".into(),
        }))
        .await
        .unwrap(); // 10 players: 5 matches a round
    let external = register_referee(&mut client, "external").await; // max_concurrent_matches 4
    let other = register_referee(&mut client, "other").await;
    let operator = SecretString::from(OPERATOR_TOKEN.to_owned());
    let for_referee = |referee: &str, max_matches: u32| {
        league_runtime::credentials::on_behalf_of_request(&operator, referee, claim_now(max_matches))
    };

    // Acting for a player is refused.
    let refused = client.claim_matches(for_referee("P01", 1)).await.unwrap_err();
    assert_eq!(code(&refused), Some("E020"));
    // Asked for 5, given its capacity of 4; then none while it holds 4.
    let claimed = client
        .claim_matches(for_referee(&external.agent_id, 5))
        .await
        .unwrap()
        .into_inner()
        .assignments;
    assert_eq!(claimed.len(), 4);
    let full = client
        .claim_matches(for_referee(&external.agent_id, 5))
        .await
        .unwrap()
        .into_inner()
        .assignments;
    assert!(full.is_empty(), "a referee at capacity gets nothing");
    // Renewals for it, too.
    let first = &claimed[0];
    let renewed = client
        .renew_leases(league_runtime::credentials::on_behalf_of_request(
            &operator,
            &external.agent_id,
            RenewLeasesRequest {
                leases: vec![lease_of(first)],
                ..RenewLeasesRequest::default()
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(renewed.renewals[0].renewed);

    // A report without a lease id: refused from another referee, taken from the holder, once.
    let without_lease = || ReportMatchResultRequest {
        lease_id: String::new(),
        ..report_of(first, a_wins(first))
    };
    let intruder = client
        .report_match_result(other.request(without_lease()))
        .await
        .unwrap_err();
    assert_eq!(code(&intruder), Some("E015"));
    let recorded = client
        .report_match_result(external.request(without_lease()))
        .await
        .unwrap()
        .into_inner();
    assert!(!recorded.duplicate);
    let repeated = client
        .report_match_result(external.request(without_lease()))
        .await
        .unwrap()
        .into_inner();
    assert!(repeated.duplicate);
    // One slot free again.
    let again = client
        .claim_matches(for_referee(&external.agent_id, 5))
        .await
        .unwrap()
        .into_inner()
        .assignments;
    assert_eq!(again.len(), 1);
}

#[tokio::test]
async fn a_restarted_agent_resumes_with_its_token_and_nobody_else_takes_its_identity() {
    let (manager, mut client, alice, bob) = two_player_league().await;
    let referee = register_referee(&mut client, "ref-1").await;
    assert_eq!(claim(&mut client, &referee, 1).await.len(), 1);
    let referee_again = || RegisterRefereeRequest {
        meta: Some(AgentMeta {
            service_endpoint: "http://127.0.0.1:10".into(),
            ..meta("ref-1")
        }),
        max_concurrent_matches: 2,
    };
    let held = || async {
        sqlx::query_as::<_, (String, Option<String>)>(
            "select match_status(m, l), m.referee_id from matches m join leagues l using (league_id)",
        )
        .fetch_one(&manager.pool)
        .await
        .unwrap()
    };

    // Without credentials, the endpoint is taken; with a wrong token, or a player's, nothing changes.
    let duplicate = client.register_referee(referee_again()).await.unwrap_err();
    assert_eq!(code(&duplicate), Some("E014"));
    let guessed = league_runtime::Credentials::new(referee.agent_id.clone(), "0".repeat(64));
    let refused = client
        .register_referee(guessed.request(referee_again()))
        .await
        .unwrap_err();
    assert_eq!(code(&refused), Some("E012"));
    let borrowed = client
        .register_referee(alice.request(referee_again()))
        .await
        .unwrap_err();
    assert_eq!(code(&borrowed), Some("E020"));
    // The right token does not take another agent's endpoint.
    let onto_alice = client
        .register_referee(referee.request(RegisterRefereeRequest {
            meta: Some(meta("alice")),
            max_concurrent_matches: 2,
        }))
        .await
        .unwrap_err();
    assert_eq!(code(&onto_alice), Some("E014"));
    assert_eq!(held().await, ("running".into(), Some(referee.agent_id.clone())));

    // The referee proves its token: same id, same token, new service endpoint; its old lease is freed.
    let resumed = client
        .register_referee(referee.request(referee_again()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.referee_id, referee.agent_id);
    assert_eq!(
        resumed.auth_token,
        secrecy::ExposeSecret::expose_secret(&referee.token)
    );
    assert_eq!(resumed.league_id, "test_league");
    assert_eq!(held().await, ("ready".into(), None));
    let (endpoint, capacity): (String, i32) =
        sqlx::query_as("select service_endpoint, max_concurrent_matches from agents where agent_id = $1")
            .bind(&referee.agent_id)
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!((endpoint.as_str(), capacity), ("http://127.0.0.1:10", 2));

    // A player of the running league: refused as a newcomer (the league is not registering), resumed
    // with its token; at the same endpoints its running match goes on.
    claim(&mut client, &referee, 1).await;
    assert_eq!(held().await, ("running".into(), Some(referee.agent_id.clone())));
    let newcomer = registration_refused(&mut client, meta("bob"), "").await;
    assert_eq!(code(&newcomer), Some("E008"));
    let resumed = resume(&mut client, &bob, meta("bob"), "").await.unwrap();
    assert_eq!(
        (resumed.player_id.as_str(), resumed.league_id.as_str()),
        (bob.agent_id.as_str(), "test_league")
    );
    assert_eq!(held().await, ("running".into(), Some(referee.agent_id.clone())));
    // Back at another endpoint (a player host restarted on a new port): its identity moves with it, and
    // the match its referee was playing at the old address is given back.
    let moved = AgentMeta {
        service_endpoint: "http://127.0.0.1:11".into(),
        ..meta("bob-moved")
    };
    let moved = resume(&mut client, &bob, moved, "").await.unwrap();
    assert_eq!(moved.player_id, bob.agent_id);
    assert_eq!(held().await, ("ready".into(), None));
    let (contact, service): (String, String) =
        sqlx::query_as("select contact_endpoint, service_endpoint from agents where agent_id = $1")
            .bind(&bob.agent_id)
            .fetch_one(&manager.pool)
            .await
            .unwrap();
    assert_eq!(
        (contact.as_str(), service.as_str()),
        ("http://127.0.0.1:9/bob-moved", "http://127.0.0.1:11")
    );
    // A player does not resume as a referee, nor as the other player.
    let crossed = resume(&mut client, &referee, meta("bob"), "").await.unwrap_err();
    assert_eq!(code(&crossed), Some("E020"));
    // Nor does its token take the other player's endpoint.
    let impostor = resume(&mut client, &alice, meta("bob-moved"), "")
        .await
        .unwrap_err();
    assert_eq!(code(&impostor), Some("E014"));
    let (agents,): (i64,) = sqlx::query_as("select count(*) from agents")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(agents, 3, "no resume registers anyone new");
}

#[tokio::test]
async fn a_report_under_an_expired_lease_nobody_claimed_again_is_recorded() {
    let (manager, mut client, ..) = two_player_league().await;
    let referee = register_referee(&mut client, "slow-reporter").await;
    let assignment = &claim(&mut client, &referee, 1).await[0];
    // The manager was away longer than the lease: it expired, but nobody claimed the match since.
    sqlx::query("update matches set lease_expires_at = now() - interval '1 minute'")
        .execute(&manager.pool)
        .await
        .unwrap();
    let recorded = report_a_win(&mut client, &referee, assignment).await.unwrap();
    assert!(!recorded.duplicate);
    let (status, claims): (String, i32) = sqlx::query_as("select status, claims from matches")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(
        (status.as_str(), claims),
        ("finished", 1),
        "played once, recorded once"
    );
}

#[tokio::test]
async fn a_league_bigger_than_one_insert_is_scheduled_whole() {
    // 150 players: 11,175 matches, more than one insert statement takes (start.rs, MATCHES_PER_INSERT).
    let manager = spawn_manager(150).await;
    let mut client = manager.client();
    for n in 1..=150 {
        register_player(&mut client, &format!("p{n}")).await;
    }
    let (rounds, scheduled, matches, ready, distinct): (i64, i64, i64, i64, i64) = sqlx::query_as(
        "select (select count(*) from rounds), (select sum(matches)::bigint from rounds),
                count(*), count(*) filter (where match_status(m, l) = 'ready'),
                count(distinct (least(player_a_id, player_b_id), greatest(player_a_id, player_b_id)))
         from matches m join leagues l using (league_id)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(
        (rounds, scheduled, matches, ready, distinct),
        (149, 11_175, 11_175, 75, 11_175)
    );
    // Every round holds the matches its row counts, each player once.
    let wrong: i64 = sqlx::query_scalar(
        "select count(*) from rounds r
         where r.matches <> (select count(*) from matches m where m.round_id = r.round_id)
            or 150 <> (select count(distinct p) from matches m, unnest(array[m.player_a_id, m.player_b_id]) p
                       where m.round_id = r.round_id)",
    )
    .fetch_one(&manager.pool)
    .await
    .unwrap();
    assert_eq!(wrong, 0);
}

#[tokio::test]
async fn only_live_referees_count_against_the_referee_limit() {
    let manager = league_testkit::spawn_manager("league_test", "test_league", |config| {
        config.auto_start_players = 2;
        config.registration.max_referees = 2;
        config.timing.lease_duration = std::time::Duration::from_secs(30);
    })
    .await;
    let mut client = manager.client();
    register_player(&mut client, "alice").await;
    register_player(&mut client, "bob").await; // starts the league: 1 match
    let holding = register_referee(&mut client, "ref-holding").await;
    assert_eq!(claim(&mut client, &holding, 1).await.len(), 1);
    let idle = register_referee(&mut client, "ref-idle").await;
    let third = || RegisterRefereeRequest {
        meta: Some(meta("ref-third")),
        max_concurrent_matches: 4,
    };
    let full = client.register_referee(third()).await.unwrap_err();
    assert_eq!(code(&full), Some("E008"), "two live referees: {full:?}");
    assert!(full.message().contains("live referees"), "{}", full.message());

    // Both silent for three minutes (a container gone, its replacement registered anew): the idle one
    // stops counting; the one holding a running match still counts.
    sqlx::query("update agents set last_seen_at = now() - interval '3 minutes' where kind = 'referee'")
        .execute(&manager.pool)
        .await
        .unwrap();
    let third = client.register_referee(third()).await.unwrap().into_inner();
    assert!(!third.referee_id.is_empty());
    let fourth = client
        .register_referee(RegisterRefereeRequest {
            meta: Some(meta("ref-fourth")),
            max_concurrent_matches: 4,
        })
        .await
        .unwrap_err();
    assert_eq!(code(&fourth), Some("E008"), "the holder and the third are live");

    // A call from the idle referee makes it live again.
    claim(&mut client, &idle, 1).await;
    league_testkit::observe(
        "the idle referee's call is noted",
        std::time::Duration::from_secs(10),
        async || {
            let (live,): (bool,) = sqlx::query_as(
                "select last_seen_at > now() - interval '1 minute' from agents where agent_id = $1",
            )
            .bind(&idle.agent_id)
            .fetch_one(&manager.pool)
            .await
            .ok()?;
            live.then_some(())
        },
    )
    .await;
}

/// An Even/Odd result is recorded only as its transcript and the rule give it (issue 52): choices that
/// differ from the players' CHOOSE_PARITY_RESPONSE, or a winner the drawn number does not make, are E002
/// and change nothing; the result that follows from them is recorded.
#[tokio::test]
async fn an_even_odd_result_must_follow_from_its_transcript_and_the_rule() {
    use prost_types::value::Kind;
    let (manager, mut client, ..) = two_player_league().await;
    let referee = register_referee(&mut client, "ref-1").await;
    let claimed = claim(&mut client, &referee, 4).await;
    let assignment = &claimed[0];
    let scheduled = assignment.r#match.as_ref().unwrap();
    let (a, b) = (scheduled.player_a_id.clone(), scheduled.player_b_id.clone());
    let text = |s: &str| prost_types::Value {
        kind: Some(Kind::StringValue(s.into())),
    };
    // A won: both answered (A even, B odd) and 4 was drawn.
    let answered = |player: &str, choice: &str| TranscriptEntry {
        at: None,
        entry: Some(transcript_entry::Entry::Message(MessageRecord {
            direction: Direction::FromPlayer as i32,
            player_id: player.to_owned(),
            message_type: "CHOOSE_PARITY_RESPONSE".into(),
            attempt: 1,
            payload: Some(prost_types::Struct {
                fields: [("parity_choice".to_owned(), text(choice))].into(),
            }),
            error_code: String::new(),
        })),
    };
    let report = |choice_a: &str, drawn: f64| {
        let mut result = a_wins(assignment);
        let choices = prost_types::Struct {
            fields: [(a.clone(), text(choice_a)), (b.clone(), text("odd"))].into(),
        };
        result.game_metadata = Some(prost_types::Struct {
            fields: [
                (
                    "drawn_number".to_owned(),
                    prost_types::Value {
                        kind: Some(Kind::NumberValue(drawn)),
                    },
                ),
                (
                    "choices".to_owned(),
                    prost_types::Value {
                        kind: Some(Kind::StructValue(choices)),
                    },
                ),
            ]
            .into(),
        });
        let mut request = report_of(assignment, result);
        request.transcript = Some(MatchTranscript {
            match_id: scheduled.match_id.clone(),
            entries: vec![answered(&a, "even"), answered(&b, "odd")],
        });
        request
    };
    for (choice_a, drawn, why) in [("odd", 4.0, "transcript"), ("even", 7.0, "by the rule")] {
        let refused = client
            .report_match_result(referee.request(report(choice_a, drawn)))
            .await
            .unwrap_err();
        assert_eq!(code(&refused), Some("E002"), "{refused:?}");
        assert!(refused.message().contains(why), "{why}: {refused:?}");
    }
    let (finished,): (i64,) = sqlx::query_as("select count(*) from matches where status = 'finished'")
        .fetch_one(&manager.pool)
        .await
        .unwrap();
    assert_eq!(finished, 0, "nothing recorded");
    let recorded = client
        .report_match_result(referee.request(report("even", 4.0)))
        .await
        .unwrap()
        .into_inner();
    assert!(!recorded.duplicate);
}

/// A match given back because its referee's report was refused (`refused`) is passed by that referee's
/// claims while another live referee runs the game, and goes to that one; with nobody else, the same
/// referee plays it again. Given back with an empty lease id: the lease the referee holds now.
#[tokio::test]
async fn a_match_whose_report_was_refused_goes_to_another_live_referee() {
    given_back_goes_to_another_live_referee(ReleaseLeasesRequest {
        refused: true,
        ..ReleaseLeasesRequest::default()
    })
    .await;
}

/// The same for a match its referee left untouched (`unless_players_called`, the gateway's give-back
/// after the join timeout): a referee that takes matches and calls no player, with a claim already
/// waiting when it gives one back, would otherwise take the same match again as often as not.
#[tokio::test]
async fn a_match_given_back_untouched_goes_to_another_live_referee() {
    given_back_goes_to_another_live_referee(ReleaseLeasesRequest {
        unless_players_called: true,
        ..ReleaseLeasesRequest::default()
    })
    .await;
}

/// Claims the first match, gives it back as `how` says (alone, then with a second referee
/// registered), and follows who gets it.
async fn given_back_goes_to_another_live_referee(how: ReleaseLeasesRequest) {
    let (_manager, mut client, ..) = two_player_league().await;
    let first = register_referee(&mut client, "ref-1").await;
    let claimed = claim(&mut client, &first, 4).await;
    let scheduled = claimed[0].r#match.clone().unwrap();
    let give_back = |referee: &league_runtime::Credentials| {
        referee.request(ReleaseLeasesRequest {
            leases: vec![LeaseRef {
                league_id: scheduled.league_id.clone(),
                match_id: scheduled.match_id.clone(),
                lease_id: String::new(),
            }],
            ..how.clone()
        })
    };
    let released = client
        .release_leases(give_back(&first))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        released.released.len(),
        1,
        "given back under the lease it holds now"
    );
    // Alone, the referee plays it again.
    let again = claim(&mut client, &first, 4).await;
    assert_eq!(again.len(), 1, "nobody else to play it");
    let released = client
        .release_leases(give_back(&first))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(released.released.len(), 1, "given back again");
    // With another live referee, the first is passed by and the other gets it.
    let second = register_referee(&mut client, "ref-2").await;
    assert!(claim(&mut client, &first, 4).await.is_empty(), "passed by");
    let taken = claim(&mut client, &second, 4).await;
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].r#match.as_ref().unwrap().match_id, scheduled.match_id);
}
