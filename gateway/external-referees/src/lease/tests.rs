//! Keeping a match's lease against a fake manager that answers renewals and releases as a test says, and
//! keeps every request: what the worker asks of the manager, and what it does with the answers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use league_domain::{Assignment, RefereeId, Timing};
use league_manager_link::ManagerLink;
use league_proto::v2::manager_service_server::{ManagerService, ManagerServiceServer};
use league_proto::v2::*;
use league_runtime::Shutdown;
use serde_json::Value;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use super::Kept;
use crate::{RefereeAgents, RefereedMatch, Referees, Unanswered, lock};

/// What the fake manager was asked, and how it answers.
#[derive(Debug)]
struct Manager {
    renewals: Mutex<Vec<RenewLeasesRequest>>,
    releases: Mutex<Vec<ReleaseLeasesRequest>>,
    /// Whether renewals are granted (false: the lease was lost).
    renews: AtomicBool,
    /// Whether a release releases (false: the referee called a player through another replica).
    releases_leases: AtomicBool,
}

struct Fake(Arc<Manager>);

league_testkit::fake_service! {
    impl ManagerService for Fake {
        async fn renew_leases(
            &self,
            request: Request<RenewLeasesRequest>,
        ) -> Result<Response<RenewLeasesResponse>, Status> {
            let request = request.into_inner();
            let renewed = self.0.renews.load(Ordering::SeqCst);
            let renewals = request
                .leases
                .iter()
                .map(|lease| LeaseRenewal {
                    match_id: lease.match_id.clone(),
                    league_id: lease.league_id.clone(),
                    renewed,
                    lease_expires_at: None,
                })
                .collect();
            lock(&self.0.renewals).push(request);
            Ok(Response::new(RenewLeasesResponse { renewals }))
        }

        async fn release_leases(
            &self,
            request: Request<ReleaseLeasesRequest>,
        ) -> Result<Response<ReleaseLeasesResponse>, Status> {
            let request = request.into_inner();
            let released = if self.0.releases_leases.load(Ordering::SeqCst) {
                request.leases.clone()
            } else {
                Vec::new()
            };
            lock(&self.0.releases).push(request);
            Ok(Response::new(ReleaseLeasesResponse { released }))
        }
    }
    unimplemented {
        register_referee(RegisterRefereeRequest) -> RegisterRefereeResponse;
        register_player(RegisterPlayerRequest) -> RegisterPlayerResponse;
        create_league(CreateLeagueRequest) -> CreateLeagueResponse;
        start_league(StartLeagueRequest) -> StartLeagueResponse;
        claim_matches(ClaimMatchesRequest) -> ClaimMatchesResponse;
        report_match_result(ReportMatchResultRequest) -> ReportMatchResultResponse;
        report_match_results(ReportMatchResultsRequest) -> ReportMatchResultsResponse;
        get_standings(GetStandingsRequest) -> GetStandingsResponse;
        get_standings_by_round(GetStandingsByRoundRequest) -> GetStandingsByRoundResponse;
        get_schedule(GetScheduleRequest) -> GetScheduleResponse;
        get_next_match(GetNextMatchRequest) -> GetNextMatchResponse;
        get_player_stats(GetPlayerStatsRequest) -> GetPlayerStatsResponse;
        get_match(GetMatchRequest) -> GetMatchResponse;
        get_league_status(GetLeagueStatusRequest) -> GetLeagueStatusResponse;
        list_leagues(ListLeaguesRequest) -> ListLeaguesResponse;
        enroll_player(EnrollPlayerRequest) -> EnrollPlayerResponse;
        pause_league(PauseLeagueRequest) -> PauseLeagueResponse;
        resume_league(ResumeLeagueRequest) -> ResumeLeagueResponse;
        cancel_league(CancelLeagueRequest) -> CancelLeagueResponse;
        withdraw_player(WithdrawPlayerRequest) -> WithdrawPlayerResponse;
    }
}

/// The bridge is never asked here: these tests neither push nor address a referee.
#[derive(Debug)]
struct NoBridge;

impl RefereeAgents for NoBridge {
    fn start_match<'a>(&'a self, _: &'a RefereeId, _: &'a Value) -> BoxFuture<'a, Result<Value, Unanswered>> {
        Box::pin(async { panic!("no START_MATCH in these tests") })
    }

    fn address<'a>(&'a self, _: &'a RefereeId, _: &'a mut Value) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// A worker whose manager is a fake on a free loopback port, granting renewals and releases.
