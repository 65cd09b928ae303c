//! Registering bots against a fake manager served over real gRPC: what each bot sends, the order of the
//! results, the bound on requests in flight, and errors that name the bot.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use league_player::registration::PROTOCOL_VERSION;
use league_player::registration::resume_or_register_bots;
use league_player::{BotSpec, PlayerHost, register_bots};
use league_proto::v2::manager_service_client::ManagerServiceClient;
use league_proto::v2::manager_service_server::{ManagerService, ManagerServiceServer};
use league_proto::v2::*;
use league_proto::{ErrorCode, error_code};
use league_runtime::grpc::GrpcChannel;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// Answers RegisterPlayer with an id made from the display name; refuses names starting with "taken".
#[derive(Default)]
struct FakeManager {
    received: Mutex<Vec<RegisterPlayerRequest>>,
    /// The `league-agent-id` each registration carried (a resume), or `None`.
    resuming: Mutex<Vec<Option<String>>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

impl FakeManager {
    async fn register(
        &self,
        request: RegisterPlayerRequest,
    ) -> Result<Response<RegisterPlayerResponse>, Status> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        // Long enough for the next requests to arrive while this one is open.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let name = request
            .meta
            .as_ref()
            .map(|meta| meta.display_name.clone())
            .unwrap_or_default();
        self.received.lock().expect("lock").push(request.clone());
        if name.starts_with("taken") {
            return Err(error_code::status(
                ErrorCode::DuplicateRegistration,
                "contact endpoint in use",
            ));
        }
        Ok(Response::new(RegisterPlayerResponse {
            player_id: format!("P-{name}"),
            auth_token: format!("token-{name}"),
            league_id: if request.league_id.is_empty() {
                "open".into()
            } else {
                request.league_id
            },
        }))
    }
}

league_testkit::fake_service! {
    impl ManagerService for FakeManager {
        async fn register_player(
            &self,
            request: Request<RegisterPlayerRequest>,
        ) -> Result<Response<RegisterPlayerResponse>, Status> {
            let resuming = request
                .metadata()
                .get(league_runtime::credentials::AGENT_ID_KEY)
                .and_then(|id| id.to_str().ok())
                .map(str::to_owned);
            self.resuming.lock().expect("lock").push(resuming);
            self.register(request.into_inner()).await
        }
    }
    unimplemented {
        register_referee(RegisterRefereeRequest) -> RegisterRefereeResponse;
        create_league(CreateLeagueRequest) -> CreateLeagueResponse;
        start_league(StartLeagueRequest) -> StartLeagueResponse;
        claim_matches(ClaimMatchesRequest) -> ClaimMatchesResponse;
        renew_leases(RenewLeasesRequest) -> RenewLeasesResponse;
        report_match_result(ReportMatchResultRequest) -> ReportMatchResultResponse;
        report_match_results(ReportMatchResultsRequest) -> ReportMatchResultsResponse;
        get_standings(GetStandingsRequest) -> GetStandingsResponse;
        get_schedule(GetScheduleRequest) -> GetScheduleResponse;
        get_next_match(GetNextMatchRequest) -> GetNextMatchResponse;
        get_player_stats(GetPlayerStatsRequest) -> GetPlayerStatsResponse;
        get_match(GetMatchRequest) -> GetMatchResponse;
        get_league_status(GetLeagueStatusRequest) -> GetLeagueStatusResponse;
        get_standings_by_round(GetStandingsByRoundRequest) -> GetStandingsByRoundResponse;
        list_leagues(ListLeaguesRequest) -> ListLeaguesResponse;
        enroll_player(EnrollPlayerRequest) -> EnrollPlayerResponse;
        release_leases(ReleaseLeasesRequest) -> ReleaseLeasesResponse;
        pause_league(PauseLeagueRequest) -> PauseLeagueResponse;
        resume_league(ResumeLeagueRequest) -> ResumeLeagueResponse;
        cancel_league(CancelLeagueRequest) -> CancelLeagueResponse;
        withdraw_player(WithdrawPlayerRequest) -> WithdrawPlayerResponse;
    }
}

async fn serve() -> (Arc<FakeManager>, ManagerServiceClient<GrpcChannel>) {
    let manager = Arc::new(FakeManager::default());
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let address = listener.local_addr().expect("bound address");
    let server = tonic::transport::Server::builder()
        .add_service(ManagerServiceServer::from_arc(Arc::clone(&manager)))
        .serve_with_incoming(TcpIncoming::from(listener));
    tokio::spawn(server);
    let channel = league_runtime::grpc::channel(&format!("http://{address}")).expect("a channel");
    (manager, ManagerServiceClient::new(channel))
}

fn specs(names: &[String]) -> Vec<BotSpec> {
    let behaviours = ["random", "adaptive", "silent", "late:100"];
    names
        .iter()
        .zip(behaviours.iter().cycle())
        .map(|(name, behaviour)| BotSpec {
            display_name: name.clone(),
            behaviour: behaviour.parse().expect("behaviour name"),
        })
        .collect()
}

