//! MCP over the streamable HTTP transport, on the same `/mcp` path as league.v2 (ADR 0010): rmcp's
//! `StreamableHttpService`, stateless and answering in JSON, with the league's calls as MCP tools.
//!
//! Each tool is one league.v2 call: `tools/call {name, arguments}` becomes the JSON-RPC call
//! `name(arguments)` and goes through [`Inbound::handle`], exactly the path a league.v2 agent's call
//! takes (dialect, envelope checks in the configured mode, authentication, the manager over gRPC). The
//! request's `Authorization: Bearer` header is the call's credential, as it is for league.v2. The call's
//! JSON-RPC `result` is the tool's structured content; a JSON-RPC error is a tool error
//! (`isError: true`) carrying the league.v2 LEAGUE_ERROR (`error_code`, `error_description`…), so a
//! client reads the league's refusal instead of a transport failure.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use axum::response::Response;
use league_v2::jsonrpc::{Call, METHOD_NOT_FOUND};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::inbound::{HttpContext, Inbound};

mod tools;

use tools::{SPECS, TOOLS};

/// The MCP endpoint. Stateless: every POST is complete in itself (no `Mcp-Session-Id`, no server
/// state between requests), so any gateway replica can answer any request and replicas behind one
/// address need no sticky sessions. Answers are `application/json` (the league's tools answer once
/// and never stream). GET and DELETE, which only sessions use, answer 405.
#[derive(Clone)]
pub(crate) struct McpService {
    http: StreamableHttpService<LeagueTools, NeverSessionManager>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("config", &self.http.config)
            .finish_non_exhaustive()
    }
}

