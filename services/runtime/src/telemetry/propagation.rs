//! W3C trace context (`traceparent`, `tracestate`) in HTTP headers: written from the current span on
//! every outgoing call, read into the span of every incoming one. gRPC metadata is HTTP/2 headers, so
//! the gRPC layers ([`crate::grpc`]) and the gateway's HTTP use the same two functions.

use std::sync::LazyLock;

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};
use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

static PROPAGATOR: LazyLock<TraceContextPropagator> = LazyLock::new(TraceContextPropagator::new);

/// Writes the current span's trace context into `headers` (nothing when there is no current span).
pub fn inject_traceparent(headers: &mut HeaderMap) {
    inject_context(&tracing::Span::current().context(), headers);
}

/// Makes the trace context in `headers`, if any, the parent of `span`. Call it right after creating
/// `span`, before entering it or logging in it: a span's parent is fixed once it starts.
pub fn set_parent_from_headers(span: &tracing::Span, headers: &HeaderMap) {
    let parent = extract_context(headers);
    if parent.span().span_context().is_valid() {
        // Fails only when the span is disabled or already started; it then keeps its own trace.
        let _ = span.set_parent(parent);
    }
}

/// Writes `context`'s trace context into `headers`.
pub fn inject_context(context: &Context, headers: &mut HeaderMap) {
    PROPAGATOR.inject_context(context, &mut HeaderInjector(headers));
}

/// The trace context `headers` carry (an empty context when they carry none or a malformed one).
pub fn extract_context(headers: &HeaderMap) -> Context {
    PROPAGATOR.extract(&HeaderExtractor(headers))
}

struct HeaderInjector<'a>(&'a mut HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(key), HeaderValue::try_from(value)) {
            self.0.insert(name, value);
        }
    }
}

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(HeaderName::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

    use super::*;

    const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_traceparent_round_trips_through_headers() {
        let mut incoming = HeaderMap::new();
        incoming.insert("traceparent", HeaderValue::from_static(TRACEPARENT));
        let context = extract_context(&incoming);
        let span = context.span();
        let span_context = span.span_context();
        assert!(span_context.is_remote());
        assert_eq!(
            span_context.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(span_context.span_id().to_string(), "b7ad6b7169203331");
        assert!(span_context.is_sampled());

        let mut outgoing = HeaderMap::new();
        inject_context(&context, &mut outgoing);
        assert_eq!(
            outgoing.get("traceparent").map(HeaderValue::as_bytes),
            Some(TRACEPARENT.as_bytes())
        );
    }

    #[test]
    fn no_context_writes_nothing_and_garbage_reads_as_none() {
        let mut headers = HeaderMap::new();
        inject_context(&Context::new(), &mut headers);
        assert!(headers.is_empty());
        headers.insert("traceparent", HeaderValue::from_static("00-not-a-trace-01"));
        assert!(!extract_context(&headers).span().span_context().is_valid());
    }

    #[test]
    fn an_unsampled_context_says_so() {
        let unsampled = SpanContext::new(
            TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").expect("trace id"),
            SpanId::from_hex("b7ad6b7169203331").expect("span id"),
            TraceFlags::default(),
            true,
            TraceState::default(),
        );
        let mut headers = HeaderMap::new();
        inject_context(&Context::new().with_remote_span_context(unsampled), &mut headers);
        assert_eq!(
            headers.get("traceparent").map(HeaderValue::as_bytes),
            Some(&b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"[..])
        );
    }
}
