//! The public HTTP surface: `POST /mcp` (league.v2 JSON-RPC in every dialect, and MCP's streamable HTTP
//! transport for MCP clients), `/healthz` and `/readyz`. Bodies, rates and connections are bounded; each
//! bound answers with a JSON-RPC error saying which.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::future::join_all;
use league_proto::ErrorCode;
use serde_json::Value;
use tracing::Instrument;

use crate::inbound::{HttpContext, Inbound};
use crate::jsonrpc::{self, Body as RpcBody, Call};
use crate::league_error::LeagueError;
use crate::limits::{Peer, RateLimiter};
use crate::mcp::McpService;
use crate::shared_json;

#[derive(Debug, Clone)]
pub struct HttpState {
    pub inbound: Inbound,
    pub limiter: Arc<RateLimiter>,
    pub max_body_bytes: usize,
    pub mcp: McpService,
    pub readiness: league_runtime::admin::Readiness,
}

pub fn router(state: HttpState) -> Router {
    Router::new()
        .route("/mcp", post(mcp_post).get(mcp_other).delete(mcp_other))
        // Where external referees reach a player of their match (the path names the player).
        .route("/mcp/players/{player_id}", post(player_post))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .with_state(Arc::new(state))
}

async fn ready(State(state): State<Arc<HttpState>>) -> Response {
    if state.readiness.is_ready().await {
        (StatusCode::OK, "ready").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

/// MCP clients are told apart by the transport's own signs: they accept `text/event-stream` or carry a
/// session. league.v2 agents send plain JSON.
fn is_mcp(headers: &HeaderMap) -> bool {
    headers.contains_key("mcp-session-id")
        || headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(|accept| accept.contains("text/event-stream"))
}

async fn mcp_other(State(state): State<Arc<HttpState>>, request: Request<Body>) -> Response {
    state.mcp.handle(request).await
}

async fn mcp_post(
    State(state): State<Arc<HttpState>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    request: Request<Body>,
) -> Response {
    // One server span per request, continuing the caller's trace when it sent `traceparent`.
    let span = tracing::info_span!("POST /mcp", otel.kind = "server");
    league_runtime::telemetry::set_parent_from_headers(&span, request.headers());
    handle_post(state, peer, request, None).instrument(span).await
}

async fn player_post(
    State(state): State<Arc<HttpState>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    Path(player_id): Path<String>,
    request: Request<Body>,
) -> Response {
    let span = tracing::info_span!("POST /mcp/players/{player_id}", otel.kind = "server", %player_id);
    league_runtime::telemetry::set_parent_from_headers(&span, request.headers());
    handle_post(state, peer, request, Some(player_id))
        .instrument(span)
        .await
}

async fn handle_post(
    state: Arc<HttpState>,
    peer: SocketAddr,
    request: Request<Body>,
    player_path: Option<String>,
) -> Response {
    if player_path.is_none() && is_mcp(request.headers()) {
        // MCP spends the same allowance as league.v2, one bucket per address (the body, and the sender in
        // it, is rmcp's to read), so the MCP headers are no way around the rate limit.
        if !state.limiter.allow(&format!("{}|mcp", peer.ip())) {
            let error = LeagueError::new(ErrorCode::RateLimited, "too many requests; slow down and retry");
            return json_response(
                StatusCode::TOO_MANY_REQUESTS,
                jsonrpc::failure(Value::Null, &error.to_rpc(None)),
            );
        }
        // The body bound is ours to enforce (and to answer in JSON-RPC), before rmcp reads it.
        let (parts, body) = request.into_parts();
        let body = match axum::body::to_bytes(body, state.max_body_bytes).await {
            Ok(body) => body,
            Err(_) => return too_large(state.max_body_bytes),
        };
        return state
            .mcp
            .handle(Request::from_parts(parts, Body::from(body)))
            .await;
    }
    let http = HttpContext {
        bearer: request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(|token| token.trim().to_owned()),
        player_path,
    };
    let body = match axum::body::to_bytes(request.into_body(), state.max_body_bytes).await {
        Ok(body) => body,
        Err(_) => return too_large(state.max_body_bytes),
    };
    match jsonrpc::parse(&body) {
        Err(error) => json_response(StatusCode::OK, jsonrpc::failure(Value::Null, &error)),
        Ok(RpcBody::Single(Err(refused))) => {
            json_response(StatusCode::OK, jsonrpc::failure(refused.id, &refused.error))
        }
        Ok(RpcBody::Single(Ok(call))) => {
            if !state.limiter.allow(&rate_key(peer, &call)) {
                return json_response(StatusCode::TOO_MANY_REQUESTS, rate_limited(&call));
            }
            // Shared JSON in the answer (a league's standings) is written in as it is (crate::shared_json).
            let answer = shared_json::scope(async {
                Some(shared_json::to_vec(&state.inbound.handle(call, &http).await?))
            })
            .await;
            match answer {
                Some(bytes) => bytes_response(StatusCode::OK, bytes),
                None => StatusCode::NO_CONTENT.into_response(),
            }
        }
        Ok(RpcBody::Batch(calls)) => {
            let answers = join_all(calls.into_iter().map(|call| {
                let state = state.clone();
                let http = http.clone();
                async move {
                    match call {
                        Err(refused) => Some(jsonrpc::failure(refused.id, &refused.error)),
                        Ok(call) if !state.limiter.allow(&rate_key(peer, &call)) => {
                            call.id.is_some().then(|| rate_limited(&call))
                        }
                        Ok(call) => state.inbound.handle(call, &http).await,
                    }
                }
            }))
            .await;
            let answers: Vec<Value> = answers.into_iter().flatten().collect();
            if answers.is_empty() {
                StatusCode::NO_CONTENT.into_response()
            } else {
                json_response(StatusCode::OK, Value::Array(answers))
            }
        }
    }
}

/// Rates are kept per address and claimed sender: an agent that names someone else only spends its own
/// address's allowance.
fn rate_key(peer: SocketAddr, call: &Call) -> String {
    let params = &call.params;
    let sender = params
        .get("sender")
        .or_else(|| params.get("message").and_then(|m| m.get("sender")))
        .or_else(|| params.get("arguments").and_then(|a| a.get("sender")))
        .and_then(Value::as_str)
        .unwrap_or("-");
    let sender = &sender[..sender.len().min(64)];
    format!("{}|{sender}", peer.ip())
}

fn rate_limited(call: &Call) -> Value {
    let error = LeagueError::new(ErrorCode::RateLimited, "too many requests; slow down and retry");
    jsonrpc::failure(call.id.clone().unwrap_or(Value::Null), &error.to_rpc(None))
}

fn too_large(max_body_bytes: usize) -> Response {
    let error = LeagueError::new(
        ErrorCode::PayloadTooLarge,
        format!("request body larger than {max_body_bytes} bytes"),
    );
    json_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        jsonrpc::failure(Value::Null, &error.to_rpc(None)),
    )
}

fn json_response(status: StatusCode, body: Value) -> Response {
    bytes_response(status, serde_json::to_vec(&body).unwrap_or_default())
}

fn bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}