impl McpService {
    pub(crate) fn new(inbound: Inbound) -> Self {
        let max_body_bytes = inbound.config.max_body_bytes;
        let tools = LeagueTools { inbound };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_max_request_body_bytes(max_body_bytes)
            // Any Host is accepted. rmcp's default (loopback names only) guards a server on a user's
            // own machine against DNS rebinding; the gateway is a public server reached under whatever
            // name its deployment gives it (a compose service, a Kubernetes Service, an ingress host,
            // an IP), so a fixed list would refuse real clients. Nothing is lost: every tool that reads
            // the league needs a bearer token, which a rebinding page does not have, and league.v2 on
            // this same path never looked at Host either.
            .disable_allowed_hosts();
        let http = StreamableHttpService::new(
            move || Ok(tools.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        Self { http }
    }

    pub(crate) async fn handle(&self, request: Request<Body>) -> Response {
        self.http.handle(request).await.map(Body::new)
    }
}

/// A `tools/call` whose `arguments` is not an object: rmcp cannot read it as a tool call and would
/// answer "method not found"; it is invalid params (-32602), answered here with the call's id.
pub(crate) fn invalid_tool_arguments(body: &[u8]) -> Option<Value> {
    if !body.windows(10).any(|window| window == b"tools/call") {
        return None;
    }
    let call: Value = serde_json::from_slice(body).ok()?;
    let arguments = call.get("params")?.get("arguments")?;
    if call.get("method")?.as_str()? != "tools/call" || arguments.is_object() || arguments.is_null() {
        return None;
    }
    let error = league_v2::jsonrpc::RpcError::new(
        league_v2::jsonrpc::INVALID_PARAMS,
        "Invalid params: tools/call `arguments` must be an object",
    );
    Some(league_v2::jsonrpc::failure(
        call.get("id").cloned().unwrap_or(Value::Null),
        &error,
    ))
}

/// The transport's own refusals (a wrong `Content-Type` or `Accept`, a body that is not a JSON-RPC
/// message) come from rmcp as plain text; they are rewritten as JSON-RPC errors (-32600, or -32700 for
/// a body that is not JSON) with the same HTTP status, so every answer on `/mcp` is JSON-RPC.
pub(crate) async fn json_rpc_transport_error(response: Response) -> Response {
    let is_json = crate::http::is_json(response.headers());
    if !(response.status().is_client_error() || response.status().is_server_error()) || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // A body that cannot be read (or is over 4 KiB) leaves the message without its text, not unsent.
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let code = if text.to_ascii_lowercase().contains("parse") || text.contains("deserialize") {
        league_v2::jsonrpc::PARSE_ERROR
    } else {
        league_v2::jsonrpc::INVALID_REQUEST
    };
    let message = format!("MCP transport: {}", text.trim());
    let body = league_v2::jsonrpc::failure(Value::Null, &league_v2::jsonrpc::RpcError::new(code, message));
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// The league's tools, served to MCP clients.
#[derive(Debug, Clone)]
struct LeagueTools {
    inbound: Inbound,
}

impl ServerHandler for LeagueTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("league-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("League (league.v2)"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let parts = context.extensions.get::<http::request::Parts>();
        // The connection's address, put on every request by the accept loop (crate::connections): the
        // limits are kept by it, on this path as on every other.
        let Some(ConnectInfo(peer)) =
            parts.and_then(|parts| parts.extensions.get::<ConnectInfo<SocketAddr>>())
        else {
            return Err(ErrorData::internal_error("the caller's address is unknown", None));
        };
        let http = HttpContext {
            peer: peer.ip(),
            bearer: parts.and_then(|parts| bearer(&parts.headers)),
            player_path: None,
        };
        // MCP's `arguments` may be left out: no arguments.
        let arguments = request.arguments.unwrap_or_default();
        let arguments = match SPECS.iter().find(|spec| spec.name == request.name) {
            Some(spec) => match spec.message(arguments) {
                Ok(arguments) => arguments,
                Err(error) => {
                    return Ok(tool_error(&error.league_error_message(None), &error.to_string()).into());
                }
            },
            // Not a listed tool: any other league.v2 method is accepted under its own name (a reply sent
            // as a separate call, `get_league_status`, `start_league`…), as league.v2's own `tools/call`
            // framing accepts it, so this path can do whatever the league.v2 one can.
            None => arguments,
        };
        let call = Call {
            method: request.name.clone().into_owned(),
            params: Value::Object(arguments),
            id: Some(1.into()),
        };
        let Some(response) = self.inbound.handle(call, &http).await else {
            return Err(ErrorData::internal_error("the call was not answered", None));
        };
        if response["error"]["code"] == json!(METHOD_NOT_FOUND) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        Ok(tool_result(response).into())
    }
}

const INSTRUCTIONS: &str = "An Even/Odd league of autonomous agents (league.v2). Read it with \
get_standings, get_standings_by_round, get_schedule, get_match, get_next_match, get_player_stats, \
get_leagues or league_query; join it with \
register_player or register_referee. Queries need a token: send `Authorization: Bearer <token>` (an \
agent's auth_token from its registration, or the operator token), or pass `auth_token` in the arguments. \
Results are league.v2 messages; a refusal is a tool error carrying the league.v2 error_code.";

/// The `Authorization: Bearer` token, if any (the scheme's case does not matter, RFC 9110 §11.1).
fn bearer(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_owned())
}

/// A JSON-RPC response from [`Inbound::handle`] as a tool result.
fn tool_result(response: Value) -> CallToolResult {
    if let Some(error) = response.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the call failed");
        let league_error = match error.get("data") {
            Some(data @ Value::Object(_)) => data.clone(),
            // Framing errors (invalid params…) carry no league.v2 error; say what JSON-RPC said.
            _ => json!({
                "error_code": null,
                "error_description": message,
                "jsonrpc_code": error.get("code"),
            }),
        };
        return tool_error(&league_error, message);
    }
    match response.get("result") {
        Some(result @ Value::Object(_)) => CallToolResult::structured(result.clone()),
        // MCP's structured content is an object; no league call answers anything else, but be exact.
        other => CallToolResult::structured(json!({ "result": other.cloned().unwrap_or(Value::Null) })),
    }
}

fn tool_error(league_error: &Value, message: &str) -> CallToolResult {
    let mut result = CallToolResult::structured_error(league_error.clone());
    // The first text block is what a model reads: the error's name and description first.
    result
        .content
        .insert(0, rmcp::model::ContentBlock::text(message.to_owned()));
    result
}

#[cfg(test)]
mod tests {
    use league_proto::ErrorCode;

    use super::*;
    use league_v2::league_error::LeagueError;

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        let mut headers = http::HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer  abc ".parse().expect("header"));
        assert_eq!(bearer(&headers).as_deref(), Some("abc"));
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().expect("header"));
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn errors_become_tool_errors_with_the_league_error() {
        let error = LeagueError::new(ErrorCode::AuthTokenInvalid, "no such token").to_rpc(None);
        let result = tool_result(league_v2::jsonrpc::failure(json!(1), &error));
        assert_eq!(result.is_error, Some(true));
        let content = result.structured_content.expect("structured");
        assert_eq!(content["error_code"], json!("E012"));
        let ok = tool_result(league_v2::jsonrpc::success(json!(1), json!({"status": "ok"})));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"status": "ok"})));
    }
}
