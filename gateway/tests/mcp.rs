//! MCP on `/mcp`: a real manager and gateway in-process, spoken to over HTTP as an MCP client does — first
//! by hand (initialize → tools/list → tools/call, so a broken MCP path fails a plain `cargo test`), then
//! by the official MCP Python SDK.

mod support_mcp;

use serde_json::{Value, json};
use support_mcp::{League, MCP_ACCEPT, OPERATOR_TOKEN, post, send};

const TOOLS: [&str; 9] = [
    "get_match",
    "get_next_match",
    "get_player_stats",
    "get_schedule",
    "get_standings",
    "league_query",
    "ping",
    "register_player",
    "register_referee",
];

/// The handshake-era protocol version the hand-written client speaks.
const VERSION: &str = "2025-06-18";

/// One MCP request over HTTP, as a client after `initialize` sends it; the JSON-RPC response.
async fn mcp(league: &League, token: Option<&str>, method: &str, params: Value) -> Value {
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers = vec![("accept", MCP_ACCEPT), ("mcp-protocol-version", VERSION)];
    if let Some(bearer) = &bearer {
        headers.push(("authorization", bearer));
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let reply = post(league.http, &headers, &body).await;
    assert_eq!(
        reply.status,
        200,
        "{method}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "{method}: JSON, not a stream"
    );
    assert_eq!(
        reply.header("mcp-session-id"),
        None,
        "{method}: stateless, no session"
    );
    let response = reply.json();
    assert_eq!(response["id"], json!(7), "{method}: {response}");
    response
}

/// `tools/call`: the tool's result (a tool error is a result too).
async fn call(league: &League, token: Option<&str>, tool: &str, arguments: Value) -> Value {
    let response = mcp(
        league,
        token,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert!(response.get("error").is_none(), "{tool}: {response}");
    response["result"].clone()
}

fn standings_ids(result: &Value) -> Vec<String> {
    assert_eq!(result["isError"], json!(false), "{result}");
    let message = &result["structuredContent"];
    assert_eq!(
        message["message_type"],
        json!("LEAGUE_QUERY_RESPONSE"),
        "{result}"
    );
    assert_eq!(message["success"], json!(true), "{result}");
    message["data"]["standings"]
        .as_array()
        .unwrap_or_else(|| panic!("standings rows: {result}"))
        .iter()
        .map(|row| row["player_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn an_mcp_client_over_http_initializes_lists_and_calls_the_league_tools() {
    let league = League::start().await;
    let (p1, _) = league.register_player("alpha").await;
    let (p2, _) = league.register_player("beta").await;

    // initialize: answered in JSON, no session (any replica may answer the next request).
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "rust-test", "version": "1"}},
    });
    let reply = post(league.http, &[("accept", MCP_ACCEPT)], &initialize).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("mcp-session-id"), None);
    let result = reply.json()["result"].clone();
    assert_eq!(result["protocolVersion"], json!(VERSION), "{result}");
    assert_eq!(result["serverInfo"]["name"], json!("league-gateway"), "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [("accept", MCP_ACCEPT), ("mcp-protocol-version", VERSION)];
    assert_eq!(post(league.http, &headers, &initialized).await.status, 202);

    // tools/list: the league's tools, each with an object schema.
    let listed = mcp(&league, None, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let mut names: Vec<&str> = tools.iter().filter_map(|tool| tool["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, TOOLS);
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], json!("object"), "{tool}");
        assert!(tool["description"].is_string(), "{tool}");
    }

    // tools/call get_standings with the operator's token: the registered players, in order.
    let standings = call(&league, Some(OPERATOR_TOKEN), "get_standings", json!({})).await;
    assert_eq!(standings_ids(&standings), [p1.clone(), p2.clone()]);
    assert_eq!(
        standings["structuredContent"]["data"]["league_id"],
        json!(support_mcp::LEAGUE_ID)
    );
    let text = standings["content"][0]["text"].as_str().expect("a text block");
    assert!(text.contains("LEAGUE_QUERY_RESPONSE"), "{text}");

    // register_player as a tool, then ask as that player with its own token.
    let registered = call(
        &league,
        None,
        "register_player",
        json!({"player_meta": {
            "display_name": "gamma", "version": "1.0.0", "game_types": ["even_odd"],
            "contact_endpoint": "http://127.0.0.1:9/gamma/mcp",
        }}),
    )
    .await;
    let response = &registered["structuredContent"];
    assert_eq!(
        response["message_type"],
        json!("LEAGUE_REGISTER_RESPONSE"),
        "{registered}"
    );
    assert_eq!(response["status"], json!("ACCEPTED"), "{registered}");
    let p3 = response["player_id"].as_str().expect("player_id").to_owned();
    let p3_token = response["auth_token"].as_str().expect("auth_token").to_owned();
    let standings = call(&league, Some(&p3_token), "get_standings", json!({})).await;
    assert_eq!(standings_ids(&standings), [p1.clone(), p2.clone(), p3.clone()]);
    let stats = call(&league, Some(&p3_token), "get_player_stats", json!({})).await;
    assert_eq!(
        stats["structuredContent"]["data"]["standing"]["player_id"],
        json!(p3),
        "{stats}"
    );

    // The same queries through the full LEAGUE_QUERY, and ping.
    let query = call(
        &league,
        Some(OPERATOR_TOKEN),
        "league_query",
        json!({"query_type": "GET_STANDINGS", "league_id": support_mcp::LEAGUE_ID}),
    )
    .await;
    assert_eq!(standings_ids(&query).len(), 3);
    let ping = call(&league, None, "ping", json!({})).await;
    assert_eq!(ping["structuredContent"]["status"], json!("ok"), "{ping}");

    // Refusals are tool errors carrying the league.v2 error, not transport failures.
    let missing = call(&league, None, "get_standings", json!({})).await;
    assert_eq!(missing["isError"], json!(true), "{missing}");
    assert_eq!(
        missing["structuredContent"]["error_code"],
        json!("E011"),
        "{missing}"
    );
    let invalid = call(&league, Some("not-a-token"), "get_schedule", json!({})).await;
    assert_eq!(invalid["isError"], json!(true), "{invalid}");
    assert_eq!(
        invalid["structuredContent"]["error_code"],
        json!("E012"),
        "{invalid}"
    );
    assert!(
        invalid["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("AUTH_TOKEN_INVALID"),
        "{invalid}"
    );
    let wrong_type = call(
        &league,
        None,
        "register_player",
        json!({"message_type": "GAME_JOIN_ACK"}),
    )
    .await;
    assert_eq!(
        wrong_type["structuredContent"]["error_code"],
        json!("E002"),
        "{wrong_type}"
    );
    // A query the league answers with success=false is still the league's answer.
    let no_match = call(
        &league,
        Some(OPERATOR_TOKEN),
        "get_match",
        json!({"match_id": "R9M9"}),
    )
    .await;
    assert_eq!(no_match["isError"], json!(false), "{no_match}");
    assert_eq!(
        no_match["structuredContent"]["success"],
        json!(false),
        "{no_match}"
    );

    // Any other league.v2 method is accepted under its own name, unlisted.
    let status = call(&league, Some(OPERATOR_TOKEN), "get_league_status", json!({})).await;
    assert_eq!(
        status["structuredContent"]["data"]["status"],
        json!("REGISTERING"),
        "{status}"
    );
    assert_eq!(
        status["structuredContent"]["data"]["registered_players"],
        json!(3),
        "{status}"
    );

    // An unknown tool is a protocol error.
    let unknown = mcp(
        &league,
        None,
        "tools/call",
        json!({"name": "fly", "arguments": {}}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");
}

#[tokio::test]
async fn mcp_and_league_v2_share_the_path() {
    let league = League::start().await;
    let (p1, _) = league.register_player("alpha").await;

    // Any Host: the gateway is public, reached under its deployment's names.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    });
    let headers = [("accept", MCP_ACCEPT), ("host", "league.example.org")];
    let reply = post(league.http, &headers, &initialize).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    assert!(reply.json()["result"]["serverInfo"].is_object());

    // Plain JSON on the same path is league.v2: the bare league message, no MCP wrapping.
    let bearer = format!("Bearer {OPERATOR_TOKEN}");
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "get_standings", "params": {}});
    let reply = post(
        league.http,
        &[("accept", "application/json"), ("authorization", &bearer)],
        &body,
    )
    .await;
    let response = reply.json();
    assert_eq!(
        response["result"]["message_type"],
        json!("LEAGUE_QUERY_RESPONSE"),
        "{response}"
    );
    assert_eq!(
        response["result"]["data"]["standings"][0]["player_id"],
        json!(p1),
        "{response}"
    );

    // league.v2 agents that use MCP's framing but not its transport are still league.v2.
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "get_standings", "arguments": {}}});
    let reply = post(league.http, &[("authorization", &bearer)], &body).await;
    assert_eq!(
        reply.json()["result"]["message_type"],
        json!("LEAGUE_QUERY_RESPONSE")
    );

    // Stateless: no session stream to open, none to delete.
    let accept = [("accept", "text/event-stream")];
    let get = send(league.http, http::Method::GET, &accept, bytes::Bytes::new()).await;
    assert_eq!(get.status, 405);
    let delete = send(league.http, http::Method::DELETE, &accept, bytes::Bytes::new()).await;
    assert_eq!(delete.status, 405);
}

