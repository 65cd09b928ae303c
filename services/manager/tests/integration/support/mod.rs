//! Test support: a manager on 127.0.0.1:0 over a fresh database (the test kit's), agents registered,
//! results reported.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use league_domain::{LeagueId, RefereeId, Timing};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::*;
use league_runtime::Credentials;
use league_runtime::grpc::GrpcChannel;

pub use league_testkit::TestManager;
pub use league_testkit::manager::OPERATOR_TOKEN;

/// A manager serving a fresh database, with an empty league `test_league` that starts automatically once
/// `auto_start` players joined (0: by command), and 30 s leases.
pub async fn spawn_manager(auto_start: u32) -> TestManager {
    league_testkit::spawn_manager("league_test", "test_league", |config| {
        config.auto_start_players = auto_start;
        config.timing = Timing {
            lease_duration: Duration::from_secs(30),
            ..Timing::default()
        };
    })
    .await
}

/// The league [`spawn_manager`] opens, typed as the manager's own functions take it.
pub fn test_league() -> LeagueId {
    LeagueId::parse("test_league").unwrap()
}

/// A registered referee's id, typed as the manager's own functions take it.
pub fn referee_id(referee: &Credentials) -> RefereeId {
    RefereeId::parse(&referee.agent_id).unwrap()
}

pub fn meta(name: &str) -> AgentMeta {
    AgentMeta {
        display_name: name.to_owned(),
        version: "1.0.0".into(),
        game_types: vec!["even_odd".into()],
        contact_endpoint: format!("http://127.0.0.1:9/{name}"),
        // Nothing listens here: deliveries fail and are retried, which these tests do not need.
        service_endpoint: "http://127.0.0.1:9".into(),
        ..AgentMeta::default()
    }
}

pub async fn register_player(client: &mut ManagerServiceClient<GrpcChannel>, name: &str) -> Credentials {
    let response = client
        .register_player(RegisterPlayerRequest {
            meta: Some(meta(name)),
            league_id: String::new(),
        })
        .await
        .expect("player registers")
        .into_inner();
    Credentials::new(response.player_id, response.auth_token)
}

pub async fn register_referee(client: &mut ManagerServiceClient<GrpcChannel>, name: &str) -> Credentials {
    let response = client
        .register_referee(RegisterRefereeRequest {
            meta: Some(meta(name)),
            max_concurrent_matches: 4,
        })
        .await
        .expect("referee registers")
        .into_inner();
    Credentials::new(response.referee_id, response.auth_token)
}

/// `player` registering again with its credentials (a restart, or an enrollment in the next league),
/// `meta` as it now is, naming `league_id` (empty: none).
pub async fn resume(
    client: &mut ManagerServiceClient<GrpcChannel>,
    player: &Credentials,
    meta: AgentMeta,
    league_id: &str,
) -> Result<RegisterPlayerResponse, tonic::Status> {
    client
        .register_player(player.request(RegisterPlayerRequest {
            meta: Some(meta),
            league_id: league_id.to_owned(),
        }))
        .await
        .map(tonic::Response::into_inner)
}

/// A newcomer registering with `meta`, naming `league_id` (empty: none), refused: the refusal.
pub async fn registration_refused(
    client: &mut ManagerServiceClient<GrpcChannel>,
    meta: AgentMeta,
    league_id: &str,
) -> tonic::Status {
    client
        .register_player(RegisterPlayerRequest {
            meta: Some(meta),
            league_id: league_id.to_owned(),
        })
        .await
        .expect_err("the registration is refused")
}

/// A manager whose league `test_league` of two players has started, a client of it, and the players'
/// credentials: alice (P01) and bob (P02), whose registration started the league: one round of one
/// match, R1M1. What the tests of leases, reports and resumes start from.
pub async fn two_player_league() -> (
    TestManager,
    ManagerServiceClient<GrpcChannel>,
    Credentials,
    Credentials,
) {
    let manager = spawn_manager(2).await;
    let mut client = manager.client();
    let alice = register_player(&mut client, "alice").await;
    let bob = register_player(&mut client, "bob").await;
    (manager, client, alice, bob)
}

/// A claim for up to `max_matches`, answered at once (no long poll).
pub fn claim_now(max_matches: u32) -> ClaimMatchesRequest {
    ClaimMatchesRequest {
        max_matches,
        wait: None,
    }
}

