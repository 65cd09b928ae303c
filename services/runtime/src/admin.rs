//! The admin HTTP server every service runs beside its gRPC port, for Prometheus and Kubernetes:
//!
//! - `GET /metrics`: the process's metrics as OpenMetrics text ([`crate::metrics`]);
//! - `GET /healthz`: 200 while the process serves at all (liveness);
//! - `GET /readyz`: 200 when the service can take traffic, else 503 (readiness) — what that means is the
//!   service's to say through its [`Readiness`]: the manager once its database is migrated and while it
//!   answers, a referee or a player host once registered with the manager.
//!
//! It listens on `LEAGUE_ADMIN_ADDR` (default `0.0.0.0:9464`; `league run` gives each child
//! `127.0.0.1:0`), and a service announces where with `LEAGUE_ADMIN <service> <url>` on stdout right
//! after `LEAGUE_READY`.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::{ShutdownSignal, grpc, metrics};

/// Where the admin server listens.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AdminConfig {
    /// `LEAGUE_ADMIN_ADDR`.
    pub admin_addr: SocketAddr,
}

impl Default for AdminConfig {
    fn default() -> Self {
        Self {
            admin_addr: SocketAddr::from(([0, 0, 0, 0], 9464)),
        }
    }
}

impl AdminConfig {
    pub fn load() -> anyhow::Result<Self> {
        crate::config::load()
    }
}

type Check = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = bool> + Send>> + Send + Sync>;

/// Whether a service is ready: a flag the service sets, and optionally a check run on every probe
/// (the manager's: the database answers). Cheap to clone; every clone is the same readiness.
#[derive(Clone, Default)]
pub struct Readiness {
    inner: Arc<ReadinessInner>,
}

#[derive(Default)]
struct ReadinessInner {
    ready: AtomicBool,
    check: Mutex<Option<Check>>,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness")
            .field("ready", &self.inner.ready.load(Ordering::SeqCst))
            .finish_non_exhaustive()
    }
}

impl Readiness {
    /// Not ready until [`set_ready`](Readiness::set_ready).
    pub fn new() -> Readiness {
        Readiness::default()
    }

    pub fn set_ready(&self, ready: bool) {
        self.inner.ready.store(ready, Ordering::SeqCst);
    }

    /// From now on, being ready also takes `check` to pass when asked.
    pub fn set_check<F, Fut>(&self, check: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        let check: Check = Arc::new(move || Box::pin(check()));
        *self.inner.check.lock().unwrap_or_else(PoisonError::into_inner) = Some(check);
    }

    pub async fn is_ready(&self) -> bool {
        if !self.inner.ready.load(Ordering::SeqCst) {
            return false;
        }
        let check = self
            .inner
            .check
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match check {
            Some(check) => check().await,
            None => true,
        }
    }
}

/// The admin endpoints, without a socket (tests call it with `oneshot`).
pub fn router(readiness: Readiness) -> Router {
    Router::new()
        .route("/metrics", get(render_metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(readiness)
}

async fn render_metrics() -> Response {
    match metrics::render().await {
        Ok(text) => ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "cannot render the metrics\n").into_response(),
    }
}

async fn ready(State(readiness): State<Readiness>) -> (StatusCode, &'static str) {
    if readiness.is_ready().await {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}

/// The admin server of one service, serving until shutdown.
#[derive(Debug)]
pub struct AdminServer {
    local_addr: SocketAddr,
}

impl AdminServer {
    /// Binds `addr` (port 0 picks a free port) and serves the admin endpoints until `shutdown`.
    pub async fn start(
        addr: SocketAddr,
        readiness: Readiness,
        shutdown: ShutdownSignal,
    ) -> anyhow::Result<AdminServer> {
        let (listener, local_addr) = grpc::bind(addr)
            .await
            .map_err(|error| anyhow::anyhow!("admin server: {error}"))?;
        tokio::spawn(async move {
            let served = axum::serve(listener, router(readiness))
                .with_graceful_shutdown(shutdown.wait())
                .await;
            if let Err(error) = served {
                tracing::error!(%error, "admin server failed");
            }
        });
        Ok(AdminServer { local_addr })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://host:port` of the admin server (0.0.0.0 becomes loopback).
    pub fn url(&self) -> String {
        grpc::local_url(self.local_addr)
    }

    /// Prints `LEAGUE_ADMIN <service> <url>` on stdout, for the launcher (after `LEAGUE_READY`).
    pub fn announce(&self, service: &str) {
        println!("LEAGUE_ADMIN {service} {}", self.url());
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;

    async fn status(readiness: &Readiness, path: &str) -> StatusCode {
        let request = Request::get(path).body(Body::empty()).expect("request");
        router(readiness.clone())
            .oneshot(request)
            .await
            .expect("infallible")
            .status()
    }

    #[tokio::test]
    async fn ready_only_once_set_and_while_the_check_passes() {
        let readiness = Readiness::new();
        assert_eq!(status(&readiness, "/healthz").await, StatusCode::OK);
        assert_eq!(
            status(&readiness, "/readyz").await,
            StatusCode::SERVICE_UNAVAILABLE
        );
        readiness.set_ready(true);
        assert_eq!(status(&readiness, "/readyz").await, StatusCode::OK);
        let reachable = Arc::new(AtomicBool::new(false));
        let probe = reachable.clone();
        readiness.set_check(move || {
            let probe = probe.clone();
            async move { probe.load(Ordering::SeqCst) }
        });
        assert_eq!(
            status(&readiness, "/readyz").await,
            StatusCode::SERVICE_UNAVAILABLE
        );
        reachable.store(true, Ordering::SeqCst);
        assert_eq!(status(&readiness, "/readyz").await, StatusCode::OK);
    }

    #[tokio::test]
    async fn metrics_are_openmetrics_text() {
        let request = Request::get("/metrics").body(Body::empty()).expect("request");
        let response = router(Readiness::new())
            .oneshot(request)
            .await
            .expect("infallible");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response
                .headers()
                .get(header::CONTENT_TYPE)
                .map(|value| value.as_bytes()),
            Some(metrics::CONTENT_TYPE.as_bytes())
        );
    }
}
