//! One exchange of match calls answered through a service's unary handlers: each answer as soon as it
//! is ready, the calls dropped with the answers' stream, an oversized batch refused, a failure's status
//! rebuilt whole, and each call's span the child of the span it was made in (over a real gRPC hop).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use league_proto::v2::player_service_client::PlayerServiceClient;
use league_proto::v2::player_service_server::{PlayerService, PlayerServiceServer};
use league_proto::v2::*;
use opentelemetry::trace::{SpanKind, TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData};
use tonic::{Request, Response};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

use super::*;
use crate::grpc::server_calls::tests::Collected;
use crate::{Shutdown, grpc};

/// How long the player `SLOW` takes over anything.
const SLOW_FOR: Duration = Duration::from_secs(10);
const SLOW: &str = "P_SLOW";
/// Never answers; says when its call is dropped.
const SILENT: &str = "P_SILENT";
/// Not hosted: E005.
const UNKNOWN: &str = "P_UNKNOWN";

/// A player host of fakes: everyone answers at once but the three above.
#[derive(Debug, Clone, Default)]
struct Host {
    /// Calls its handlers took.
    taken: Arc<AtomicUsize>,
    /// Calls of `SILENT` dropped before they answered.
    dropped: Arc<AtomicUsize>,
    dropped_signal: Arc<tokio::sync::Notify>,
}

/// Counts a call of `SILENT` as dropped when it is.
struct DropGuard(Host);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
        self.0.dropped_signal.notify_one();
    }
}

