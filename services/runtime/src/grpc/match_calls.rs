//! `PlayerService.MatchCalls`, the part both ends share: a referee sends the match calls it has for one
//! player endpoint at the same moment as one exchange (ADR 0058), and every `PlayerService` answers it
//! the same way — each call through the service's own unary handler, all at once, each answer streamed
//! the moment it is ready ([`answer_match_calls`]). The manager serves a referee's batched reports
//! (`ReportMatchResults`, ADR 0097) with the same per-call span ([`batched_call`]).
//!
//! A call in an exchange is the unary call it replaces in every way that shows: it carries the trace
//! context of the span it was made in ([`match_call`]), and on the server it gets the span and the
//! latency measurement the unary call would have had (`league.v2.PlayerService/InviteToMatch`, child
//! of that context). A failed call comes back as a [`CallFailure`] that rebuilds the same status:
//! gRPC code, message, league.v2 error code and the outage mark ([`failure_of`], [`status_of`]).

use std::sync::{Arc, LazyLock};
use std::time::Instant;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use http::{HeaderMap, HeaderValue};
use league_proto::v2::match_call::Request as Call;
use league_proto::v2::match_calls_response::Answer;
use league_proto::v2::player_service_server::PlayerService;
use league_proto::v2::{CallFailure, MatchCall, MatchCallsRequest, MatchCallsResponse};
use league_proto::{ErrorCode, error_code};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use tonic::metadata::MetadataValue;
use tonic::{Code, Response, Status};
use tracing::Instrument;

use crate::metrics;

/// The exchange's own path, which [`super::server_calls`] does not trace.
pub(super) const METHOD: &str = "/league.v2.PlayerService/MatchCalls";

/// The most calls one exchange may carry: far more than a referee gathers (it sends at most 256), few
/// enough that one request stays well under gRPC's 4 MB message limit.
pub const MAX_MATCH_CALLS: usize = 1024;

/// What a `PlayerService` answers `MatchCalls` with: the answers, in the order they are ready.
pub type MatchCallAnswers = tonic::codegen::BoxStream<MatchCallsResponse>;

static CALLS_PER_EXCHANGE: LazyLock<Histogram> = LazyLock::new(|| {
    // 1 … 1,024: the limit above.
    let histogram = Histogram::new(exponential_buckets(1.0, 2.0, 11));
    metrics::register(
        "league_rpc_server_match_calls_per_exchange",
        "Calls carried by each MatchCalls exchange this server answered",
        histogram.clone(),
    );
    histogram
});

/// Answers a `MatchCalls` exchange for `service`: every call through `service`'s unary handler for it,
/// all at once, each answer streamed as soon as it is ready. Dropping the stream (the referee cancelled
/// the exchange) drops the calls still running. More than [`MAX_MATCH_CALLS`] calls are refused
/// (INVALID_ARGUMENT, E002) and none is taken.
pub fn answer_match_calls<S: PlayerService>(
    service: Arc<S>,
    request: MatchCallsRequest,
) -> Result<Response<MatchCallAnswers>, Status> {
    let calls = request.calls;
    if calls.len() > MAX_MATCH_CALLS {
        return Err(error_code::status(
            ErrorCode::InvalidMessageFormat,
            format!(
                "a MatchCalls request carries at most {MAX_MATCH_CALLS} calls; this one carries {}",
                calls.len()
            ),
        ));
    }
    CALLS_PER_EXCHANGE.observe(calls.len() as f64);
    let answers: FuturesUnordered<_> = (0u32..)
        .zip(calls)
        .map(|(index, call)| answer_call(Arc::clone(&service), index, call))
        .collect();
    Ok(Response::new(Box::pin(answers.map(Ok))))
}

/// One call's answer, under the span its unary call would have had.
async fn answer_call<S: PlayerService>(service: Arc<S>, index: u32, call: MatchCall) -> MatchCallsResponse {
    let MatchCall {
        traceparent,
        tracestate,
        request,
    } = call;
    let answer = match request {
        None => Answer::Failure(failure_of(&error_code::status(
            ErrorCode::MissingRequiredField,
            format!("match call {index} carries no request"),
        ))),
        Some(call) => batched_call(
            method_of(&call),
            &traceparent,
            &tracestate,
            taken(&*service, call),
        )
        .await
        .unwrap_or_else(|status| Answer::Failure(failure_of(&status))),
    };
    MatchCallsResponse {
        index,
        answer: Some(answer),
    }
}

