//! Ids are parsed where a request enters the manager (docs/adr/0057-typed-ids.md): a request naming a
//! malformed league, player, match or agent id is refused with an error that names the field and what
//! the id should be, and the database is exactly as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use league_proto::v2::*;
use league_runtime::Credentials;

use crate::support::*;

/// Everything the refused requests could have changed, as text: the league's status, every match's
/// status, holder and lease, every enrollment, and every agent.
async fn state(manager: &TestManager) -> Vec<String> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "select concat_ws(' ', 'league', league_id, status) from leagues
         union all
         select concat_ws(' ', 'match', match_id, status, referee_id, lease_id::text, called_lease_id::text)
         from matches
         union all
         select concat_ws(' ', 'player', league_id, player_id, withdrawn_at::text) from league_players
         union all
         select concat_ws(' ', 'agent', agent_id, revoked_at::text, array_to_string(label_keys, ','))
         from agents
         order by 1",
    )
    .fetch_all(&manager.pool)
    .await
    .unwrap();
    rows.into_iter().map(|(row,)| row).collect()
}

/// Asserts that `refused` is E002 and that its message names `field`, quotes `id` and says what `kind`
/// ("a player id") is.
fn assert_malformed<T: std::fmt::Debug>(
    refused: Result<T, tonic::Status>,
    field: &str,
    id: &str,
    kind: &str,
) {
    let status = refused.expect_err("a malformed id is refused");
    assert_eq!(code(&status), Some("E002"), "{status:?}");
    let expected = format!("{field} {id:?} is not {kind}: {kind} is ");
    assert!(status.message().starts_with(&expected), "{:?}", status.message());
}

#[tokio::test]
async fn a_malformed_id_is_refused_by_name_and_changes_nothing() {
    let manager = spawn_manager(2).await;
    let mut client = manager.client();
    let referee = players_and_referee(&mut client, &["a", "b"]).await;
    let running = claim_round(&mut client, &referee).await;
    assert_eq!(
        running.len(),
        1,
        "the league started and its one match is running"
    );
    let scheduled = running[0].r#match.clone().unwrap();
    let before = state(&manager).await;

    let withdrawn = client
        .withdraw_player(manager.operator(WithdrawPlayerRequest {
            league_id: "test_league".into(),
            player_id: "p01".into(),
        }))
        .await;
    assert_malformed(withdrawn, "player_id", "p01", "a player id");

    let paused = client
        .pause_league(manager.operator(PauseLeagueRequest {
            league_id: "Test_League".into(),
        }))
        .await;
    assert_malformed(paused, "league_id", "Test_League", "a league id");

    let mut report = report_of(&running[0], a_wins(&running[0]));
    report.match_id = "R1M01".into();
    let reported = client.report_match_result(referee.request(report)).await;
    assert_malformed(reported, "match_id", "R1M01", "a match id");

    let lease = LeaseRef {
        league_id: scheduled.league_id.clone(),
        match_id: "M1".into(),
        lease_id: running[0].lease_id.clone(),
    };
    let renewed = client
        .renew_leases(referee.request(RenewLeasesRequest {
            leases: vec![lease.clone()],
            players_called: true,
        }))
        .await;
    assert_malformed(renewed, "leases.match_id", "M1", "a match id");
    let released = client
        .release_leases(referee.request(ReleaseLeasesRequest {
            leases: vec![lease],
            unless_players_called: false,
            refused: false,
        }))
        .await;
    assert_malformed(released, "leases.match_id", "M1", "a match id");

    let enrolled = client
        .enroll_player(manager.operator(EnrollPlayerRequest {
            league_id: "test_league".into(),
            player_id: "P1".into(),
        }))
        .await;
    assert_malformed(enrolled, "player_id", "P1", "a player id");

    let channel = league_runtime::grpc::channel(&manager.url).unwrap();
    let mut agents = league_proto::v2::agents_service_client::AgentsServiceClient::new(channel);
    let revoked = agents
        .revoke_referee(manager.operator(RevokeRefereeRequest {
            referee_id: "P01".into(),
        }))
        .await;
    assert_malformed(revoked, "referee_id", "P01", "a referee id");
    let labelled = agents
        .set_agent_label(manager.operator(SetAgentLabelRequest {
            agent_id: "../P01".into(),
            key: "k".into(),
            value: "v".into(),
        }))
        .await;
    assert_malformed(labelled, "agent_id", "../P01", "an agent id");

    // Credentials naming no agent's id: not registered, said so with the grammar.
    let stranger = Credentials::new("p01".to_owned(), "token".to_owned());
    let claimed = client
        .claim_matches(stranger.request(ClaimMatchesRequest {
            max_matches: 1,
            wait: None,
        }))
        .await
        .expect_err("credentials naming no agent are refused");
    assert_eq!(code(&claimed), Some("E005"), "{claimed:?}");
    assert!(
        claimed.message().contains("\"p01\" is not an agent id"),
        "{claimed:?}"
    );

    assert_eq!(state(&manager).await, before, "a refused request changed nothing");
    // The well-formed report of the same match is still taken.
    client
        .report_match_result(referee.request(report_of(&running[0], a_wins(&running[0]))))
        .await
        .unwrap();
}

#[tokio::test]
async fn queries_refuse_a_malformed_id_and_read_a_well_formed_unknown_one_as_missing() {
    let manager = spawn_manager(0).await;
    let mut client = manager.client();
    let stats = client
        .get_player_stats(manager.operator(GetPlayerStatsRequest {
            league_id: String::new(),
            player_id: "P 01".into(),
        }))
        .await;
    assert_malformed(stats, "player_id", "P 01", "a player id");
    let found = client
        .get_match(manager.operator(GetMatchRequest {
            league_id: "test_league".into(),
            match_id: "R0M1".into(),
        }))
        .await;
    assert_malformed(found, "match_id", "R0M1", "a match id");
    let standings = client
        .get_standings(manager.operator(GetStandingsRequest {
            league_id: "no such league!".into(),
        }))
        .await;
    assert_malformed(standings, "league_id", "no such league!", "a league id");
    let unknown = client
        .get_standings(manager.operator(GetStandingsRequest {
            league_id: "no_such_league".into(),
        }))
        .await
        .expect_err("an unknown league is refused");
    assert_eq!(code(&unknown), Some("E006"), "{unknown:?}");
}