impl Host {
    async fn behave(&self, player_id: &str, match_id: &str) -> Result<(), tonic::Status> {
        self.taken.fetch_add(1, Ordering::SeqCst);
        crate::grpc::record_call_fields("league_x", match_id, "", player_id);
        match player_id {
            SLOW => tokio::time::sleep(SLOW_FOR).await,
            SILENT => {
                let _guard = DropGuard(self.clone());
                std::future::pending::<()>().await;
            }
            UNKNOWN => {
                return Err(error_code::status(
                    ErrorCode::PlayerNotRegistered,
                    format!("player {player_id:?} is not hosted here"),
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

fn match_of(context: Option<&MatchContext>) -> &str {
    context.map_or("", |context| context.match_id.as_str())
}

#[tonic::async_trait]
impl PlayerService for Host {
    async fn invite_to_match(
        &self,
        request: Request<InviteToMatchRequest>,
    ) -> Result<Response<InviteToMatchResponse>, tonic::Status> {
        let request = request.into_inner();
        self.behave(&request.player_id, match_of(request.context.as_ref()))
            .await?;
        Ok(Response::new(InviteToMatchResponse {
            accept: true,
            ..InviteToMatchResponse::default()
        }))
    }

    async fn request_move(
        &self,
        request: Request<RequestMoveRequest>,
    ) -> Result<Response<RequestMoveResponse>, tonic::Status> {
        let request = request.into_inner();
        self.behave(&request.player_id, match_of(request.context.as_ref()))
            .await?;
        Ok(Response::new(RequestMoveResponse::default()))
    }

    async fn notify_game_over(
        &self,
        request: Request<NotifyGameOverRequest>,
    ) -> Result<Response<NotifyGameOverResponse>, tonic::Status> {
        let request = request.into_inner();
        self.behave(&request.player_id, match_of(request.context.as_ref()))
            .await?;
        Ok(Response::new(NotifyGameOverResponse {}))
    }

    async fn notify_game_error(
        &self,
        request: Request<NotifyGameErrorRequest>,
    ) -> Result<Response<NotifyGameErrorResponse>, tonic::Status> {
        let request = request.into_inner();
        self.behave(&request.player_id, match_of(request.context.as_ref()))
            .await?;
        Ok(Response::new(NotifyGameErrorResponse {}))
    }

    async fn notify_league_event(
        &self,
        _: Request<NotifyLeagueEventRequest>,
    ) -> Result<Response<NotifyLeagueEventResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("notify_league_event"))
    }

    async fn notify_league_events(
        &self,
        _: Request<NotifyLeagueEventsRequest>,
    ) -> Result<Response<NotifyLeagueEventsResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("notify_league_events"))
    }

    type MatchCallsStream = MatchCallAnswers;

    async fn match_calls(
        &self,
        request: Request<MatchCallsRequest>,
    ) -> Result<Response<MatchCallAnswers>, tonic::Status> {
        answer_match_calls(Arc::new(self.clone()), request.into_inner())
    }
}

fn context(match_id: &str) -> Option<MatchContext> {
    Some(MatchContext {
        match_id: match_id.into(),
        ..MatchContext::default()
    })
}

fn invite(player_id: &str, match_id: &str) -> Call {
    Call::InviteToMatch(InviteToMatchRequest {
        player_id: player_id.into(),
        context: context(match_id),
        ..InviteToMatchRequest::default()
    })
}

fn move_request(player_id: &str) -> Call {
    Call::RequestMove(RequestMoveRequest {
        player_id: player_id.into(),
        ..RequestMoveRequest::default()
    })
}

fn game_over(player_id: &str) -> Call {
    Call::NotifyGameOver(NotifyGameOverRequest {
        player_id: player_id.into(),
        ..NotifyGameOverRequest::default()
    })
}

fn request(calls: impl IntoIterator<Item = Call>) -> MatchCallsRequest {
    MatchCallsRequest {
        calls: calls.into_iter().map(match_call).collect(),
    }
}

#[tokio::test(start_paused = true)]
async fn each_answer_comes_as_soon_as_it_is_ready_and_a_slow_call_holds_back_nobody() {
    let host = Host::default();
    let mut answers = answer_match_calls(
        Arc::new(host.clone()),
        request([
            invite(SLOW, "R1M1"),
            move_request("P02"),
            game_over("P03"),
            invite(UNKNOWN, "R1M2"),
        ]),
    )
    .expect("taken")
    .into_inner();
    let started = tokio::time::Instant::now();
    let mut arrivals = Vec::new();
    while let Some(answer) = answers.next().await {
        let answer = answer.expect("an answer");
        arrivals.push((answer.index, started.elapsed(), answer.answer.expect("answered")));
    }
    let quick: Vec<_> = arrivals
        .iter()
        .filter(|(_, at, _)| at.is_zero())
        .map(|(index, _, _)| *index)
        .collect();
    assert_eq!(quick.len(), 3, "{arrivals:?}");
    assert!(!quick.contains(&0), "the slow invitation is not among them");
    let (index, at, answer) = arrivals.last().expect("four answers");
    assert_eq!((*index, *at), (0, SLOW_FOR));
    assert!(matches!(answer, Answer::InviteToMatch(invited) if invited.accept));
    let refused = arrivals
        .iter()
        .find_map(|(index, _, answer)| match answer {
            Answer::Failure(failure) if *index == 3 => Some(status_of(failure.clone())),
            _ => None,
        })
        .expect("the unknown player's failure");
    assert_eq!(refused.code(), Code::NotFound);
    assert_eq!(
        error_code::code_of(&refused),
        Some(ErrorCode::PlayerNotRegistered)
    );
    assert_eq!(host.taken.load(Ordering::SeqCst), 4);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_answers_drops_the_calls_still_running() {
    let host = Host::default();
    let mut answers = answer_match_calls(
        Arc::new(host.clone()),
        request([invite(SILENT, "R1M1"), invite("P02", "R1M1")]),
    )
    .expect("taken")
    .into_inner();
    let first = answers.next().await.expect("one answer").expect("answered");
    assert_eq!(first.index, 1);
    assert_eq!(host.dropped.load(Ordering::SeqCst), 0, "still waiting");
    drop(answers);
    assert_eq!(
        host.dropped.load(Ordering::SeqCst),
        1,
        "the silent call went with the stream"
    );
}

#[tokio::test]
async fn more_calls_than_the_limit_are_refused_and_none_is_taken() {
    let host = Host::default();
    let calls = (0..=MAX_MATCH_CALLS).map(|_| game_over("P01"));
    let refused = answer_match_calls(Arc::new(host.clone()), request(calls))
        .map(|_| ())
        .expect_err("too many calls");
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().contains("1024"), "{}", refused.message());
    assert_eq!(host.taken.load(Ordering::SeqCst), 0);
    // The limit itself is taken.
    let calls = (0..MAX_MATCH_CALLS).map(|_| game_over("P01"));
    let answers = answer_match_calls(Arc::new(host.clone()), request(calls))
        .expect("taken")
        .into_inner();
    assert_eq!(answers.count().await, MAX_MATCH_CALLS);
}

#[tokio::test]
async fn a_call_without_a_request_fails_alone() {
    let host = Host::default();
    let mut calls = request([game_over("P01")]);
    calls.calls.push(MatchCall::default());
    let answers: Vec<_> = answer_match_calls(Arc::new(host), calls)
        .expect("taken")
        .into_inner()
        .collect()
        .await;
    let failure = answers
        .into_iter()
        .filter_map(Result::ok)
        .find(|answer| answer.index == 1)
        .and_then(|answer| answer.answer);
    let Some(Answer::Failure(failure)) = failure else {
        panic!("a failure: {failure:?}");
    };
    assert_eq!(
        error_code::code_of(&status_of(failure)),
        Some(ErrorCode::MissingRequiredField)
    );
}

#[test]
fn a_failure_rebuilds_the_status_its_unary_call_had() {
    for status in [
        error_code::status(ErrorCode::Timeout, "agent did not answer"),
        error_code::status(ErrorCode::PlayerNotRegistered, "no P09 here"),
        error_code::service_outage("the gateway could not look up P03"),
        tonic::Status::unavailable("tcp connect error"),
        tonic::Status::unimplemented("no such method"),
    ] {
        let rebuilt = status_of(failure_of(&status));
        assert_eq!(rebuilt.code(), status.code(), "{status:?}");
        assert_eq!(rebuilt.message(), status.message(), "{status:?}");
        assert_eq!(error_code::code_of(&rebuilt), error_code::code_of(&status));
        assert_eq!(
            error_code::is_service_outage(&rebuilt),
            error_code::is_service_outage(&status)
        );
    }
    let ok = status_of(CallFailure::default());
    assert_eq!(ok.code(), Code::Unknown, "a failure is never OK");
}

/// Each call of one exchange, made in a span of its own, is answered under a server span that is that
/// span's child, named and measured as its unary call's; the exchange itself is no span.
#[test]
fn each_calls_span_is_the_child_of_the_span_it_was_made_in() {
    crate::alone::in_a_process_of_its_own(
        "grpc::match_calls::tests::each_calls_span_is_the_child_of_the_span_it_was_made_in_alone",
    );
}

#[tokio::test]
#[ignore = "sets a tracing subscriber for its thread: run alone by each_calls_span_is_the_child_of_the_span_it_was_made_in"]
async fn each_calls_span_is_the_child_of_the_span_it_was_made_in_alone() {
    let collected = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(collected.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

    let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await.expect("bind");
    let shutdown = Shutdown::new();
    let routes = tonic::service::Routes::new(PlayerServiceServer::new(Host::default()));
    let server = tokio::spawn(grpc::serve(listener, routes, shutdown.signal()));
    let mut client = PlayerServiceClient::new(grpc::channel(&grpc::local_url(addr)).expect("channel"));

    let spans = [tracing::info_span!("match_a"), tracing::info_span!("match_b")];
    let calls = [("R1M1", UNKNOWN), ("R1M2", "P02")]
        .iter()
        .zip(&spans)
        .map(|((match_id, player_id), span)| span.in_scope(|| match_call(invite(player_id, match_id))));
    let answers: Vec<_> = client
        .match_calls(MatchCallsRequest {
            calls: calls.collect(),
        })
        .instrument(tracing::info_span!("batch"))
        .await
        .expect("an exchange")
        .into_inner()
        .collect()
        .await;
    assert_eq!(answers.len(), 2, "{answers:?}");
    let parents = spans
        .each_ref()
        .map(|span| span.context().span().span_context().clone());
    drop(spans);
    shutdown.trigger();
    server.await.expect("server task").expect("server");

    let exported = collected.0.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert!(
        !exported.iter().any(|span| span.name.ends_with("/MatchCalls")),
        "the exchange is not traced: {exported:#?}"
    );
    let calls: Vec<&SpanData> = exported
        .iter()
        .filter(|span| span.name == "league.v2.PlayerService/InviteToMatch")
        .collect();
    assert_eq!(calls.len(), 2, "{exported:#?}");
    let attribute = |span: &SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.as_str().into_owned())
    };
    for (match_id, parent) in ["R1M1", "R1M2"].into_iter().zip(&parents) {
        let call = calls
            .iter()
            .find(|span| attribute(span, "match_id").as_deref() == Some(match_id))
            .unwrap_or_else(|| panic!("{match_id}'s call: {calls:#?}"));
        assert_eq!(call.span_kind, SpanKind::Server);
        assert_eq!(call.span_context.trace_id(), parent.trace_id(), "{match_id}");
        assert_eq!(call.parent_span_id, parent.span_id(), "{match_id}");
        assert!(call.parent_span_is_remote);
        let failed = matches!(call.status, opentelemetry::trace::Status::Error { .. });
        assert_eq!(
            failed,
            match_id == "R1M1",
            "the unknown player's call failed: {call:#?}"
        );
    }
}
