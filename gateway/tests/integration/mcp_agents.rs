//! Players that are MCP servers (ADR 0046), over real HTTP and gRPC: an rmcp streamable HTTP server with
//! sessions, one tool per message, registered with a plain `register_player`. The bridge learns what it
//! is from its first answer, opens one session and keeps it; a tool that answers too late is the same
//! E001 as any agent's silence, and the session outlives it.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use league_proto::ErrorCode;
use league_proto::v2::*;
use league_v2::compliance::Mode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use support::*;

/// An MCP server player: joins every invitation, after `delay`.
#[derive(Clone, Default)]
struct McpPlayer {
    /// Sessions opened (the server makes one handler per session).
    sessions: Arc<AtomicUsize>,
    /// Plain JSON-RPC POSTs (not accepting `text/event-stream`), which the transport refuses with 406.
    plain: Arc<AtomicUsize>,
    /// Every tool call: its name and arguments.
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    delay: Arc<Mutex<Duration>>,
}

impl McpPlayer {
    /// Serves it at `/mcp` on a port of its own, with sessions answering in server-sent events; its URL.
    async fn serve(&self) -> String {
        let player = self.clone();
        let service = StreamableHttpService::new(
            move || {
                player.sessions.fetch_add(1, Ordering::SeqCst);
                Ok(player.clone())
            },
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        self.route(service).await
    }

    /// Serves it at `/mcp` without sessions, answering in JSON; its URL.
    async fn serve_stateless(&self) -> String {
        let player = self.clone();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true);
        let service = StreamableHttpService::new(
            move || Ok(player.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        self.route(service).await
    }

    /// Serves it with sessions behind a front that answers every plain JSON-RPC POST (one that does not
    /// accept `text/event-stream`) itself, with `status` and `body`, as the TypeScript SDK's stateful
    /// example answers a POST without a session (400) or the Python SDK's stateless JSON mode a method it
    /// does not know (200, -32601); its URL.
    async fn serve_behind(&self, status: http::StatusCode, body: Value) -> String {
        let player = self.clone();
        let service = StreamableHttpService::new(
            move || {
                player.sessions.fetch_add(1, Ordering::SeqCst);
                Ok(player.clone())
            },
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        let plain = self.plain.clone();
        let front = axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let (plain, body) = (plain.clone(), body.clone());
                async move {
                    use axum::response::IntoResponse;
                    let streams = request.headers().get(http::header::ACCEPT).is_some_and(|accept| {
                        accept.to_str().unwrap_or_default().contains("text/event-stream")
                    });
                    if streams {
                        return next.run(request).await;
                    }
                    plain.fetch_add(1, Ordering::SeqCst);
                    (status, axum::Json(body)).into_response()
                }
            },
        );
        let router = axum::Router::new().route_service("/mcp", service).layer(front);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{address}/mcp")
    }

    async fn route<S, M>(&self, service: StreamableHttpService<S, M>) -> String
    where
        S: ServerHandler + Send + 'static,
        M: rmcp::transport::streamable_http_server::session::SessionManager,
    {
        let plain = self.plain.clone();
        let counted = tower::util::MapRequestLayer::new(move |request: http::Request<axum::body::Body>| {
            let accepts = request.headers().get(http::header::ACCEPT);
            if !accepts
                .is_some_and(|accept| accept.to_str().unwrap_or_default().contains("text/event-stream"))
            {
                plain.fetch_add(1, Ordering::SeqCst);
            }
            request
        });
        let router = axum::Router::new().route_service("/mcp", service).layer(counted);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{address}/mcp")
    }

    fn called(&self) -> Vec<(String, Value)> {
        self.calls.lock().expect("calls").clone()
    }
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    match value {
        Value::Object(schema) => Arc::new(schema),
        _ => panic!("a schema"),
    }
}

impl ServerHandler for McpPlayer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let message =
            json!({"type": "object", "properties": {"message": {"type": "object"}}, "required": ["message"]});
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "handle_game_invitation",
            "GAME_INVITATION",
            schema(message),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        self.calls
            .lock()
            .expect("calls")
            .push((request.name.to_string(), arguments.clone()));
        let delay = *self.delay.lock().expect("delay");
        tokio::time::sleep(delay).await;
        let invitation = &arguments["message"];
        Ok(CallToolResult::structured(json!({
            "protocol": "league.v2", "message_type": "GAME_JOIN_ACK", "sender": "player:P01",
            "timestamp": "2026-11-29T02:00:00Z", "conversation_id": invitation["conversation_id"],
            "match_id": invitation["match_id"], "player_id": invitation["player_id"],
            "arrival_timestamp": "2026-11-29T02:00:00Z", "accept": true,
        }))
        .into())
    }
}

