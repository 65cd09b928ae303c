//! The worker against a fake manager and a fake player host, both served over real gRPC on 127.0.0.1.
//! Real time, short timings (leases of 300 ms, renewed every 100 ms); every wait is bounded.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use league_proto::v2::manager_service_server::{ManagerService, ManagerServiceServer};
use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::referee_service_server::RefereeService;
use league_proto::v2::*;
use league_proto::{ErrorCode, error_code};
use league_referee::payload::{object, string};
use league_referee::{MatchState, RefereeApi, Worker, WorkerConfig};
use league_runtime::grpc::{MatchCallAnswers, answer_match_calls, failure_of};
use league_runtime::{Credentials, Shutdown};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

const LEASE: Duration = Duration::from_millis(300);
/// Bound on every wait for the worker to get somewhere.
const PATIENCE: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------------------------------
// A fake manager: a queue of assignments; records claims, renewals and reports.

#[derive(Debug, Default)]
struct ManagerState {
    queue: VecDeque<MatchAssignment>,
    /// `max_matches` of every claim.
    claims: Vec<u32>,
    /// Matches claimed and neither reported nor lost.
    held: HashSet<String>,
    most_held: usize,
    renewals: Vec<Vec<LeaseRef>>,
    /// Matches whose next renewal is answered `renewed = false`.
    losing: HashSet<String>,
    /// Matches whose lease was answered as lost.
    lost: HashSet<String>,
    /// Failures to answer report attempts with, per match, before accepting.
    report_failures: HashMap<String, VecDeque<Status>>,
    report_attempts: HashMap<String, u32>,
    reports: Vec<ReportMatchResultRequest>,
    /// How many reports each `ReportMatchResults` request carried, in order.
    report_requests: Vec<usize>,
    /// `ReportMatchResults` is answered UNIMPLEMENTED, as a manager that predates it answers.
    no_report_batches: bool,
    /// The leases of every `ReleaseLeases` call.
    releases: Vec<Vec<LeaseRef>>,
    /// `league-agent-id` and `authorization` of every call.
    callers: HashSet<(String, String)>,
    /// Claims are refused: the operator revoked the referee.
    revoked: bool,
}

impl ManagerState {
    /// Takes one report as the fake's `ReportMatchResult` answers it: the next failure planned for its
    /// match, else recorded.
    fn take_report(&mut self, report: ReportMatchResultRequest) -> Result<ReportMatchResultResponse, Status> {
        *self.report_attempts.entry(report.match_id.clone()).or_default() += 1;
        if let Some(failure) = self
            .report_failures
            .get_mut(&report.match_id)
            .and_then(VecDeque::pop_front)
        {
            return Err(failure);
        }
        self.held.remove(&report.match_id);
        let recorded = report.result.clone();
        self.reports.push(report);
        Ok(ReportMatchResultResponse {
            recorded,
            duplicate: false,
        })
    }

    /// The matches of every `ReleaseLeases` call, in order.
    fn released(&self) -> Vec<&str> {
        (self.releases.iter().flatten())
            .map(|lease| lease.match_id.as_str())
            .collect()
    }
}

#[derive(Debug, Clone, Default)]
struct FakeManager {
    state: Arc<Mutex<ManagerState>>,
    changed: Arc<Notify>,
    /// How long a claim waits after it arrived before it takes matches from the queue.
    claim_delay: Duration,
}

impl FakeManager {
    fn with_queue(assignments: impl IntoIterator<Item = MatchAssignment>) -> FakeManager {
        let manager = FakeManager::default();
        manager.state().queue.extend(assignments);
        manager
    }

