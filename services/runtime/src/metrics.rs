//! The process's Prometheus metrics: one registry every crate adds its families to, rendered as
//! OpenMetrics text by the admin server's `/metrics` (see [`crate::admin`]).
//!
//! A crate keeps its metrics in a `LazyLock` and registers them the first time it touches them:
//!
//! ```
//! use std::sync::LazyLock;
//! use prometheus_client::encoding::EncodeLabelSet;
//! use prometheus_client::metrics::{counter::Counter, family::Family};
//!
//! #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
//! struct Outcome {
//!     outcome: &'static str,
//! }
//!
//! static REQUESTS: LazyLock<Family<Outcome, Counter>> = LazyLock::new(|| {
//!     let family = Family::default();
//!     league_runtime::metrics::register("example_requests", "Requests by outcome", family.clone());
//!     family
//! });
//!
//! REQUESTS.get_or_create(&Outcome { outcome: "ok" }).inc();
//! ```
//!
//! Counters get the `_total` suffix when rendered (`example_requests_total`). Values that are cheaper to
//! read at scrape time than to keep up to date (the manager's queue depth, from the database) are
//! refreshed by a hook given to [`on_scrape`], which every `/metrics` request runs before rendering.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use prometheus_client::registry::{Metric, Registry};

/// A hook run before each rendering; it updates gauges and returns.
pub type ScrapeHook = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));
static HOOKS: LazyLock<Mutex<Vec<ScrapeHook>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// Adds `metric` to the process's registry under `name`. Register each name once (a `LazyLock` does
/// it); a second registration would render the family twice.
pub fn register(name: &str, help: &str, metric: impl Metric) {
    REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .register(name, help, metric);
}

/// Runs `hook` before every rendering of `/metrics`.
pub fn on_scrape<F, Fut>(hook: F)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let hook: ScrapeHook = Arc::new(move || Box::pin(hook()));
    HOOKS.lock().unwrap_or_else(PoisonError::into_inner).push(hook);
}

/// Runs the scrape hooks, then renders every registered family as OpenMetrics text.
pub async fn render() -> Result<String, fmt::Error> {
    let hooks = HOOKS.lock().unwrap_or_else(PoisonError::into_inner).clone();
    for hook in hooks {
        hook().await;
    }
    encode()
}

/// Renders every registered family as OpenMetrics text, without running the hooks.
pub fn encode() -> Result<String, fmt::Error> {
    let mut text = String::new();
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    prometheus_client::encoding::text::encode(&mut text, &registry)?;
    Ok(text)
}

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use prometheus_client::metrics::counter::Counter;

    use super::*;

    #[tokio::test]
    async fn registered_families_render_after_the_hooks_ran() {
        let counter = Counter::<u64>::default();
        register("metrics_test_events", "Events seen by this test", counter.clone());
        counter.inc_by(3);
        let ran = Arc::new(AtomicBool::new(false));
        let seen = ran.clone();
        on_scrape(move || {
            let seen = seen.clone();
            async move { seen.store(true, Ordering::SeqCst) }
        });
        let text = render().await.expect("renders");
        assert!(ran.load(Ordering::SeqCst));
        assert!(
            text.contains("# HELP metrics_test_events Events seen by this test."),
            "{text}"
        );
        assert!(text.contains("metrics_test_events_total 3"), "{text}");
    }
}
