//! Serving the public HTTP port with every connection bounded: the gateway's own accept loop (hyper's
//! HTTP/1 connection builder under the axum router) so that it can count connections per address,
//! refuse at once what is over a bound, and time out clients that never finish a request head.
//!
//! - **Budget**: at most `max_connections` open at once.
//! - **Per address**: at most `max_connections_per_address` of them from one IP address, so one
//!   address (a flood of idle sockets, a slowloris) can never take the whole budget.
//! - **Fair shares** (league_runtime::fair_share): with the budget full, a newcomer gets the longest-idle
//!   connection of the address holding the most (closed to make room), so a few addresses holding
//!   their whole share each cannot keep everyone else out. A connection serving a request (its answer
//!   still being sent, an event stream) is never closed for this.
//! - **Header and idle timeout**: a connection must deliver a complete request head within
//!   `header_timeout` of connecting, and within `header_timeout` of its previous answer (hyper starts
//!   the header-read timer whenever it waits for a head, so a kept-alive connection that sends nothing
//!   is closed after the same time). Requests in progress are never cut: the timer runs only while the
//!   server waits for a head. The body's own bound is where the body is read (http.rs).
//!
//! A connection over a bound (its address's share used up, or the budget full with nobody holding more
//! than its fair share idle) gets an immediate `503` with a JSON-RPC error (E023, SERVER_BUSY) and is
//! closed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use league_proto::ErrorCode;
use league_runtime::ShutdownSignal;
use league_runtime::fair_share::FairShare;
use league_v2::jsonrpc;
use league_v2::league_error::LeagueError;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

/// How long shutdown waits for open connections to finish their requests.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long a refused client is given to take its 503.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);

/// The bounds on connections (configuration: `LEAGUE_MAX_CONNECTIONS`,
/// `LEAGUE_MAX_CONNECTIONS_PER_ADDRESS`, `LEAGUE_HEADER_TIMEOUT`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    pub(crate) max_connections: usize,
    pub(crate) max_per_address: usize,
    pub(crate) header_timeout: Duration,
}

/// Serves `router` on `listener` until `shutdown`, then lets open connections finish (for at most
/// [`SHUTDOWN_GRACE`]).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: ShutdownSignal,
) -> anyhow::Result<()> {
    let shares = FairShare::new(limits.max_connections, limits.max_per_address);
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.clone().wait() => break,
        };
        let Some(share) = shares.take(peer.ip()) else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let share = Arc::new(share);
        stream.set_nodelay(true).ok();
        let service = {
            let (router, share) = (router.clone(), share.clone());
            tower::service_fn(move |mut request: http::Request<Incoming>| {
                // In use from the request until its answer's body is dropped (sent, or given up).
                let busy = share.busy();
                // The client's address, as handlers see it (`ConnectInfo<SocketAddr>`).
                request.extensions_mut().insert(ConnectInfo(peer));
                let answer = router.clone().oneshot(request);
                async move {
                    let response = answer.await?;
                    Ok::<_, Infallible>(response.map(|body| {
                        Body::new(body.map_frame(move |frame| {
                            let _in_use = &busy;
                            frame
                        }))
                    }))
                }
            })
        };
        let connection = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::select! {
                ended = connection => {
                    if let Err(error) = ended {
                        tracing::debug!(%peer, %error, "connection ended");
                    }
                }
                // Idle, and its place given to another address: closed.
                () = share.evicted() => tracing::debug!(%peer, "idle connection closed to make room"),
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; closing them");
    }
    Ok(())
}

/// The 503 a connection over a bound gets before it is closed.
fn refusal() -> Vec<u8> {
    let error = LeagueError::new(
        ErrorCode::ServerBusy,
        "too many open connections (from this address, or in all); retry later",
    );
    // A `Value` prints infallibly: no serializer error to hide.
    let body = jsonrpc::failure(Value::Null, &error.to_rpc(None)).to_string();
    let mut response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body.as_bytes());
    response
}

async fn refuse(mut stream: TcpStream) {
    let write = async {
        stream.write_all(&refusal()).await.ok();
        stream.shutdown().await.ok();
    };
    tokio::time::timeout(REFUSAL_WRITE, write).await.ok();
}