#[tokio::test]
async fn bots_register_concurrently_and_come_back_in_order() {
    let (manager, mut client) = serve().await;
    let names: Vec<String> = (1..=40).map(|n| format!("bot-{n:02}")).collect();
    let specs = specs(&names);
    let host = PlayerHost::new();
    let registered = register_bots(&mut client, &host, &specs, "http://players:50053", "L7")
        .await
        .expect("registered");
    assert_eq!(host.bots().len(), 40, "every registered bot is served at once");

    let ids: Vec<_> = registered.iter().map(|bot| bot.player_id.clone()).collect();
    let expected: Vec<_> = names.iter().map(|name| format!("P-{name}")).collect();
    assert_eq!(ids, expected, "in the order asked for");
    for (bot, spec) in registered.iter().zip(&specs) {
        assert_eq!(
            (&bot.display_name, bot.behaviour),
            (&spec.display_name, spec.behaviour)
        );
        assert_eq!(bot.credentials.agent_id, bot.player_id);
        assert_eq!(bot.league_id, "L7");
    }
    let most = manager.most_in_flight.load(Ordering::SeqCst);
    assert!(
        (2..=16).contains(&most),
        "concurrent but bounded: {most} in flight at most"
    );

    let received = manager.received.lock().expect("lock");
    let first = received
        .iter()
        .find(|r| r.meta.as_ref().is_some_and(|m| m.display_name == "bot-01"));
    let request = first.expect("bot-01 registered");
    assert_eq!(request.league_id, "L7");
    let meta = request.meta.clone().expect("meta");
    assert_eq!(meta.contact_endpoint, "http://players:50053/players/bot-01");
    assert_eq!(meta.service_endpoint, "http://players:50053");
    assert_eq!(meta.game_types, ["even_odd", "tic_tac_toe"]);
    assert_eq!(meta.protocol_version, PROTOCOL_VERSION);
    assert_eq!(meta.version, env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn a_refused_bot_is_named_and_the_others_still_finish() {
    let (manager, mut client) = serve().await;
    let names = ["alpha", "taken-1", "beta"].map(String::from);
    let error = register_bots(
        &mut client,
        &PlayerHost::new(),
        &specs(&names),
        "http://players:1",
        "",
    )
    .await
    .expect_err("refused");
    let message = format!("{error:#}");
    assert!(
        message.contains("\"taken-1\"") && message.contains("1 of 3"),
        "{message}"
    );
    assert_eq!(
        manager.received.lock().expect("lock").len(),
        3,
        "every registration ran to the end"
    );
}

#[tokio::test]
async fn bots_of_the_same_name_get_their_own_contact_endpoints() {
    let (manager, mut client) = serve().await;
    let names = ["same", "other", "same"].map(String::from);
    let registered = register_bots(
        &mut client,
        &PlayerHost::new(),
        &specs(&names),
        "http://players:1",
        "",
    )
    .await
    .expect("names need not be unique");
    assert_eq!(registered.len(), 3);
    let mut endpoints: Vec<String> = manager
        .received
        .lock()
        .expect("lock")
        .iter()
        .map(|request| request.meta.as_ref().expect("meta").contact_endpoint.clone())
        .collect();
    endpoints.sort();
    assert_eq!(
        endpoints,
        [
            "http://players:1/players/bot-01",
            "http://players:1/players/bot-02",
            "http://players:1/players/bot-03"
        ]
    );
}

#[tokio::test]
async fn bots_registered_before_a_failure_are_kept_and_resumed_by_the_next_run() {
    let dir = std::env::temp_dir().join(format!("league-player-state-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let store =
        std::sync::Arc::new(league_runtime::SavedIdentities::claim(&dir, "players").expect("claimed"));
    let (manager, mut client) = serve().await;
    let names = ["alpha", "taken-1", "beta"].map(String::from);
    let run = |client: &mut ManagerServiceClient<GrpcChannel>| {
        let mut client = client.clone();
        let (specs, store) = (specs(&names), store.clone());
        async move {
            resume_or_register_bots(
                &mut client,
                &PlayerHost::new(),
                &specs,
                "http://players:1",
                "",
                Some(&*store),
            )
            .await
        }
    };

    run(&mut client).await.expect_err("taken-1 is refused");
    let kept: Vec<Option<String>> = ["bot-01", "bot-02", "bot-03"]
        .iter()
        .map(|name| store.load(name).expect("read").map(|saved| saved.agent_id))
        .collect();
    assert_eq!(
        kept,
        [Some("P-alpha".to_owned()), None, Some("P-beta".to_owned())],
        "the bots that made it are kept although another failed"
    );

    // The next run (the host restarted) resumes the kept bots with their credentials.
    manager.resuming.lock().expect("lock").clear();
    run(&mut client).await.expect_err("taken-1 is still refused");
    let mut resuming = manager.resuming.lock().expect("lock").clone();
    resuming.sort();
    assert_eq!(
        resuming,
        [None, Some("P-alpha".to_owned()), Some("P-beta".to_owned())]
    );
    std::fs::remove_dir_all(&dir).ok();
}
