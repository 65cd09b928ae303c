//! The referee's calls to one player endpoint, over real gRPC on 127.0.0.1 against a fake host that
//! counts its exchanges: calls made at the same moment go as one exchange, a slow call holds back no
//! quick one, a batch nobody waits for any more is cancelled on the host, a failed exchange fails each
//! call with the status a unary call gets, and a call's failure reaches the referee whole.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::join_all;
use league_proto::v2::match_call::Request as Call;
use league_proto::v2::match_calls_response::Answer;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::*;
use league_proto::{ErrorCode, error_code};
use league_referee::PlayerChannels;
use league_runtime::grpc::{MatchCallAnswers, answer_match_calls};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

const PATIENCE: Duration = Duration::from_secs(10);
/// Answers once the test opens its gate.
const GATED: &str = "P_GATED";
/// Never answers; its calls count themselves dropped.
const SILENT: &str = "P_SILENT";
/// Not hosted: E005.
const UNKNOWN: &str = "P_UNKNOWN";
/// Its host cannot look it up: an outage of the league's own services.
const UNREACHABLE: &str = "P_UNREACHABLE";

#[derive(Debug, Clone, Default)]
struct Host {
    /// Calls per MatchCalls exchange, in order.
    exchanges: Arc<Mutex<Vec<usize>>>,
    gate: Arc<Notify>,
    /// Silent calls started, and dropped before they answered.
    silent_started: Arc<AtomicUsize>,
    silent_dropped: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

struct Dropped(Host);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.silent_dropped.fetch_add(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
    }
}

