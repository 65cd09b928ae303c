//! Edges of the protocol an attacker (or a sloppy client) reaches for: ids echoed exactly whatever
//! their size, MCP `tools/call` with arguments that are not an object, and display names with invisible
//! formatting characters.

use crate::support;

use serde_json::{Value, json};
use support::*;

fn mcp_headers() -> [(&'static str, &'static str); 2] {
    [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn ids_are_echoed_exactly() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, league_v2::compliance::Mode::Lenient, Limits::default()).await;
    for id in [
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
        "1.5",
        "0.1000000000000000055511151231257827",
        "7",
        "\"abc\"",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","method":"ping","id":{id}}}"#);
        let reply = gateway.post(body).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        let text = reply.text();
        assert!(
            text.contains(&format!(r#""id":{id}"#)),
            "id {id} came back as {text}"
        );
        // The same in a batch, and in an error.
        let body = format!(
            r#"[{{"jsonrpc":"2.0","method":"ping","id":{id}}},{{"jsonrpc":"2.0","method":"nope","id":{id}}}]"#
        );
        let text = gateway.post(body).await.text();
        assert_eq!(
            text.matches(&format!(r#""id":{id}"#)).count(),
            2,
            "id {id} in a batch: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_call_with_array_arguments_is_invalid_params() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, league_v2::compliance::Mode::Lenient, Limits::default()).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ping", "arguments": [1, 2]}});
    // MCP's transport.
    let reply = gateway.post_with(call.to_string(), &mcp_headers()).await;
    let answer: Value = reply.json();
    assert_eq!(answer["error"]["code"], -32602, "MCP: {answer}");
    // league.v2 agents using MCP's framing.
    let answer = gateway.post(call.to_string()).await.json();
    assert_eq!(answer["error"]["code"], -32602, "league.v2: {answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn display_names_with_invisible_formatting_are_refused() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, league_v2::compliance::Mode::Lenient, Limits::default()).await;
    for (n, name) in ["ali\u{202E}ecila", "al\u{200B}ice", "\u{2067}alice"]
        .into_iter()
        .enumerate()
    {
        let response = gateway
            .rpc(
                "register_player",
                player_registration(name, &format!("http://127.0.0.1:9/{n}")),
            )
            .await;
        assert_eq!(response["result"]["status"], "REJECTED", "{name:?}: {response}");
        assert_eq!(response["result"]["error_code"], "E002", "{name:?}: {response}");
    }
    let response = gateway
        .rpc(
            "register_player",
            player_registration("Zoë 🎲", "http://127.0.0.1:9/ok"),
        )
        .await;
    assert_eq!(response["result"]["status"], "ACCEPTED", "{response}");
}
