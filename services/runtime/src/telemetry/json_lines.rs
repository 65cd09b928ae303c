//! Log lines as JSON objects, one per line, for log collectors:
//!
//! ```json
//! {"timestamp":"2026-01-01T12:00:00.000000Z","level":"INFO","service":"referee",
//!  "target":"league_referee::runner","message":"match decided","trace_id":"4bf9…","span_id":"00f0…",
//!  "span":"match","league_id":"league_even_odd","match_id":"R1M1","conversation_id":"9c1e…",…}
//! ```
//!
//! The fields of every span the event is in are flattened into the line (inner spans win over outer
//! ones, the event's own fields over both), so the protocol's correlation fields — `conversation_id`,
//! `match_id`, `league_id` — appear on every line logged inside a match or a call about one.
//! `trace_id`/`span_id` are the OpenTelemetry ids of the innermost traced span, so a line leads to its
//! trace. The tracing-only `otel.*` fields are left out.

use std::fmt;
use std::sync::{Arc, OnceLock};

use opentelemetry::trace::{SpanContext, TraceContextExt};
use serde_json::{Map, Value};
use tracing::dispatcher::WeakDispatch;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use super::local_ids::TraceIds;

/// Keys every line starts with (in this order); fields of the same name are dropped.
const RESERVED: [&str; 8] = [
    "timestamp",
    "level",
    "service",
    "target",
    "message",
    "trace_id",
    "span_id",
    "span",
];

/// The JSON lines event format of one service (use with [`JsonFields`] as the field format). Clones
/// share what [`attach`](JsonLines::attach) sets.
#[derive(Debug, Clone)]
pub struct JsonLines {
    service: &'static str,
    /// The subscriber this format is part of, to read the OpenTelemetry ids of spans: while an event
    /// is being dispatched, `tracing` hides the current subscriber from code it calls.
    dispatch: Arc<OnceLock<WeakDispatch>>,
}

impl JsonLines {
    pub fn new(service: &'static str) -> JsonLines {
        JsonLines {
            service,
            dispatch: Arc::default(),
        }
    }

    /// Tells the format which subscriber it is part of — the current default one, so call this right
    /// after installing it. Until then lines carry no `trace_id`/`span_id`.
    pub fn attach(&self) {
        tracing::dispatcher::get_default(|dispatch| {
            let _ = self.dispatch.set(dispatch.downgrade());
        });
    }
}

impl<S> FormatEvent<S, JsonFields> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        let mut head: Vec<(&str, Value)> = vec![
            ("timestamp", timestamp.into()),
            ("level", metadata.level().as_str().into()),
            ("service", self.service.into()),
            ("target", metadata.target().into()),
        ];

        let mut fields = Map::new();
        let mut innermost = None;
        let mut ids = None;
        if let Some(scope) = ctx.event_scope() {
            // Leaf first: the first value seen for a name is the innermost one.
            for span in scope {
                innermost = innermost.or(Some(span.name()));
                if ids.is_none() {
                    // The extensions are not held across `trace_ids`, which reads them again.
                    let local = span
                        .extensions()
                        .get::<TraceIds>()
                        .map(|TraceIds(ids)| hex_ids(ids));
                    ids = local.unwrap_or_else(|| self.trace_ids(&span.id()));
                }
                let extensions = span.extensions();
                if let Some(recorded) = extensions.get::<FormattedFields<JsonFields>>()
                    && let Ok(Value::Object(span_fields)) = serde_json::from_str::<Value>(recorded)
                {
                    for (name, value) in span_fields {
                        fields.entry(name).or_insert(value);
                    }
                }
            }
        }
        let mut own = String::new();
        ctx.field_format().format_fields(Writer::new(&mut own), event)?;
        if let Ok(Value::Object(mut event_fields)) = serde_json::from_str::<Value>(&own) {
            if let Some(message) = event_fields.remove("message") {
                head.push(("message", message));
            }
            fields.extend(event_fields);
        }
        if let Some((trace_id, span_id)) = ids {
            head.push(("trace_id", trace_id.into()));
            head.push(("span_id", span_id.into()));
        }
        if let Some(name) = innermost {
            head.push(("span", name.into()));
        }
        let rest = fields
            .iter()
            .filter(|(name, _)| !name.starts_with("otel.") && !RESERVED.contains(&name.as_str()));
        let mut line = String::from("{");
        for (n, (name, value)) in head
            .iter()
            .map(|(name, value)| (*name, value))
            .chain(rest.map(|(name, value)| (name.as_str(), value)))
            .enumerate()
        {
            if n > 0 {
                line.push(',');
            }
            line.push_str(&serde_json::to_string(name).map_err(|_| fmt::Error)?);
            line.push(':');
            line.push_str(&serde_json::to_string(value).map_err(|_| fmt::Error)?);
        }
        line.push('}');
        writeln!(writer, "{line}")
    }
}

impl JsonLines {
    /// The OpenTelemetry trace and span ids of span `id`, when it is traced.
    fn trace_ids(&self, id: &tracing::span::Id) -> Option<(String, String)> {
        let dispatch = self.dispatch.get()?.upgrade()?;
        let context = tracing_opentelemetry::get_otel_context(id, &dispatch)?;
        hex_ids(context.span().span_context())
    }
}

/// A valid span context's trace and span ids in hexadecimal.
fn hex_ids(span_context: &SpanContext) -> Option<(String, String)> {
    span_context.is_valid().then(|| {
        (
            span_context.trace_id().to_string(),
            span_context.span_id().to_string(),
        )
    })
}
