//! Every authentication attempt and every registration counts against the same limits whatever carries
//! it: a single league.v2 call, each element of a JSON-RPC batch, an MCP `tools/call`. Over real HTTP on
//! loopback, each part from an address of its own (127.0.0.x), every loop bounded.
//!
//! A guess that reached the manager is answered E012 (the manager looked the token up and found no
//! agent); one the gateway refused before asking is answered E016. So the E012s counted are the lookups
//! the guesses cost the manager.

use crate::support;

use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use futures::future::join_all;
use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

const FAILED_AUTH_LIMIT: u32 = 5;
const REGISTRATION_LIMIT: u32 = 6;

/// POSTs `body` to `/mcp` from `source` with these headers, on a connection of its own (closed after
/// the answer); the status and the JSON answer.
async fn post_from(
    source: [u8; 4],
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Value) {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(IpAddr::from(source), 0))
        .expect("bind");
    let mut stream = socket.connect(addr).await.expect("connect");
    let body = serde_json::to_vec(body).expect("JSON");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(&body).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut raw))
        .await
        .expect("an answer in time")
        .expect("read");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("no status: {text}"));
    let json = serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {text}"));
    (status, json)
}

/// A league.v2 call needing authentication, with a guessed token.
fn guessed_query(n: usize) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "league_query",
        "params": {
            "protocol": "league.v2",
            "message_type": "LEAGUE_QUERY",
            "sender": format!("player:P{n}"),
            "timestamp": "2026-11-21T08:53:40Z",
            "conversation_id": format!("conv-guess-{n}"),
            "auth_token": format!("guess-{n}"),
            "query_type": "GET_STANDINGS",
        },
        "id": n,
    })
}