async fn register(gateway: &TestGateway, endpoint: &str) -> String {
    let response = gateway
        .rpc("register_player", player_registration("mcp", endpoint))
        .await;
    response["result"]["player_id"]
        .as_str()
        .unwrap_or_else(|| panic!("registered: {response}"))
        .to_owned()
}

fn invitation(player_id: &str, within: Duration) -> InviteToMatchRequest {
    InviteToMatchRequest {
        player_id: player_id.into(),
        context: Some(MatchContext {
            league_id: LEAGUE_ID.into(),
            round_id: 1,
            match_id: "R1M1".into(),
            game_type: "even_odd".into(),
            conversation_id: "conv-mcp".into(),
            referee_id: "REF01".into(),
        }),
        role_in_match: Role::PlayerA as i32,
        opponent_id: "P99".into(),
        deadline: Some(prost_types::Timestamp::from(SystemTime::now() + within)),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_is_called_in_one_session_and_its_silence_is_a_timeout() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let endpoint = player.serve().await;
    let id = register(&gateway, &endpoint).await;

    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(&id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    let calls = player.called();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (tool, arguments) in &calls {
        assert_eq!(tool, "handle_game_invitation");
        // The message under the tool's one argument, as the bridge writes it for every dialect.
        assert_eq!(
            arguments["message"]["message_type"], "GAME_INVITATION",
            "{arguments}"
        );
        assert_eq!(arguments["message"]["match_id"], "R1M1", "{arguments}");
        assert!(arguments["message"]["auth_token"].is_string(), "{arguments}");
    }
    // The registration's greeting found it is an MCP server (it has no tool for the standings: not
    // implemented, as a -32601), and every call since went in the session it opened: one plain call
    // refused with 406, ever.
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);

    // An answer later than the invitation's deadline is no answer: E001, said without the endpoint.
    *player.delay.lock().expect("delay") = Duration::from_secs(3);
    let status = gateway
        .players()
        .invite_to_match(invitation(&id, Duration::from_millis(500)))
        .await
        .expect_err("too late");
    assert_eq!(
        league_proto::error_code::code_of(&status),
        Some(ErrorCode::Timeout),
        "{status:?}"
    );
    assert!(status.message().contains("did not answer"), "{status:?}");
    assert!(!status.message().contains(&endpoint), "{status:?}");

    // The session outlives a late answer.
    *player.delay.lock().expect("delay") = Duration::ZERO;
    let joined = gateway
        .players()
        .invite_to_match(invitation(&id, Duration::from_secs(5)))
        .await
        .expect("joined again")
        .into_inner();
    assert!(joined.accept);
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_mcp_server_answering_in_json_is_called_as_well() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let endpoint = player.serve_stateless().await;
    let id = register(&gateway, &endpoint).await;
    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(&id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    assert_eq!(player.called().len(), 2);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

/// Asks the gateway to invite the player twice; both joined, in one session, after one plain call.
async fn joins_twice_in_one_session(gateway: &TestGateway, player: &McpPlayer, id: &str) {
    for _ in 0..2 {
        let joined = gateway
            .players()
            .invite_to_match(invitation(id, Duration::from_secs(5)))
            .await
            .expect("joined")
            .into_inner();
        assert!(joined.accept, "{joined:?}");
    }
    assert_eq!(player.called().len(), 2);
    assert_eq!(player.sessions.load(Ordering::SeqCst), 1);
    assert_eq!(player.plain.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_that_answers_a_plain_call_400_is_asked_and_called_as_one() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let no_session = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}});
    let endpoint = player
        .serve_behind(http::StatusCode::BAD_REQUEST, no_session)
        .await;
    let id = register(&gateway, &endpoint).await;
    joins_twice_in_one_session(&gateway, &player, &id).await;
    // What the gateway learnt is the operator's to see.
    let warnings = gateway
        .wait_for_warnings("the mcp_server note", |warnings| {
            has_warning(warnings, &id, "mcp_server")
        })
        .await;
    let note = warnings
        .iter()
        .find(|warning| warning["kind"] == "mcp_server")
        .expect("the note");
    assert!(
        note["example"].as_str().is_some_and(|d| d.contains("HTTP 400")),
        "{note}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_that_answers_a_plain_call_with_a_json_rpc_error_is_asked_too() {
    let manager = spawn_manager().await;
    let gateway = spawn_gateway(&manager, Mode::Lenient, Limits::default()).await;
    let player = McpPlayer::default();
    let unknown = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32601, "message": "Method not found"}});
    let endpoint = player.serve_behind(http::StatusCode::OK, unknown).await;
    let id = register(&gateway, &endpoint).await;
    joins_twice_in_one_session(&gateway, &player, &id).await;
    let warnings = gateway
        .wait_for_warnings("the mcp_server note", |warnings| {
            has_warning(warnings, &id, "mcp_server")
        })
        .await;
    assert_eq!(warning_kinds(&warnings, &id), ["mcp_server"], "{warnings:?}");
}