    fn state(&self) -> MutexGuard<'_, ManagerState> {
        self.state.lock().expect("manager state")
    }

    /// Records a call's credentials and applies `change` to the state, waking waiters.
    fn record<T, R>(&self, request: &Request<T>, change: impl FnOnce(&mut ManagerState) -> R) -> R {
        let header = |key: &str| {
            request
                .metadata()
                .get(key)
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        let mut state = self.state();
        state
            .callers
            .insert((header("league-agent-id"), header("authorization")));
        let answer = change(&mut state);
        drop(state);
        self.changed.notify_waiters();
        answer
    }

    /// Waits (bounded) until `done` holds.
    async fn wait_until(&self, what: &str, done: impl Fn(&ManagerState) -> bool) {
        let waiting = async {
            loop {
                let changed = self.changed.notified();
                if done(&self.state()) {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(PATIENCE, waiting)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting until {what}: {:#?}", self.state()));
    }

    fn reported(&self) -> Vec<String> {
        let mut ids: Vec<_> = self.state().reports.iter().map(|r| r.match_id.clone()).collect();
        ids.sort();
        ids
    }
}

fn lease_expiry() -> Option<prost_types::Timestamp> {
    Some((SystemTime::now() + LEASE).into())
}

league_testkit::fake_service! {
    impl ManagerService for FakeManager {
        async fn claim_matches(
            &self,
            request: Request<ClaimMatchesRequest>,
        ) -> Result<Response<ClaimMatchesResponse>, Status> {
            let max = request.get_ref().max_matches;
            if self.record(&request, |state| {
                state.claims.push(max);
                state.revoked
            }) {
                return Err(league_proto::error_code::revoked("REF01 was revoked by the operator"));
            }
            tokio::time::sleep(self.claim_delay).await;
            let assignments = self.record(&request, |state| {
                let take = state.queue.len().min(max as usize);
                let assignments: Vec<_> = state.queue.drain(..take).collect();
                for assignment in &assignments {
                    state.held.insert(match_id(assignment));
                }
                state.most_held = state.most_held.max(state.held.len());
                assignments
            });
            if assignments.is_empty() {
                // The long poll: nothing is added to the queue later in these tests.
                let wait = request
                    .get_ref()
                    .wait
                    .and_then(|wait| Duration::try_from(wait).ok());
                tokio::time::sleep(wait.unwrap_or_default().min(Duration::from_secs(1))).await;
            }
            Ok(Response::new(ClaimMatchesResponse { assignments }))
        }

        async fn renew_leases(
            &self,
            request: Request<RenewLeasesRequest>,
        ) -> Result<Response<RenewLeasesResponse>, Status> {
            let leases = request.get_ref().leases.clone();
            let renewals = self.record(&request, |state| {
                state.renewals.push(leases.clone());
                leases
                    .iter()
                    .map(|lease| {
                        let renewed = !state.losing.contains(&lease.match_id);
                        if !renewed {
                            state.held.remove(&lease.match_id);
                            state.lost.insert(lease.match_id.clone());
                        }
                        LeaseRenewal {
                            match_id: lease.match_id.clone(),
                            league_id: lease.league_id.clone(),
                            renewed,
                            lease_expires_at: if renewed { lease_expiry() } else { None },
                        }
                    })
                    .collect()
            });
            Ok(Response::new(RenewLeasesResponse { renewals }))
        }

        async fn report_match_result(
            &self,
            request: Request<ReportMatchResultRequest>,
        ) -> Result<Response<ReportMatchResultResponse>, Status> {
            let report = request.get_ref().clone();
            self.record(&request, |state| state.take_report(report).map(Response::new))
        }

        async fn report_match_results(
            &self,
            request: Request<ReportMatchResultsRequest>,
        ) -> Result<Response<ReportMatchResultsResponse>, Status> {
            let reports = request.get_ref().reports.clone();
            let answers = self.record(&request, |state| {
                if state.no_report_batches {
                    return Err(Status::unimplemented("report_match_results"));
                }
                state.report_requests.push(reports.len());
                let answer = |answered| match answered {
                    Ok(recorded) => report_answer::Answer::Recorded(recorded),
                    Err(status) => report_answer::Answer::Failure(failure_of(&status)),
                };
                Ok(reports
                    .into_iter()
                    .map(|reported| ReportAnswer {
                        answer: Some(answer(state.take_report(reported.report.unwrap_or_default()))),
                    })
                    .collect())
            })?;
            Ok(Response::new(ReportMatchResultsResponse { answers }))
        }

        async fn release_leases(
            &self,
            request: Request<ReleaseLeasesRequest>,
        ) -> Result<Response<ReleaseLeasesResponse>, Status> {
            let leases = request.get_ref().leases.clone();
            let released = self.record(&request, |state| {
                state.releases.push(leases.clone());
                leases
                    .iter()
                    .filter(|lease| state.held.remove(&lease.match_id))
                    .cloned()
                    .collect()
            });
            Ok(Response::new(ReleaseLeasesResponse { released }))
        }
    }
    unimplemented {
        register_referee(RegisterRefereeRequest) -> RegisterRefereeResponse;
        register_player(RegisterPlayerRequest) -> RegisterPlayerResponse;
        create_league(CreateLeagueRequest) -> CreateLeagueResponse;
        start_league(StartLeagueRequest) -> StartLeagueResponse;
        get_standings(GetStandingsRequest) -> GetStandingsResponse;
        get_schedule(GetScheduleRequest) -> GetScheduleResponse;
        get_next_match(GetNextMatchRequest) -> GetNextMatchResponse;
        get_player_stats(GetPlayerStatsRequest) -> GetPlayerStatsResponse;
        get_match(GetMatchRequest) -> GetMatchResponse;
        get_league_status(GetLeagueStatusRequest) -> GetLeagueStatusResponse;
        pause_league(PauseLeagueRequest) -> PauseLeagueResponse;
        resume_league(ResumeLeagueRequest) -> ResumeLeagueResponse;
        cancel_league(CancelLeagueRequest) -> CancelLeagueResponse;
        withdraw_player(WithdrawPlayerRequest) -> WithdrawPlayerResponse;
        get_standings_by_round(GetStandingsByRoundRequest) -> GetStandingsByRoundResponse;
        list_leagues(ListLeaguesRequest) -> ListLeaguesResponse;
        enroll_player(EnrollPlayerRequest) -> EnrollPlayerResponse;
    }
}

// ---------------------------------------------------------------------------------------------------
// A fake player host serving every player: joins, answers "even" after a delay; SLOW (P99) never moves.
const SLOW: &str = "P99";

/// (call, player, match) of a call a player host took.
type Call = (&'static str, String, String);

#[derive(Debug, Clone, Default)]
struct FakePlayerHost {
    move_delay: Duration,
    calls: Arc<Mutex<Vec<Call>>>,
    called: Arc<Notify>,
}

impl FakePlayerHost {
    fn answering_after(move_delay: Duration) -> FakePlayerHost {
        FakePlayerHost {
            move_delay,
            ..FakePlayerHost::default()
        }
    }

    fn record(&self, call: &'static str, player_id: &str, context: Option<&MatchContext>) {
        let match_id = context.map(|c| c.match_id.clone()).unwrap_or_default();
        self.calls
            .lock()
            .expect("calls")
            .push((call, player_id.to_owned(), match_id));
        self.called.notify_waiters();
    }

    /// Waits (bounded) until `player_id` has been called with `call`.
    async fn wait_for_call(&self, call: &str, player_id: &str) {
        let waiting = async {
            loop {
                let called = self.called.notified();
                if self
                    .calls
                    .lock()
                    .expect("calls")
                    .iter()
                    .any(|(c, p, _)| *c == call && p == player_id)
                {
                    return;
                }
                called.await;
            }
        };
        tokio::time::timeout(PATIENCE, waiting)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {call} to {player_id}"));
    }

    fn game_overs(&self, match_id: &str) -> Vec<String> {
        let calls = self.calls.lock().expect("calls");
        calls
            .iter()
            .filter(|(call, _, id)| *call == "game_over" && id == match_id)
            .map(|(_, player, _)| player.clone())
            .collect()
    }
}

#[tonic::async_trait]
impl PlayerService for FakePlayerHost {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        let request = request.into_inner();
        self.record("invite", &request.player_id, request.context.as_ref());
        Ok(Response::new(InviteToMatchResponse {
            accept: true,
            arrival_timestamp: Some(SystemTime::now().into()),
            reason: String::new(),
        }))
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        let request = request.into_inner();
        self.record("move", &request.player_id, request.context.as_ref());
        if request.player_id == SLOW {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(self.move_delay).await;
        Ok(Response::new(RequestMoveResponse {
            move_payload: Some(object([("parity_choice", string("even"))])),
        }))
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        let request = request.into_inner();
        self.record("game_over", &request.player_id, request.context.as_ref());
        Ok(Response::new(NotifyGameOverResponse {}))
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        let request = request.into_inner();
        self.record("game_error", &request.player_id, request.context.as_ref());
        Ok(Response::new(NotifyGameErrorResponse {}))
    }

    async fn notify_league_event(
        &self,
        _: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        Ok(Response::new(NotifyLeagueEventResponse {}))
    }

    async fn notify_league_events(
        &self,
        request: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        let recipients = request
            .into_inner()
            .deliveries
            .iter()
            .map(|d| d.player_ids.len())
            .sum();
        let accepted = vec![true; recipients];
        Ok(Response::new(NotifyLeagueEventsResponse { accepted }))
    }

    type MatchCallsStream = MatchCallAnswers;

    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, Status> {
        answer_match_calls(Arc::new(self.clone()), request.into_inner())
    }
}

// ---------------------------------------------------------------------------------------------------
// Setup

async fn listener() -> (TcpIncoming, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    (TcpIncoming::from(listener), format!("http://{address}"))
}

async fn serve_manager(manager: &FakeManager) -> String {
    let (incoming, url) = listener().await;
    let service = ManagerServiceServer::new(manager.clone());
    tokio::spawn(
        Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming),
    );
    url
}

async fn serve_players(host: &FakePlayerHost) -> String {
    let (incoming, url) = listener().await;
    let service = PlayerServiceServer::new(host.clone());
    tokio::spawn(
        Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming),
    );
    url
}

fn match_id(assignment: &MatchAssignment) -> String {
    assignment
        .r#match
        .as_ref()
        .map(|m| m.match_id.clone())
        .unwrap_or_default()
}

fn assignment(match_id: &str, players: [&str; 2], endpoint: &str) -> MatchAssignment {
    let seconds = |s: u64| prost_types::Duration::try_from(Duration::from_secs(s)).ok();
    let player = |id: &str| AssignedPlayer {
        player_id: id.into(),
        display_name: id.into(),
        service_endpoint: endpoint.into(),
        record: Some(PlayerRecord::default()),
    };
    MatchAssignment {
        r#match: Some(ScheduledMatch {
            league_id: "l1".into(),
            round_id: 1,
            match_id: match_id.into(),
            game_type: "even_odd".into(),
            player_a_id: players[0].into(),
            player_b_id: players[1].into(),
            status: MatchStatus::Running.into(),
            referee_id: "REF01".into(),
            ..ScheduledMatch::default()
        }),
        lease_id: format!("lease-{match_id}"),
        lease_expires_at: lease_expiry(),
        timing: Some(MatchTiming {
            join_timeout: seconds(2),
            move_timeout: seconds(5),
            game_over_timeout: seconds(1),
            max_attempts: 3,
            retry_delay: prost_types::Duration::try_from(Duration::from_millis(100)).ok(),
            lease_duration: prost_types::Duration::try_from(LEASE).ok(),
        }),
        player_a: Some(player(players[0])),
        player_b: Some(player(players[1])),
    }
}

struct Running {
    worker: JoinHandle<Result<(), league_runtime::Revoked>>,
    shutdown: Shutdown,
    api: RefereeApi,
    channels: league_referee::PlayerChannels,
}

impl Running {
    /// Triggers shutdown and waits (bounded) for the worker to return.
    async fn stop(self, within: Duration) -> (RefereeApi, league_referee::PlayerChannels) {
        self.shutdown.trigger();
        tokio::time::timeout(within, self.worker)
            .await
            .expect("the worker stops in time")
            .expect("the worker does not panic")
            .expect("the worker was not revoked");
        (self.api, self.channels)
    }
}

async fn start_worker(manager: &FakeManager, config: WorkerConfig) -> Running {
    let url = serve_manager(manager).await;
    let channel = league_runtime::grpc::channel(&url).expect("url");
    let worker = Worker::new(channel, Credentials::new("REF01", "secret"), config);
    let api = RefereeApi::new("REF01", worker.running_matches());
    let channels = worker.player_channels();
    let shutdown = Shutdown::new();
    let worker = tokio::spawn(worker.run(shutdown.signal()));
    Running {
        worker,
        shutdown,
        api,
        channels,
    }
}

fn config(capacity: u32) -> WorkerConfig {
    WorkerConfig {
        claim_wait: Duration::from_millis(200),
        report_backoff: Duration::from_millis(20),
        report_max_backoff: Duration::from_millis(50),
        ..WorkerConfig::new(capacity, ["even_odd"])
    }
}

// ---------------------------------------------------------------------------------------------------
// Tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_matches_with_capacity_two_are_each_reported_exactly_once() {
    // Moves take 250 ms, so every match outlives a renewal interval (100 ms).
    let host = FakePlayerHost::answering_after(Duration::from_millis(250));
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        assignment("R1M1", ["P01", "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
        assignment("R2M1", ["P01", "P03"], &endpoint),
    ]);
    let running = start_worker(&manager, config(2)).await;

    manager
        .wait_until("all three are reported", |state| state.reports.len() >= 3)
        .await;
    let (api, channels) = running.stop(PATIENCE).await;

    assert_eq!(manager.reported(), ["R1M1", "R1M2", "R2M1"], "each exactly once");
    assert_eq!(channels.len(), 1, "one channel to the one player host");
    let listed = api
        .list_running_matches(Request::new(ListRunningMatchesRequest {}))
        .await
        .expect("list")
        .into_inner();
    assert_eq!(listed.referee_id, "REF01");
    assert!(listed.matches.is_empty(), "nothing left running");

    let state = manager.state();
    assert_eq!(
        state.report_requests.iter().sum::<usize>(),
        3,
        "every report sent in a ReportMatchResults request: {:?}",
        state.report_requests
    );
    assert_eq!(state.most_held, 2, "never more than the capacity at once");
    assert!(
        state.claims.iter().all(|&max| (1..=2).contains(&max)),
        "{:?}",
        state.claims
    );
    assert_eq!(state.claims[0], 2, "the first claim asks for every slot");
    for report in &state.reports {
        assert_eq!(report.league_id, "l1");
        assert_eq!(report.lease_id, format!("lease-{}", report.match_id));
        let result = report.result.as_ref().expect("result");
        assert_eq!(result.match_id, report.match_id);
        assert_eq!(result.status(), ResultStatus::Draw, "both always choose even");
        let transcript = report.transcript.as_ref().expect("transcript");
        assert_eq!(transcript.match_id, report.match_id);
        assert!(transcript.entries.len() >= 15, "{}", transcript.entries.len());
        assert_eq!(host.game_overs(&report.match_id).len(), 2);
    }
    assert!(!state.renewals.is_empty(), "leases were renewed");
    for renewal in &state.renewals {
        assert!(!renewal.is_empty() && renewal.len() <= 2, "{renewal:?}");
        for lease in renewal {
            assert_eq!(
                (lease.league_id.as_str(), lease.lease_id.clone()),
                ("l1", format!("lease-{}", lease.match_id))
            );
        }
    }
    assert_eq!(
        state.callers,
        HashSet::from([("REF01".to_owned(), "Bearer secret".to_owned())]),
        "every manager call carries the referee's credentials"
    );
}