/// What `referee` is given by a claim for up to `max_matches`, answered at once.
pub async fn claim(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
    max_matches: u32,
) -> Vec<MatchAssignment> {
    client
        .claim_matches(referee.request(claim_now(max_matches)))
        .await
        .unwrap()
        .into_inner()
        .assignments
}

/// The lease an assignment was given, as renewals and releases name it.
pub fn lease_of(assignment: &MatchAssignment) -> LeaseRef {
    let scheduled = assignment.r#match.as_ref().unwrap();
    LeaseRef {
        match_id: scheduled.match_id.clone(),
        lease_id: assignment.lease_id.clone(),
        league_id: scheduled.league_id.clone(),
    }
}

/// `referee` renewing `leases`; whether each was renewed.
pub async fn renew(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
    leases: Vec<LeaseRef>,
    players_called: bool,
) -> Vec<bool> {
    let renewals = client
        .renew_leases(referee.request(RenewLeasesRequest {
            leases,
            players_called,
        }))
        .await
        .unwrap()
        .into_inner()
        .renewals;
    renewals.iter().map(|renewal| renewal.renewed).collect()
}

/// `referee` releasing `leases`; the leases it gave back.
pub async fn release(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
    leases: Vec<LeaseRef>,
    unless_players_called: bool,
) -> Vec<LeaseRef> {
    client
        .release_leases(referee.request(ReleaseLeasesRequest {
            leases,
            unless_players_called,
            refused: false,
        }))
        .await
        .unwrap()
        .into_inner()
        .released
}

/// `referee` reporting `assignment` as won by its player A.
pub async fn report_a_win(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
    assignment: &MatchAssignment,
) -> Result<ReportMatchResultResponse, tonic::Status> {
    client
        .report_match_result(referee.request(report_of(assignment, a_wins(assignment))))
        .await
        .map(tonic::Response::into_inner)
}

/// Registers a player for each of `names` (they join the manager's league) and a referee "ref";
/// returns the referee's credentials.
pub async fn players_and_referee(
    client: &mut ManagerServiceClient<GrpcChannel>,
    names: &[&str],
) -> Credentials {
    for name in names {
        register_player(client, name).await;
    }
    register_referee(client, "ref").await
}

/// Reports every match of `assignments` as won by its player A, one after another.
pub async fn report_a_wins(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
    assignments: &[MatchAssignment],
) {
    for assignment in assignments {
        report_a_win(client, referee, assignment).await.unwrap();
    }
}

/// A well-formed result of `assignment` in which player A wins.
pub fn a_wins(assignment: &MatchAssignment) -> MatchResult {
    let scheduled = assignment.r#match.as_ref().unwrap();
    MatchResult {
        match_id: scheduled.match_id.clone(),
        status: ResultStatus::Win as i32,
        winner_player_id: scheduled.player_a_id.clone(),
        scores: vec![
            PlayerScore {
                player_id: scheduled.player_a_id.clone(),
                points: 3,
            },
            PlayerScore {
                player_id: scheduled.player_b_id.clone(),
                points: 0,
            },
        ],
        reason: "test".into(),
        ..MatchResult::default()
    }
}

pub fn report_of(assignment: &MatchAssignment, result: MatchResult) -> ReportMatchResultRequest {
    let scheduled = assignment.r#match.as_ref().unwrap();
    ReportMatchResultRequest {
        league_id: scheduled.league_id.clone(),
        match_id: scheduled.match_id.clone(),
        lease_id: assignment.lease_id.clone(),
        result: Some(result),
        transcript: Some(MatchTranscript {
            match_id: scheduled.match_id.clone(),
            entries: vec![],
        }),
    }
}

pub fn code(status: &tonic::Status) -> Option<&'static str> {
    league_proto::error_code::code_of(status).map(|code| code.code())
}

/// Everything ready for `referee` to claim, waiting up to 200 ms for it: a released round, whole.
pub async fn claim_round(
    client: &mut ManagerServiceClient<GrpcChannel>,
    referee: &Credentials,
) -> Vec<MatchAssignment> {
    client
        .claim_matches(referee.request(ClaimMatchesRequest {
            max_matches: 16,
            wait: Some(prost_types::Duration {
                seconds: 0,
                nanos: 200_000_000,
            }),
        }))
        .await
        .unwrap()
        .into_inner()
        .assignments
}
