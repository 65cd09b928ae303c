//! Logs and traces for every binary, set up once by [`init`].
//!
//! - Logs go to stderr (stdout is the launcher's `LEAGUE_READY` protocol), filtered by `RUST_LOG`
//!   (default `info`; the libraries that log whole messages, rmcp's MCP ones above all, never below
//!   INFO: [`log_filter`]): compact text for people, or JSON lines with `LEAGUE_LOG_FORMAT=json` (see
//!   [`json_lines`]).
//! - Traces: every span of the league's own crates at INFO or above becomes an OpenTelemetry span,
//!   whatever `RUST_LOG` says. They are exported over OTLP/gRPC only when `OTEL_EXPORTER_OTLP_ENDPOINT`
//!   or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (Jaeger: `http://jaeger:4317`), unless
//!   `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`; the other standard `OTEL_*` variables
//!   (timeout, headers, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, `OTEL_RESOURCE_ATTRIBUTES`) apply as the
//!   OpenTelemetry SDK reads them. `service.name` is `OTEL_SERVICE_NAME`, else `league-<service>`.
//! - Without an exporter, spans still get ids ([`local_ids`]: ids and nothing else, ADR 0034), so trace
//!   context still crosses every hop ([`propagation`]) and log lines still carry `trace_id`/`span_id`;
//!   a trace sampled upstream stays sampled for the processes further down.
//!   `OTEL_SDK_DISABLED=true` turns spans off altogether (no ids, nothing passed on), which saves what
//!   they still cost: about a tenth of the gateway's and the referees' instructions (ADR 0034).

pub mod json_lines;
pub mod local_ids;
mod log_filter;
pub mod propagation;

use std::fmt;
use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tokio::runtime::{Handle, RuntimeFlavor};
use tracing::Level;
use tracing::field::Field;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::{JsonFields, Writer, debug_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

pub use propagation::{inject_span, inject_traceparent, set_parent_from_headers};

/// Keeps the tracer provider of [`init`]. Dropping it exports the spans still buffered; [`shutdown`]
/// also stops the exporter. Keep it until the end of `main`.
///
/// Both block until the exporter has answered (bounded by `OTEL_EXPORTER_OTLP_TIMEOUT`): call them
/// from a multi-threaded tokio runtime or outside any runtime — on a current-thread runtime the export
/// could not make progress while the thread waits.
///
/// [`shutdown`]: TelemetryGuard::shutdown
#[derive(Debug)]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl TelemetryGuard {
    /// Exports every span still buffered and stops the exporter.
    pub fn shutdown(mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = blocking(|| provider.shutdown())
        {
            eprintln!("telemetry: exporting the last spans failed: {error}");
        }
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = &self.provider
            && let Err(error) = blocking(|| provider.force_flush())
        {
            eprintln!("telemetry: exporting the last spans failed: {error}");
        }
    }
}

/// Installs logging and tracing for `service` (`manager`, `referee`, …). Must run inside a tokio runtime
/// when spans are exported (the OTLP client lives on it). Safe to call twice (tests): the second call
/// changes nothing and returns a guard that does nothing.
pub fn init(service: &'static str) -> TelemetryGuard {
    let mode = Traces::requested();
    let provider = (mode == Traces::Exported).then(|| tracer_provider(service));
    // Without an exporter, spans get their ids and nothing else (local_ids, ADR 0034).
    let local_ids = (mode == Traces::Local).then(local_ids::layer);
    // Traces do not follow RUST_LOG: a quiet service still traces its own spans and events, and nothing
    // from the libraries underneath (h2, hyper, sqlx) floods the trace. No OpenTelemetry context switch
    // or busy/idle timing on every poll of an instrumented future: nothing here reads them.
    let traces = provider.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer(service))
            .with_threads(false)
            .with_context_activation(false)
            .with_tracked_inactivity(false)
            .with_filter(traced())
    });
    let json = std::env::var("LEAGUE_LOG_FORMAT").is_ok_and(|format| format == "json");
    let json_format = json_lines::JsonLines::new(service);
    let json_logs = json.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .fmt_fields(JsonFields::new())
            .event_format(json_format.clone())
            .with_filter(log_filter())
    });
    let text_logs = (!json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            // Colour codes only for a person at a terminal, never into a file or a pipe.
            .with_ansi(std::io::stderr().is_terminal())
            .compact()
            .fmt_fields(debug_fn(text_field))
            .with_filter(log_filter())
    });
    let installed = tracing_subscriber::registry()
        .with(traces)
        .with(local_ids)
        .with(json_logs)
        .with(text_logs)
        .try_init();
    if installed.is_err() {
        // Someone installed telemetry already; this provider was never used.
        if let Some(provider) = provider {
            let _ = provider.shutdown();
        }
        return TelemetryGuard { provider: None };
    }
    json_format.attach();
    tracing::debug!(service, traces = ?mode, "telemetry initialised");
    TelemetryGuard { provider }
}

/// The spans and events that are traced: the league's own crates', at INFO and above.
fn traced() -> Targets {
    Targets::new().with_target("league", Level::INFO)
}

/// One field of a text log line, `name=value`; the message as it is. The fields only traces need
/// (`otel.*`, `rpc.system`, `rpc.service`) are left out: people read these lines.
fn text_field(writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    match field.name() {
        "message" => write!(writer, "{value:?}"),
        "rpc.system" | "rpc.service" => Ok(()),
        name if name.starts_with("otel.") => Ok(()),
        name => write!(writer, " {name}={value:?}"),
    }
}

fn log_filter() -> EnvFilter {
    log_filter::from(std::env::var(EnvFilter::DEFAULT_ENV).ok().as_deref())
}

/// What the standard variables ask of traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Traces {
    /// `OTEL_SDK_DISABLED=true`: no spans at all — no ids in logs, no trace context passed on.
    Off,
    /// No endpoint (or `OTEL_TRACES_EXPORTER=none`): spans get ids and context is passed on
    /// ([`local_ids`]), nothing is exported.
    Local,
    /// An OTLP endpoint is set.
    Exported,
}

impl Traces {
    fn requested() -> Traces {
        let is =
            |name: &str, value: &str| std::env::var(name).is_ok_and(|set| set.eq_ignore_ascii_case(value));
        let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
        if is("OTEL_SDK_DISABLED", "true") {
            Traces::Off
        } else if is("OTEL_TRACES_EXPORTER", "none")
            || !(set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        {
            Traces::Local
        } else {
            Traces::Exported
        }
    }
}

fn tracer_provider(service: &str) -> SdkTracerProvider {
    let mut resource = Resource::builder();
    let named_by_environment = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES")
            .is_ok_and(|attributes| attributes.contains("service.name="));
    if !named_by_environment {
        resource = resource.with_service_name(format!("league-{service}"));
    }
    let builder = SdkTracerProvider::builder().with_resource(resource.build());
    match opentelemetry_otlp::SpanExporter::builder().with_tonic().build() {
        Ok(exporter) => builder.with_batch_exporter(exporter).build(),
        Err(error) => {
            // Record nothing this process starts; a trace sampled upstream stays sampled, so a process
            // further down that does export still gets its part.
            eprintln!("telemetry: spans will not be exported: {error}");
            builder
                .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOff)))
                .build()
        }
    }
}

/// Runs `wait` (which blocks until the exporter answers) without stalling the runtime it may be on.
fn blocking<T>(wait: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    }
}
