//! Trace context across a real gRPC hop (port 0): a client call made inside a span reaches a server built
//! by `grpc::serve`, whose server span is that span's child in the same trace, carries the fields its
//! handler recorded, is marked as an error when the call fails, and whose log lines (JSON) name the
//! trace, the span and the match.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use league_proto::v2::referee_service_client::RefereeServiceClient;
use league_proto::v2::referee_service_server::{RefereeService, RefereeServiceServer};
use league_proto::v2::{
    GetMatchStateRequest, GetMatchStateResponse, ListRunningMatchesRequest, ListRunningMatchesResponse,
};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tonic::{Request, Response};
use tracing::Instrument;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::fmt::format::JsonFields;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;

use crate::telemetry::json_lines::JsonLines;
use crate::{Shutdown, grpc};

/// Keeps every exported span (the match calls' tests read it too).
#[derive(Debug, Clone, Default)]
pub(in crate::grpc) struct Collected(pub(in crate::grpc) Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collected {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(batch);
        Ok(())
    }
}

/// Keeps every log line.
#[derive(Debug, Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    /// The lines logged with `message`, each parsed (every line must be JSON).
    fn with_message(&self, message: &str) -> Vec<serde_json::Value> {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner).clone();
        String::from_utf8(bytes)
            .expect("utf-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is JSON"))
            .filter(|line: &serde_json::Value| line["message"] == message)
            .collect()
    }
}

/// JSON log lines in `format`, written into `lines`.
fn json_logs<S>(lines: &Lines, format: &JsonLines) -> impl Layer<S> + use<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let writer = lines.clone();
    tracing_subscriber::fmt::layer()
        .with_writer(move || writer.clone())
        .fmt_fields(JsonFields::new())
        .event_format(format.clone())
}

/// A [`Referee`] served by `grpc::serve` on a free port, a client of it, and what stops it.
async fn serve_referee() -> (
    RefereeServiceClient<grpc::GrpcChannel>,
    Shutdown,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await.expect("bind");
    let shutdown = Shutdown::new();
    let routes = tonic::service::Routes::new(RefereeServiceServer::new(Referee));
    let server = tokio::spawn(grpc::serve(listener, routes, shutdown.signal()));
    let client = RefereeServiceClient::new(grpc::channel(&grpc::local_url(addr)).expect("channel"));
    (client, shutdown, server)
}

/// A referee whose `GetMatchState` names the match on its span and logs; unknown matches fail.
struct Referee;

#[tonic::async_trait]
impl RefereeService for Referee {
    async fn get_match_state(
        &self,
        request: Request<GetMatchStateRequest>,
    ) -> Result<Response<GetMatchStateResponse>, tonic::Status> {
        let request = request.into_inner();
        grpc::record_call_fields(&request.league_id, &request.match_id, "", "");
        tracing::info!("looking the match up");
        if request.match_id == "R9M9" {
            return Err(tonic::Status::not_found("no such match"));
        }
        Ok(Response::new(GetMatchStateResponse::default()))
    }

    async fn list_running_matches(
        &self,
        _: Request<ListRunningMatchesRequest>,
    ) -> Result<Response<ListRunningMatchesResponse>, tonic::Status> {
        Ok(Response::new(ListRunningMatchesResponse::default()))
    }
}

#[test]
fn the_server_span_is_the_callers_child_and_its_logs_name_the_trace() {
    crate::alone::in_a_process_of_its_own(
        "grpc::server_calls::tests::the_server_span_is_the_callers_child_and_its_logs_name_the_trace_alone",
    );
}

