//! What every gRPC server of the league does around each call (a tower layer on the server):
//!
//! - a server span named after the method (`league.v2.PlayerService/InviteToMatch`), whose parent is
//!   the caller's `traceparent` — so a player host's or the manager's work during a match is part of
//!   that match's trace. A handler names what the call is about with [`record_call_fields`]. A call
//!   answered with a non-OK status marks the span as an error.
//! - its latency in `league_rpc_server_duration_seconds{method, code}`.
//!
//! Health checks and reflection are timed but not traced: a probe every few seconds is not a trace
//! anyone wants. Nor is a `MatchCalls` exchange: its calls belong to many matches' traces, and each
//! call gets the span and the measurement its unary RPC would have had ([`super::match_calls`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};
use std::time::Instant;

use http::{Request, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use tower::{Layer, Service};
use tracing::Instrument;
use tracing::field::Empty;

use crate::metrics;
use crate::telemetry::set_parent_from_headers;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RpcLabels {
    method: String,
    code: String,
}

type Latencies = Family<RpcLabels, Histogram, fn() -> Histogram>;

static LATENCY: LazyLock<Latencies> = LazyLock::new(|| {
    // 0.5 ms … ~16 s: a bot answers in well under a millisecond, a claim long-polls for seconds.
    let family: Latencies =
        Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.0005, 2.0, 16)));
    metrics::register(
        "league_rpc_server_duration_seconds",
        "Time to answer a gRPC call, by method and status code",
        family.clone(),
    );
    family
});

/// Names what the current call is about on its server span (and so on every log line inside it). Empty
/// values are skipped.
pub fn record_call_fields(league_id: &str, match_id: &str, conversation_id: &str, player_id: &str) {
    let span = tracing::Span::current();
    for (name, value) in [
        ("league_id", league_id),
        ("match_id", match_id),
        ("conversation_id", conversation_id),
        ("player_id", player_id),
    ] {
        if !value.is_empty() {
            span.record(name, value);
        }
    }
}

/// The layer `grpc::serve` puts on every server.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerCallsLayer;

impl<S> Layer<S> for ServerCallsLayer {
    type Service = ServerCalls<S>;

    fn layer(&self, inner: S) -> ServerCalls<S> {
        ServerCalls { inner }
    }
}

#[derive(Debug, Clone)]
pub struct ServerCalls<S> {
    inner: S,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for ServerCalls<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let method = request.uri().path().to_owned();
        let span = server_span(&method, request.headers());
        let started = Instant::now();
        let answer = span.in_scope(|| self.inner.call(request));
        let observed = span.clone();
        Box::pin(
            async move {
                let answered = answer.await;
                let code = match &answered {
                    Ok(response) => grpc_code(response),
                    Err(_) => tonic::Code::Unknown,
                };
                answered_with(&observed, method, code, started);
                answered
            }
            .instrument(span),
        )
    }
}

/// Marks `span` with the call's status code (an error unless OK) and measures its latency under
/// `method` (`/league.v2.PlayerService/InviteToMatch`).
pub(super) fn answered_with(span: &tracing::Span, method: String, code: tonic::Code, started: Instant) {
    if code != tonic::Code::Ok {
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_description", format!("{code:?}"));
    }
    span.record("rpc.grpc.status_code", code as i32);
    LATENCY
        .get_or_create(&RpcLabels {
            method,
            code: format!("{code:?}"),
        })
        .observe(started.elapsed().as_secs_f64());
}

fn server_span(method: &str, headers: &http::HeaderMap) -> tracing::Span {
    if method.starts_with("/grpc.health.")
        || method.starts_with("/grpc.reflection.")
        || method == super::match_calls::METHOD
        || method == super::REPORT_MATCH_RESULTS
    {
        return tracing::Span::none();
    }
    call_span(method, headers)
}

/// The span of one call of `method`, the child of the trace context in `headers` (a unary call's
/// metadata, or what a match call carries).
pub(super) fn call_span(method: &str, headers: &http::HeaderMap) -> tracing::Span {
    let name = method.trim_start_matches('/');
    let (service, rpc) = name.split_once('/').unwrap_or((name, ""));
    let span = tracing::info_span!(
        "grpc_server_call",
        otel.name = name,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        rpc.system = "grpc",
        rpc.service = service,
        rpc.method = rpc,
        rpc.grpc.status_code = Empty,
        league_id = Empty,
        match_id = Empty,
        conversation_id = Empty,
        player_id = Empty,
    );
    set_parent_from_headers(&span, headers);
    span
}

/// The status of a unary answer: an error is answered "trailers-only", with `grpc-status` in the
/// headers; a success has it in the trailers, after the body.
fn grpc_code<B>(response: &Response<B>) -> tonic::Code {
    response
        .headers()
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<i32>().ok())
        .map_or(tonic::Code::Ok, tonic::Code::from_i32)
}

#[cfg(test)]
pub(super) mod tests;