/// A manager that predates `ReportMatchResults` answers it UNIMPLEMENTED: it gets each report as its own
/// `ReportMatchResult` instead, and no result is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_without_report_batches_gets_each_report_on_its_own() {
    let host = FakePlayerHost::answering_after(Duration::from_millis(10));
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        assignment("R1M1", ["P01", "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
        assignment("R2M1", ["P01", "P03"], &endpoint),
    ]);
    manager.state().no_report_batches = true;
    let running = start_worker(&manager, config(2)).await;

    manager
        .wait_until("all three are reported", |state| state.reports.len() >= 3)
        .await;
    running.stop(PATIENCE).await;

    assert_eq!(manager.reported(), ["R1M1", "R1M2", "R2M1"], "each exactly once");
    assert!(manager.state().report_requests.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_whose_lease_is_lost_is_stopped_and_never_reported() {
    let host = FakePlayerHost::answering_after(Duration::from_millis(50));
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        // SLOW never chooses: left alone, this match would take 3 × 5 s of move timeouts.
        assignment("R1M1", [SLOW, "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
    ]);
    let running = start_worker(&manager, config(2)).await;

    // R1M1 runs, waiting for SLOW's choice; RefereeService shows it.
    host.wait_for_call("move", SLOW).await;
    let shown = running
        .api
        .get_match_state(Request::new(GetMatchStateRequest {
            match_id: "R1M1".into(),
            league_id: "l1".into(),
        }))
        .await
        .expect("R1M1 is running")
        .into_inner();
    let running_match = shown.r#match.expect("running match");
    assert_eq!(
        running_match.state(),
        league_proto::v2::MatchState::CollectingChoices
    );
    assert!(running_match.started_at.is_some() && running_match.lease_expires_at.is_some());
    let transcript = shown.transcript.expect("transcript so far");
    assert!(transcript.entries.iter().any(|entry| matches!(
        &entry.entry,
        Some(transcript_entry::Entry::Message(m)) if m.player_id == SLOW && m.message_type == "CHOOSE_PARITY_CALL"
    )));

    // The lease is lost: the next renewal says so.
    manager.state().losing.insert("R1M1".into());
    manager
        .wait_until("R1M1's lease is answered lost", |state| {
            state.lost.contains("R1M1")
        })
        .await;
    manager
        .wait_until("R1M2 is reported", |state| !state.reports.is_empty())
        .await;
    // R1M1 was aborted: the worker does not wait 15 s for it.
    let (api, _) = running.stop(Duration::from_secs(3)).await;

    assert_eq!(manager.reported(), ["R1M2"]);
    assert!(
        !manager.state().report_attempts.contains_key("R1M1"),
        "never reported"
    );
    assert!(
        host.game_overs("R1M1").is_empty(),
        "an aborted match sends nothing more"
    );
    let status = api
        .get_match_state(Request::new(GetMatchStateRequest {
            match_id: "R1M1".into(),
            league_id: "l1".into(),
        }))
        .await
        .expect_err("no longer running");
    assert_eq!(status.code(), tonic::Code::NotFound);
    assert_eq!(error_code::code_of(&status), Some(ErrorCode::MatchNotFound));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_are_kept_through_an_outage_and_dropped_without_the_lease() {
    let host = FakePlayerHost::default();
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        assignment("R1M1", ["P01", "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
    ]);
    {
        let mut state = manager.state();
        // More failures than any fixed number of attempts a referee used to give a report.
        let outage = (0..12).map(|_| Status::unavailable("manager restarting"));
        state.report_failures.insert("R1M1".into(), outage.collect());
        state.report_failures.insert(
            "R1M2".into(),
            VecDeque::from([error_code::status(
                ErrorCode::LeaseNotHeld,
                "another referee holds it",
            )]),
        );
    }
    let running = start_worker(&manager, config(2)).await;

    manager
        .wait_until("R1M1 is reported and R1M2 refused", |state| {
            !state.reports.is_empty() && state.report_attempts.contains_key("R1M2")
        })
        .await;
    running.stop(PATIENCE).await;

    assert_eq!(manager.reported(), ["R1M1"]);
    let attempts = manager.state().report_attempts.clone();
    assert_eq!(attempts["R1M1"], 13, "twelve transient failures, then recorded");
    assert_eq!(attempts["R1M2"], 1, "a lost lease is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_claiming_and_lets_the_running_match_finish() {
    let host = FakePlayerHost::answering_after(Duration::from_millis(300));
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        assignment("R1M1", ["P01", "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
    ]);
    let running = start_worker(&manager, config(1)).await;

    // Renewed, so the worker runs it (a claim answer still in flight at shutdown would be abandoned).
    manager
        .wait_until("R1M1 runs", |state| {
            state
                .renewals
                .iter()
                .flatten()
                .any(|lease| lease.match_id == "R1M1")
        })
        .await;
    let (api, _) = running.stop(PATIENCE).await;

    assert_eq!(
        manager.reported(),
        ["R1M1"],
        "the running match finished and was reported"
    );
    let listed = api
        .list_running_matches(Request::new(ListRunningMatchesRequest {}))
        .await;
    assert!(listed.expect("list").into_inner().matches.is_empty());
    let state = manager.state();
    assert_eq!(state.claims, [1], "no claim after the shutdown");
    assert_eq!(state.queue.len(), 1, "R1M2 left for another referee");
    assert_eq!(host.game_overs("R1M1").len(), 2);
    let report = &state.reports[0];
    let transcript = report.transcript.as_ref().expect("transcript");
    let last_state = transcript
        .entries
        .iter()
        .rev()
        .find_map(|entry| match &entry.entry {
            Some(transcript_entry::Entry::StateTransition(t)) => Some(t.to()),
            _ => None,
        });
    assert_eq!(
        last_state,
        Some(league_proto::v2::MatchState::from(MatchState::Finished))
    );
}

/// The worker's `GrpcPlayers` really reach a player host: one match straight through the runner.
#[tokio::test]
async fn grpc_players_reach_the_player_host() {
    let host = FakePlayerHost::default();
    let endpoint = serve_players(&host).await;
    let assignment = league_domain::Assignment::try_from(assignment("R9M9", ["P01", "P02"], &endpoint))
        .expect("a complete assignment");
    let channels = league_referee::PlayerChannels::new();
    let players = league_referee::GrpcPlayers::for_assignment(&channels, &assignment);
    let report = league_referee::run_match(&assignment, &players, &mut league_referee::OsChance, "REF01")
        .await
        .expect("the player host is up");
    assert_eq!(report.final_state, MatchState::Finished);
    assert_eq!(report.result.status(), ResultStatus::Draw);
    assert_eq!(host.game_overs("R9M9").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_releases_the_matches_still_running_after_the_grace() {
    let host = FakePlayerHost::answering_after(Duration::from_millis(50));
    let endpoint = serve_players(&host).await;
    let manager = FakeManager::with_queue([
        // SLOW never chooses: R1M1 would run for 3 × 5 s of move timeouts, far past the grace.
        assignment("R1M1", [SLOW, "P02"], &endpoint),
        assignment("R1M2", ["P03", "P04"], &endpoint),
    ]);
    let running = start_worker(
        &manager,
        WorkerConfig {
            shutdown_grace: Duration::from_millis(200),
            ..config(2)
        },
    )
    .await;

    host.wait_for_call("move", SLOW).await;
    manager
        .wait_until("R1M2 is reported", |state| !state.reports.is_empty())
        .await;
    // Well under R1M1's move timeouts: the worker does not wait for it past the grace.
    let (api, _) = running.stop(Duration::from_secs(3)).await;

    assert_eq!(manager.reported(), ["R1M2"]);
    {
        let state = manager.state();
        assert_eq!(
            state.releases,
            [vec![LeaseRef {
                match_id: "R1M1".into(),
                lease_id: "lease-R1M1".into(),
                league_id: "l1".into(),
            }]],
            "the unfinished match is given back, once"
        );
        assert!(state.held.is_empty(), "nothing stays leased: {:?}", state.held);
        assert!(!state.report_attempts.contains_key("R1M1"), "never reported");
    }
    assert!(
        host.game_overs("R1M1").is_empty(),
        "a released match sends nothing more"
    );
    let listed = api
        .list_running_matches(Request::new(ListRunningMatchesRequest {}))
        .await;
    assert!(listed.expect("list").into_inner().matches.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_answered_after_shutdown_is_released_at_once() {
    let host = FakePlayerHost::default();
    let endpoint = serve_players(&host).await;
    let manager = FakeManager {
        // The claim's answer comes after the shutdown has begun.
        claim_delay: Duration::from_millis(300),
        ..FakeManager::with_queue([assignment("R1M1", ["P01", "P02"], &endpoint)])
    };
    let running = start_worker(&manager, config(1)).await;

    manager
        .wait_until("a claim is in flight", |state| !state.claims.is_empty())
        .await;
    running.stop(PATIENCE).await;

    let state = manager.state();
    assert_eq!(state.claims, [1], "no claim after the shutdown");
    let released = state.released();
    assert_eq!(released, ["R1M1"], "what the claim handed out went straight back");
    assert!(state.held.is_empty() && state.reports.is_empty());
    drop(state);
    assert!(
        host.calls.lock().expect("calls").is_empty(),
        "the released match was never started"
    );
}

/// The players' service is down for longer than the match can wait: the match ends without a result and
/// goes straight back to the queue; nobody is reported, so nobody is charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_whose_players_stay_unreachable_through_an_outage_is_given_back_not_charged() {
    // Nothing listens on port 1: every call is refused, as by a player host or gateway that is down.
    let manager = FakeManager::with_queue([assignment("R1M1", ["P01", "P02"], "http://127.0.0.1:1")]);
    let running = start_worker(&manager, config(1)).await;

    manager
        .wait_until("the interrupted match is released", |state| {
            !state.releases.is_empty()
        })
        .await;
    running.stop(PATIENCE).await;

    let state = manager.state();
    let released = state.released();
    assert_eq!(released, ["R1M1"]);
    assert!(state.reports.is_empty(), "no result, so nobody charged");
}

/// The operator revoked the referee: it stops at its first refused claim instead of claiming (and
/// warning) again every claim wait, and ends in `Revoked`, which makes its process exit with the status
/// its supervisor does not start again (ADR 0082).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_referee_stops_at_its_next_claim() {
    let manager = FakeManager::default();
    manager.state().revoked = true;
    let running = start_worker(&manager, config(1)).await;
    let ended = tokio::time::timeout(PATIENCE, running.worker)
        .await
        .expect("the worker stops by itself")
        .expect("the worker does not panic");
    assert_eq!(
        ended,
        Err(league_runtime::Revoked {
            agent_id: "REF01".to_owned()
        })
    );
    assert_eq!(manager.state().claims, [1], "one claim, not one every claim wait");
}
