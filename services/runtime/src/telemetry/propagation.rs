//! W3C trace context (`traceparent`, `tracestate`) in HTTP headers: written from the current span on
//! every outgoing call, read into the span of every incoming one. gRPC metadata is HTTP/2 headers, so
//! the gRPC layers ([`crate::grpc`]) and the gateway's HTTP use the same two functions.

use std::sync::LazyLock;

use http::HeaderMap;
use http::header::{HeaderName, HeaderValue};
use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::local_ids;

static PROPAGATOR: LazyLock<TraceContextPropagator> = LazyLock::new(TraceContextPropagator::new);
static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
static TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// Writes the current span's trace context into `headers` (nothing when there is no current span).
pub fn inject_traceparent(headers: &mut HeaderMap) {
    inject_span(&tracing::Span::current(), headers);
}

/// Writes `span`'s trace context into `headers`, without entering it.
pub fn inject_span(span: &tracing::Span, headers: &mut HeaderMap) {
    match local_ids::trace_ids(span) {
        Some(ids) => inject_span_context(&ids, headers),
        None => inject_context(&span.context(), headers),
    }
}

/// Makes the trace context in `headers`, if any, the parent of `span`. Call it right after creating
/// `span`, before entering it or logging in it: a span's parent is fixed once it starts.
pub fn set_parent_from_headers(span: &tracing::Span, headers: &HeaderMap) {
    let Some(remote) = remote_span_context(headers) else {
        return;
    };
    if !local_ids::set_remote_parent(span, &remote) {
        // Fails only when the span is disabled or already started; it then keeps its own trace.
        let _ = span.set_parent(Context::new().with_remote_span_context(remote));
    }
}

/// The valid trace context `headers` carry, if any. A `traceparent` in the form this crate and the
/// OpenTelemetry SDKs write (version `00`, lower-case hex) is read here, without the SDK propagator's
/// splitting and `Context`; any other form is left to the propagator, which knows every rule of the
/// W3C format (the tests compare the two).
fn remote_span_context(headers: &HeaderMap) -> Option<SpanContext> {
    let span_context = match headers.get(&TRACEPARENT).and_then(canonical_traceparent) {
        Some((trace_id, span_id, flags)) => {
            let state = headers
                .get(&TRACESTATE)
                .and_then(|value| value.to_str().ok())
                // A tracestate that does not parse is dropped, as W3C Trace Context says; the trace goes on.
                .map_or_else(TraceState::default, |state| state.parse().unwrap_or_default());
            SpanContext::new(trace_id, span_id, flags & TraceFlags::SAMPLED, true, state)
        }
        None => extract_context(headers).span().span_context().clone(),
    };
    span_context.is_valid().then_some(span_context)
}