/// An MCP `tools/call`.
fn tool_call(n: usize, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

const MCP: (&str, &str) = ("accept", "application/json, text/event-stream");

/// The league.v2 error code of a JSON-RPC answer, or of an MCP tool's result.
fn error_code(answer: &Value) -> String {
    let code = answer
        .pointer("/error/data/error_code")
        .or_else(|| answer.pointer("/result/structuredContent/error_code"));
    code.and_then(Value::as_str).unwrap_or("none").to_owned()
}

/// What the failed-authentication allowance may have grown back since `started`, plus one.
fn grown_back(started: Instant, per_minute: u32) -> usize {
    (started.elapsed().as_secs_f64() * f64::from(per_minute) / 60.0).ceil() as usize + 1
}

fn count(codes: &[String], code: &str) -> usize {
    codes.iter().filter(|c| *c == code).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn guessed_tokens_reach_the_manager_a_limited_number_of_times_on_every_path() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |config| {
        config.failed_auth_limit = FAILED_AUTH_LIMIT;
        config.address_rate_limit = 10_000;
        config.agent_rate_limit = 10_000;
        // Room for a batch of 300 calls in one body.
        config.max_body_bytes = 256 * 1024;
    })
    .await;
    let limit = FAILED_AUTH_LIMIT as usize;

    // MCP tools/call, 300 guesses in the bearer header, 50 at a time on connections of their own.
    let started = Instant::now();
    let mut codes = Vec::new();
    for wave in 0..6 {
        let guesses = (0..50).map(|n| {
            let bearer = format!("Bearer guess-mcp-{wave}-{n}");
            async move {
                let headers = [MCP, ("authorization", bearer.as_str())];
                let (status, answer) = post_from(
                    [127, 0, 1, 1],
                    gateway.http,
                    &headers,
                    &tool_call(n, "get_standings", json!({})),
                )
                .await;
                match status {
                    200 => error_code(&answer),
                    other => format!("HTTP {other} {}", error_code(&answer)),
                }
            }
        });
        codes.extend(join_all(guesses).await);
    }
    let reached = count(&codes, "E012");
    assert!(
        reached <= limit + grown_back(started, FAILED_AUTH_LIMIT),
        "{reached} MCP guesses reached the manager"
    );
    assert!(reached >= 1, "the first guesses are looked up: {codes:?}");
    assert_eq!(
        reached + count(&codes, "E016") + count(&codes, "HTTP 429 E016"),
        300,
        "every other guess was refused by the limits: {codes:?}"
    );

    // One JSON-RPC batch of 300 guesses.
    let started = Instant::now();
    let batch: Vec<Value> = (0..300).map(guessed_query).collect();
    let (status, answers) = post_from([127, 0, 1, 2], gateway.http, &[], &Value::Array(batch)).await;
    assert_eq!(status, 200, "{answers}");
    let codes: Vec<String> = answers
        .as_array()
        .expect("a batch answer")
        .iter()
        .map(error_code)
        .collect();
    assert_eq!(codes.len(), 300);
    let reached = count(&codes, "E012");
    assert!(
        reached <= limit + grown_back(started, FAILED_AUTH_LIMIT),
        "{reached} batched guesses reached the manager"
    );
    assert_eq!(reached + count(&codes, "E016"), 300, "{codes:?}");

    // One allowance for every path: an address that spent it over MCP is refused on league.v2 too,
    // and the other way round.
    let (status, answer) = post_from([127, 0, 1, 1], gateway.http, &[], &guessed_query(1)).await;
    assert_eq!(
        (status, error_code(&answer)),
        (429, "E016".to_owned()),
        "{answer}"
    );
    let headers = [MCP, ("authorization", "Bearer guess-after-batch")];
    let (_, answer) = post_from(
        [127, 0, 1, 2],
        gateway.http,
        &headers,
        &tool_call(1, "get_standings", json!({})),
    )
    .await;
    assert_eq!(error_code(&answer), "E016", "{answer}");
    // Another address is untouched, and the operator's token is still good from it.
    let headers = [
        MCP,
        ("authorization", &format!("Bearer {OPERATOR_TOKEN}") as &str),
    ];
    let (status, answer) = post_from(
        [127, 0, 1, 3],
        gateway.http,
        &headers,
        &tool_call(1, "get_standings", json!({})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

fn registration(name: &str) -> Value {
    json!({
        "protocol": "league.v2",
        "message_type": "LEAGUE_REGISTER_REQUEST",
        "sender": format!("player:{name}"),
        "timestamp": "2026-11-21T08:53:40Z",
        "conversation_id": format!("register-{name}"),
        "player_meta": {
            "display_name": name,
            "version": "1.0.0",
            "game_types": ["even_odd"],
            "contact_endpoint": format!("http://127.0.0.1:9/{name}/mcp"),
        },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn registrations_from_one_address_share_one_allowance_on_every_path() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |config| {
        config.registration_rate_limit = REGISTRATION_LIMIT;
        config.address_rate_limit = 10_000;
        config.agent_rate_limit = 10_000;
    })
    .await;
    let source = [127, 0, 2, 1];
    let started = Instant::now();
    let mut codes = Vec::new();
    // Two as single league.v2 calls, then MCP tools/call, 50 at once.
    for n in 0..2 {
        let call = json!({"jsonrpc": "2.0", "method": "register_player", "params": registration(&format!("single{n}")), "id": n});
        let (status, answer) = post_from(source, gateway.http, &[], &call).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
    }
    let calls = (0..50).map(|n| async move {
        let call = tool_call(n, "register_player", registration(&format!("mcp{n}")));
        let (_, answer) = post_from(source, gateway.http, &[MCP], &call).await;
        if answer.pointer("/result/structuredContent/status") == Some(&json!("ACCEPTED")) {
            "ACCEPTED".to_owned()
        } else {
            error_code(&answer)
        }
    });
    codes.extend(join_all(calls).await);
    // And a batch of 50.
    let batch: Vec<Value> = (0..50)
        .map(|n| json!({"jsonrpc": "2.0", "method": "register_player", "params": registration(&format!("batch{n}")), "id": n}))
        .collect();
    let (status, answers) = post_from(source, gateway.http, &[], &Value::Array(batch)).await;
    assert_eq!(status, 200, "{answers}");
    for answer in answers.as_array().expect("a batch answer") {
        if answer.pointer("/result/status") == Some(&json!("ACCEPTED")) {
            codes.push("ACCEPTED".to_owned());
        } else {
            codes.push(error_code(answer));
        }
    }
    let accepted = 2 + count(&codes, "ACCEPTED");
    let allowed = REGISTRATION_LIMIT as usize + grown_back(started, REGISTRATION_LIMIT);
    assert!(
        accepted <= allowed,
        "{accepted} registrations from one address, allowed {allowed}: {codes:?}"
    );
    assert_eq!(
        count(&codes, "ACCEPTED") + count(&codes, "E016"),
        100,
        "{codes:?}"
    );
    // Another address registers.
    let call =
        json!({"jsonrpc": "2.0", "method": "register_player", "params": registration("elsewhere"), "id": 1});
    let (_, answer) = post_from([127, 0, 2, 2], gateway.http, &[], &call).await;
    assert_eq!(answer["result"]["status"], "ACCEPTED", "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn many_agents_behind_one_address_starting_at_once_are_not_refused() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway_with(&manager.url, |config| {
        config.failed_auth_limit = FAILED_AUTH_LIMIT;
        config.registration_rate_limit = 1_000;
    })
    .await;
    // 40 players, each with a token the gateway has never looked up.
    let mut tokens = Vec::new();
    for n in 0..40 {
        let call = json!({"jsonrpc": "2.0", "method": "register_player", "params": registration(&format!("host{n}")), "id": n});
        let (_, answer) = post_from([127, 0, 6, 1], gateway.http, &[], &call).await;
        let token = answer["result"]["auth_token"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        tokens.push(token.to_owned());
    }
    // All 40 ask at once from one address: 8 times the failed-authentication allowance in flight, and
    // every one of them good.
    let queries = tokens.iter().enumerate().map(|(n, token)| async move {
        let headers = [MCP, ("authorization", &format!("Bearer {token}") as &str)];
        let (status, answer) = post_from(
            [127, 0, 6, 2],
            gateway.http,
            &headers,
            &tool_call(n, "get_standings", json!({})),
        )
        .await;
        (status, answer["result"]["isError"].clone(), error_code(&answer))
    });
    for (status, is_error, code) in join_all(queries).await {
        assert_eq!((status, is_error, code.as_str()), (200, json!(false), "none"));
    }
}