#[tokio::test]
async fn mcp_requests_spend_the_rate_limit() {
    // MCP requests spend their address's allowance (the sender is in a body rmcp reads).
    let league = League::start_with(|config| config.address_rate_limit = 1).await;
    let headers = [("accept", MCP_ACCEPT), ("mcp-protocol-version", VERSION)];
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ping"}});
    let mut statuses = Vec::new();
    // A burst of 1 refilled at 1/s: of five requests sent at once, at most two can pass.
    for _ in 0..5 {
        statuses.push(post(league.http, &headers, &ping).await.status);
    }
    assert_eq!(statuses[0], 200, "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
}

#[tokio::test]
async fn an_oversized_mcp_body_gets_the_gateways_json_error() {
    let league = League::start_with(|config| config.max_body_bytes = 1024).await;
    let headers = [("accept", MCP_ACCEPT), ("mcp-protocol-version", VERSION)];
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ping", "arguments": {"padding": "x".repeat(4096)}}});
    let reply = post(league.http, &headers, &big).await;
    assert_eq!(reply.status, 413);
    let response = reply.json();
    assert_eq!(
        response["error"]["data"]["error_code"],
        json!("E017"),
        "{response}"
    );
}

/// The acceptance test: the official MCP Python SDK connects, lists the tools and reads the
/// standings, both with the `initialize` handshake and with its default (`server/discover` first).
#[tokio::test]
async fn the_official_python_sdk_lists_the_tools_and_reads_the_standings() {
    let python = support_mcp::python().await;
    let league = League::start().await;
    let (p1, _) = league.register_player("alpha").await;
    let (p2, _) = league.register_player("beta").await;

    let url = league.mcp_url();
    let seen = support_mcp::run_python(
        &python,
        "mcp_client.py",
        &[&url, OPERATOR_TOKEN, "legacy", "auto"],
    )
    .await;
    println!("{}", serde_json::to_string_pretty(&seen).unwrap_or_default());
    for mode in ["legacy", "auto"] {
        let session = &seen[mode];
        assert_eq!(session["server"], json!("league-gateway"), "{mode}: {session}");
        assert_eq!(session["tools"], json!(TOOLS), "{mode}: {session}");
        let standings = &session["get_standings"];
        assert_eq!(standings["is_error"], json!(false), "{mode}: {standings}");
        let rows = standings["structured"]["data"]["standings"]
            .as_array()
            .expect("rows");
        let ids: Vec<&str> = rows.iter().filter_map(|row| row["player_id"].as_str()).collect();
        assert_eq!(ids, [p1.as_str(), p2.as_str()], "{mode}: {standings}");
        let names: Vec<&str> = rows
            .iter()
            .filter_map(|row| row["display_name"].as_str())
            .collect();
        assert_eq!(names, ["alpha", "beta"], "{mode}");
        let refused = &session["refused"];
        assert_eq!(refused["is_error"], json!(true), "{mode}: {refused}");
        assert_eq!(
            refused["structured"]["error_code"],
            json!("E012"),
            "{mode}: {refused}"
        );
    }
    // `initialize` agrees on the newest handshake-era version; `server/discover` on the 2026 revision.
    assert_eq!(seen["legacy"]["protocol_version"], json!("2025-11-25"), "{seen}");
    assert_eq!(seen["auto"]["protocol_version"], json!("2026-07-28"), "{seen}");
}
