//! A player that is an MCP server (ADR 0046), for the tests of MCP agents: an rmcp streamable HTTP
//! server, with sessions or without, one tool (`handle_game_invitation`), registered with a plain
//! `register_player`; it counts its sessions, the plain calls it refused and every tool call.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use league_proto::v2::*;
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
pub(crate) struct McpPlayer {
    /// Sessions opened (the server makes one handler per session).
    pub(crate) sessions: Arc<AtomicUsize>,
    /// Plain JSON-RPC POSTs (not accepting `text/event-stream`), which the transport refuses with 406.
    pub(crate) plain: Arc<AtomicUsize>,
    /// Every tool call: its name and arguments.
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    pub(crate) delay: Arc<Mutex<Duration>>,
}

impl McpPlayer {
    /// Serves it at `/mcp` on a port of its own, with sessions answering in server-sent events; its URL.
    pub(crate) async fn serve(&self) -> String {
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
    pub(crate) async fn serve_stateless(&self) -> String {
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
    pub(crate) async fn serve_behind(&self, status: http::StatusCode, body: Value) -> String {
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

    pub(crate) fn called(&self) -> Vec<(String, Value)> {
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

pub(crate) async fn register(gateway: &TestGateway, endpoint: &str) -> String {
    let response = gateway
        .rpc("register_player", player_registration("mcp", endpoint))
        .await;
    response["result"]["player_id"]
        .as_str()
        .unwrap_or_else(|| panic!("registered: {response}"))
        .to_owned()
}

pub(crate) fn invitation(player_id: &str, within: Duration) -> InviteToMatchRequest {
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
