//! MCP on `/mcp`: a real manager and gateway in-process, spoken to over HTTP as an MCP client does — first
//! by hand (initialize → tools/list → tools/call, so a broken MCP path fails a plain `cargo test`), then
//! by the official MCP Python SDK.

use crate::support_mcp;

use secrecy::SecretString;
use serde_json::{Value, json};
use support_mcp::{League, MCP_ACCEPT, OPERATOR_TOKEN, post, send};

const TOOLS: [&str; 11] = [
    "get_leagues",
    "get_match",
    "get_next_match",
    "get_player_stats",
    "get_schedule",
    "get_standings",
    "get_standings_by_round",
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

/// Plays the league's one match as a referee would, straight to the manager: P01 wins, with a
/// two-entry transcript.
async fn play_the_match(league: &League) {
    use league_proto::v2::*;
    let mut manager = manager_service_client::ManagerServiceClient::new(
        league_runtime::grpc::channel(&league.manager_url).expect("channel"),
    );
    let operator = SecretString::from(OPERATOR_TOKEN.to_owned());
    let referee = manager
        .register_referee(RegisterRefereeRequest {
            meta: Some(AgentMeta {
                display_name: "ref".into(),
                version: "1".into(),
                game_types: vec!["even_odd".into()],
                contact_endpoint: "http://127.0.0.1:9/ref".into(),
                service_endpoint: "http://127.0.0.1:9".into(),
                ..AgentMeta::default()
            }),
            max_concurrent_matches: 1,
        })
        .await
        .expect("referee registers")
        .into_inner();
    let referee = league_runtime::Credentials::new(referee.referee_id, referee.auth_token);
    manager
        .start_league(league_runtime::credentials::operator_request(
            &operator,
            StartLeagueRequest::default(),
        ))
        .await
        .expect("league starts");
    let assignment = manager
        .claim_matches(referee.request(ClaimMatchesRequest {
            max_matches: 1,
            wait: Some(prost_types::Duration { seconds: 5, nanos: 0 }),
        }))
        .await
        .expect("claim")
        .into_inner()
        .assignments
        .remove(0);
    let scheduled = assignment.r#match.clone().expect("match");
    let score = |player_id: &str, points| PlayerScore {
        player_id: player_id.into(),
        points,
    };
    let at = |seconds| prost_types::Timestamp { seconds, nanos: 0 };
    let report = ReportMatchResultRequest {
        league_id: scheduled.league_id.clone(),
        match_id: scheduled.match_id.clone(),
        lease_id: assignment.lease_id.clone(),
        result: Some(MatchResult {
            match_id: scheduled.match_id.clone(),
            status: ResultStatus::Win as i32,
            winner_player_id: scheduled.player_a_id.clone(),
            scores: vec![score(&scheduled.player_a_id, 3), score(&scheduled.player_b_id, 0)],
            reason: "P01 chose even, number was 8 (even)".into(),
            ..MatchResult::default()
        }),
        transcript: Some(MatchTranscript {
            match_id: scheduled.match_id.clone(),
            entries: vec![
                TranscriptEntry {
                    at: Some(at(1_800_000_000)),
                    entry: Some(transcript_entry::Entry::Message(MessageRecord {
                        direction: Direction::ToPlayer as i32,
                        player_id: scheduled.player_a_id.clone(),
                        message_type: "CHOOSE_PARITY_CALL".into(),
                        attempt: 1,
                        ..MessageRecord::default()
                    })),
                },
                TranscriptEntry {
                    at: Some(at(1_800_000_002)),
                    entry: Some(transcript_entry::Entry::StateTransition(StateTransition {
                        from: MatchState::Evaluating as i32,
                        to: MatchState::Finished as i32,
                        reason: "decided".into(),
                    })),
                },
            ],
        }),
    };
    manager
        .report_match_result(referee.request(report))
        .await
        .expect("result recorded");
}

#[tokio::test]
async fn a_played_league_is_readable_with_outcomes_transcripts_tables_by_round_and_the_league_list() {
    let league = League::start().await;
    let (p1, _) = league.register_player("alpha").await;
    let (p2, _) = league.register_player("beta").await;
    play_the_match(&league).await;
    let op = Some(OPERATOR_TOKEN);

    let matched = call(&league, op, "get_match", json!({"match_id": "R1M1"})).await;
    let data = &matched["structuredContent"]["data"];
    assert_eq!(data["result"]["winner_player_id"], json!(p1), "{matched}");
    let entries = data["transcript"]["entries"]
        .as_array()
        .expect("the transcript's entries");
    assert_eq!(entries.len(), 2, "{matched}");
    assert_eq!(entries[0]["message"]["message_type"], json!("CHOOSE_PARITY_CALL"));
    assert_eq!(
        entries[1]["state_transition"]["to"],
        json!("MATCH_STATE_FINISHED")
    );
    assert_eq!(entries[1]["at"], json!("2027-01-15T08:00:02Z"));

    let schedule = call(&league, op, "get_schedule", json!({})).await;
    let first = &schedule["structuredContent"]["data"]["rounds"][0]["matches"][0];
    assert_eq!(first["status"], json!("COMPLETED"), "{schedule}");
    assert_eq!(first["result"]["status"], json!("WIN"), "{schedule}");
    assert_eq!(first["result"]["winner_player_id"], json!(p1), "{schedule}");
    assert_eq!(first["duration_ms"], json!(2000), "{schedule}");

    let by_round = call(&league, op, "get_standings_by_round", json!({})).await;
    let rounds = &by_round["structuredContent"]["data"]["rounds"];
    assert_eq!(rounds[0]["round_id"], json!(1), "{by_round}");
    assert_eq!(rounds[0]["standings"][0]["player_id"], json!(p1), "{by_round}");
    assert_eq!(
        rounds[0]["standings"][0]["tie_break"],
        json!("points"),
        "{by_round}"
    );
    assert_eq!(rounds[0]["standings"][1]["player_id"], json!(p2), "{by_round}");
    assert_eq!(rounds[0]["standings"][1]["tie_break"], json!(null), "{by_round}");

    let history = call(&league, op, "get_player_stats", json!({"player_id": p2})).await;
    let matches = &history["structuredContent"]["data"]["matches"];
    assert_eq!(matches[0]["result"]["winner_player_id"], json!(p1), "{history}");

    let leagues = call(&league, op, "get_leagues", json!({"limit": 5})).await;
    let listed = &leagues["structuredContent"]["data"]["leagues"];
    assert_eq!(listed[0]["league_id"], json!(support_mcp::LEAGUE_ID), "{leagues}");
    assert_eq!(listed[0]["status"], json!("COMPLETED"), "{leagues}");
    assert_eq!(listed[0]["champion"]["player_id"], json!(p1), "{leagues}");

    let bad_limit = call(
        &league,
        op,
        "league_query",
        json!({"query_type": "GET_LEAGUES", "query_params": {"limit": "ten"}}),
    )
    .await;
    assert_eq!(
        bad_limit["structuredContent"]["error_code"],
        json!("E002"),
        "{bad_limit}"
    );
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
