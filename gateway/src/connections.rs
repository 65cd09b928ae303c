//! Serving the public HTTP port with every connection bounded: the gateway's own accept loop (hyper's
//! HTTP/1 connection builder under the axum router) so that it can count connections per address,
//! refuse at once what is over a bound, and time out clients that never finish a request head.
//!
//! - **Budget**: at most `max_connections` open at once.
//! - **Per address**: at most `max_connections_per_address` of them from one IP address, so one
//!   address (a flood of idle sockets, a slowloris) can never take the whole budget: the rest stays
//!   reserved for everyone else.
//! - **Header and idle timeout**: a connection must deliver a complete request head within
//!   `header_timeout` of connecting, and within `header_timeout` of its previous answer (hyper starts
//!   the header-read timer whenever it waits for a head, so a kept-alive connection that sends nothing
//!   is closed after the same time). Requests in progress are never cut: the timer runs only while the
//!   server waits for a head. The body's own bound is where the body is read (http.rs).
//!
//! A connection over a bound gets an immediate `503` with a JSON-RPC error (E023, SERVER_BUSY) and is
//! closed.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use league_proto::ErrorCode;
use league_runtime::ShutdownSignal;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::jsonrpc;
use crate::league_error::LeagueError;

/// How long shutdown waits for open connections to finish their requests.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long a refused client is given to take its 503.
const REFUSAL_WRITE: Duration = Duration::from_secs(1);

/// The bounds on connections (configuration: `LEAGUE_MAX_CONNECTIONS`,
/// `LEAGUE_MAX_CONNECTIONS_PER_ADDRESS`, `LEAGUE_HEADER_TIMEOUT`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub max_per_address: usize,
    pub header_timeout: Duration,
}

/// The client's address, as handlers see it (`ConnectInfo<Peer>`).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

/// Serves `router` on `listener` until `shutdown`, then lets open connections finish (for at most
/// [`SHUTDOWN_GRACE`]).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: ShutdownSignal,
) -> anyhow::Result<()> {
    let slots = Slots::new(limits);
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
        let Some(slot) = slots.take(peer.ip()) else {
            tokio::spawn(refuse(stream));
            continue;
        };
        stream.set_nodelay(true).ok();
        let service = router
            .clone()
            .map_request(move |mut request: http::Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(Peer(peer)));
                request
            });
        let connection = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended");
            }
            drop(slot);
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
    let body = serde_json::to_vec(&jsonrpc::failure(Value::Null, &error.to_rpc(None))).unwrap_or_default();
    let mut response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    response
}

async fn refuse(mut stream: TcpStream) {
    let write = async {
        stream.write_all(&refusal()).await.ok();
        stream.shutdown().await.ok();
    };
    tokio::time::timeout(REFUSAL_WRITE, write).await.ok();
}

/// The connection budget and each address's share of it.
#[derive(Debug, Clone)]
struct Slots {
    budget: Arc<Semaphore>,
    per_address: Arc<Mutex<HashMap<IpAddr, usize>>>,
    max_per_address: usize,
}

impl Slots {
    fn new(limits: ConnectionLimits) -> Self {
        Self {
            budget: Arc::new(Semaphore::new(limits.max_connections)),
            per_address: Arc::default(),
            max_per_address: limits.max_per_address,
        }
    }

    /// A slot for a connection from `ip`, or `None` when the address's share or the budget is used up.
    fn take(&self, ip: IpAddr) -> Option<Slot> {
        let permit = self.budget.clone().try_acquire_owned().ok()?;
        let mut per_address = self.per_address.lock().unwrap_or_else(PoisonError::into_inner);
        let open = per_address.entry(ip).or_insert(0);
        if *open >= self.max_per_address {
            return None;
        }
        *open += 1;
        Some(Slot {
            slots: self.clone(),
            ip,
            _permit: permit,
        })
    }

    fn give_back(&self, ip: IpAddr) {
        let mut per_address = self.per_address.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(open) = per_address.get_mut(&ip) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                per_address.remove(&ip);
            }
        }
    }
}

/// One open connection's share of the budget, given back when it closes.
#[derive(Debug)]
struct Slot {
    slots: Slots,
    ip: IpAddr,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.give_back(self.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_gets_its_share_and_the_rest_stays_for_others() {
        let slots = Slots::new(ConnectionLimits {
            max_connections: 3,
            max_per_address: 2,
            header_timeout: Duration::from_secs(1),
        });
        let a: IpAddr = [127, 0, 0, 1].into();
        let b: IpAddr = [127, 0, 0, 2].into();
        let first = slots.take(a).expect("a's first");
        let _second = slots.take(a).expect("a's second");
        assert!(slots.take(a).is_none(), "a's share is 2");
        let _third = slots.take(b).expect("b still gets one");
        assert!(slots.take(b).is_none(), "the budget is 3");
        drop(first);
        assert!(slots.take(a).is_some(), "a closed one, so it may open one");
    }
}
