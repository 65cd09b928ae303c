//! The gateway under hostile traffic, over real sockets on loopback: one address holding far more
//! connections than its share, slowloris heads, idle connections, bodies that never arrive, floods of
//! requests naming a new sender and token each time, and `/readyz` while the manager is away.
//!
//! A second client comes from 127.0.0.2 (any 127.0.0.0/8 address is this machine's loopback), so it is
//! another address to the gateway. Every loop is bounded; every wait has a deadline.

use crate::support;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use league_testkit::observe;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const SECOND_ADDRESS: [u8; 4] = [127, 0, 0, 2];

/// A TCP connection to `addr` from `source` (port chosen by the system).
async fn connect_from(source: IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    socket.connect(addr).await
}

/// POSTs `body` from `source` with `content_type`; status and body.
async fn post_from(source: IpAddr, addr: SocketAddr, content_type: &str, body: String) -> HttpReply {
    post_from_with(source, addr, &[("content-type", content_type)], body).await
}

async fn post_from_with(
    source: IpAddr,
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: String,
) -> HttpReply {
    let stream = connect_from(source, addr).await.expect("connect");
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP handshake");
    tokio::spawn(connection);
    let mut request = http::Request::post("/mcp").header(http::header::HOST, addr.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Full::new(Bytes::from(body))).expect("request");
    let response = sender.send_request(request).await.expect("HTTP response");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    HttpReply { status, body }
}

fn ping() -> String {
    json!({"jsonrpc": "2.0", "method": "ping", "id": 1}).to_string()
}

/// Reads until the gateway closes the connection (or resets it), for at most [`PATIENCE`]; what came.
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    let read = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut raw)).await;
    assert!(
        read.is_ok(),
        "the gateway kept the connection open for {PATIENCE:?}"
    );
    raw
}

/// An address whose port nothing listens on: a manager that is down.
async fn nothing_listening() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_holding_1200_connections_leaves_room_for_others() {
    // 1,200 client sockets plus the gateway's side of those it keeps: well inside the 20,000 descriptors
    // this machine allows a process (`ulimit -n`); the test says so rather than raising the limit.
    let gateway = spawn_gateway_with(&nothing_listening().await, |config| {
        config.max_connections = 256;
        config.max_connections_per_address = 32;
        // Long enough that the held connections stay open for the whole test.
        config.header_timeout = Duration::from_secs(120);
    })
    .await;
    let local: IpAddr = [127, 0, 0, 1].into();
    let mut held = Vec::with_capacity(1200);
    for _ in 0..1200 {
        held.push(connect_from(local, gateway.http).await.expect("connect"));
    }
    // This address's share is taken: its next connection is refused at once with E023.
    let refused = unsolicited_reply(gateway.http).await;
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.json()["error"]["code"], -32023);
    assert_eq!(refused.json()["error"]["data"]["error_code"], "E023");
    // Another address is served.
    let reply = post_from(SECOND_ADDRESS.into(), gateway.http, "application/json", ping()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["result"]["status"], "ok");
    // The connections over the share were closed by the gateway, not left hanging: the first
    // `max_connections_per_address` are open, every later one reads the 503 and then its end.
    let mut over_share = held.split_off(32);
    let mut closed = 0;
    for stream in over_share.iter_mut().take(50) {
        let raw = read_until_closed(stream).await;
        assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 503"));
        closed += 1;
    }
    assert_eq!(closed, 50);
}

#[tokio::test(flavor = "multi_thread")]
async fn slowloris_idle_and_bodiless_connections_are_closed() {
    let gateway = spawn_gateway_with(&nothing_listening().await, |config| {
        config.header_timeout = Duration::from_millis(500);
        config.body_timeout = Duration::from_millis(500);
    })
    .await;

    // A head sent a byte at a time, never finished: the connection is closed by the header timeout.
    let mut slow = TcpStream::connect(gateway.http).await.expect("connect");
    let head = b"POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nX-Slow: ";
    let mut closed = false;
    for byte in head.iter().chain(std::iter::repeat(&b'a')).take(400) {
        if slow.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 64];
        // Each byte waits up to 50 ms for the gateway's end of the connection: the dribble's pace.
        if let Ok(Ok(0) | Err(_)) = tokio::time::timeout(Duration::from_millis(50), slow.read(&mut buf)).await
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "a head dribbled for 400 bytes (20 s) was never cut off");

    // A connection that sends nothing at all.
    let mut idle = TcpStream::connect(gateway.http).await.expect("connect");
    assert!(read_until_closed(&mut idle).await.is_empty());

    // A kept-alive connection, idle after its answer.
    let mut kept = TcpStream::connect(gateway.http).await.expect("connect");
    let body = ping();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    kept.write_all(request.as_bytes()).await.expect("write");
    let raw = read_until_closed(&mut kept).await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        !text.contains("connection: close"),
        "it was kept alive, then closed idle: {text}"
    );

    // A body announced but never sent: 408 with a JSON-RPC error, not a two-minute wait.
    let mut bodiless = TcpStream::connect(gateway.http).await.expect("connect");
    bodiless
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
        .await
        .expect("write");
    let raw = read_until_closed(&mut bodiless).await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").map_or("", |(_, b)| b))
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(body["error"]["data"]["error_code"], "E001", "{body}");
}

