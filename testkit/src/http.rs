//! Plain HTTP for tests: a JSON-RPC POST to a gateway's `/mcp` on a connection of its own (so a test
//! sees exactly what came back, status and body), and serving a router on a free loopback port.

use std::net::SocketAddr;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_runtime::Shutdown;
use serde_json::Value;
use tokio::net::TcpStream;

/// What an HTTP request got back.
#[derive(Debug, Clone)]
pub struct HttpReply {
    pub status: u16,
    pub body: Bytes,
}

impl HttpReply {
    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// POSTs `body` to `http://addr/mcp` on a connection of its own, with `headers` beside the JSON
/// content type; panics when there is no HTTP answer.
pub async fn post_to(addr: SocketAddr, body: impl Into<Bytes>, headers: &[(&str, &str)]) -> HttpReply {
    try_post_to(addr, body, headers)
        .await
        .unwrap_or_else(|error| panic!("{error:#}"))
}

/// [`post_to`], for callers that report a failure instead of panicking (the bench).
pub async fn try_post_to(
    addr: SocketAddr,
    body: impl Into<Bytes>,
    headers: &[(&str, &str)],
) -> anyhow::Result<HttpReply> {
    let mut request = http::Request::post("/mcp").header(http::header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(addr, request.body(Full::new(body.into()))?).await
}

/// GETs the loopback URL `url` (`http://127.0.0.1:9464/metrics`).
pub async fn try_get(url: &str) -> anyhow::Result<HttpReply> {
    let addr = socket_addr(url)?;
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let path = rest.find('/').map_or("/", |slash| &rest[slash..]);
    send(addr, http::Request::get(path).body(Full::new(Bytes::new()))?).await
}

/// Sends `request` to `addr` on a connection of its own and reads the whole answer.
async fn send(addr: SocketAddr, mut request: http::Request<Full<Bytes>>) -> anyhow::Result<HttpReply> {
    let what = format!("{} http://{addr}{}", request.method(), request.uri());
    let host = http::HeaderValue::from_str(&addr.to_string())?;
    request.headers_mut().insert(http::header::HOST, host);
    let stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("connecting to {addr}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .with_context(|| format!("HTTP handshake with {addr}"))?;
    tokio::spawn(connection);
    let response = sender.send_request(request).await.with_context(|| what.clone())?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .with_context(|| format!("reading the answer to {what}"))?
        .to_bytes();
    Ok(HttpReply { status, body })
}

/// The address of a loopback URL such as `http://127.0.0.1:8000/mcp`.
pub fn socket_addr(url: &str) -> anyhow::Result<SocketAddr> {
    let authority = url.trim_start_matches("http://").split('/').next().unwrap_or(url);
    authority
        .parse()
        .with_context(|| format!("{url} does not name an IP address and port"))
}

/// Serves `router` on 127.0.0.1:0 until the returned `Shutdown` is triggered; the address it listens on.
pub async fn serve_on_loopback(router: axum::Router) -> (SocketAddr, Shutdown) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let shutdown = Shutdown::new();
    let signal = shutdown.signal();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(signal.wait())
            .await
    });
    (addr, shutdown)
}