async fn worker() -> (Arc<Referees>, Arc<Manager>) {
    let manager = Arc::new(Manager {
        renewals: Mutex::default(),
        releases: Mutex::default(),
        renews: AtomicBool::new(true),
        releases_leases: AtomicBool::new(true),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(ManagerServiceServer::new(Fake(manager.clone())))
            .serve_with_incoming(TcpIncoming::from(listener)),
    );
    let channel = league_runtime::grpc::channel(&url).expect("a channel");
    let link = ManagerLink::new(channel, "operator".to_owned().into());
    let referees = Referees::new(link, Arc::new(NoBridge), "http://gateway.invalid/mcp".to_owned());
    (Arc::new(referees), manager)
}

fn referee() -> RefereeId {
    RefereeId::parse("REF01").expect("a referee id")
}

/// R1M1 of l1 between P01 and P02, claimed under lease `lease-1`, with `timing`.
fn assignment(timing: Timing) -> Assignment {
    let scheduled = ScheduledMatch {
        league_id: "l1".to_owned(),
        round_id: 1,
        match_id: "R1M1".to_owned(),
        game_type: "even_odd".to_owned(),
        player_a_id: "P01".to_owned(),
        player_b_id: "P02".to_owned(),
        referee_id: "REF01".to_owned(),
        ..ScheduledMatch::default()
    };
    let seat = |player_id: &str| AssignedPlayer {
        player_id: player_id.to_owned(),
        ..AssignedPlayer::default()
    };
    Assignment::try_from(MatchAssignment {
        r#match: Some(scheduled),
        lease_id: "lease-1".to_owned(),
        timing: Some(timing.into()),
        player_a: Some(seat("P01")),
        player_b: Some(seat("P02")),
        ..MatchAssignment::default()
    })
    .expect("a playable assignment")
}

fn refereed(referees: &Referees, assignment: &Assignment) -> RefereedMatch {
    let key = (assignment.league_id().clone(), assignment.match_id());
    lock(&referees.matches).get(&key).expect("remembered").0.clone()
}

#[tokio::test]
async fn a_referees_first_call_to_a_player_is_noted_at_the_manager_once() {
    let (referees, manager) = worker().await;
    let assignment = assignment(Timing::default());
    let _held = referees.hold(&referee(), &assignment);
    let found = refereed(&referees, &assignment);
    referees.player_called(&found, &referee()).await.expect("noted");
    referees.player_called(&found, &referee()).await.expect("known");
    let renewals = lock(&manager.renewals).clone();
    assert_eq!(renewals.len(), 1, "{renewals:?}");
    assert!(renewals[0].players_called);
    // The lease the referee holds now, whichever replica claimed it.
    assert_eq!(renewals[0].leases[0].lease_id, "");
    assert_eq!(renewals[0].leases[0].match_id, "R1M1");
}

#[tokio::test]
async fn a_referee_that_lost_the_lease_is_refused_and_the_match_forgotten() {
    let (referees, manager) = worker().await;
    manager.renews.store(false, Ordering::SeqCst);
    let assignment = assignment(Timing::default());
    let _held = referees.hold(&referee(), &assignment);
    let found = refereed(&referees, &assignment);
    let refused = referees.player_called(&found, &referee()).await;
    assert_eq!(
        refused.map_err(|error| error.code),
        Err(league_proto::ErrorCode::LeaseNotHeld)
    );
    assert!(
        lock(&referees.matches).is_empty(),
        "the match is asked of the manager again"
    );
    // Not noted: the next call asks again.
    referees.player_called(&found, &referee()).await.ok();
    assert_eq!(lock(&manager.renewals).len(), 2);
}

#[tokio::test]
async fn a_referee_that_calls_no_player_in_time_gives_its_match_back() {
    let (referees, manager) = worker().await;
    // The join timeout is below the floor: the referee is given MIN_SILENCE.
    let timing = Timing {
        join_timeout: std::time::Duration::from_millis(1),
        ..Timing::default()
    };
    let assignment = assignment(timing);
    let held = referees.hold(&referee(), &assignment);
    let shutdown = Shutdown::new();
    let kept = referees.keep(held, shutdown.signal()).await;
    assert_eq!(kept, Kept::GivenBack);
    let releases = lock(&manager.releases).clone();
    assert_eq!(releases.len(), 1, "{releases:?}");
    assert!(
        releases[0].unless_players_called,
        "a player called through another replica keeps it"
    );
    assert!(!releases[0].refused);
    assert_eq!(releases[0].leases[0].lease_id, "lease-1");
    assert!(lock(&referees.matches).is_empty());
}

#[tokio::test]
async fn a_match_whose_player_was_called_here_is_not_given_back() {
    let (referees, manager) = worker().await;
    let assignment = assignment(Timing::default());
    let held = referees.hold(&referee(), &assignment);
    let found = refereed(&referees, &assignment);
    referees.player_called(&found, &referee()).await.expect("noted");
    assert!(!referees.given_back_untouched(&held).await);
    assert!(
        lock(&manager.releases).is_empty(),
        "the manager was not even asked"
    );
    assert_eq!(lock(&referees.matches).len(), 1);
}

#[tokio::test]
async fn a_match_whose_player_was_called_through_another_replica_is_kept() {
    let (referees, manager) = worker().await;
    // The manager knows of the call and releases nothing.
    manager.releases_leases.store(false, Ordering::SeqCst);
    let assignment = assignment(Timing::default());
    let held = referees.hold(&referee(), &assignment);
    assert!(!referees.given_back_untouched(&held).await);
    assert_eq!(lock(&manager.releases).len(), 1);
    assert_eq!(lock(&referees.matches).len(), 1, "still this referee's");
}

#[tokio::test]
async fn keeping_ends_when_the_report_arrives() {
    let (referees, manager) = worker().await;
    let assignment = assignment(Timing::default());
    let held = referees.hold(&referee(), &assignment);
    let shutdown = Shutdown::new();
    // Reported before the keeper waits: the notification is kept for it.
    referees.match_reported(assignment.league_id(), assignment.match_id());
    assert_eq!(referees.keep(held, shutdown.signal()).await, Kept::Ended);
    assert!(lock(&manager.releases).is_empty());
    assert!(lock(&referees.reported).is_empty(), "forgotten once kept");
}
