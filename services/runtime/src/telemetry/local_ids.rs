//! Trace context for a process that exports no spans (ADR 0034): every traced span gets a trace id and
//! a span id, and nothing else. That is all such a process needs of a span — for `traceparent` on its
//! outgoing calls ([`super::propagation`]) and `trace_id`/`span_id` on its log lines. The OpenTelemetry
//! layer also collects every span's fields and builds an SDK span when it closes; doing without it saves
//! 9 % of the gateway's instructions and 5 % of the referees' (callgrind, 40 players).
//!
//! The rules are the OpenTelemetry layer's with a parent-based never-sampler: a span continues its
//! parent's trace (id, sampled flag, `tracestate`), a root starts a new unsampled trace, and a remote
//! parent ([`super::set_parent_from_headers`]) replaces the trace a span had.

use opentelemetry::trace::{SpanContext, TraceFlags, TraceState};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing::Subscriber;
use tracing::span::{Attributes, Id};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{Filtered, Targets};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::{LookupSpan, Registry};

/// A span's trace context, kept in its extensions.
#[derive(Debug, Clone)]
pub struct TraceIds(pub SpanContext);

/// The layer that gives spans their [`TraceIds`].
#[derive(Debug, Default)]
pub struct LocalIds {
    ids: RandomIdGenerator,
}

/// [`LocalIds`] for the spans that are traced ([`super::traced`]), the ones the OpenTelemetry layer
/// traces when spans are exported.
pub fn layer<S>() -> Filtered<LocalIds, Targets, S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    LocalIds::default().with_filter(super::traced())
}

impl<S> Layer<S> for LocalIds
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        // The nearest traced ancestor (the filter hides the others).
        let parent = span
            .parent()
            .and_then(|parent| parent.extensions().get::<TraceIds>().cloned());
        let context = match parent {
            Some(TraceIds(parent)) => SpanContext::new(
                parent.trace_id(),
                self.ids.new_span_id(),
                parent.trace_flags(),
                false,
                parent.trace_state().clone(),
            ),
            None => SpanContext::new(
                self.ids.new_trace_id(),
                self.ids.new_span_id(),
                TraceFlags::default(),
                false,
                TraceState::default(),
            ),
        };
        span.extensions_mut().insert(TraceIds(context));
    }
}

/// The trace context [`LocalIds`] gave `span`, if it is traced that way.
pub fn trace_ids(span: &tracing::Span) -> Option<SpanContext> {
    span.with_subscriber(|(id, dispatch)| {
        let registry = dispatch.downcast_ref::<Registry>()?;
        let span = registry.span(id)?;
        let extensions = span.extensions();
        extensions.get::<TraceIds>().map(|ids| ids.0.clone())
    })
    .flatten()
}

/// Makes `remote` the parent of `span`: its trace id, sampled flag and `tracestate` replace the ones
/// `span` had. Returns false when `span` is not traced by [`LocalIds`].
pub fn set_remote_parent(span: &tracing::Span, remote: &SpanContext) -> bool {
    span.with_subscriber(|(id, dispatch)| {
        let Some(span) = dispatch
            .downcast_ref::<Registry>()
            .and_then(|registry| registry.span(id))
        else {
            return false;
        };
        let mut extensions = span.extensions_mut();
        let Some(TraceIds(own)) = extensions.get_mut::<TraceIds>() else {
            return false;
        };
        *own = SpanContext::new(
            remote.trace_id(),
            own.span_id(),
            remote.trace_flags() & TraceFlags::SAMPLED,
            false,
            remote.trace_state().clone(),
        );
        true
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue};
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;
    use crate::telemetry::{inject_span, set_parent_from_headers};

    fn traceparent(span: &tracing::Span) -> String {
        let mut headers = HeaderMap::new();
        inject_span(span, &mut headers);
        headers
            .get("traceparent")
            .and_then(|value| value.to_str().ok())
            .expect("a traceparent")
            .to_owned()
    }

    fn with_local_ids(test: impl FnOnce()) {
        let subscriber = tracing_subscriber::registry().with(layer());
        tracing::subscriber::with_default(subscriber, test);
    }

    #[test]
    fn a_root_starts_an_unsampled_trace_and_its_children_continue_it() {
        with_local_ids(|| {
            let root = tracing::info_span!("root");
            let child = root.in_scope(|| tracing::info_span!("child"));
            let explicit = tracing::info_span!(parent: &root, "explicit");
            let other = tracing::info_span!("other root");
            let root_ids = trace_ids(&root).expect("traced");
            assert!(root_ids.is_valid() && !root_ids.is_sampled());
            for span in [&child, &explicit] {
                let ids = trace_ids(span).expect("traced");
                assert_eq!(ids.trace_id(), root_ids.trace_id());
                assert_ne!(ids.span_id(), root_ids.span_id());
            }
            assert_ne!(trace_ids(&other).expect("traced").trace_id(), root_ids.trace_id());
            let written = traceparent(&child);
            let child_ids = trace_ids(&child).expect("traced");
            assert_eq!(
                written,
                format!("00-{}-{}-00", child_ids.trace_id(), child_ids.span_id())
            );
        });
    }

    #[test]
    fn a_remote_parent_gives_its_trace_and_sampled_flag_to_the_span_and_its_children() {
        with_local_ids(|| {
            let mut incoming = HeaderMap::new();
            incoming.insert(
                "traceparent",
                HeaderValue::from_static("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            );
            incoming.insert("tracestate", HeaderValue::from_static("vendor=value"));
            let server = tracing::info_span!("server");
            set_parent_from_headers(&server, &incoming);
            let call = server.in_scope(|| tracing::info_span!("call"));
            let ids = trace_ids(&call).expect("traced");
            assert_eq!(ids.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
            assert!(ids.is_sampled());
            let mut outgoing = HeaderMap::new();
            inject_span(&call, &mut outgoing);
            assert_eq!(
                outgoing.get("traceparent").map(HeaderValue::as_bytes),
                Some(format!("00-0af7651916cd43dd8448eb211c80319c-{}-01", ids.span_id()).as_bytes())
            );
            assert_eq!(
                outgoing.get("tracestate").map(HeaderValue::as_bytes),
                Some(&b"vendor=value"[..])
            );

            // No traceparent, or a malformed one: the span keeps its own trace.
            let alone = tracing::info_span!("alone");
            let before = trace_ids(&alone).expect("traced");
            let mut garbage = HeaderMap::new();
            garbage.insert("traceparent", HeaderValue::from_static("00-not-a-trace-01"));
            set_parent_from_headers(&alone, &garbage);
            set_parent_from_headers(&alone, &HeaderMap::new());
            assert_eq!(trace_ids(&alone).expect("traced"), before);
        });
    }

    #[test]
    fn spans_outside_the_league_or_below_info_are_not_traced() {
        with_local_ids(|| {
            let library = tracing::info_span!(target: "h2", "frame");
            let detail = tracing::debug_span!("detail");
            assert!(trace_ids(&library).is_none() && trace_ids(&detail).is_none());
            let mut headers = HeaderMap::new();
            inject_span(&library, &mut headers);
            assert!(headers.is_empty());
            // A traced span under an untraced one continues the nearest traced ancestor's trace.
            let root = tracing::info_span!("root");
            let inner = root.in_scope(|| {
                let library = tracing::info_span!(target: "h2", "frame");
                library.in_scope(|| tracing::info_span!("inner"))
            });
            assert_eq!(
                trace_ids(&inner).expect("traced").trace_id(),
                trace_ids(&root).expect("traced").trace_id()
            );
        });
    }
}
