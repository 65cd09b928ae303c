//! An OTLP/gRPC trace receiver in the test process (opentelemetry-proto's `TraceService` on port 0), and
//! the spans it received in a form a test can ask questions of.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use league_runtime::{Shutdown, grpc};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;

/// One received span, with the `service.name` of the process that sent it.
#[derive(Debug, Clone)]
pub struct Received {
    pub service: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub name: String,
    pub kind: SpanKind,
    pub error: bool,
    pub attributes: HashMap<String, String>,
}

impl Received {
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// One match's trace: its root (the referee's `match` span, checked to be the root of a match of the
/// league) and every span with its trace id.
pub struct MatchTrace<'a> {
    root: &'a Received,
    pub spans: Vec<&'a Received>,
    /// What a failed assertion about the match shows: its id and its whole trace.
    pub what: String,
}

impl<'a> MatchTrace<'a> {
    pub fn of(spans: &'a [Received], root: &'a Received, league_id: &str) -> Self {
        let match_id = root.attribute("match_id").expect("a match id");
        let trace: Vec<&Received> = spans
            .iter()
            .filter(|span| span.trace_id == root.trace_id)
            .collect();
        let what = format!("{match_id}: {trace:#?}");
        assert_eq!(root.service, "league-referee", "{what}");
        assert!(
            root.parent_span_id.is_empty(),
            "the match span is the root: {what}"
        );
        assert_eq!(root.attribute("league_id"), Some(league_id), "{what}");
        MatchTrace {
            root,
            spans: trace,
            what,
        }
    }

    /// The one span `name` right under the match (a phase: invite, collect, game_over, report…).
    pub fn phase(&self, name: &str) -> &'a Received {
        let found: Vec<&&Received> = self
            .spans
            .iter()
            .filter(|span| span.name == name && span.parent_span_id == self.root.span_id)
            .collect();
        assert_eq!(found.len(), 1, "one {name} span under the match: {}", self.what);
        found[0]
    }

    /// The spans right under `parent`.
    pub fn children(&self, parent: &Received) -> Vec<&'a Received> {
        self.spans
            .iter()
            .copied()
            .filter(|span| span.parent_span_id == parent.span_id)
            .collect()
    }
}

#[derive(Debug, Clone, Default)]
struct Spans(Arc<Mutex<Vec<Received>>>);

#[tonic::async_trait]
impl TraceService for Spans {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = Vec::new();
        for resource_spans in request.into_inner().resource_spans {
            let resource = resource_spans.resource.unwrap_or_default();
            let service = strings(&resource.attributes)
                .remove("service.name")
                .unwrap_or_default();
            for span in resource_spans
                .scope_spans
                .into_iter()
                .flat_map(|scope| scope.spans)
            {
                received.push(Received {
                    service: service.clone(),
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    kind: span.kind(),
                    error: span
                        .status
                        .as_ref()
                        .is_some_and(|status| status.code() == StatusCode::Error),
                    attributes: strings(&span.attributes),
                    name: span.name,
                });
            }
        }
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(received);
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// A running receiver.
#[derive(Debug)]
pub struct Collector {
    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` should say.
    pub endpoint: String,
    spans: Spans,
    shutdown: Shutdown,
}

impl Collector {
    pub async fn start() -> Collector {
        let (listener, addr) = grpc::bind(([127, 0, 0, 1], 0).into()).await.expect("bind");
        let spans = Spans::default();
        let shutdown = Shutdown::new();
        let routes = tonic::service::Routes::new(TraceServiceServer::new(spans.clone()));
        tokio::spawn(grpc::serve(listener, routes, shutdown.signal()));
        Collector {
            endpoint: grpc::local_url(addr),
            spans,
            shutdown,
        }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Received> {
        self.spans
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Attributes as text (strings as they are, numbers and booleans printed).
fn strings(attributes: &[KeyValue]) -> HashMap<String, String> {
    attributes
        .iter()
        .filter_map(|attribute| {
            let value = match attribute.value.as_ref()?.value.as_ref()? {
                Value::StringValue(text) => text.clone(),
                Value::IntValue(number) => number.to_string(),
                Value::DoubleValue(number) => number.to_string(),
                Value::BoolValue(flag) => flag.to_string(),
                _ => return None,
            };
            Some((attribute.key.clone(), value))
        })
        .collect()
}
