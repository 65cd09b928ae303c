//! The public HTTP surface: `POST /mcp` (league.v2 JSON-RPC in every dialect, and MCP's streamable HTTP
//! transport for MCP clients), `/healthz` and `/readyz`. Bodies (size and arrival time), content types,
//! rates and connections are bounded; each bound answers with a JSON-RPC error saying which. Bodies must
//! be JSON (`application/json` or `…+json`): the content types a browser may send cross-site without
//! asking first (`text/plain`, forms) are refused, so no web page can post to the league on a
//! visitor's behalf.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::future::join_all;
use league_proto::ErrorCode;
use league_v2::jsonrpc::{self, Body as RpcBody};
use league_v2::league_error::LeagueError;
use league_v2::shared_json;
use serde_json::Value;
use tracing::Instrument;

use crate::inbound::{HttpContext, Inbound};
use crate::limits::RequestLimits;
use crate::mcp::McpService;

#[derive(Debug, Clone)]
pub(crate) struct HttpState {
    pub(crate) inbound: Inbound,
    pub(crate) limits: Arc<RequestLimits>,
    pub(crate) max_body_bytes: usize,
    pub(crate) body_timeout: Duration,
    pub(crate) mcp: McpService,
    pub(crate) readiness: league_runtime::admin::Readiness,
}

pub(crate) fn router(state: HttpState) -> Router {
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
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request<Body>,
) -> Response {
    // One server span per request, continuing the caller's trace when it sent `traceparent`.
    let span = tracing::info_span!("POST /mcp", otel.kind = "server");
    league_runtime::telemetry::set_parent_from_headers(&span, request.headers());
    handle_post(state, peer, request, None).instrument(span).await
}

async fn player_post(
    State(state): State<Arc<HttpState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
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
    // The address's allowance first: nothing the request says (its sender, its token) is believed yet.
    if !state.limits.allow_address(peer.ip()) {
        return rate_limited_response(Value::Null);
    }
    if player_path.is_none() && is_mcp(request.headers()) {
        // The body bound is ours to enforce (and to answer in JSON-RPC), before rmcp reads it.
        let (parts, body) = request.into_parts();
        let body = match read_body(&state, body).await {
            Ok(body) => body,
            Err(response) => return response,
        };
        if let Some(refusal) = crate::mcp::invalid_tool_arguments(&body) {
            return json_response(StatusCode::OK, refusal);
        }
        let response = state
            .mcp
            .handle(Request::from_parts(parts, Body::from(body)))
            .await;
        return crate::mcp::json_rpc_transport_error(response).await;
    }
    if let Some(refusal) = not_json(request.headers()) {
        return refusal;
    }
    let http = HttpContext {
        peer: peer.ip(),
        bearer: request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(|token| token.trim().to_owned()),
        player_path,
    };
    let body = match read_body(&state, request.into_body()).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    // Within one scope: shared JSON in the answers (a league's standings) and ids kept verbatim are
    // written in as they are (league_v2::shared_json).
    shared_json::scope(answer(state, http, body)).await
}

/// The answer to a league.v2 body. Each call (a batch's each element) is admitted by the limits in
/// [`Inbound::handle`], as an MCP `tools/call` is; a single call refused by them answers HTTP 429.
async fn answer(state: Arc<HttpState>, http: HttpContext, body: bytes::Bytes) -> Response {
    match jsonrpc::parse(&body) {
        Err(error) => json_response(StatusCode::OK, jsonrpc::failure(Value::Null, &error)),
        Ok(RpcBody::Single(Err(refused))) => {
            json_response(StatusCode::OK, jsonrpc::failure(refused.id, &refused.error))
        }
        Ok(RpcBody::Single(Ok(call))) => match state.inbound.handle(call, &http).await {
            Some(answer) if is_rate_limited(&answer) => json_response(StatusCode::TOO_MANY_REQUESTS, answer),
            Some(answer) => json_response(StatusCode::OK, answer),
            None => StatusCode::NO_CONTENT.into_response(),
        },
        Ok(RpcBody::Batch(calls)) => {
            let answers = join_all(calls.into_iter().map(|call| {
                let state = state.clone();
                let http = http.clone();
                async move {
                    match call {
                        Err(refused) => Some(jsonrpc::failure(refused.id, &refused.error)),
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

/// Whether an answer is the limits' refusal (E016).
fn is_rate_limited(answer: &Value) -> bool {
    answer.pointer("/error/data/error_code").and_then(Value::as_str) == Some(ErrorCode::RateLimited.code())
}

/// The whole body, within the size bound and the body timeout; the JSON-RPC error response otherwise.
async fn read_body(state: &HttpState, body: Body) -> Result<bytes::Bytes, Response> {
    match tokio::time::timeout(
        state.body_timeout,
        axum::body::to_bytes(body, state.max_body_bytes),
    )
    .await
    {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(_)) => Err(too_large(state.max_body_bytes)),
        Err(_) => {
            let error = LeagueError::new(
                ErrorCode::Timeout,
                format!("the request body did not arrive within {:?}", state.body_timeout),
            );
            Err(json_response(
                StatusCode::REQUEST_TIMEOUT,
                jsonrpc::failure(Value::Null, &error.to_rpc(None)),
            ))
        }
    }
}

/// A JSON content type (`application/json`, `application/<anything>+json`, any parameters).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|media| media.trim().to_ascii_lowercase())
        .is_some_and(|media| {
            media == "application/json" || (media.starts_with("application/") && media.ends_with("+json"))
        })
}

/// The refusal of a body that is not declared JSON.
fn not_json(headers: &HeaderMap) -> Option<Response> {
    if is_json(headers) {
        return None;
    }
    let error = jsonrpc::RpcError::new(
        jsonrpc::INVALID_REQUEST,
        "Invalid Request: the body must be sent as Content-Type: application/json",
    );
    Some(json_response(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        jsonrpc::failure(Value::Null, &error),
    ))
}

fn rate_limited_response(id: Value) -> Response {
    let error = LeagueError::new(ErrorCode::RateLimited, "too many requests; slow down and retry");
    json_response(
        StatusCode::TOO_MANY_REQUESTS,
        jsonrpc::failure(id, &error.to_rpc(None)),
    )
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

/// A JSON response; within a [`shared_json::scope`], its markers written as the text they stand for.
fn json_response(status: StatusCode, body: Value) -> Response {
    bytes_response(status, shared_json::to_vec(&body))
}

fn bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}
#[cfg(test)]
mod tests;
