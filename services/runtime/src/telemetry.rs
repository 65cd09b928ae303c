//! Logging for every binary: readable lines locally, JSON lines when `LEAGUE_LOG_FORMAT=json`, filtered
//! by `RUST_LOG` (default `info`). Logs go to stderr so stdout stays free for the launcher's protocol.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber for `service`. Safe to call twice (tests): the second call is a no-op.
pub fn init(service: &'static str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("LEAGUE_LOG_FORMAT").is_ok_and(|format| format == "json");
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.compact().try_init()
    };
    if installed.is_ok() {
        tracing::debug!(service, "telemetry initialised");
    }
}