#[tokio::test]
#[ignore = "sets a tracing subscriber for its thread: run alone by the_server_span_is_the_callers_child_and_its_logs_name_the_trace"]
async fn the_server_span_is_the_callers_child_and_its_logs_name_the_trace_alone() {
    let collected = Collected::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(collected.clone())
        .build();
    let lines = Lines::default();
    let format = JsonLines::new("referee");
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")))
        .with(json_logs(&lines, &format));
    // This thread only: the test runtime is single-threaded, so the server's tasks run here too.
    let _default = tracing::subscriber::set_default(subscriber);
    format.attach();

    let (mut client, shutdown, server) = serve_referee().await;

    let caller = tracing::info_span!("caller");
    let caller_context = caller.context();
    async {
        let found = client
            .get_match_state(GetMatchStateRequest {
                league_id: "league_x".into(),
                match_id: "R1M1".into(),
            })
            .await;
        assert!(found.is_ok(), "{found:?}");
        let missing = client
            .get_match_state(GetMatchStateRequest {
                league_id: "league_x".into(),
                match_id: "R9M9".into(),
            })
            .await;
        assert_eq!(missing.expect_err("not found").code(), tonic::Code::NotFound);
    }
    .instrument(caller)
    .await;
    shutdown.trigger();
    server.await.expect("server task").expect("server");

    let spans = collected.0.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let calls: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.name == "league.v2.RefereeService/GetMatchState")
        .collect();
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let caller_span = opentelemetry::trace::TraceContextExt::span(&caller_context)
        .span_context()
        .clone();
    for call in &calls {
        assert_eq!(call.span_kind, SpanKind::Server);
        assert_eq!(call.span_context.trace_id(), caller_span.trace_id());
        assert_eq!(call.parent_span_id, caller_span.span_id());
        assert!(call.parent_span_is_remote, "the parent came over the wire");
        let league = call.attributes.iter().find(|kv| kv.key.as_str() == "league_id");
        assert_eq!(
            league.map(|kv| kv.value.as_str().into_owned()),
            Some("league_x".to_owned())
        );
    }
    let match_of = |span: &SpanData| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == "match_id")
            .map(|kv| kv.value.as_str().into_owned())
    };
    let ok = calls
        .iter()
        .find(|span| match_of(span).as_deref() == Some("R1M1"))
        .expect("R1M1");
    let failed = calls
        .iter()
        .find(|span| match_of(span).as_deref() == Some("R9M9"))
        .expect("R9M9");
    assert!(!matches!(ok.status, Status::Error { .. }), "{:?}", ok.status);
    assert!(
        matches!(failed.status, Status::Error { .. }),
        "{:?}",
        failed.status
    );

    let logged = lines.with_message("looking the match up");
    assert_eq!(logged.len(), 2, "{logged:?}");
    let line = logged
        .iter()
        .find(|line| line["match_id"] == "R1M1")
        .expect("R1M1's line");
    assert_eq!(line["service"], "referee");
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["league_id"], "league_x");
    assert_eq!(line["trace_id"], ok.span_context.trace_id().to_string());
    assert_eq!(line["span_id"], ok.span_context.span_id().to_string());
    assert_eq!(line["span"], "grpc_server_call");
    assert!(
        line.get("otel.kind").is_none(),
        "tracing-only fields stay out: {line}"
    );
    assert!(
        line["timestamp"].as_str().is_some_and(|time| time.ends_with('Z')),
        "{line}"
    );
}

/// Without an exporter (`telemetry::local_ids`): the same trace crosses the hop, and the server's log
/// lines name it and the server span.
#[test]
fn without_an_exporter_the_server_continues_the_callers_trace_and_its_logs_name_it() {
    crate::alone::in_a_process_of_its_own(
        "grpc::server_calls::tests::without_an_exporter_the_server_continues_the_callers_trace_and_its_logs_name_it_alone",
    );
}

#[tokio::test]
#[ignore = "sets a tracing subscriber for its thread: run alone by without_an_exporter_the_server_continues_the_callers_trace_and_its_logs_name_it"]
async fn without_an_exporter_the_server_continues_the_callers_trace_and_its_logs_name_it_alone() {
    let lines = Lines::default();
    let format = JsonLines::new("referee");
    let subscriber = tracing_subscriber::registry()
        .with(crate::telemetry::local_ids::layer())
        .with(json_logs(&lines, &format));
    let _default = tracing::subscriber::set_default(subscriber);
    format.attach();

    let (mut client, shutdown, server) = serve_referee().await;

    // A league target: the layer traces the league's own spans only.
    let caller = tracing::info_span!(target: "league_test", "caller");
    let caller_ids = crate::telemetry::local_ids::trace_ids(&caller).expect("traced");
    async {
        let found = client
            .get_match_state(GetMatchStateRequest {
                league_id: "league_x".into(),
                match_id: "R1M1".into(),
            })
            .await;
        assert!(found.is_ok(), "{found:?}");
    }
    .instrument(caller)
    .await;
    shutdown.trigger();
    server.await.expect("server task").expect("server");

    let logged = lines.with_message("looking the match up");
    assert_eq!(logged.len(), 1, "{logged:?}");
    let line = &logged[0];
    assert_eq!(line["trace_id"], caller_ids.trace_id().to_string());
    let span_id = line["span_id"].as_str().expect("a span id");
    assert_eq!(span_id.len(), 16);
    assert_ne!(
        span_id,
        caller_ids.span_id().to_string(),
        "the server span's own id"
    );
    assert_eq!(line["span"], "grpc_server_call");
    assert_eq!(line["match_id"], "R1M1");
}