/// A message that needs authentication, from `sender` with `token`.
fn authenticated_query(sender: &str, token: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "method": "league_query",
        "params": {
            "protocol": "league.v2",
            "message_type": "LEAGUE_QUERY",
            "sender": sender,
            "timestamp": "2026-11-21T08:53:40Z",
            "conversation_id": "conv-guess",
            "auth_token": token,
            "query_type": "GET_STANDINGS",
        },
        "id": 1,
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn new_senders_and_guessed_tokens_from_one_address_are_limited() {
    let manager = spawn_manager().await;
    const FAILED_AUTH_LIMIT: u32 = 5;
    let gateway = spawn_gateway_with(&manager.url, |config| {
        config.failed_auth_limit = FAILED_AUTH_LIMIT;
        config.address_rate_limit = 10_000;
    })
    .await;
    let started = Instant::now();
    let (mut invalid, mut limited) = (0u32, 0u32);
    for n in 0..300 {
        let body = authenticated_query(&format!("player:P{n}"), &format!("guess-{n}"));
        let reply = gateway.post(body).await;
        match reply.status {
            429 => limited += 1,
            200 => {
                let code = reply.json()["error"]["data"]["error_code"].clone();
                assert_eq!(code, "E012", "{}", reply.text());
                invalid += 1;
            }
            other => panic!("HTTP {other}: {}", reply.text()),
        }
    }
    // Each E012 cost the manager at most one Authenticate; the allowance is FAILED_AUTH_LIMIT a minute,
    // refilled at that rate while the test ran.
    let refilled = (started.elapsed().as_secs_f64() * f64::from(FAILED_AUTH_LIMIT) / 60.0).ceil() as u32;
    assert!(
        invalid <= FAILED_AUTH_LIMIT + refilled + 1,
        "{invalid} guesses reached the manager"
    );
    assert!(
        limited >= 300 - (FAILED_AUTH_LIMIT + refilled + 1),
        "{limited} refused"
    );
    // Another address is untouched.
    let reply = post_from(SECOND_ADDRESS.into(), gateway.http, "application/json", ping()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());

    // The address's rate holds whatever sender each request names.
    let flood = spawn_gateway_with(&manager.url, |config| config.address_rate_limit = 5).await;
    let mut refused = None;
    for n in 0..200 {
        let body = json!({"jsonrpc": "2.0", "method": "ping", "params": {"sender": format!("player:X{n}")}, "id": n});
        let reply = flood.post(body.to_string()).await;
        if reply.status == 429 {
            refused = Some(reply);
            break;
        }
    }
    let refused = refused.expect("200 pings with 200 senders were never limited");
    assert_eq!(refused.json()["error"]["code"], -32016);
}

#[tokio::test(flavor = "multi_thread")]
async fn ready_only_while_the_manager_answers() {
    let down = spawn_gateway_with(&nothing_listening().await, |_| {}).await;
    let probe = |gateway: &TestGateway| {
        let addr = gateway.http;
        async move {
            let stream = TcpStream::connect(addr).await.expect("connect");
            let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .expect("handshake");
            tokio::spawn(connection);
            let request = http::Request::get("/readyz")
                .header(http::header::HOST, addr.to_string())
                .body(Full::new(Bytes::new()))
                .expect("request");
            sender
                .send_request(request)
                .await
                .expect("response")
                .status()
                .as_u16()
        }
    };
    assert_eq!(probe(&down).await, 503, "no manager: not ready");

    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |_| {}).await;
    assert_eq!(probe(&gateway).await, 200);
    drop(manager);
    observe("not ready once the manager stopped", PATIENCE, async || {
        (probe(&gateway).await == 503).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn only_json_bodies_are_read() {
    let gateway = spawn_gateway_with(&nothing_listening().await, |_| {}).await;
    let local: IpAddr = [127, 0, 0, 1].into();
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let reply = post_from(local, gateway.http, content_type, ping()).await;
        assert_eq!(reply.status, 415, "{content_type}: {}", reply.text());
        assert_eq!(reply.json()["error"]["code"], -32600, "{content_type}");
    }
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let reply = post_from(local, gateway.http, content_type, ping()).await;
        assert_eq!(reply.status, 200, "{content_type}: {}", reply.text());
    }
    // MCP's transport refusals are JSON-RPC too (here: a text/plain body).
    let mcp = [
        ("accept", "application/json, text/event-stream"),
        ("content-type", "text/plain"),
    ];
    let reply = post_from_with(local, gateway.http, &mcp, ping()).await;
    assert_eq!(reply.status, 415, "{}", reply.text());
    assert_eq!(reply.json()["error"]["code"], -32600, "{}", reply.text());
}
