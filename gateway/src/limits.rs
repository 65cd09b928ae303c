//! The gateway's bounds: requests per second per agent (token buckets), and open connections (a
//! listener that answers 503 past the limit instead of leaving clients hanging). The body size bound is
//! applied where the body is read (http.rs).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Buckets kept before idle ones are dropped.
const MAX_BUCKETS: usize = 10_000;

/// Per-key token buckets: `rate` requests per second, bursts of `rate`.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(per_second: u32) -> Self {
        Self {
            rate: f64::from(per_second),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token from `key`'s bucket; false when it is empty.
    pub fn allow(&self, key: &str) -> bool {
        let now = Instant::now();
        let Ok(mut buckets) = self.buckets.lock() else {
            return true;
        };
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(key) {
            // Full buckets are the same as no bucket: forget those.
            let rate = self.rate;
            buckets.retain(|_, (tokens, at)| *tokens + at.elapsed().as_secs_f64() * rate < rate);
        }
        let (tokens, at) = buckets.entry(key.to_owned()).or_insert((self.rate, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * self.rate).min(self.rate);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A TCP listener that serves at most `limit` connections at once; beyond that a client gets an
/// immediate `503` with a JSON-RPC error body and the connection is closed.
#[derive(Debug)]
pub struct LimitedListener {
    listener: TcpListener,
    permits: Arc<Semaphore>,
}

impl LimitedListener {
    pub fn new(listener: TcpListener, limit: usize) -> Self {
        Self {
            listener,
            permits: Arc::new(Semaphore::new(limit)),
        }
    }
}

const TOO_MANY_CONNECTIONS: &str = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32016,\"message\":\"RATE_LIMITED: too many open connections; retry later\",\"data\":{\"error_code\":\"E016\"}},\"id\":null}";

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedConnection;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (mut stream, addr) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            match self.permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    return (
                        LimitedConnection {
                            stream,
                            _permit: permit,
                        },
                        addr,
                    );
                }
                Err(_) => {
                    tokio::spawn(async move {
                        let response = format!(
                            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{TOO_MANY_CONNECTIONS}",
                            TOO_MANY_CONNECTIONS.len()
                        );
                        stream.write_all(response.as_bytes()).await.ok();
                        stream.shutdown().await.ok();
                    });
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// The client's address, as handlers see it (`ConnectInfo<Peer>`).
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, LimitedListener>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, LimitedListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}

/// A connection holding its share of the limit until it closes.
#[derive(Debug)]
pub struct LimitedConnection {
    stream: TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl AsyncRead for LimitedConnection {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for LimitedConnection {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refuses() {
        let limiter = RateLimiter::new(3);
        assert!((0..3).all(|_| limiter.allow("a")));
        assert!(!limiter.allow("a"));
        assert!(limiter.allow("b"), "buckets are per key");
    }
}
