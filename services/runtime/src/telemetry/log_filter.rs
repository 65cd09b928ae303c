//! Which log lines are written: `RUST_LOG` (default `info`), except that the libraries which log whole
//! messages below INFO never do so, at any level `RUST_LOG` asks for (issue 53): rmcp writes every MCP
//! request and answer at DEBUG — a player's token in a `tools/call`, the outbound token in every message
//! — and the HTTP/2 and HTTP libraries under gRPC trace header frames, where the operator's and agents'
//! tokens travel as metadata. A credential must not reach a log at any level, so these are capped at
//! INFO; what they say there (connection failures, warnings) still is written.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{Directive, LevelFilter};

/// The libraries capped at INFO, whatever `RUST_LOG` says.
const CAPPED: &[&str] = &["rmcp", "h2", "hyper", "hyper_util", "tonic", "tower", "reqwest"];

/// The filter for `spec` (what `RUST_LOG` holds, if anything), with [`CAPPED`] at INFO.
pub(crate) fn from(spec: Option<&str>) -> EnvFilter {
    let spec = spec
        .filter(|spec| EnvFilter::try_new(spec).is_ok())
        .unwrap_or("info");
    let mut filter = EnvFilter::new(spec);
    // The cap lowers, never raises: under `RUST_LOG=warn` rmcp stays at WARN.
    let level = cap_level(spec);
    let directives = spec
        .split(',')
        .filter_map(|directive| directive.split('=').next());
    for target in CAPPED.iter().copied().chain(directives.map(str::trim)) {
        // A directive for the same target replaces the one RUST_LOG gave, so the capped libraries'
        // own and any deeper ones (`rmcp::transport=trace`) are each replaced by the cap.
        let capped = CAPPED
            .iter()
            .any(|library| target == *library || target.starts_with(&format!("{library}::")));
        if capped && let Ok(directive) = format!("{target}={level}").parse::<Directive>() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// INFO, or the level `spec` gives everything if that is quieter (`off` if it gives none).
fn cap_level(spec: &str) -> LevelFilter {
    let everything = spec
        .split(',')
        .filter(|directive| !directive.contains('=') && !directive.contains('['))
        .filter_map(|level| level.trim().parse::<LevelFilter>().ok())
        .next_back()
        .unwrap_or(LevelFilter::OFF);
    everything.min(LevelFilter::INFO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("captured").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What is written under `spec` when rmcp and h2 log a secret at every level, and the league too.
    fn written(spec: &str) -> String {
        let captured = Captured::default();
        let writer = captured.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(move || writer.clone())
            .with_filter(from(Some(spec)));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::trace!(target: "rmcp::service", "secret-rmcp-trace");
            tracing::debug!(target: "rmcp::transport::streamable_http_client", "secret-rmcp-debug");
            tracing::info!(target: "rmcp::service", "rmcp-info");
            tracing::trace!(target: "h2::codec", "secret-h2-trace");
            tracing::debug!(target: "league_gateway::bridge", "league-debug");
        });
        String::from_utf8(captured.0.lock().expect("captured").clone()).expect("text")
    }

    use tracing_subscriber::Layer as _;

    #[test]
    fn the_libraries_that_log_whole_messages_stay_at_info_at_any_level() {
        for spec in [
            "trace",
            "debug",
            "rmcp=trace,h2=trace,trace",
            "rmcp::transport=trace,rmcp::service=trace,h2::codec=trace,debug",
        ] {
            let written = written(spec);
            assert!(!written.contains("secret"), "{spec}: {written}");
            assert!(written.contains("rmcp-info"), "{spec}: {written}");
            assert!(written.contains("league-debug"), "{spec}: {written}");
        }
        let quiet = written("warn");
        assert!(
            !quiet.contains("rmcp-info") && !quiet.contains("league-debug"),
            "{quiet}"
        );
    }
}