impl Host {
    async fn serve(&self) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(
            Server::builder()
                .add_service(PlayerServiceServer::new(self.clone()))
                .serve_with_incoming(TcpIncoming::from(listener)),
        );
        url
    }

    fn exchanges(&self) -> Vec<usize> {
        self.exchanges.lock().expect("exchanges").clone()
    }

    async fn behave(&self, player_id: &str) -> Result<(), Status> {
        match player_id {
            GATED => self.gate.notified().await,
            SILENT => {
                let _dropped = Dropped(self.clone());
                self.silent_started.fetch_add(1, Ordering::SeqCst);
                self.changed.notify_waiters();
                std::future::pending::<()>().await;
            }
            UNKNOWN => {
                return Err(error_code::status(
                    ErrorCode::PlayerNotRegistered,
                    format!("player {player_id:?} is not hosted here"),
                ));
            }
            UNREACHABLE => {
                return Err(error_code::service_outage(
                    "the gateway could not look up P_UNREACHABLE",
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// Waits until `count()` is `expected`.
    async fn until(&self, what: &str, expected: usize, count: impl Fn(&Host) -> usize) {
        let waiting = async {
            loop {
                let changed = self.changed.notified();
                if count(self) == expected {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(PATIENCE, waiting)
            .await
            .unwrap_or_else(|_| panic!("{what}: not {expected} within {PATIENCE:?}"));
    }
}

#[tonic::async_trait]
impl PlayerService for Host {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, Status> {
        self.behave(&request.get_ref().player_id).await?;
        Ok(Response::new(InviteToMatchResponse {
            accept: true,
            ..InviteToMatchResponse::default()
        }))
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, Status> {
        self.behave(&request.get_ref().player_id).await?;
        Ok(Response::new(RequestMoveResponse::default()))
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, Status> {
        self.behave(&request.get_ref().player_id).await?;
        Ok(Response::new(NotifyGameOverResponse {}))
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, Status> {
        self.behave(&request.get_ref().player_id).await?;
        Ok(Response::new(NotifyGameErrorResponse {}))
    }

    async fn notify_league_event(
        &self,
        _: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, Status> {
        Err(Status::unimplemented("notify_league_event"))
    }

    async fn notify_league_events(
        &self,
        _: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, Status> {
        Err(Status::unimplemented("notify_league_events"))
    }

    type MatchCallsStream = MatchCallAnswers;

    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, Status> {
        let request = request.into_inner();
        self.exchanges
            .lock()
            .expect("exchanges")
            .push(request.calls.len());
        answer_match_calls(Arc::new(self.clone()), request)
    }
}

fn invite(player_id: &str) -> Call {
    Call::InviteToMatch(InviteToMatchRequest {
        player_id: player_id.into(),
        ..InviteToMatchRequest::default()
    })
}

fn game_over(player_id: &str) -> Call {
    Call::NotifyGameOver(NotifyGameOverRequest {
        player_id: player_id.into(),
        ..NotifyGameOverRequest::default()
    })
}

#[tokio::test]
async fn calls_made_at_the_same_moment_go_as_one_exchange() {
    let host = Host::default();
    let url = host.serve().await;
    let calls = PlayerChannels::new().calls(&url).expect("an endpoint");
    // Made together: each is queued before the endpoint's task runs.
    let answers = join_all((0..40).map(|n| calls.call(game_over(&format!("P{n:02}"))))).await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(host.exchanges(), [40]);
    // Made one after the other: an exchange each.
    for player_id in ["P01", "P02"] {
        calls.call(invite(player_id)).await.expect("invited");
    }
    assert_eq!(host.exchanges(), [40, 1, 1]);
}

#[tokio::test]
async fn a_slow_call_holds_back_no_quick_one_in_its_exchange() {
    let host = Host::default();
    let url = host.serve().await;
    let calls = PlayerChannels::new().calls(&url).expect("an endpoint");
    let slow = calls.call(invite(GATED));
    let quick = calls.call(invite("P01"));
    let mut slow = std::pin::pin!(slow);
    // The quick answer arrives while the slow call is still waiting for the gate.
    let quick_answer = tokio::select! {
        answer = quick => answer,
        answer = &mut slow => panic!("the slow call answered first: {answer:?}"),
    };
    assert!(matches!(quick_answer, Ok(Answer::InviteToMatch(invited)) if invited.accept));
    assert_eq!(host.exchanges(), [2], "both went in one exchange");
    host.gate.notify_one();
    assert!(slow.await.is_ok());
}

#[tokio::test]
async fn an_exchange_nobody_waits_for_is_cancelled_on_the_host() {
    let host = Host::default();
    let url = host.serve().await;
    let calls = PlayerChannels::new().calls(&url).expect("an endpoint");
    let (first_gone, drop_first) = tokio::sync::oneshot::channel::<()>();
    let (second_gone, drop_second) = tokio::sync::oneshot::channel::<()>();
    // Each caller stops waiting when told to, as the runner does at its timeout.
    let first = {
        let calls = calls.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = calls.call(invite(SILENT)) => {}
                _ = drop_first => {}
            }
        })
    };
    let second = {
        let calls = calls.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = calls.call(invite(SILENT)) => {}
                _ = drop_second => {}
            }
        })
    };
    host.until("silent calls started", 2, |host| {
        host.silent_started.load(Ordering::SeqCst)
    })
    .await;
    assert_eq!(host.exchanges(), [2]);
    drop(first_gone);
    first.await.expect("first caller");
    // One caller still waits: the exchange, and both calls in it, go on.
    assert_eq!(host.silent_dropped.load(Ordering::SeqCst), 0);
    drop(second_gone);
    second.await.expect("second caller");
    host.until("silent calls dropped", 2, |host| {
        host.silent_dropped.load(Ordering::SeqCst)
    })
    .await;
}

#[tokio::test]
async fn a_failed_exchange_fails_each_call_as_a_unary_call_fails() {
    // A port nobody listens on any more: the connection is refused.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    drop(listener);
    let unary = PlayerServiceClient::new(league_runtime::grpc::channel(&url).expect("a channel"))
        .invite_to_match(InviteToMatchRequest::default())
        .await
        .expect_err("refused");
    let calls = PlayerChannels::new().calls(&url).expect("an endpoint");
    let failed = join_all([calls.call(invite("P01")), calls.call(game_over("P02"))]).await;
    for status in failed {
        let status = status.expect_err("refused");
        assert_eq!(status.code(), unary.code(), "{status:?} / unary {unary:?}");
        assert_eq!(error_code::code_of(&status), error_code::code_of(&unary));
        assert_eq!(status.code(), tonic::Code::Unavailable);
    }
}

#[tokio::test]
async fn a_calls_failure_reaches_the_referee_whole() {
    let host = Host::default();
    let url = host.serve().await;
    let calls = PlayerChannels::new().calls(&url).expect("an endpoint");
    let [unknown, unreachable] = [UNKNOWN, UNREACHABLE].map(|player_id| calls.call(invite(player_id)));
    let (unknown, unreachable) = futures::join!(unknown, unreachable);
    let unknown = unknown.expect_err("not hosted");
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    assert_eq!(
        error_code::code_of(&unknown),
        Some(ErrorCode::PlayerNotRegistered)
    );
    assert_eq!(unknown.message(), "player \"P_UNKNOWN\" is not hosted here");
    let unreachable = unreachable.expect_err("an outage");
    assert_eq!(unreachable.code(), tonic::Code::Unavailable);
    assert!(error_code::is_service_outage(&unreachable));
    assert_eq!(error_code::code_of(&unreachable), None);
}
