//! A stand-in for Jaeger where no container registry is reachable (deploy/standins/otlp-receiver): it
//! receives OTLP/gRPC traces on port 4317, as Jaeger does, keeps nothing but a count per trace, and says
//! on HTTP port 16686 (`GET /api/traces`) how many spans each trace has, from which services and for which
//! match of which league (match ids repeat across leagues). `scripts/compose-smoke` asks it whether every
//! match became one trace spanning the services, and whether an external agent's matches reached the
//! gateway. It is not a tracing backend: real Jaeger runs wherever a registry is reachable.
//!
//!   cargo run -p league-runtime --example otlp_receiver [grpc-addr] [http-addr]

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use axum::{Json, Router, routing::get};
use league_runtime::{Shutdown, grpc};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use serde::Serialize;

/// What is known of one trace: its spans counted, the services that sent them, the match it is about.
#[derive(Debug, Default, Clone, Serialize)]
struct Trace {
    spans: u64,
    services: BTreeSet<String>,
    league_id: Option<String>,
    match_id: Option<String>,
}

/// Traces by their id (hex), bounded: past `MAX_TRACES` new traces are counted as dropped, not kept.
#[derive(Debug, Default, Clone)]
struct Traces(Arc<Mutex<Received>>);

#[derive(Debug, Default)]
struct Received {
    traces: BTreeMap<String, Trace>,
    dropped_traces: u64,
}

const MAX_TRACES: usize = 100_000;

#[tonic::async_trait]
impl TraceService for Traces {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .as_ref()
                .and_then(|resource| text(&resource.attributes, "service.name"))
                .unwrap_or_default();
            for span in resource_spans.scope_spans.iter().flat_map(|scope| &scope.spans) {
                let trace_id = hex(&span.trace_id);
                if !received.traces.contains_key(&trace_id) && received.traces.len() >= MAX_TRACES {
                    received.dropped_traces += 1;
                    continue;
                }
                let trace = received.traces.entry(trace_id).or_default();
                trace.spans += 1;
                trace.services.insert(service.clone());
                if trace.match_id.is_none() {
                    trace.match_id = text(&span.attributes, "match_id");
                }
                if trace.league_id.is_none() {
                    trace.league_id = text(&span.attributes, "league_id");
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

#[derive(Debug, Serialize)]
struct TracesReport {
    traces: Vec<TraceReport>,
    dropped_traces: u64,
}

#[derive(Debug, Serialize)]
struct TraceReport {
    trace_id: String,
    #[serde(flatten)]
    trace: Trace,
}

async fn report(traces: Traces) -> Json<TracesReport> {
    let received = traces.0.lock().unwrap_or_else(PoisonError::into_inner);
    Json(TracesReport {
        traces: received
            .traces
            .iter()
            .map(|(trace_id, trace)| TraceReport {
                trace_id: trace_id.clone(),
                trace: trace.clone(),
            })
            .collect(),
        dropped_traces: received.dropped_traces,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let grpc_addr: SocketAddr = args
        .next()
        .unwrap_or_else(|| "0.0.0.0:4317".to_owned())
        .parse()
        .context("the first argument is the OTLP/gRPC address, e.g. 0.0.0.0:4317")?;
    let http_addr: SocketAddr = args
        .next()
        .unwrap_or_else(|| "0.0.0.0:16686".to_owned())
        .parse()
        .context("the second argument is the HTTP address, e.g. 0.0.0.0:16686")?;

    let traces = Traces::default();
    let shutdown = Shutdown::new();
    let (grpc_listener, grpc_local) = grpc::bind(grpc_addr).await?;
    let http_listener = tokio::net::TcpListener::bind(http_addr)
        .await
        .with_context(|| format!("cannot listen on {http_addr}"))?;
    let routes = tonic::service::Routes::new(TraceServiceServer::new(traces.clone()));
    let app = Router::new()
        .route("/api/traces", get(move || report(traces.clone())))
        .route("/status", get(|| async { "ok" }));
    println!("otlp receiver: OTLP/gRPC on {grpc_local}, traces report on http://{http_addr}/api/traces");

    let http_shutdown = shutdown.signal();
    let http = async move {
        axum::serve(http_listener, app)
            .with_graceful_shutdown(http_shutdown.wait())
            .await
            .context("HTTP server failed")
    };
    let signal = shutdown.clone();
    tokio::spawn(async move { signal.trigger_on_os_signal().await });
    tokio::try_join!(grpc::serve(grpc_listener, routes, shutdown.signal()), http)?;
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A string attribute's value, if `key` is among `attributes` as a string.
fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(|attribute| match attribute.value.as_ref()?.value.as_ref()? {
            Value::StringValue(text) => Some(text.clone()),
            Value::IntValue(number) => Some(number.to_string()),
            _ => None,
        })
}