/// The ids and flags of a `traceparent` written `00-<32 hex>-<16 hex>-<2 hex>` in lower case.
fn canonical_traceparent(value: &HeaderValue) -> Option<(TraceId, SpanId, TraceFlags)> {
    let bytes = value.as_bytes();
    let hex = |range: std::ops::Range<usize>| {
        bytes[range]
            .iter()
            .all(|&b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let shaped = bytes.len() == 55
        && bytes.starts_with(b"00-")
        && bytes[35] == b'-'
        && bytes[52] == b'-'
        && hex(3..35)
        && hex(36..52)
        && hex(53..55);
    let text = value.to_str().ok().filter(|_| shaped)?;
    Some((
        TraceId::from_hex(&text[3..35]).ok()?,
        SpanId::from_hex(&text[36..52]).ok()?,
        TraceFlags::new(u8::from_str_radix(&text[53..55], 16).ok()?),
    ))
}

/// Writes `context`'s trace context into `headers`, as [`inject_span_context`].
pub fn inject_context(context: &Context, headers: &mut HeaderMap) {
    inject_span_context(context.span().span_context(), headers);
}

/// Writes a span's trace context into `headers`: `traceparent` as W3C Trace Context level 1 writes
/// it (`00-<trace id>-<span id>-<flags>`, only the sampled flag), and `tracestate` when there is one.
/// Written here rather than by the SDK's propagator, whose `format!`s, header-name parsing and empty
/// `tracestate` cost more than the rest of a gateway's outbound call setup (docs/benchmarks.md); its
/// output is the same (the tests compare them).
fn inject_span_context(span_context: &SpanContext, headers: &mut HeaderMap) {
    if !span_context.is_valid() {
        return;
    }
    let mut traceparent = *b"00-00000000000000000000000000000000-0000000000000000-00";
    hex_into(&mut traceparent[3..35], &span_context.trace_id().to_bytes());
    hex_into(&mut traceparent[36..52], &span_context.span_id().to_bytes());
    hex_into(
        &mut traceparent[53..55],
        &[(span_context.trace_flags() & TraceFlags::SAMPLED).to_u8()],
    );
    if let Ok(value) = HeaderValue::from_bytes(&traceparent) {
        headers.insert(&TRACEPARENT, value);
    }
    let state = span_context.trace_state().header();
    if !state.is_empty()
        && let Ok(value) = HeaderValue::try_from(state)
    {
        headers.insert(&TRACESTATE, value);
    }
}

/// Writes `bytes` into `out` (twice as long) in lower-case hexadecimal.
fn hex_into(out: &mut [u8], bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
}

/// The trace context `headers` carry (an empty context when they carry none or a malformed one).
pub fn extract_context(headers: &HeaderMap) -> Context {
    PROPAGATOR.extract(&HeaderExtractor(headers))
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
    use opentelemetry::propagation::Injector;

    use super::*;

    struct HeaderInjector<'a>(&'a mut HeaderMap);

    impl Injector for HeaderInjector<'_> {
        fn set(&mut self, key: &str, value: String) {
            if let (Ok(name), Ok(value)) = (HeaderName::try_from(key), HeaderValue::try_from(value)) {
                self.0.insert(name, value);
            }
        }
    }

    /// What the SDK's propagator writes for `context`.
    fn written_by_the_sdk(context: &Context) -> HeaderMap {
        let mut headers = HeaderMap::new();
        PROPAGATOR.inject_context(context, &mut HeaderInjector(&mut headers));
        headers
    }

    #[test]
    fn the_same_traceparent_as_the_sdk_writes() {
        let state = TraceState::from_key_value([("vendor", "value")]).expect("trace state");
        for (flags, state) in [
            (TraceFlags::SAMPLED, TraceState::default()),
            (TraceFlags::default(), state),
        ] {
            let span_context = SpanContext::new(
                TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").expect("trace id"),
                SpanId::from_hex("00f067aa0ba902b7").expect("span id"),
                flags,
                true,
                state,
            );
            let context = Context::new().with_remote_span_context(span_context);
            let mut ours = HeaderMap::new();
            inject_context(&context, &mut ours);
            let sdk = written_by_the_sdk(&context);
            assert_eq!(ours.get("traceparent"), sdk.get("traceparent"));
            // The SDK writes an empty tracestate too; an empty one is no state.
            let state = |headers: &HeaderMap| {
                headers
                    .get("tracestate")
                    .map(|value| value.as_bytes().to_vec())
                    .filter(|value| !value.is_empty())
            };
            assert_eq!(state(&ours), state(&sdk));
        }
    }

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
    fn traceparents_read_as_the_sdk_reads_them() {
        let canonical = HeaderValue::from_static(TRACEPARENT);
        assert!(
            canonical_traceparent(&canonical).is_some(),
            "read here, not by the SDK"
        );
        let cases = [
            TRACEPARENT,
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            " 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 ",
            "00-not-a-trace-01",
            "",
        ];
        for traceparent in cases {
            for tracestate in [None, Some("vendor=value,other=1"), Some("not a state")] {
                let mut headers = HeaderMap::new();
                headers.insert(
                    "traceparent",
                    HeaderValue::from_str(traceparent).expect("a value"),
                );
                if let Some(state) = tracestate {
                    headers.insert("tracestate", HeaderValue::from_str(state).expect("a value"));
                }
                let sdk = extract_context(&headers).span().span_context().clone();
                let ours = remote_span_context(&headers);
                assert_eq!(
                    ours,
                    sdk.is_valid().then_some(sdk),
                    "{traceparent:?} {tracestate:?}"
                );
            }
        }
        assert_eq!(remote_span_context(&HeaderMap::new()), None);
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