/// `call`, one call of a batch (a match call, a batched report), served under the span its unary call
/// of `method` would have had — the child of the trace context the batch carries for it — and measured
/// as that call would have been.
pub async fn batched_call<T>(
    method: &'static str,
    traceparent: &str,
    tracestate: &str,
    call: impl Future<Output = Result<T, Status>>,
) -> Result<T, Status> {
    let span = super::server_calls::call_span(method, &trace_headers(traceparent, tracestate));
    let started = Instant::now();
    let answered = call.instrument(span.clone()).await;
    let code = answered.as_ref().map_or_else(Status::code, |_| Code::Ok);
    super::server_calls::answered_with(&span, method.to_owned(), code, started);
    answered
}

/// `call` taken by its unary handler.
async fn taken<S: PlayerService>(service: &S, call: Call) -> Result<Answer, Status> {
    Ok(match call {
        Call::InviteToMatch(call) => Answer::InviteToMatch(
            service
                .invite_to_match(tonic::Request::new(call))
                .await?
                .into_inner(),
        ),
        Call::RequestMove(call) => Answer::RequestMove(
            service
                .request_move(tonic::Request::new(call))
                .await?
                .into_inner(),
        ),
        Call::NotifyGameOver(call) => Answer::NotifyGameOver(
            service
                .notify_game_over(tonic::Request::new(call))
                .await?
                .into_inner(),
        ),
        Call::NotifyGameError(call) => Answer::NotifyGameError(
            service
                .notify_game_error(tonic::Request::new(call))
                .await?
                .into_inner(),
        ),
    })
}

/// The path of `call`'s unary RPC: the name of its span and of its latency series.
fn method_of(call: &Call) -> &'static str {
    match call {
        Call::InviteToMatch(_) => "/league.v2.PlayerService/InviteToMatch",
        Call::RequestMove(_) => "/league.v2.PlayerService/RequestMove",
        Call::NotifyGameOver(_) => "/league.v2.PlayerService/NotifyGameOver",
        Call::NotifyGameError(_) => "/league.v2.PlayerService/NotifyGameError",
    }
}

/// A call's trace context as the headers a unary call would have carried it in.
fn trace_headers(traceparent: &str, tracestate: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in [("traceparent", traceparent), ("tracestate", tracestate)] {
        if let Ok(value) = HeaderValue::from_str(value)
            && !value.is_empty()
        {
            headers.insert(name, value);
        }
    }
    headers
}

/// `call` as a match call made in the current span: its trace context goes with it, as a unary call's
/// goes in its metadata.
pub fn match_call(call: Call) -> MatchCall {
    let (traceparent, tracestate) = trace_context();
    MatchCall {
        traceparent,
        tracestate,
        request: Some(call),
    }
}

/// The current span's trace context as a batched call carries it: `traceparent` and `tracestate`, as a
/// unary call's metadata would (empty when there is none).
pub fn trace_context() -> (String, String) {
    let mut headers = HeaderMap::new();
    crate::telemetry::inject_traceparent(&mut headers);
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    (text("traceparent"), text("tracestate"))
}

/// What of a failed call's `status` travels back to the referee.
pub fn failure_of(status: &Status) -> CallFailure {
    CallFailure {
        code: status.code() as i32,
        message: status.message().to_owned(),
        error_code: error_code::code_of(status)
            .map(|code| code.code().to_owned())
            .unwrap_or_default(),
        service_outage: error_code::is_service_outage(status),
    }
}

/// The status a [`CallFailure`] stands for: the one its unary call would have failed with. A failure
/// that claims to be OK is no answer at all (UNKNOWN); an error code this league does not know is not
/// carried (as [`error_code::code_of`] would not read it).
pub fn status_of(failure: CallFailure) -> Status {
    let code = match Code::from_i32(failure.code) {
        Code::Ok => Code::Unknown,
        code => code,
    };
    let mut status = Status::new(code, failure.message);
    if let Ok(league_code) = failure.error_code.parse::<ErrorCode>() {
        status.metadata_mut().insert(
            error_code::ERROR_CODE_METADATA_KEY,
            MetadataValue::from_static(league_code.code()),
        );
    }
    if failure.service_outage {
        status.metadata_mut().insert(
            error_code::SERVICE_OUTAGE_METADATA_KEY,
            MetadataValue::from_static("true"),
        );
    }
    status
}

#[cfg(test)]
mod tests;
