//! Serving and calling gRPC the same way in every service: servers run on a listener the caller already
//! bound (tests bind port 0 and read the port back; nothing guesses free ports), with the standard health
//! and reflection services, a span and a latency measurement per call ([`server_calls`]); clients connect
//! lazily with Nagle off, because every message here is small and latency-bound, and carry the caller's
//! trace context ([`GrpcChannel`]). A player's match calls go many to an exchange ([`answer_match_calls`]).

mod health;
mod match_calls;
mod server_calls;
mod traced_channel;

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic::transport::Endpoint;
use tonic::transport::server::TcpIncoming;

use crate::ShutdownSignal;
use crate::admin::Readiness;

pub use match_calls::{
    MAX_MATCH_CALLS, MatchCallAnswers, answer_match_calls, batched_call, failure_of, match_call, status_of,
    trace_context,
};

/// The path of `ManagerService.ReportMatchResult`, one match's result.
pub const REPORT_MATCH_RESULT: &str = "/league.v2.ManagerService/ReportMatchResult";

/// The path of `ManagerService.ReportMatchResults`, a referee's reports many to a request: like a
/// MatchCalls exchange, the request itself is not traced; each report is, as the
/// [`REPORT_MATCH_RESULT`] call it stands for ([`batched_call`]).
pub const REPORT_MATCH_RESULTS: &str = "/league.v2.ManagerService/ReportMatchResults";

/// The most reports one `ReportMatchResults` request may carry (the contract's limit): a referee sends
/// at most as many as it runs matches at once, and a larger request is refused whole.
pub const MAX_REPORTS: usize = 256;
pub use server_calls::{ServerCalls, ServerCallsLayer, record_call_fields};
pub use traced_channel::GrpcChannel;

/// Binds `addr` (port 0 picks a free port) and says where it ended up.
pub async fn bind(addr: SocketAddr) -> anyhow::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|error| anyhow::anyhow!("cannot listen on {addr}: {error}"))?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}

/// Adds the gRPC health service (reporting `S` as serving) and reflection over the league.v2 descriptors.
pub async fn with_health_and_reflection<S: NamedService>(routes: Routes) -> anyhow::Result<Routes> {
    let (reporter, health) = tonic_health::server::health_reporter();
    reporter.set_serving::<S>().await;
    with_reflection(routes.add_service(health))
}

/// [`with_health_and_reflection`] for a server whose health status follows `readiness`: SERVING while
/// `/readyz` would answer 200 (asked on every `Check`), NOT_SERVING otherwise — the manager's while its
/// migrated database answers.
pub async fn with_readiness_health_and_reflection<S: NamedService>(
    routes: Routes,
    readiness: Readiness,
) -> anyhow::Result<Routes> {
    let health = health::ReadinessHealth::new(readiness, S::NAME).await;
    let health = tonic_health::pb::health_server::HealthServer::new(health);
    with_reflection(routes.add_service(health))
}

/// Adds reflection over the league.v2 descriptors.
fn with_reflection(routes: Routes) -> anyhow::Result<Routes> {
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(league_proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    Ok(routes.add_service(reflection))
}

/// How long a server that was asked to stop waits for its running calls. Streams that last as long as
/// the caller keeps them (a gateway's `WatchReplies`, a `Health.Watch`, a referee's match calls) end
/// on shutdown where they are served; this bounds what is left, so a service stops within its
/// orchestrator's grace (compose's 10 s, Kubernetes' 30 s) rather than being killed.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(3);

/// Serves `routes` on `listener` until `shutdown`, then lets in-flight calls finish for at most
/// [`DRAIN_LIMIT`] before closing their connections.
pub async fn serve(listener: TcpListener, routes: Routes, shutdown: ShutdownSignal) -> anyhow::Result<()> {
    // Nagle off on every accepted connection: `Server::tcp_nodelay` only applies to listeners tonic binds
    // itself, and with Nagle on, each small reply waits for the peer's delayed ACK (~40 ms).
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = tonic::transport::Server::builder()
        .layer(ServerCallsLayer)
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, shutdown.clone().wait());
    tokio::pin!(server);
    let served = tokio::select! {
        served = &mut server => served,
        () = shutdown.wait() => match tokio::time::timeout(DRAIN_LIMIT, &mut server).await {
            Ok(served) => served,
            Err(_) => {
                tracing::warn!("calls still running {DRAIN_LIMIT:?} after shutdown; closing their connections");
                Ok(())
            }
        },
    };
    served.map_err(|error| anyhow::anyhow!("gRPC server failed: {error}"))
}

/// A channel to `url` that connects on first use and reconnects after failures.
pub fn channel(url: &str) -> anyhow::Result<GrpcChannel> {
    let endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|error| anyhow::anyhow!("invalid gRPC endpoint {url:?}: {error}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5))
        .http2_keep_alive_interval(Duration::from_secs(30));
    Ok(endpoint.connect_lazy().into())
}

/// A channel to `url` once a connection succeeds, retrying with backoff for up to `patience` (a service
/// may start before the one it calls, as in compose).
pub async fn connect_with_retry(
    url: &str,
    patience: Duration,
    shutdown: &ShutdownSignal,
) -> anyhow::Result<GrpcChannel> {
    let endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|error| anyhow::anyhow!("invalid gRPC endpoint {url:?}: {error}"))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5));
    let deadline = tokio::time::Instant::now() + patience;
    let mut delay = Duration::from_millis(50);
    loop {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel.into()),
            Err(error) if tokio::time::Instant::now() >= deadline || shutdown.is_triggered() => {
                anyhow::bail!("cannot reach {url}: {error}")
            }
            Err(error) => tracing::info!(%url, %error, "not reachable yet; retrying"),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(2));
    }
}

/// The URL other processes use to reach a server bound to `addr` (0.0.0.0 becomes loopback).
pub fn local_url(addr: SocketAddr) -> String {
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else {
        addr.ip().to_string()
    };
    format!("http://{host}:{}", addr.port())
}

/// Printed on stdout once a service listens: the launcher waits for this line instead of sleeping.
pub fn announce_ready(service: &str, addr: SocketAddr) {
    println!("LEAGUE_READY {service} {}", local_url(addr));
}

#[cfg(test)]
mod tests {
    use tonic::codegen::tokio_stream::StreamExt;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;

    use super::*;
    use crate::Shutdown;

    /// A `Health.Watch` stream lasts as long as its client keeps it: without a bound on the drain, the
    /// server never stops while a client watches.
    #[tokio::test]
    async fn a_server_stops_though_a_client_keeps_a_stream_open() {
        let (listener, addr) = bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.expect("a port");
        let routes = with_health_and_reflection::<
            tonic_health::pb::health_server::HealthServer<tonic_health::server::HealthService>,
        >(Routes::default())
        .await
        .expect("routes");
        let shutdown = Shutdown::new();
        let server = tokio::spawn(serve(listener, routes, shutdown.signal()));
        let mut client = HealthClient::new(channel(&local_url(addr)).expect("a channel"));
        let mut watch = client
            .watch(HealthCheckRequest::default())
            .await
            .expect("a watch")
            .into_inner();
        watch.next().await.expect("the first status").expect("a status");

        shutdown.trigger();
        // Far above DRAIN_LIMIT: this bounds a hang, not a speed.
        let served = tokio::time::timeout(DRAIN_LIMIT * 10, server)
            .await
            .expect("the server stops although the watch is open")
            .expect("the server task");
        served.expect("a clean stop");
        drop(watch);
    }
}
